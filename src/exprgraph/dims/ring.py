"""dims' polynomial ring: the ring of :mod:`exprgraph.poly.ring`, with dims' limits and integer helpers.

A polynomial of dims is a dict ``{monomial: coefficient}`` of :mod:`exprgraph.poly.ring` whose
coefficients are ints (rationals only in the quotients of :func:`p_exact_div`); there is one ring
in exprgraph, and dims' modules import its operations through this name. What dims adds:

- its own work limit: :class:`Budget` stops one simplification past ``MAX_WORK`` (read at each
  new Budget, so a test may lower it) with a :class:`~exprgraph.errors.TermTooLargeError` that
  speaks of dimension expressions;
- its own bound on constant powers (:data:`MAX_POWER_BITS`), applied by :func:`int_power`,
  :func:`split_factors` and :func:`p_product`;
- ``times``, the integer product the compiled build keeps off Python's long product.

Stage *normalise* (:mod:`.stages`). Imports nothing from dims but :mod:`.monomials`.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..core.term import Term
from ..poly import ring
from ..poly.division import p_exact_div
from ..poly.ring import (
    p_add,
    p_add_into,
    p_atom,
    p_atoms,
    p_const,
    p_const_value,
    p_content,
    p_degree,
    p_div_mono,
    p_eval,
    p_is_const,
    p_mono_gcd,
    p_mul,
    p_scale,
    p_sub,
)

__all__ = [
    "Poly",
    "MAX_WORK",
    "MAX_POWER_BITS",
    "Budget",
    "p_const",
    "p_atom",
    "p_atoms",
    "p_degree",
    "p_eval",
    "p_add_into",
    "times",
    "p_add",
    "p_sub",
    "p_scale",
    "p_mul",
    "p_const_value",
    "p_is_const",
    "p_content",
    "p_mono_gcd",
    "p_div_mono",
    "p_exact_div",
    "p_product",
    "split_factors",
    "int_power",
]

#: a polynomial of dims, as its modules type it: the ring's dicts, read without a coefficient type
#: (an int, except in the quotients of p_exact_div)
Poly = dict

#: monomial operations one simplification may spend before giving up with TermTooLargeError
MAX_WORK = 1_000_000

#: bits of a constant raised to a power before dims refuses it (a size is an int64)
MAX_POWER_BITS = 4096


class Budget(ring.Budget):
    """The budget of one dims simplification: ``MAX_WORK`` monomial operations unless told."""

    __slots__ = ()

    def __init__(self, limit: int | None = None) -> None:
        super().__init__(MAX_WORK if limit is None else limit)

    def message(self) -> str:
        """What the error says when the budget runs out."""
        return (
            f"simplifying this dimension expression would expand it beyond {self.limit} monomial operations "
            "(products of large sums?): keep the sums factored, or split the expression"
        )


def times(k: int, c: int) -> int:
    """``k*c``, with no product for the commonest factors, 1 and -1 (the compiled build multiplies in C
    only ints in ``[0, 2**30)``; ``-1*c`` or ``k*(2**31-1)`` would take Python's long product)."""
    if k == 1:
        return c
    if k == -1:
        return -c
    return k * c


def int_power(c: int, e: int) -> int:
    """``c**e``, refused (TermTooLargeError) when the result would pass ``MAX_POWER_BITS`` bits."""
    v = ring.int_power(c, e, MAX_POWER_BITS)
    assert isinstance(v, int)  # an int to a power >= 0 is an int
    return v


def split_factors(factors: Iterable[tuple[Poly, int]]) -> tuple[int, dict[Term, int], list[tuple[Poly, int]]] | None:
    """:func:`exprgraph.poly.ring.split_factors` with dims' bound on constant powers (integer polynomials)."""
    split = ring.split_factors(factors, MAX_POWER_BITS)
    if split is None:
        return None
    coef, powers, sums = split
    assert isinstance(coef, int)  # products of ints
    return coef, powers, sums


def p_product(factors: Iterable[tuple[Poly, int]], budget: Budget | None = None) -> Poly:
    """:func:`exprgraph.poly.ring.p_product` with dims' budget and bound on constant powers."""
    return ring.p_product(factors, Budget() if budget is None else budget, MAX_POWER_BITS)
