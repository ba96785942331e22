"""Renaming the names of dimension expressions, and choosing canonical names for equal dimensions."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..core.term import Term
from ..core.traversal import substitute
from ..core.walk import postorder
from ..errors import DimExpressionError
from .parse import parse_expression
from .terms import ADD, CONST, FLOORDIV, MAX, MIN, MUL, SUB, dim_const
from .unparse import unparse

__all__ = ["rename_expression", "rename_dynamic_expression", "rename_dynamic_dimensions", "tidy"]


def _replacement(value: Any) -> Term:
    if value.__class__ is Term:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return dim_const(value)
    if isinstance(value, str):
        return parse_expression(value)
    raise TypeError(f"a replacement must be a name, an expression, an int or a term, not {value!r}")


def _rename(term: Term, mapping: Mapping[str, Any]) -> Term:
    table = {}
    for sym in term.free_symbols:
        if sym.name in mapping:
            table[sym] = _replacement(mapping[sym.name])
    return substitute(term, table) if table else term


def rename_expression(expr: str | Term, mapping: Mapping[str, Any]) -> str:
    """``expr`` with its names replaced by ``mapping`` (names or whole expressions), as text.

    ``Max(a, b)`` prints as ``a^b``. Keys that are not names of ``expr`` are ignored. Bad syntax
    raises DimExpressionError (a SyntaxError and a RuntimeError).

    >>> rename_expression("Max(s10,s3) + 1", {"s10": "E", "s3": "D"})
    '(E^D)+1'
    """
    term = parse_expression(expr) if isinstance(expr, str) else expr
    return unparse(_rename(term, mapping))


def rename_dynamic_expression(expr: str, mapping: Mapping[str, Any]) -> str:
    """Like :func:`rename_expression`, then drop ``x+0``, ``x*1``, ``x^x``...; unparsable text comes back as is.

    >>> rename_dynamic_expression("s9+seq_length+0", {"s9": "cache_length"})
    'cache_length+seq_length'
    >>> rename_dynamic_expression("a +", {"a": "b"})
    'a +'
    """
    try:
        term = parse_expression(expr) if isinstance(expr, str) else expr
        return unparse(tidy(_rename(term, mapping)))
    except DimExpressionError:
        return expr


def _is(t: Term, value: int) -> bool:
    return t.op is CONST and t.attr == value


def tidy(term: Term) -> Term:
    """A light clean-up that keeps the order of the text: ``x+0``, ``x*1``, ``x//1``, ``x^x``... -> ``x``."""
    done: dict[Term, Term] = {}
    for node in postorder((term,)):
        if not node.args:
            done[node] = node
            continue
        args = tuple(done[a] for a in node.args)
        op = node.op
        out = None
        if len(args) == 2:
            a, b = args
            if op is ADD:
                out = b if _is(a, 0) else a if _is(b, 0) else None  # 0+x -> x, x+0 -> x
            elif op is SUB or op is FLOORDIV:
                out = a if _is(b, 0 if op is SUB else 1) else None  # x-0 -> x, x//1 -> x
            elif op is MUL:
                out = b if _is(a, 1) else a if _is(b, 1) else None  # 1*x -> x, x*1 -> x
            elif op is MAX or op is MIN:
                out = a if a is b else None  # x^x -> x
        if out is None:
            out = node if all(x is y for x, y in zip(args, node.args, strict=True)) else Term(op, args, node.attr)
        done[node] = out
    return done[term]


def rename_dynamic_dimensions(
    constraints: Mapping[str, Iterable[str]], original: Iterable[str], ban_prefix: str = "DYN"
) -> dict[str, str]:
    """Map every name to the preferred name it equals.

    ``constraints`` maps each name to the names known equal to it; ``original`` lists the names to
    keep (the user's). Each name, with its equals, maps to the smallest original name among its
    equals that does not start with ``ban_prefix``; the first key (in order) that claims a name
    decides it. Original names map to themselves.

    >>> rename_dynamic_dimensions({"s0": ["batch", "s12"], "s12": ["batch", "s0"]}, ["batch"])
    {'batch': 'batch', 's0': 'batch', 's12': 'batch'}
    """
    keep = set(original)
    out = {name: name for name in sorted(keep)}
    for key, equals in constraints.items():
        equals = set(equals)
        choices = sorted(n for n in equals & keep if not (ban_prefix and n.startswith(ban_prefix)))
        if not choices:
            continue
        best = choices[0]
        out[key] = best
        for name in sorted(equals):
            out.setdefault(name, best)
    return out
