"""The compiled polynomial algebra and its Python twin: the same answers on random inputs.

The build compiles poly's division, gcds, factorisation, rational functions and term conversion
with mypyc besides the ring (``exprgraph.accel.COMPILED_MODULES``). Their sources are loaded a
second time as pure Python (:func:`exprgraph.accel.source_twins`, as ``test_ring_twin.py`` does
for the ring) and both run on the same polynomials and terms: the same polynomials in the same
dict order with the same coefficient types, the same terms, or the same error. Run pure, this
compares each source with itself (and still checks the loader).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from poly_helpers import X, Y, Z, nonzero_polys, polys

from exprgraph import accel
from exprgraph.core import Term, const
from exprgraph.errors import ExprgraphError
from exprgraph.poly import division, factor, gcd, p_mul, p_pow, rational, terms

TWINS = accel.source_twins("poly", "exprgraph._ring_twin")
POLY_DIR = Path(accel.__file__).parent / "poly"
#: the modules compared here (the ring and the monomials: test_ring_twin.py)
ALGEBRA = ("dense", "division", "heuristic", "gcd", "modular", "factor_univariate", "factor", "rational", "terms")
INT = polys(max_terms=4, max_degree=3)
EXACT = polys(max_terms=4, max_degree=3, fractions=True)
NONZERO = nonzero_polys(max_terms=3, max_degree=2)


def _plain(value: Any) -> Any:
    """``value`` with every polynomial as its list of items (dict order and coefficient types show)."""
    if isinstance(value, dict):
        return [(m, c, type(c)) for m, c in value.items()]
    if isinstance(value, (list, tuple)):
        return [type(value), *(_plain(v) for v in value)]
    return (value, type(value))


def _outcome(call: Callable[[], Any]) -> Any:
    """The plain value of ``call()``, or the name of the error it raises."""
    try:
        return _plain(call())
    except (ExprgraphError, ValueError, ZeroDivisionError) as exc:
        return type(exc).__name__


def _both(module: str, name: str, *args: Any) -> None:
    """``name`` of the module as this process runs it and of its twin: the same outcome."""
    fast = {"division": division, "gcd": gcd, "factor": factor, "rational": rational, "terms": terms}[module]
    twin = TWINS[module]
    assert _outcome(lambda: getattr(fast, name)(*args)) == _outcome(lambda: getattr(twin, name)(*args)), name


def test_the_twins_are_pure_python_from_the_same_files():
    for name in ALGEBRA:
        assert not accel.is_compiled(TWINS[name])
        assert Path(str(TWINS[name].__file__)) == POLY_DIR / f"{name}.py"
    if accel.compiled_modules("poly"):
        assert all(accel.is_compiled(m) for m in (division, gcd, factor, rational, terms))


@settings(max_examples=40, deadline=None)
@given(INT, INT, NONZERO)
def test_the_compiled_gcds_and_divisions_give_what_their_sources_give(a, b, c):
    ac, bc = division.p_exact_div(p_mul(a, c), c), p_mul(b, c)  # a common factor c
    for name, args in [("p_gcd", (ac, bc)), ("p_cofactors", (ac, bc)), ("p_lcm", (a, c)), ("p_gcd_list", ([a, b, c],))]:
        _both("gcd", name, *args)
    _both("gcd", "normal_sign", a)
    _both("division", "p_exact_div", p_mul(a, c), c)
    _both("division", "p_divides", c, a)
    for order in ("lex", "grlex"):
        _both("division", "p_divmod", a, c, [X, Y, Z], order)


@settings(max_examples=40, deadline=None)
@given(NONZERO, NONZERO, st.integers(1, 3))
def test_the_compiled_factorisation_gives_what_its_source_gives(a, b, k):
    p = p_mul(p_pow(a, k), b)
    _both("factor", "p_factor", p)
    _both("factor", "p_sqf", p)
    _both("factor", "p_root_factors", p, {X: [-2, -1, 0, 1, 2], Y: [1, -1]})


@settings(max_examples=40, deadline=None)
@given(EXACT, NONZERO, EXACT, NONZERO)
def test_the_compiled_rational_functions_give_what_their_sources_give(a, b, c, d):
    for name, args in [
        ("r_cancel", ((a, b),)),
        ("r_add", ((a, b), (c, d))),
        ("r_sub", ((a, b), (c, d))),
        ("r_mul", ((a, b), (c, d))),
        ("r_div", ((a, b), (d, c or {(): 1}))),
        ("r_pow", ((a, b), 2)),
        ("r_normal", (a, b)),
        ("r_apart", ((_in_x(a), _in_x(b) or {(): 1}), X)),
    ]:
        _both("rational", name, *args)


def _in_x(p: dict) -> dict:
    """The part of ``p`` in ``x`` alone."""
    return {m: c for m, c in p.items() if all(a is X for a, _ in m)}


def _term(p: dict) -> Term:
    """A term of the polynomial ``p`` (built by this process's terms module)."""
    return terms.from_poly(p, const(1.0))


@settings(max_examples=40, deadline=None)
@given(EXACT, NONZERO, st.sampled_from([1.0, 1]))
def test_the_compiled_term_conversions_give_what_their_sources_give(a, b, like):
    t = _term(a) / _term(b) + X * Y - Z
    s = _term(b) + X
    zeros = s + 0 - s + s  # only zeros added to s first: the sum's numerator is a copy of s's
    for name, args in [
        ("to_poly", (_term(a),)),
        ("to_ratio", (t,)),
        ("to_ratio", (zeros,)),
        ("from_poly", (a, const(like))),
        ("from_ratio", ((a, b), const(like))),
    ]:
        _both("terms", name, *args)
    assert terms.to_ratio(t) == TWINS["terms"].to_ratio(t)
    assert terms.to_ratio(zeros) == terms.to_ratio(s)
    assert terms.from_poly({(): Fraction(1, 3)}, const(1.0)) is TWINS["terms"].from_poly(
        {(): Fraction(1, 3)}, const(1.0)
    )
