"""The exp/log/power/abs family under assumptions (simplify.logs, simplify.absval, simplify.powers).

Each rule fires where its condition holds and declines where it does not; simplified terms equal
their input on random points that satisfy the assumptions (safe rules: every float, infinities,
zeros and subnormals included, to a few ulps; unsafe rules: moderate finite points).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph import Symbol, const
from exprgraph.eval import evaluate
from exprgraph.simplify import rules, simplify
from exprgraph.simplify.absval import (
    abs_of_signed,
    decide_extremum,
    sign_of_signed,
    sqrt_of_product_of_squares,
    sqrt_of_square_safe,
)
from exprgraph.simplify.canonical import SUBSUMED
from exprgraph.simplify.logs import exp_of_log, exp_of_log_sum, log_of_exp, log_of_power, log_of_product
from exprgraph.simplify.powers import ASSUMPTION_REWRITES, merge_powers_assumed, power_of_power_assumed

x, y = Symbol("x", positive=True), Symbol("y", positive=True)
q = Symbol("q", nonnegative=True)
m = Symbol("m", nonpositive=True)
r, s = Symbol("r", real=True), Symbol("s", real=True)
n, k = Symbol("n", integer=True), Symbol("k", integer=True)
a, b = Symbol("a", real=True), Symbol("b", real=True)
z = Symbol("z")
w = Symbol("w", lower=1e-3, upper=1e3)


def test_family_is_registered() -> None:
    names = {rule.name for rule in rules(unsafe=True)}
    assert {name for name, *_ in ASSUMPTION_REWRITES} - SUBSUMED <= names  # the subsumed: in the safe set only
    assert {name for name, *_ in ASSUMPTION_REWRITES} <= {rule.name for rule in rules()} | names
    by_name = {rule.name: rule for rule in rules(unsafe=True)}
    assert by_name["exp_of_log"].unsafe is False and by_name["log_of_product"].unsafe is True


@pytest.mark.parametrize(
    ("rule", "term", "expected"),
    [
        (log_of_product, eg.log(x * y), eg.log(x) + eg.log(y)),  # log(x*y) -> log(x) + log(y)
        (log_of_product, eg.log(r * y), None),  # r may be negative
        (log_of_power, eg.log(x**a), a * eg.log(x)),  # log(x**a) -> a*log(x)
        (log_of_power, eg.log(x**z), None),  # z may be nan: not real
        (log_of_power, eg.log(x ** const(2)), const(2) * eg.log(x)),  # an int exponent promotes
        (log_of_product, eg.log(x * y ** const(-1.0)), eg.log(x) + eg.log(y ** const(-1.0))),
        (exp_of_log_sum, eg.exp(a + eg.log(y)), y * eg.exp(a)),  # exp(a + log(y)) -> y*exp(a)
        (exp_of_log_sum, eg.exp(const(2.0) * eg.log(x)), x ** const(2.0)),  # exp(c*log(x)) -> x**c
        (exp_of_log_sum, eg.exp(a + eg.log(r)), None),
        (sqrt_of_product_of_squares, eg.sqrt(r**2 * a**2), eg.abs(r) * eg.abs(a)),
        (sqrt_of_product_of_squares, eg.sqrt(r**2 * a), None),
        (log_of_power, eg.log(r**a), None),
        (exp_of_log, eg.exp(eg.log(q)), q),  # exp(log(x)) -> x, x >= 0
        (exp_of_log, eg.exp(eg.log(r)), None),
        (log_of_exp, eg.log(eg.exp(Symbol("t", real=True, upper=700))), Symbol("t", real=True, upper=700)),
        (log_of_exp, eg.log(eg.exp(r)), None),  # exp(r) may overflow: the unsafe log_exp's case
        (abs_of_signed, eg.abs(q), q),  # abs(x) -> x, x >= 0
        (abs_of_signed, eg.abs(m), -m),  # abs(x) -> -x, x <= 0
        (abs_of_signed, eg.abs(r), None),
        (sign_of_signed, eg.sign(x), const(1.0)),
        (sign_of_signed, eg.sign(-x), const(-1.0)),
        (sign_of_signed, eg.sign(q), None),
        (sqrt_of_square_safe, eg.sqrt(w**2), eg.abs(w)),
        (sqrt_of_square_safe, eg.sqrt(r**2), None),  # r**2 may overflow
        (power_of_power_assumed, (x**a) ** b, x ** (a * b)),  # (x**a)**b -> x**(a*b), x > 0
        (power_of_power_assumed, (r**a) ** b, None),
        (power_of_power_assumed, (x**z) ** b, None),
        (merge_powers_assumed, x**a * x**b, x ** (a + b)),  # x**a * x**b -> x**(a + b), x > 0
        (merge_powers_assumed, r**n * r**k, r ** (n + k)),  # integer exponents: any base
        (merge_powers_assumed, r**a * r**b, None),
        (decide_extremum, eg.maximum(eg.exp(r), const(-1.0)), eg.exp(r)),  # exp(r) >= 0 > -1
        (decide_extremum, eg.minimum(w, const(5000.0), r), eg.minimum(w, r)),
        (decide_extremum, eg.maximum(eg.exp(z), const(-1.0)), None),  # exp(nan) is nan
    ],
)
def test_rule(rule, term: eg.Term, expected: eg.Term | None) -> None:
    assert rule(term) is expected


@pytest.mark.parametrize(
    ("term", "safe", "unsafe"),
    [
        (eg.abs(q), "q", "q"),
        (eg.exp(eg.log(x)), "x", "x"),
        (eg.sign(x) * y, "y", "y"),
        (eg.sqrt(r**2), "sqrt(r**2)", "abs(r)"),
        (eg.sqrt(q**2), "sqrt(q**2)", "q"),
        (eg.sqrt(q) ** 2, "q", "q"),
        ((x**a) ** b, "(x**a)**b", "x**(a*b)"),
        (x**a * x**b, "x**b*x**a", "x**(a + b)"),
        (eg.log(x**a), "log(x**a)", "a*log(x)"),
        (eg.log(2 * x) - eg.log(2), None, "log(x)"),
        (eg.exp(2 * eg.log(x)), "x**2", "x**2"),  # safe for x > 0: y**c is the exact value rounded
        (eg.exp(a + eg.log(y)), "exp(a + log(y))", "y*exp(a)"),
        (eg.sqrt(x**2 * y**2), "sqrt(x**2*y**2)", "x*y"),
        (eg.log(x / y) + eg.log(y), "log(x/y) + log(y)", "log(x)"),
        (eg.log(x**2) - 2 * eg.log(x), "log(x**2) - 2*log(x)", "0.0"),
        (eg.log(2.0 * x) - eg.log(2.0), None, "log(x)"),
        (eg.maximum(eg.abs(r), const(-3.0)), "abs(r)", "abs(r)"),
    ],
)
def test_simplify_reaches(term: eg.Term, safe: str | None, unsafe: str) -> None:
    if safe is not None:
        assert str(simplify(term)) == safe
    assert str(simplify(term, unsafe=True)) == unsafe


def test_plain_symbols_are_untouched() -> None:
    t = Symbol("t")
    for term in [eg.abs(t), eg.exp(eg.log(t)), (t**a) ** b, eg.sign(t)]:
        assert simplify(term) is term or str(simplify(term)) == str(term)
    assert str(simplify(eg.log(t**2), unsafe=True)) == "log(t**2)"


# -- values on random points satisfying the assumptions ---------------------------------------------------

VALUES = {
    "x": st.floats(min_value=0.0, exclude_min=True),
    "y": st.floats(min_value=0.0, exclude_min=True),
    "q": st.floats(min_value=0.0) | st.just(-0.0),  # -0.0 >= 0 too
    "m": st.floats(max_value=0.0) | st.just(0.0),
    "r": st.floats(allow_nan=False),
    "a": st.floats(allow_nan=False),
    "w": st.floats(min_value=1e-3, max_value=1e3),
}
MODERATE = {
    "x": st.floats(min_value=0.01, max_value=100.0),
    "y": st.floats(min_value=0.01, max_value=100.0),
    "q": st.floats(min_value=0.0, max_value=100.0),
    "m": st.floats(min_value=-100.0, max_value=0.0),
    "r": st.floats(min_value=-100.0, max_value=100.0),
    "a": st.floats(min_value=-3.0, max_value=3.0),
    "w": st.floats(min_value=1e-3, max_value=1e3),
}
LEAVES = [Symbol(name, **kw) for name, kw in [("x", {"positive": True}), ("y", {"positive": True})]]
LEAVES += [q, m, r, a, w, const(2.0), const(0.5)]
UNARY = [eg.exp, eg.log, eg.sqrt, eg.abs, eg.sign, lambda u: u**2, lambda u: -u]
BINARY = [lambda u, v: u * v, lambda u, v: u + v, lambda u, v: u**v, lambda u, v: u / v, eg.maximum, eg.minimum]


def _extend(children: st.SearchStrategy) -> st.SearchStrategy:
    unary = st.builds(lambda f, u: f(u), st.sampled_from(UNARY), children)
    return unary | st.builds(lambda f, u, v: f(u, v), st.sampled_from(BINARY), children, children)


terms = st.recursive(st.sampled_from(LEAVES), _extend, max_leaves=5)


def _value(t: eg.Term, point: dict[str, float]) -> float:
    with np.errstate(all="ignore"):
        return float(evaluate(t, {name: point[name] for name in (u.name for u in t.free_symbols)}))


def _agree(u: float, v: float, ulps: float) -> bool:
    if math.isnan(u) or math.isnan(v):
        return math.isnan(u) and math.isnan(v)
    if math.isinf(u) or math.isinf(v):
        return u == v
    return abs(u - v) <= ulps * math.ulp(max(abs(u), abs(v), 1e-300)) or u == v


@settings(max_examples=300, deadline=None)
@given(terms, st.fixed_dictionaries(VALUES))
def test_safe_simplify_keeps_values(t: eg.Term, point: dict[str, float]) -> None:
    # safe: nan exactly where the input is, the same value to a few ulps; where the input overflows
    # (or loses all its digits to underflow), the rewrite may be finite and exact
    u, v = _value(t, point), _value(simplify(t), point)
    if math.isinf(u) and not math.isnan(v):
        return
    # exp of a rounded log moves by |log u| ulps (exp(log(x)) at x = 1.9e13 is 9 ulps from x)
    ulps = 8 * max(1.0, abs(math.log(abs(u)))) if math.isfinite(u) and u != 0 else 8
    assert _agree(u, v, ulps) or (u == 0 and abs(v) < 1e-290), (t, simplify(t), u, v)


@settings(max_examples=300, deadline=None)
@given(terms, st.fixed_dictionaries(MODERATE))
def test_unsafe_simplify_keeps_values_on_moderate_points(t: eg.Term, point: dict[str, float]) -> None:
    u, v = _value(t, point), _value(simplify(t, unsafe=True), point)
    if not (math.isfinite(u) and abs(u) < 1e100):
        return  # overflow or nan in the input: the unsafe rules hold for finite values
    assert math.isfinite(v) and abs(u - v) <= 1e-9 * max(1.0, abs(u)), (t, simplify(t, unsafe=True), u, v)


def test_idempotent_on_examples() -> None:
    for t in [eg.sqrt(r**2), (x**a) ** b * x, eg.log(x * y) + eg.exp(eg.log(q)), eg.abs(m) + eg.sign(x)]:
        for unsafe in (False, True):
            once = simplify(t, unsafe=unsafe)
            assert simplify(once, unsafe=unsafe) is once
