"""Hypothesis building blocks shared by the term strategies of several test packages."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from exprgraph import const, get_op


def arithmetic(inner: st.SearchStrategy) -> list[st.SearchStrategy]:
    """``a + b``, ``a - b``, ``a * b`` and ``a / b`` of two draws of ``inner`` (for ``st.recursive``'s grow step)."""
    pairs = st.tuples(inner, inner)
    return [
        pairs.map(lambda p: p[0] + p[1]),
        pairs.map(lambda p: p[0] - p[1]),
        pairs.map(lambda p: p[0] * p[1]),
        pairs.map(lambda p: p[0] / p[1]),
    ]


#: the binary integer ops of dimension expressions
DIM_BINARY = ("add", "sub", "mul", "floordiv", "mod", "maximum", "minimum")
#: the relations a dimension question asks
RELATIONS = ("lt", "le", "gt", "ge", "eq", "ne")


def dim_expressions(names: list[Any], lo: int, hi: int, max_leaves: int) -> st.SearchStrategy:
    """Random integer dimension expressions over ``names`` and constants in ``[lo, hi]``."""
    leaves = st.one_of(st.sampled_from(names), st.integers(lo, hi).map(const))

    def extend(children: st.SearchStrategy) -> st.SearchStrategy:
        binary = st.tuples(st.sampled_from(DIM_BINARY), children, children).map(lambda t: get_op(t[0])(t[1], t[2]))
        return st.one_of(binary, binary, children.map(lambda t: -t))

    return st.recursive(leaves, extend, max_leaves=max_leaves)
