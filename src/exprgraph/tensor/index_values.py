"""Values of index terms: their range over a box of loop variables, and their value on arrays.

An index term (see :mod:`.affine`) is built from loop variables, integer constants, ``+ - *`` and
``//`` / ``%`` by positive constants. :func:`bounds` gives its inclusive range when each variable
ranges over ``[lo, hi)``, :func:`evaluate_index` its value with Python's floor semantics. Both
walk the term iteratively (the core's postorder). Imports: the core only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core import Term, postorder
from ..core.op import get_op

__all__ = ["NonAffineError", "bounds", "evaluate_index"]

_ADD, _SUB, _MUL, _NEG = get_op("add"), get_op("sub"), get_op("mul"), get_op("neg")
_FLOORDIV, _MOD = get_op("floordiv"), get_op("mod")
_CONST, _SYMBOL = get_op("const"), get_op("symbol")


class NonAffineError(ValueError):
    """An index expression outside the affine-with-div/mod fragment (a product of two variables, say)."""


def bounds(term: Term, ranges: Mapping[Term, tuple[int, int]]) -> tuple[int, int] | None:
    """Inclusive ``(min, max)`` of ``term`` when each variable ``v`` ranges over ``ranges[v] = [lo, hi)``.

    None when a variable has no range or the term leaves the index fragment. Floor division and
    modulo by positive constants are monotone / periodic, so the bounds are exact for each atom.
    """
    iv: dict[Term, tuple[int, int]] = {}
    for node in postorder(term):
        op = node.op
        if op is _SYMBOL:
            r = ranges.get(node)
            if r is None:
                return None
            iv[node] = (r[0], r[1] - 1)
        elif op is _CONST:
            if node.attr.__class__ not in (int, bool):
                return None
            iv[node] = (int(node.attr), int(node.attr))
        elif op is _ADD:
            lo = hi = 0
            for a in node.args:
                lo += iv[a][0]
                hi += iv[a][1]
            iv[node] = (lo, hi)
        elif op is _SUB:
            (a0, a1), (b0, b1) = iv[node.args[0]], iv[node.args[1]]
            iv[node] = (a0 - b1, a1 - b0)
        elif op is _NEG:
            a0, a1 = iv[node.args[0]]
            iv[node] = (-a1, -a0)
        elif op is _MUL:
            lo, hi = 1, 1
            for a in node.args:
                b0, b1 = iv[a]
                cands = (lo * b0, lo * b1, hi * b0, hi * b1)
                lo, hi = min(cands), max(cands)
            iv[node] = (lo, hi)
        elif op is _FLOORDIV or op is _MOD:
            (a0, a1), (c0, c1) = iv[node.args[0]], iv[node.args[1]]
            if c0 != c1 or c0 <= 0:
                return None
            c = c0
            if op is _FLOORDIV:
                iv[node] = (a0 // c, a1 // c)
            elif a0 // c == a1 // c:
                iv[node] = (a0 % c, a1 % c)
            else:
                iv[node] = (0, c - 1)
        else:
            return None
    return iv[term]


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
