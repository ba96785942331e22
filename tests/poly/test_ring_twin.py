"""The compiled ring and its Python twin: the same polynomials, in the same dict order, on random inputs.

The build compiles :mod:`exprgraph.poly.ring` and :mod:`exprgraph.poly.monomials` with mypyc
(``exprgraph.accel.COMPILED_MODULES``). Here their sources are loaded a second time, as pure
Python modules under another name (``exprgraph._ring_twin``), and both run on the same terms: in
a compiled build this compares the compiled code with its source; run pure, it compares the
source with itself (and still checks the loader).
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from types import ModuleType

from hypothesis import given, settings
from hypothesis import strategies as st
from poly_helpers import X, Y, Z, polys

from exprgraph import accel
from exprgraph.errors import TermTooLargeError
from exprgraph.poly import monomials as fast_monomials
from exprgraph.poly import ring as fast_ring

TWIN_PACKAGE = "exprgraph._ring_twin"
POLY_DIR = Path(accel.__file__).parent / "poly"


def _load_twin() -> tuple[ModuleType, ModuleType]:
    """The pure Python ring and monomials, loaded from their sources under TWIN_PACKAGE."""
    twins = accel.source_twins("poly", TWIN_PACKAGE)
    return twins["ring"], twins["monomials"]


TWIN_RING, TWIN_MONOMIALS = _load_twin()
INT = polys(max_terms=5, max_degree=3)
EXACT = polys(max_terms=5, max_degree=3, fractions=True)
SCALES = st.one_of(st.integers(-7, 7), st.fractions(min_value=-4, max_value=4, max_denominator=5))


def _same(a: object, b: object) -> None:
    """Equal values, and for polynomials equal items in equal order (coefficient types too)."""
    if isinstance(a, dict) and isinstance(b, dict):
        assert [(m, c, type(c)) for m, c in a.items()] == [(m, c, type(c)) for m, c in b.items()]
    else:
        assert a == b and type(a) is type(b)


def _both(name: str, *args: object) -> None:
    """Run ``name`` of the compiled ring and of its twin on ``args``: the same result, or the same error."""
    results = []
    for ring in (fast_ring, TWIN_RING):
        try:
            results.append(getattr(ring, name)(*args))
        except (TermTooLargeError, ValueError, ZeroDivisionError) as exc:
            results.append(type(exc).__name__)
    _same(results[0], results[1])


def test_the_twin_is_pure_python_from_the_same_files():
    assert not accel.is_compiled(TWIN_RING) and not accel.is_compiled(TWIN_MONOMIALS)
    assert Path(TWIN_RING.__file__) == POLY_DIR / "ring.py"
    assert TWIN_RING.MAX_WORK == fast_ring.MAX_WORK and TWIN_MONOMIALS.MAX_DEGREE == fast_monomials.MAX_DEGREE
    if accel.compiled_modules("poly"):
        assert accel.is_compiled(fast_ring) and accel.is_compiled(fast_monomials)


@settings(max_examples=60, deadline=None)
@given(EXACT, EXACT, SCALES)
def test_the_compiled_ring_gives_what_its_source_gives(a, b, k):
    for name, args in [
        ("p_add", (a, b)),
        ("p_sub", (a, b)),
        ("p_neg", (a,)),
        ("p_scale", (a, k)),
        ("p_mul", (a, b)),
        ("p_pow", (b, 3)),
        ("p_content", (a,)),
        ("p_primitive", (a,)),
        ("p_denominator", (a,)),
        ("p_is_integral", (a,)),
        ("p_mono_gcd", (a, b)),
        ("p_const_value", (a,)),
        ("p_is_const", (a,)),
        ("p_total_degree", (a,)),
        ("p_degree", (a, X)),
        ("p_diff", (a, Y)),
        ("p_eval", (a, {X: Fraction(2, 3), Z: -2})),
        ("p_atoms", (a, b)),
        ("p_div_mono", (a, (), k or 1)),
        ("int_power", (k, 5)),
    ]:
        _both(name, *args)
    for acc_a, acc_b in [(dict(a), dict(a))]:
        fast_ring.p_add_into(acc_a, b, k)
        TWIN_RING.p_add_into(acc_b, b, k)
        _same(acc_a, acc_b)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(INT, st.integers(0, 3)), min_size=1, max_size=4))
def test_products_and_their_limits_agree(factors):
    outcomes = []
    for ring in (fast_ring, TWIN_RING):
        budget = ring.Budget(400)
        try:
            outcomes.append(list(ring.p_product(factors, budget).items()))
        except TermTooLargeError:
            outcomes.append(["refused", budget.left])
        try:
            outcomes.append(repr(ring.split_factors(factors, 40)))
        except TermTooLargeError:
            outcomes.append("refused")
    assert outcomes[:2] == outcomes[2:]


def test_budgets_stop_at_the_same_place():
    s = {((X, 1),): 1, ((Y, 1),): 1, ((Z, 1),): 1, (): 1}
    calls = [
        ("p_pow", lambda ring, budget: ring.p_pow(s, 4, budget)),
        ("p_product", lambda ring, budget: ring.p_product([(s, 3)], budget)),
        ("p_mul", lambda ring, budget: ring.p_mul(s, ring.p_mul(s, s), budget)),
    ]
    for limit in (10, 60, 1000):
        for name, call in calls:
            outcomes = []
            for ring in (fast_ring, TWIN_RING):
                budget = ring.Budget(limit)
                try:
                    result = call(ring, budget)
                except TermTooLargeError as exc:
                    outcomes.append(("refused", budget.left, str(exc)))
                else:
                    outcomes.append(("done", budget.left, list(result.items())))
            assert outcomes[0] == outcomes[1], (name, limit)


@settings(max_examples=60, deadline=None)
@given(INT, INT)
def test_the_compiled_monomials_give_what_their_source_gives(a, b):
    for m1 in a:
        for m2 in b:
            for name, args in [
                ("mono_mul", (m1, m2)),
                ("mono_div", (m1, m2)),
                ("mono_gcd", (m1, m2)),
                ("mono_lcm", (m1, m2)),
                ("mono_pow", (m1, 3)),
                ("mono_degree", (m1,)),
                ("mono_power_of", (m1, X)),
                ("mono_of_powers", (dict(m1 + m2),)),
            ]:
                assert getattr(fast_monomials, name)(*args) == getattr(TWIN_MONOMIALS, name)(*args)
