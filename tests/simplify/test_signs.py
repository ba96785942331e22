"""The sign and interval analysis (exprgraph.simplify.signs) never claims a false fact.

Property: random terms over symbols with assumptions, evaluated in float64 at random points that
satisfy the assumptions (zeros, subnormals, huge values and infinities included where allowed):
every claimed fact holds for the computed value.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph import Symbol, const
from exprgraph.eval import evaluate
from exprgraph.simplify.signs import Facts, facts_of, is_negative, is_nonnegative, is_positive, is_real

#: name -> (assumptions, a strategy of values satisfying them)
PROFILES: dict[str, tuple[dict, st.SearchStrategy[float]]] = {
    "p": ({"positive": True}, st.floats(min_value=0.0, exclude_min=True)),
    "q": ({"nonnegative": True}, st.floats(min_value=0.0) | st.just(-0.0)),  # -0.0 >= 0 too
    "n": ({"negative": True}, st.floats(max_value=0.0, exclude_max=True)),
    "r": ({"real": True}, st.floats(allow_nan=False)),
    "f": ({"finite": True}, st.floats(allow_nan=False, allow_infinity=False)),
    "b": ({"lower": -2, "upper": 3}, st.floats(min_value=-2, max_value=3)),
    "k": ({"integer": True, "lower": -5, "upper": 5}, st.integers(-5, 5).map(float)),
    "z": ({}, st.floats()),
}
SYMS = {name: Symbol(name, **kw) for name, (kw, _) in PROFILES.items()}
CONSTS = [const(v) for v in (-2.5, 0.0, 1.0, 3.0, 0.5, 800.0)]
UNARY = [eg.exp, eg.log, eg.sqrt, eg.abs, eg.sign, eg.sin, eg.cos, eg.tanh, eg.erf, eg.atan, eg.sigmoid, eg.cosh]
UNARY += [eg.sinh, eg.softplus, eg.expm1, eg.log1p, lambda a: -a]
BINARY = [
    lambda a, b: a + b,
    lambda a, b: a - b,
    lambda a, b: a * b,
    lambda a, b: a / b,
    lambda a, b: a**b,
    eg.maximum,
    eg.minimum,
]
POWERS = [2, 3, -1, -2, 0, 0.5, 1.5, -0.5, -3]

leaves = st.sampled_from(list(SYMS.values()) + CONSTS)


def _extend(children: st.SearchStrategy) -> st.SearchStrategy:
    unary = st.builds(lambda f, a: f(a), st.sampled_from(UNARY), children)
    binary = st.builds(lambda f, a, b: f(a, b), st.sampled_from(BINARY), children, children)
    power = st.builds(lambda a, k: a ** const(k), children, st.sampled_from(POWERS))
    return unary | binary | power


terms = st.recursive(leaves, _extend, max_leaves=6)


def check(f: Facts, v: float) -> None:
    """Every fact ``f`` claims holds for the value ``v``."""
    if f.real:
        assert not math.isnan(v), f
    if math.isnan(v):
        return
    assert f.lower <= v <= f.upper, (f, v)
    if f.nonzero:
        assert v != 0, f
    if f.integer:
        assert math.isfinite(v) and float(v).is_integer(), (f, v)


@settings(max_examples=400, deadline=None)
@given(terms, st.fixed_dictionaries({name: s for name, (_, s) in PROFILES.items()}))
def test_analysis_never_lies(t: eg.Term, point: dict[str, float]) -> None:
    env = {name: point[name] for name in (s.name for s in t.free_symbols)}
    with np.errstate(all="ignore"):
        v = float(evaluate(t, env))
    check(facts_of(t), v)
    for sub in eg.postorder(t):  # every subterm's cached facts too
        with np.errstate(all="ignore"):
            check(facts_of(sub), float(evaluate(sub, {k: env[k] for k in (s.name for s in sub.free_symbols)})))


p, q, n, r, z = (SYMS[k] for k in "pqnrz")


@pytest.mark.parametrize(
    ("t", "expected"),
    [
        (p, "positive"),
        (p + q, "positive"),  # no rounding reaches 0 from a positive sum
        (p * p, "nonnegative"),  # a product of positives may underflow to 0
        (eg.exp(r), "nonnegative"),  # exp(-800) is 0
        (eg.sqrt(p), "positive"),
        (-p, "negative"),
        (n * n, "nonnegative"),
        (eg.abs(z), "unknown"),  # abs(nan) is nan
        (eg.abs(r), "nonnegative"),
        (r**2, "nonnegative"),
        (eg.exp(Symbol("s", lower=-700, upper=700)), "positive"),
        (eg.cosh(r), "positive"),
        (p / p, "unknown"),  # inf/inf is nan
        (eg.log1p(Symbol("t", lower=1e-30, upper=1e-20)), "positive"),  # log1p(x) is about x, not 0
    ],
)
def test_signs(t: eg.Term, expected: str) -> None:
    claims = {
        "positive": is_positive(t),
        "nonnegative": is_nonnegative(t) and not is_positive(t),
        "negative": is_negative(t),
        "unknown": not (is_nonnegative(t) or is_negative(t)),
    }
    assert claims[expected], facts_of(t)


def test_intervals_and_flags() -> None:
    b = SYMS["b"]
    assert facts_of(3 * b + 1).interval == (-5.0, 10.0)
    assert facts_of(eg.sin(SYMS["f"])).interval == (-1.0, 1.0)
    assert facts_of(eg.sin(r)).interval is None  # sin(inf) is nan
    k = SYMS["k"]
    assert facts_of(k * k + k).integer and facts_of(k * k).interval == (0.0, 25.0)
    assert not is_real(z) and is_real(r) and facts_of(r).finite is False and facts_of(SYMS["f"]).finite
    assert facts_of(eg.log(p)).real and not facts_of(eg.log(r)).real
    assert facts_of(Symbol("i", "int64")).integer


def test_float32_and_int64_widen() -> None:
    x32 = Symbol("x32", "float32", positive=True)
    assert is_nonnegative(x32 * x32) and facts_of(x32 * x32).upper == math.inf
    big = Symbol("m", "int64", lower=0, upper=2**62)
    assert facts_of(big * 4).interval == (-(2.0**63), 2.0**63)  # may wrap around: nothing known but the range
    assert facts_of(Symbol("m2", "int64", lower=0, upper=10) * 4).interval == (0.0, 40.0)


def test_deep_chain_is_iterative() -> None:
    t = p
    for i in range(20_000):
        t = t + const(float(i % 7))
    assert is_positive(t)


def test_shaped_symbols_hold_elementwise() -> None:
    a = Symbol("A", shape=(3,), positive=True)
    assert is_positive(a) and is_positive(eg.exp(Symbol("B", shape=(2,), lower=0, upper=1)))
    assert not is_nonnegative(eg.sum(a))  # a reduction is not analysed: unknown, never wrong


def test_exact_constants() -> None:
    # pi (an exact constant, or its float) and a rational constant: within an ulp of their values
    assert facts_of(eg.parse("pi")).positive and facts_of(eg.parse("pi")).interval[0] > 3.14  # type: ignore[index]
    lo, hi = facts_of(const(Fraction(1, 3))).interval  # type: ignore[misc]
    assert lo <= 1 / 3 <= hi and hi - lo < 1e-15
