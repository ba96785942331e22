"""Hypothesis building blocks shared by the term strategies of several test packages."""

from __future__ import annotations

from hypothesis import strategies as st


def arithmetic(inner: st.SearchStrategy) -> list[st.SearchStrategy]:
    """``a + b``, ``a - b``, ``a * b`` and ``a / b`` of two draws of ``inner`` (for ``st.recursive``'s grow step)."""
    pairs = st.tuples(inner, inner)
    return [
        pairs.map(lambda p: p[0] + p[1]),
        pairs.map(lambda p: p[0] - p[1]),
        pairs.map(lambda p: p[0] * p[1]),
        pairs.map(lambda p: p[0] / p[1]),
    ]
