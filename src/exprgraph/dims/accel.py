"""The compiled fast path: which modules of :mod:`exprgraph.dims` run as mypyc-compiled code.

A build that has mypyc at hand (``setup.py``; ``make test`` and ``make bench`` build so) compiles
the modules in ``COMPILED_MODULES``; each compiled module sits next to its source, and Python
imports it first. :func:`select` runs when this package is imported, before any of them is, and
serves the pure sources instead when

- the environment variable ``EXPRGRAPH_PURE_PYTHON`` is set (to compare, or to debug), or
- a compiled module is missing or older than its source: an edited checkout not rebuilt yet, whose
  compiled code is no longer the code on disk (a warning says so).

Both run the same source, so results are the same; the tests run against both.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

__all__ = ["COMPILED_MODULES", "PURE_ENV", "select", "stale_modules", "compiled_modules", "is_compiled"]

#: modules of exprgraph.dims the build compiles (setup.py reads this tuple)
COMPILED_MODULES = (
    "ranges",
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
)

#: set this environment variable to run the pure Python modules even when compiled ones exist
PURE_ENV = "EXPRGRAPH_PURE_PYTHON"

#: a source newer than its compiled module by more than this many seconds was edited after the
#: build (installing a wheel writes the files of one build within a moment of each other)
MTIME_SLACK = 2.0

_PACKAGE = __name__.rpartition(".")[0]
_HERE = Path(__file__).parent


def _compiled_file(directory: Path, name: str) -> Path | None:
    """The compiled module ``name`` in ``directory``, if there is one."""
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = directory / f"{name}{suffix}"
        if path.exists():
            return path
    return None


def stale_modules(directory: Path = _HERE, names: Sequence[str] = COMPILED_MODULES) -> list[str]:
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
    """A meta path finder that loads the listed modules of a package from their ``.py`` files."""

    def __init__(self, package: str, directory: Path, names: Sequence[str]) -> None:
        self.directory = directory
        self.names = {f"{package}.{name}": name for name in names}

    def find_spec(
        self, fullname: str, path: object = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        """The spec of the source file of a listed module, else None (the next finder looks)."""
        name = self.names.get(fullname)
        if name is None:
            return None
        source = str(self.directory / f"{name}.py")
        loader = importlib.machinery.SourceFileLoader(fullname, source)
        return importlib.util.spec_from_file_location(fullname, source, loader=loader)


def select(package: str = _PACKAGE, directory: Path = _HERE, names: Sequence[str] = COMPILED_MODULES) -> bool:
    """Serve the pure sources of ``names`` when asked to or when the build is stale; True if pure.

    Call before those modules are first imported (importing this module does, for exprgraph.dims).
    """
    if not any(_compiled_file(directory, name) for name in names):
        return True  # a pure build: nothing to choose
    pure = bool(os.environ.get(PURE_ENV))
    if not pure:
        stale = stale_modules(directory, names)
        if stale:
            warnings.warn(
                f"{package}: the compiled {', '.join(stale)} is missing or older than its source; running "
                "the pure Python modules (rebuild: `make test`, or `pip install --no-build-isolation -e .`)",
                RuntimeWarning,
                stacklevel=2,
            )
            pure = True
    if pure:
        sys.meta_path.insert(0, _SourceFinder(package, directory, names))  # ahead of the compiled files
    return pure


def is_compiled(module: ModuleType) -> bool:
    """True when ``module`` was loaded from a compiled extension."""
    spec = getattr(module, "__spec__", None)
    return isinstance(getattr(spec, "loader", None), importlib.machinery.ExtensionFileLoader)


def compiled_modules() -> tuple[str, ...]:
    """The modules of exprgraph.dims running compiled in this process (empty: all pure Python)."""
    return tuple(name for name in COMPILED_MODULES if is_compiled(importlib.import_module(f"{_PACKAGE}.{name}")))


#: whether this process runs the pure modules (decided once, on import)
PURE = select()
