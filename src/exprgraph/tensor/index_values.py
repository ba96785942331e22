"""Values of index terms: their range over a box of loop variables, and their value on arrays.

An index term (see :mod:`.affine`) is built from loop variables, integer constants, ``+ - *`` and
``//`` / ``%`` by positive constants. :func:`bounds` gives its inclusive range when each variable
ranges over ``[lo, hi)``: the range exprgraph.dims proves under those ranges (:func:`dims_env`).
:func:`evaluate_index` gives its value with Python's floor semantics, walking the term iteratively
(the core's postorder). Imports: the core and exprgraph.dims.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from ..core import Term, postorder
from ..core.op import get_op
from ..dims import DimEnv

__all__ = ["NonAffineError", "ANY_INTEGER", "bounds", "dims_env", "evaluate_index", "index_constant"]

_ADD, _SUB, _MUL, _NEG = get_op("add"), get_op("sub"), get_op("mul"), get_op("neg")
_FLOORDIV, _MOD = get_op("floordiv"), get_op("mod")
_CONST, _SYMBOL = get_op("const"), get_op("symbol")
#: the integer simplifier's environment for index terms: every variable is any integer (solved
#: indices can run below 0)
ANY_INTEGER = DimEnv(default=(None, None))


class NonAffineError(ValueError):
    """An index expression outside the affine-with-div/mod fragment (a product of two variables, say)."""


def evaluate_index(term: Term, env: Mapping[Term, object]) -> object:
    """Value of an index term with numpy (or int) values for its variables; Python floor semantics."""
    vals: dict[Term, Any] = {}  # numpy arrays or ints
    for node in postorder(term):
        op = node.op
        if op is _SYMBOL:
            vals[node] = env[node]
        elif op is _CONST:
            vals[node] = int(node.attr)
        elif op is _ADD:
            acc = vals[node.args[0]]
            for a in node.args[1:]:
                acc = acc + vals[a]
            vals[node] = acc
        elif op is _SUB:
            vals[node] = vals[node.args[0]] - vals[node.args[1]]
        elif op is _NEG:
            vals[node] = -vals[node.args[0]]
        elif op is _MUL:
            acc = vals[node.args[0]]
            for a in node.args[1:]:
                acc = acc * vals[a]
            vals[node] = acc
        elif op is _FLOORDIV:
            vals[node] = vals[node.args[0]] // vals[node.args[1]]
        elif op is _MOD:
            vals[node] = vals[node.args[0]] % vals[node.args[1]]
        else:
            raise NonAffineError(f"an index cannot use {op.name}")
    return vals[term]


# -- value ranges: exprgraph.dims's bound under the loop ranges ----------------------------------------------

#: the dims environment of a set of loop ranges (keyed by the ranges' items)
_envs: dict[tuple, DimEnv] = {}


def dims_env(ranges: Mapping[Term, tuple[int, int]]) -> DimEnv:
    """The dims environment where each variable ``v`` is in ``ranges[v] = [lo, hi)``, the rest any integer."""
    key = tuple(ranges.items())
    env = _envs.get(key)
    if env is None:
        # an empty range [lo, lo) leaves no value to bound: any range of the term is right, (lo, lo) will do
        named = {v.name: (lo, max(lo, hi - 1)) for v, (lo, hi) in ranges.items()}
        env = DimEnv(named, default=(None, None))
        if len(_envs) > 256:
            _envs.clear()
        _envs[key] = env
    return env


@lru_cache(maxsize=1 << 16)
def _boundable(term: Term) -> bool:
    """True when ``term`` uses only the index ops, dividing by positive integer constants (cached)."""
    for node in postorder(term):
        op = node.op
        if op is _CONST:
            if node.attr.__class__ not in (int, bool):
                return False
        elif op is _FLOORDIV or op is _MOD:
            div = node.args[1]
            if div.op is _CONST and div.attr.__class__ is int:
                if div.attr <= 0:
                    return False
            elif div.free_symbols or not (index_constant(div) or 0) > 0:
                return False
        elif op not in _BOUNDED_OPS:
            return False
    return True


def index_constant(term: Term) -> int | None:
    """The value of an index term that the integer simplifier reads as a constant (``1 + 1``), else None."""
    p = ANY_INTEGER.poly(term)
    if len(p) > 1 or (p and () not in p):
        return None
    return int(p.get((), 0))


_BOUNDED_OPS = frozenset({_SYMBOL, _ADD, _SUB, _NEG, _MUL})


def bounds(term: Term, ranges: Mapping[Term, tuple[int, int]]) -> tuple[int, int] | None:
    """Inclusive ``(min, max)`` of ``term`` when each variable ``v`` ranges over ``ranges[v] = [lo, hi)``.

    None when a variable has no range or the term leaves the index fragment. The range is the one
    exprgraph.dims proves for the canonical polynomial of the term (sound, exact for each atom).
    """
    if not _boundable(term) or any(v not in ranges for v in term.free_symbols):
        return None
    lo, hi = dims_env(ranges).bound(term)
    if lo.__class__ is not int or hi.__class__ is not int:
        return None
    return (int(lo), int(hi))
