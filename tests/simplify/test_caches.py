"""exprgraph.simplify.clear_caches: the facts kept about terms between calls only save time."""

from __future__ import annotations

import math

from eg_strategies import terms
from hypothesis import given, settings

import exprgraph as eg
from exprgraph.core import exact_radicals
from exprgraph.simplify import clear_caches, numbers, order, signs, simplify

x = eg.Symbol("x", positive=True)
y = eg.Symbol("y")


def test_clearing_empties_every_cache_simplify_fills() -> None:
    t = eg.sqrt(eg.const(8)) * x / (x * eg.sqrt(eg.const(2))) + eg.log(x * y) - (y + 1) ** 2
    simplify(t, unsafe=True)
    assert len(signs._CACHE) and len(numbers._COSTS)  # filled by that call
    clear_caches()
    assert not len(signs._CACHE) and not len(numbers._COSTS) and not len(order._digests)
    assert not len(exact_radicals._VALUES) and not len(exact_radicals._FOLDED)


@settings(max_examples=60, deadline=None)
@given(t=terms())
def test_results_do_not_change_when_the_caches_are_cleared(t: eg.Term) -> None:
    first = {strength: simplify(t, unsafe=strength) for strength in (False, True)}
    clear_caches()
    assert {strength: simplify(t, unsafe=strength) for strength in (False, True)} == first  # the same terms


def fields(f: signs.Facts) -> tuple:
    """The facts as a tuple (Facts has no equality of its own)."""
    return (f.lower, f.upper, f.real, f.nonzero, f.integer)


def test_a_cleared_cache_answers_a_sign_as_before() -> None:
    t = eg.exp(y) + x
    before = fields(signs.facts_of(t))
    clear_caches()
    after = fields(signs.facts_of(t))
    assert before == after and after[0] >= 0 and math.isinf(after[1])
