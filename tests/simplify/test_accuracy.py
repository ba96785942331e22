"""A simplified form is never less accurate than its input, measured against mpmath at 2300 bits.

The error of a float result is counted in ulps of the exact value (the input term computed
exactly by mpmath at the same float inputs). Where the input is accurate (within :data:`SLACK`
ulps), the simplified form must be within SLACK ulps of the input's error. Where the input has
already lost more to cancellation (``x + x - x + (x + y - x) - (x + x - x)`` at ``|x| >> |y|``),
the rewrite computes the same cancellation in another order and may round differently; it must
then stay within :data:`FACTOR` times the input's error. Random linear combinations are evaluated at points
whose symbols differ in magnitude by at least 16x (so distinct symbols never cancel by chance,
only like terms do), spanning 2**-10 .. 2**54 (1e16 and beyond).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exprgraph.core import Term, postorder, symbols
from exprgraph.eval import evaluate
from exprgraph.simplify import simplify

#: how many ulps worse than an accurate input a simplified form may be
SLACK = 4
#: how many times an inaccurate input's error a simplified form's error may be
FACTOR = 64
BITS = 2300  # enough for an exact sum of any two floats (2**1023 + 2**-1074)

X, Y, Z, W = symbols("x y z w")
SYMS = (X, Y, Z, W)

_MP = {
    "add": lambda *a: mpmath.fsum(a),
    "sub": lambda a, b: a - b,
    "mul": lambda *a: mpmath.fprod(a),
    "truediv": lambda a, b: a / b,
    "neg": lambda a: -a,
    "pow": lambda a, b: a**b,
    "exp": mpmath.exp,
    "log": mpmath.log,
    "sqrt": mpmath.sqrt,
    "sin": mpmath.sin,
    "cos": mpmath.cos,
    "abs": abs,
}


def exact(term: Term, point: dict[Term, float]) -> mpmath.mpf:
    """The value of ``term`` at float inputs, computed at BITS bits (iteratively, shared nodes once)."""
    with mpmath.workprec(BITS):
        values: dict[Term, mpmath.mpf] = {}
        for node in postorder(term):
            name = node.op.name
            if name == "symbol":
                values[node] = mpmath.mpf(point[node])
            elif name == "const":
                values[node] = mpmath.mpf(node.attr)
            else:
                values[node] = _MP[name](*(values[a] for a in node.args))
        return values[term]


def ulps(got: float, want: mpmath.mpf) -> float:
    """``|got - want|`` in ulps of ``want`` (rounded to a float); inf for a non-finite ``got``."""
    if not math.isfinite(got):
        return math.inf
    with mpmath.workprec(BITS):
        scale = math.ulp(float(want)) if float(want) != 0 else math.ulp(0.0)
        return float(abs(mpmath.mpf(got) - want) / scale)


def worse_points(term: Term, points: list[dict[Term, float]], unsafe: bool) -> list[tuple]:
    """``(point, term, simplified, input error, simplified error)`` wherever the simplified form is worse."""
    s = simplify(term, unsafe=unsafe)
    syms = sorted(term.free_symbols, key=lambda t: t.name)
    env = {v: np.array([p[v] for p in points]) for v in syms}
    with np.errstate(all="ignore"):
        before, after = (
            np.broadcast_to(np.asarray(v, dtype=np.float64), (len(points),)) for v in evaluate([term, s], env)
        )
    bad = []
    for k, p in enumerate(points):
        want = exact(term, p)
        if not mpmath.isfinite(want) or abs(want) > np.finfo(np.float64).max:
            continue
        e0, e1 = ulps(float(before[k]), want), ulps(float(after[k]), want)
        if (e0 <= SLACK and e1 > e0 + SLACK) or e1 > SLACK + FACTOR * e0:
            bad.append(({v.name: p[v] for v in syms}, str(term), str(s), e0, e1))
    return bad


# -- the regressions of issue 12 ---------------------------------------------------------------------

CORPUS = [
    (Y - Y - Z, {Y: 1e16, Z: 1.0}),  # y - z - y loses the 1 to cancellation
    (Y - Y - Z, {Y: -3e17, Z: 0.125}),
    (X + Y - X, {X: 1e16, Y: 1.0}),
    (Y - Z - Y + Z + X, {X: 1e-3, Y: 1e18, Z: 7.0}),
    (2 * Y - Y - Z, {Y: 1e16, Z: 3.0}),
    (Y + Y - Y - Y + Z, {Y: 2.0**60, Z: 1.5}),
    (X - (X - Y), {X: 1e17, Y: 0.3}),
    (X / X * Y, {X: 1e200, Y: 1e200}),  # x*y/x overflows
    (X * (1 / X) * Y, {X: 1e-200, Y: 1e-200}),  # x*y/x underflows
    (Y * 1e200 * 1e-200, {Y: 1e200}),
    (X + 1e308 - 1e308, {X: 1.0}),
    ((X + Y) - (X - Z), {X: 1e16, Y: 1.0, Z: 2.0}),
]


@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
@pytest.mark.parametrize("term,point", CORPUS, ids=[str(t) for t, _ in CORPUS])
def test_simplify_is_not_less_accurate(term: Term, point: dict, unsafe: bool) -> None:
    assert not worse_points(term, [point], unsafe)


def test_the_safe_simplifier_cancels_before_reordering() -> None:
    # the finding: y - y - z was reordered to y - z - y; now like terms cancel first (y - y stays a
    # unit: exactly 0.0, or nan for an infinite y), and only then is anything reordered
    s = simplify(Y - Y - Z, unsafe=False)
    assert str(s) == "y - y - z"
    assert float(evaluate(s, {Y: 1e16, Z: 1.0})) == -1.0
    assert np.isnan(evaluate(s, {Y: np.inf, Z: 1.0}))
    assert str(simplify(X + Y - X, unsafe=False)) == "y + (x - x)"
    assert str(simplify(Y - (X + Y), unsafe=False)) == "y - y - x"
    assert float(evaluate(simplify(Y - (X + Y), unsafe=False), {X: 1.0, Y: 1e16})) == -1.0


# -- random linear combinations ----------------------------------------------------------------------


def spread_points(n: int, seed: int) -> list[dict[Term, float]]:
    """Points whose symbols' magnitudes are at least 16x apart, between 2**-10 and 2**54, random signs."""
    rng = np.random.default_rng(seed)
    points = []
    while len(points) < n:
        exps = rng.integers(-10, 55, len(SYMS))
        if len(exps) > 1 and np.min(np.diff(np.sort(exps))) < 4:
            continue
        mant = rng.uniform(1.0, 2.0, len(SYMS)) * rng.choice([-1.0, 1.0], len(SYMS))
        points.append({s: float(m * 2.0 ** int(e)) for s, m, e in zip(SYMS, mant, exps, strict=True)})
    return points


POINTS = spread_points(40, seed=12)
COEFS = [2, 3, -1, 0.5, 1.5]


def linear_terms() -> st.SearchStrategy[Term]:
    """Nested sums, differences and small multiples of a few symbols (like terms are frequent)."""
    leaves = st.sampled_from(SYMS[:3])
    return st.recursive(
        leaves,
        lambda sub: st.one_of(
            st.tuples(sub, sub).map(lambda p: p[0] + p[1]),
            st.tuples(sub, sub).map(lambda p: p[0] - p[1]),
            sub.map(lambda a: -a),
            st.tuples(st.sampled_from(COEFS), sub).map(lambda p: p[0] * p[1]),
            # like terms that cancel, around another term
            st.tuples(sub, sub).map(lambda p: p[0] + p[1] - p[0]),
            st.tuples(sub, sub).map(lambda p: p[0] - p[0] - p[1]),
        ),
        max_leaves=8,
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(linear_terms(), st.booleans())
def test_random_sums_are_not_less_accurate(term: Term, unsafe: bool) -> None:
    assert not worse_points(term, POINTS, unsafe)
