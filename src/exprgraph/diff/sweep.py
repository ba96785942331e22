"""The C sweeps of diff (``_csweep*.c``): loaded, checked and configured here, or None for Python.

``exprgraph.diff._csweep`` is a second extension beside the term base: the reverse sweep and live
order of :mod:`.reverse`, the forward sweep of :mod:`.forward`, the dependency sets of
:mod:`.pattern`, and the gradient rules replayed from the templates of
:mod:`exprgraph.core.grad_template`. It reaches the C term through the capsule of
``exprgraph.core._cterm`` and never the other way round. Each function has its Python twin in the
module that calls it (listed in :mod:`exprgraph.twins`), which runs when :data:`SWEEP` is None:
``EXPRGRAPH_PURE_PYTHON`` is set, the terms are not the C ones, the extension was not built, or it
is older than its sources (an edited checkout: a warning says so).
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from types import ModuleType

from ..core import termbase
from ..core.grad_template import sweep_facts

__all__ = ["SWEEP", "native"]

_HERE = Path(__file__).parent
#: the sources the built extension must be newer than (the term struct's header included)
SOURCES = (*sorted(_HERE.glob("_csweep*.[ch]")), _HERE.parent / "core" / "_cterm_api.h")


def _load() -> ModuleType | None:
    if os.environ.get(termbase.PURE_ENV) or not termbase.native():
        return None
    try:
        from . import _csweep  # type: ignore[attr-defined]
    except ImportError:
        return None
    built = Path(_csweep.__file__ or "")
    if built.exists() and any(p.exists() and p.stat().st_mtime > built.stat().st_mtime + 2.0 for p in SOURCES):
        warnings.warn(
            "exprgraph.diff: the compiled _csweep is older than its C sources; using the Python sweeps "
            "(rebuild: `make test`, or `pip install -e .`)",
            RuntimeWarning,
            stacklevel=2,
        )
        return None
    _csweep.configure(*sweep_facts())
    module: ModuleType = _csweep
    return module


#: the C module (``live_order``, ``backprop``, ``forward``, ``dependency_sets`` and the folds), or None
SWEEP = _load()


def native() -> bool:
    """Whether the sweeps of diff run in C (else their Python twins)."""
    return SWEEP is not None
