"""Random index terms for the tensor tests: one strategy, each test choosing its names and ranges.

A term starts as an affine leaf ``c1*v1 + c2*v2 + ... + c0`` (built with the operators, so zero
coefficients stay in the term) and then goes through a few steps, each drawn from ``STEPS`` with a
divisor ``c``: quotients, remainders (also written out), quotients of quotients, and sums with
multiples of the term and of fresh leaves.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from exprgraph.core import Term

Range = tuple[int, int]  # inclusive bounds of a drawn integer


@dataclass
class _Draws:
    """What a step may draw: integers, fresh affine leaves and one of the names."""

    draw: Callable[[st.SearchStrategy], Any]
    leaf: Callable[[], Term]
    names: Sequence[Term]

    def integer(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def name(self) -> Term:
        return self.draw(st.sampled_from(self.names))


Step = Callable[[Term, int, _Draws], Term]

STEPS: dict[str, Step] = {
    "quotient": lambda t, c, d: t // c,  # t // c
    "remainder": lambda t, c, d: t % c,  # t % c
    "spelled_remainder": lambda t, c, d: t - c * (t // c),  # t % c written out
    "spelled_remainder_plus_quotient": lambda t, c, d: t - c * (t // c) + d.leaf() // c,  # t % c + l // c
    "rebuilt": lambda t, c, d: c * (t // c) + t % c + d.integer(-2, 2) * d.name(),  # t + k*v, the long way
    "nested_quotient": lambda t, c, d: (t // c) // d.integer(2, 4),  # t // (c*m)
    "nested_quotient_plus_remainder": lambda t, c, d: (t // c) // d.integer(2, 4) + t % c,
    "scaled_quotient_plus_remainder": lambda t, c, d: (t // c) * d.integer(1, 3) + t % c,
    "scaled_plus_quotient": lambda t, c, d: d.integer(-3, 3) * t + d.leaf() // c,  # k*t + l // c
    "scaled_minus_remainder": lambda t, c, d: d.integer(-3, 3) * t - d.leaf() % c,  # k*t - l % c
    "minus_scaled_remainder": lambda t, c, d: t - d.integer(1, 4) * (d.leaf() % c),  # t - m*(l % c)
}


@st.composite
def index_terms(
    draw: Callable[[st.SearchStrategy], Any],
    coefficients: dict[Term, Range],
    *,
    constants: Range,
    steps: Range,
    divisors: Range,
    most_names: int | None = None,
) -> Term:
    """An index term over the names of ``coefficients`` (name -> range of its coefficient).

    ``most_names`` limits each leaf to a random subset of that many names at most; ``steps`` is
    the range of the number of steps, each with a divisor drawn from ``divisors``.
    """
    names = list(coefficients)

    def leaf() -> Term:
        chosen = names
        if most_names is not None:
            chosen = draw(st.lists(st.sampled_from(names), min_size=1, max_size=most_names, unique=True))
        t = draw(st.integers(*coefficients[chosen[0]])) * chosen[0]
        for v in chosen[1:]:
            t = t + draw(st.integers(*coefficients[v])) * v
        return t + draw(st.integers(*constants))

    draws = _Draws(draw, leaf, names)
    t = leaf()
    for _ in range(draw(st.integers(*steps))):
        c = draw(st.integers(*divisors))
        t = STEPS[draw(st.sampled_from(tuple(STEPS)))](t, c, draws)
    return t
