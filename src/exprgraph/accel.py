"""The compiled fast path: which modules run as mypyc-compiled code, and the choice between them and their source.

A build that has mypyc at hand (``setup.py``; ``make test`` and ``make bench`` build so) compiles
the modules of :data:`COMPILED_MODULES`, every package's into one group (compiled modules call each
other natively, across packages: dims calls the ring of :mod:`exprgraph.poly` so). Each compiled
module sits next to its source, and Python imports it first. :func:`select_all` runs when this
module is first imported (``exprgraph.dims`` imports it before any compiled module is imported)
and serves the pure sources of *all* the listed modules instead when

- the environment variable ``EXPRGRAPH_PURE_PYTHON`` is set (to compare, or to debug), or
- a compiled module is missing or older than its source: an edited checkout not rebuilt yet, whose
  compiled code is no longer the code on disk (a warning says so).

The choice is one for the whole group: a compiled module calls the compiled code of the others
directly, so one stale module makes every module run from source. Both run the same source, so
results are the same; the tests run against both.

A base module (beside :mod:`exprgraph.errors`): imports the standard library only. ``setup.py``
reads :data:`COMPILED_MODULES` and :data:`GROUP` from this file's text (they are literals).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import sys
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import ModuleType

__all__ = [
    "COMPILED_MODULES",
    "GROUP",
    "PURE_ENV",
    "MTIME_SLACK",
    "PURE",
    "select",
    "select_group",
    "select_all",
    "stale_modules",
    "compiled_modules",
    "is_compiled",
    "source_twins",
]

#: the modules the build compiles with mypyc, by package of exprgraph (setup.py reads this table);
#: poly's ring comes first: dims' modules call it; the rewrite driver's walk (rules) and the rule bodies of
#: simplify's canonical pass (its sums, products, numbers, order and trigonometry) run compiled the same way;
#: interop's reader of torch's expressions and its answers (TorchDims) call dims
COMPILED_MODULES: dict[str, tuple[str, ...]] = {
    "poly": (
        "monomials",
        "ring",
        "dense",
        "division",
        "heuristic",
        "gcd",
        "modular",
        "factor_univariate",
        "factor",
        "rational",
        "terms",
    ),
    "dims": (
        "ranges",
        "intervals",
        "witness",
        "monomials",
        "ring",
        "nodes",
        "normal",
        "context",
        "factored",
        "division",
        "maxmin",
        "combine",
        "polyprint",
        "polyoperands",
        "polyparse",
        "regions",
        "terms",
        "decide",
        "queries",
        "prove",
        "arith",
        "relations",
        "parse",
        "grammar",
        "unparse",
    ),
    "rules": ("treewalk",),
    "simplify": (
        "order",
        "numbers",
        "collect",
        "association",
        "sums",
        "products",
        "trig_terms",
        "trig_units",
        "trig",
    ),
    "interop": ("torch_calls", "torch_read", "torch"),
}

#: the name of the one mypyc group (its shared library is ``<GROUP>__mypyc`` beside the package)
GROUP = "exprgraph_dims"

#: set this environment variable to run the pure Python modules even when compiled ones exist
PURE_ENV = "EXPRGRAPH_PURE_PYTHON"

#: a source newer than its compiled module by more than this many seconds was edited after the
#: build (installing a wheel writes the files of one build within a moment of each other)
MTIME_SLACK = 2.0

_ROOT = __name__.rpartition(".")[0]
_HERE = Path(__file__).parent


def _compiled_file(directory: Path, name: str) -> Path | None:
    """The compiled module ``name`` in ``directory``, if there is one."""
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = directory / f"{name}{suffix}"
        if path.exists():
            return path
    return None


def stale_modules(directory: Path, names: Sequence[str]) -> list[str]:
    """Modules whose compiled file is missing or older than their source (empty for a pure build)."""
    found = {name: _compiled_file(directory, name) for name in names}
    if not any(found.values()):
        return []  # nothing compiled: nothing to choose
    stale = []
    for name, compiled in found.items():
        source = directory / f"{name}.py"
        if compiled is None or (source.exists() and source.stat().st_mtime > compiled.stat().st_mtime + MTIME_SLACK):
            stale.append(name)
    return stale


class _SourceFinder:
    """A meta path finder that loads the listed modules from their ``.py`` files."""

    def __init__(self, sources: Mapping[str, Path]) -> None:
        self.sources = dict(sources)

    def find_spec(
        self, fullname: str, path: object = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        """The spec of the source file of a listed module, else None (the next finder looks)."""
        source = self.sources.get(fullname)
        if source is None:
            return None
        loader = importlib.machinery.SourceFileLoader(fullname, str(source))
        return importlib.util.spec_from_file_location(fullname, str(source), loader=loader)


def select_group(places: Iterable[tuple[str, Path, Sequence[str]]]) -> bool:
    """Serve the sources of every module of one compiled group, or of none; True if pure.

    ``places`` are ``(package, directory, names)``: a package's dotted name, its directory and its
    listed modules. Call before any of them is first imported.
    """
    places = list(places)
    if not any(_compiled_file(directory, name) for _, directory, names in places for name in names):
        return True  # a pure build: nothing to choose
    pure = bool(os.environ.get(PURE_ENV))
    if not pure:
        stale = [
            f"{package}.{name}" for package, directory, names in places for name in stale_modules(directory, names)
        ]
        if stale:
            warnings.warn(
                f"the compiled {', '.join(stale)} is missing or older than its source; running the pure "
                "Python modules (rebuild: `make test`, or `pip install --no-build-isolation -e .`)",
                RuntimeWarning,
                stacklevel=3,
            )
            pure = True
    if pure:
        sources = {
            f"{package}.{name}": directory / f"{name}.py" for package, directory, names in places for name in names
        }
        sys.meta_path.insert(0, _SourceFinder(sources))  # ahead of the compiled files
    return pure


def select(package: str, directory: Path, names: Sequence[str]) -> bool:
    """Serve the pure sources of one package's ``names`` when asked to or when stale; True if pure.

    Call before those modules are first imported.
    """
    return select_group([(package, directory, names)])


def select_all() -> bool:
    """Serve the pure sources of every module of :data:`COMPILED_MODULES`, or none of them; True if pure."""
    return select_group((f"{_ROOT}.{package}", _HERE / package, names) for package, names in COMPILED_MODULES.items())


def is_compiled(module: ModuleType) -> bool:
    """True when ``module`` was loaded from a compiled extension."""
    spec = getattr(module, "__spec__", None)
    return isinstance(getattr(spec, "loader", None), importlib.machinery.ExtensionFileLoader)


def compiled_modules(package: str) -> tuple[str, ...]:
    """The listed modules of ``package`` (``"dims"``, ``"simplify"``...) running compiled in this process."""
    return tuple(
        name for name in COMPILED_MODULES[package] if is_compiled(importlib.import_module(f"{_ROOT}.{package}.{name}"))
    )


def source_twins(package: str, twin: str) -> dict[str, ModuleType]:
    """The Python sources of ``package``'s listed modules imported a second time, under the package ``twin``.

    Twin tests compare them with the modules as this process runs them (compiled when built).
    """
    names = COMPILED_MODULES[package]
    if twin not in sys.modules:
        namespace = ModuleType(twin)
        namespace.__path__ = []  # a package of its own: the finder below serves its modules
        sys.modules[twin] = namespace
        directory = Path(__file__).parent / package
        sys.meta_path.insert(0, _SourceFinder({f"{twin}.{name}": directory / f"{name}.py" for name in names}))
    return {name: importlib.import_module(f"{twin}.{name}") for name in names}


#: whether this process runs the pure modules (decided once, when this module is first imported)
PURE = select_all()
