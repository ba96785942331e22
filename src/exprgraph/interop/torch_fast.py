"""The C fast path of :class:`~exprgraph.interop.torch.TorchDims` (``_torch_fast.c``): loaded and configured here.

The extension answers torch's common questions from the intervals of a sympy expression's nodes, walked with the C
API without making terms; where the intervals alone do not answer it returns ``NotImplemented`` and TorchDims takes
its Python road (the reader, ``exprgraph.dims.intervals``, the DimEnv), which is its twin. :data:`ANSWER` is the C
function, or None (the extension not built, or ``EXPRGRAPH_PURE_PYTHON`` set). :func:`classify` tells the C walk
how the nodes of a class are read (learnt once per class, from its name, as :mod:`.torch_read` does).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from typing import Any, Final

from ..core.termbase import PURE_ENV
from ..dims.terms import RESERVED_NAMES
from .torch_calls import _INT_NAMES, _RELATIONS, BOOL_NAMES
from .torch_read import _basic_args

__all__ = ["ANSWER", "GIVEN", "STATIC", "BOUND", "TRUTH", "classify", "load"]

#: the questions: the static value, the bound, the truth
STATIC: Final = 0
BOUND: Final = 1
TRUTH: Final = 2
#: the node kinds of _torch_fast.c (0: not read there)
_NONE, _INT, _SYMBOL, _TRUE, _FALSE = 0, 1, 2, 3, 4
_CALL_KINDS: Final = {
    "Add": 5,
    "Mul": 6,
    "Pow": 7,
    "PowByNatural": 7,
    "FloorDiv": 8,
    "CleanDiv": 8,
    "Mod": 9,
    "PythonMod": 9,
    "ModularIndexing": 10,
    "Max": 11,
    "Min": 12,
    "And": 19,
    "Or": 20,
    "Not": 21,
}
#: relation ops -> their kinds (eq ne lt le gt ge: 13 to 18)
_REL_KINDS: Final = {"eq": 13, "ne": 14, "lt": 15, "le": 16, "gt": 17, "ge": 18}


def classify(cls: type) -> tuple[int, bool]:
    """``(kind, read _args)`` of a class: how the C walk reads its nodes (kind 0: it does not, Python does)."""
    name = cls.__name__
    leaf = bool(getattr(cls, "is_Atom", False) or getattr(cls, "is_Symbol", False)) or not hasattr(cls, "args")
    if leaf:  # (the reader's order: a name, an integer, true / false)
        if name == "Symbol" or getattr(cls, "is_Symbol", False) is True:
            return (_SYMBOL, False)
        if name in _INT_NAMES or getattr(cls, "is_Integer", False) is True:
            return (_INT, False)
        if name in BOOL_NAMES:
            return (_TRUE if BOOL_NAMES[name].attr else _FALSE, False)
        return (_NONE, False)
    rel = _RELATIONS.get(name)
    kind = _REL_KINDS[rel.name] if rel is not None else _CALL_KINDS.get(name, _NONE)
    return (kind, kind != _NONE and _basic_args(cls))


def load() -> Any:
    """The extension ``_torch_fast``, configured, or None for the Python road alone."""
    if os.environ.get(PURE_ENV):
        return None
    try:
        module = importlib.import_module("._torch_fast", __package__)
    except ImportError:
        return None
    module.configure(classify, frozenset(RESERVED_NAMES))
    return module


_MODULE: Final = load()
#: ``answer(expr, kind, given, symbols)`` in C (the quick answer, or NotImplemented), or None
ANSWER: Final[Callable[[Any, int, dict, dict], Any] | None] = None if _MODULE is None else _MODULE.answer
#: ``given(var_to_range)`` in C (the ranges TorchDims keeps, or NotImplemented), or None
GIVEN: Final[Callable[[Any], Any] | None] = None if _MODULE is None else _MODULE.given
