"""A simplified form is never less accurate than its input, measured against mpmath at 2300 bits.

The error of a float result is counted in ulps of the exact value (the input term computed
exactly by mpmath at the same float inputs). Where the input is accurate (within :data:`SLACK`
ulps), the simplified form must be within SLACK ulps of the input's error. Where the input has
already lost more to cancellation (``x + x - x + (x + y - x) - (x + x - x)`` at ``|x| >> |y|``),
the rewrite computes the same cancellation in another order and may round differently; it must
then stay within :data:`FACTOR` times the input's error. Random linear combinations are evaluated at points
whose symbols differ in magnitude by at least 16x (so distinct symbols never cancel by chance,
only like terms do), spanning 2**-10 .. 2**54 (1e16 and beyond).

The safe strength is held to that at every point, issue 26's property: random sums, differences,
products and quotients (with cancelling and repeated terms and factors, constants, a few
functions) at huge, tiny and special inputs, 1e16, 1e200, 1e308, 1e-300, subnormals, +-0, inf
and nan, where distinct symbols do cancel each other. A nan or an overflow where the input is
finite counts as an infinite error.
"""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exprgraph.core import Term, const, exp, get_op, log, postorder, symbols
from exprgraph.eval import evaluate
from exprgraph.simplify import simplify

#: how many ulps worse than an accurate input a simplified form may be
SLACK = 4
#: how many times an inaccurate input's error a simplified form's error may be
FACTOR = 64
BITS = 2300  # enough for an exact sum of any two floats (2**1023 + 2**-1074)

X, Y, Z, W = symbols("x y z w")
SYMS = (X, Y, Z, W)


class OutOfReachError(ArithmeticError):
    """No exact value to judge by: exp(1e300) has a 1e300-bit exponent, and 1/0 is +-inf as the sign of
    a zero that simplify need not keep (``log(1 + x)`` is 0.0 at x = -0.0, ``log1p(x)`` -0.0)."""


def _exp(a: mpmath.mpf) -> mpmath.mpf:
    # exp(1e4) is far outside the float range but exact; exp(1e300) is not computable, and no stand-in
    # (inf, 0) is exact: log(1 + exp(1e300)) is 1e300. Such points are not judged.
    if mpmath.isfinite(a) and abs(a) > 100_000:
        raise OutOfReachError(a)
    return mpmath.exp(a)


def _real(f: object) -> object:
    """``f`` with nan for an argument outside its real domain (mpmath would go complex)."""
    return lambda a: mpmath.nan if a < 0 else f(a)  # type: ignore[operator]


def _logaddexp(a: mpmath.mpf, b: mpmath.mpf) -> mpmath.mpf:
    d = abs(a - b)
    if not mpmath.isfinite(d) or d > 100_000:
        return max(a, b)  # the other term adds less than exp(-100000): nothing a float can show
    return max(a, b) + mpmath.log1p(mpmath.exp(-d))


def _pow(a: mpmath.mpf, b: mpmath.mpf) -> mpmath.mpf:
    if a < 0 and mpmath.isfinite(b) and b != int(b):
        return mpmath.nan  # a negative base to a fractional power: nan, as in IEEE
    if a == 0 and b < 0:
        raise OutOfReachError("0**-1")  # +-inf, as the zero's sign, which simplify need not keep
    return a**b


def _div(a: mpmath.mpf, b: mpmath.mpf) -> mpmath.mpf:
    if b == 0:  # undefined for 0/0; else +-inf as the zero's sign, which simplify need not keep
        if a == 0 or mpmath.isnan(a):
            return mpmath.nan
        raise OutOfReachError("1/0")
    return a / b


_MP = {
    "add": lambda *a: mpmath.fsum(a),
    "sub": lambda a, b: a - b,
    "mul": lambda *a: mpmath.fprod(a),
    "truediv": _div,
    "neg": lambda a: -a,
    "pow": _pow,
    "exp": _exp,
    "log": _real(mpmath.log),
    "sqrt": _real(mpmath.sqrt),
    "sin": mpmath.sin,
    "cos": mpmath.cos,
    "abs": abs,
    "logaddexp": lambda a, b: _logaddexp(a, b),
}


def exact(term: Term, point: dict[Term, float]) -> mpmath.mpf:
    """The value of ``term`` at float inputs, computed at BITS bits (iteratively, shared nodes once)."""
    return exact_values(term, point)[term]


def exact_values(term: Term, point: dict[Term, float]) -> dict[Term, mpmath.mpf]:
    """The exact value of every node of ``term`` at float inputs (BITS bits)."""
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
        return values


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
    points: list[dict[Term, float]] = []
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


def multiples_of_sums() -> st.SearchStrategy[Term]:
    """``c*(a + b) + d``: a multiple of a sum beside terms that may share a symbol with it."""
    return st.builds(
        lambda c, a, b, d: c * (a + b) + d, st.sampled_from(COEFS), linear_terms(), linear_terms(), linear_terms()
    )


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(multiples_of_sums(), st.sampled_from(SYMS[:3]))
def test_a_sum_minus_itself_cancels_exactly_at_unsafe(term: Term, other: Term) -> None:
    # the finding (issue 30): 1.5*(x + z) - (y + x - y) - (1.5*(x + z) - (y + x - y)) - y became
    # 1.5*(x + z) - (1.5*z + y + 1.5*x), 24543 ulps off at x = 2.2e8, z = -4e6: the negated copy had
    # its multiple 1.5*(x + z) spread over x + z (a term of it cancels), the positive copy had not
    t = term - term - other
    assert not worse_points(t, POINTS, True)
    assert simplify(t, unsafe=True) is simplify(-other, unsafe=True)


def test_a_multiple_of_a_sum_is_spread_whatever_its_sign() -> None:
    t = 1.5 * (X + Z) + -1 * (Y + X - Y)
    assert str(simplify(t, unsafe=True)) == "0.5*x + 1.5*z"
    assert str(simplify(-t, unsafe=True)) == "-(1.5*z + 0.5*x)"
    assert simplify(t - t - Y, unsafe=True) is simplify(-Y, unsafe=True)


def test_the_polynomial_forms_keep_the_value_of_a_sum_with_a_zero() -> None:
    t = Y + 0 - Y + Y
    assert str(simplify(t, unsafe=True)) == "y"
    assert not worse_points(t, POINTS, True)


# -- issue 26: the safe strength at extreme inputs -----------------------------------------------------

LOGADDEXP = get_op("logaddexp")


def test_a_small_term_is_not_moved_in_front_of_a_cancellation() -> None:
    # the finding: 0.1 + (y - logaddexp(y, 0.0)) became y + 0.1 - logaddexp(0.0, y), 0.0 at y = 1e16
    t = 0.1 + (Y - LOGADDEXP(Y, 0.0))
    s = simplify(t)
    assert float(evaluate(s, {Y: 1e16})) == float(evaluate(t, {Y: 1e16})) == 0.1
    # a float sum is reassociated only where that is one rounding of the whole
    for t, at in [((X + Z) + Y, {X: 1e16, Y: 1.0, Z: -1e16}), (0.1 + (Y - X), {X: 1e16, Y: 1e16})]:
        assert float(evaluate(simplify(t), at)) == float(evaluate(t, at)), str(simplify(t))
    assert str(simplify(X + Y - X)) == "y + (x - x)"  # cancelling first stays: exactly y


def test_powers_merge_only_where_they_cannot_overflow() -> None:
    # the finding: x/x*(x/x) became x**2/x**2, nan at 1e200 where the input is 1.0
    t = X / X * (X / X)
    s = simplify(t)
    assert str(s) == "x/x"  # (x/x)*(x/x) is x/x exactly: 1.0, or nan at 0, inf and nan
    for v in (1e200, 1e-200, 3.0, 0.0, np.inf, np.nan):
        want, got = float(evaluate(t, {X: v})), float(evaluate(s, {X: v}))
        assert want == got or (np.isnan(want) and np.isnan(got)), (v, want, got)
    # x*y*x is not x**2*y (inf at x = 1e200, y = 1e-200); x*x*x is x**3 (overflows with it)
    assert float(evaluate(simplify(X * Y * X), {X: 1e200, Y: 1e-200})) == 1e200
    assert str(simplify(X * X * X)) == "x**3"
    assert float(evaluate(simplify(X / Y / Z), {X: 1e-300, Y: 1e-200, Z: 1e-200})) == pytest.approx(1e100)


#: inputs where float arithmetic goes wrong: cancellation, overflow, underflow, subnormals, zeros, inf, nan
SPECIAL = [
    0.0, -0.0, 1.0, -1.0, 0.1, -3.0, 1.5, 1e16, -1e16, 2.0**53 + 2, 1e200, -1e200, 1e308, -1.7e308,
    1e-300, -1e-300, 2.2250738585072014e-308, 5e-324, -5e-324, 1e-160, 1e160, np.inf, -np.inf, np.nan,
]  # fmt: skip


def special_points(n: int, seed: int) -> list[dict[Term, float]]:
    """``n`` points whose coordinates are drawn from :data:`SPECIAL` (so symbols do cancel each other)."""
    rng = np.random.default_rng(seed)
    return [{s: float(rng.choice(SPECIAL)) for s in SYMS[:3]} for _ in range(n)]


#: the random special points, and every order of two triples where distinct symbols cancel or overflow
EXTREME = special_points(64, seed=26) + [
    dict(zip(SYMS[:3], values, strict=True))
    for triple in ((1e16, -1e16, 1.0), (1e200, 1e-200, 1e200))
    for values in dict.fromkeys(itertools.permutations(triple))
]
CONSTANTS = [0.1, 1.0, 2.0, 3.0, 0.5, -1.0, 1e16, 1e-300]


def safe_terms() -> st.SearchStrategy[Term]:
    """Sums with cancelling terms, products and quotients with repeated factors, constants, a few functions."""
    leaves = st.one_of(st.sampled_from(SYMS[:3]), st.sampled_from(CONSTANTS).map(const))
    return st.recursive(
        leaves,
        lambda sub: st.one_of(
            st.tuples(sub, sub).map(lambda p: p[0] + p[1]),
            st.tuples(sub, sub).map(lambda p: p[0] - p[1]),
            st.tuples(sub, sub).map(lambda p: p[0] * p[1]),
            st.tuples(sub, sub).map(lambda p: p[0] / p[1]),
            st.tuples(sub, sub, sub).map(lambda p: get_op("add")(*p)),
            st.tuples(sub, sub, sub).map(lambda p: get_op("mul")(*p)),
            sub.map(lambda a: -a),
            # like terms that cancel around another term, and repeated factors
            st.tuples(sub, sub).map(lambda p: p[0] + p[1] - p[0]),
            st.tuples(sub, sub).map(lambda p: p[0] - (p[1] + p[0])),
            st.tuples(sub, sub).map(lambda p: p[0] * p[1] / p[0]),
            sub.map(lambda a: a / a * (a / a)),
            sub.map(lambda a: a * a),
            st.tuples(sub, st.sampled_from([2, 3, -1.0, -2.0, 0.5])).map(lambda p: p[0] ** p[1]),
            sub.map(lambda a: 0.1 + (a - LOGADDEXP(a, 0.0))),
            sub.map(exp),
            # the naive forms the stable rewrites replace, inside other terms
            sub.map(lambda a: log(1.0 + a)),
            st.tuples(sub, sub).map(lambda p: p[0] + (exp(p[1]) - 1.0)),
            st.tuples(sub, sub).map(lambda p: log(exp(p[0]) + exp(p[1]))),
        ),
        max_leaves=7,
    )


#: how far (relative) an intermediate value of the input may be off before its result counts as luck
LOST = 2.0**-40


def _lost(got: float, want: mpmath.mpf) -> bool:
    """Whether a computed ``got`` lost ``want`` (beyond LOST relative): cancelled, overflowed, underflowed, nan."""
    if mpmath.isnan(want):
        return not math.isnan(got)
    if mpmath.isinf(want):
        return not math.isinf(got)
    if abs(want) > np.finfo(np.float64).max:
        return got != math.copysign(math.inf, want)
    if not math.isfinite(got):
        return True
    with mpmath.workprec(BITS):
        return bool(abs(mpmath.mpf(got) - want) > LOST * abs(want))


def _inherited(got: float, want: mpmath.mpf, scale: mpmath.mpf) -> float:
    """The error of an intermediate value in ulps of ``max(|want|, scale)``: what it hands on to the result."""
    if not (math.isfinite(got) and mpmath.isfinite(want)):
        return 0.0
    with mpmath.workprec(BITS):
        return float(abs(mpmath.mpf(got) - want) / math.ulp(float(max(abs(want), scale))))


def _verdict(want: mpmath.mpf, b: float, a: float) -> tuple[str | None, float, float]:
    """Why ``a`` (the simplified form's value) is worse than ``b`` (the input's), exact value ``want``; and
    their errors in ulps (inf when not both finite). None when it is not worse."""
    e0 = e1 = math.inf
    why = None
    if mpmath.isnan(want):  # undefined (inf - inf, 0*inf, 0/0): a nan of the input stays a nan
        if math.isnan(b) and not math.isnan(a):
            why = f"{a} where the input gives nan"
    elif math.isnan(a) and not math.isnan(b):
        why = f"nan where the input gives {b}"
    elif mpmath.isinf(want) or abs(want) > np.finfo(np.float64).max:
        if math.isinf(b) and not math.isinf(a):  # overflowing as the input does (the sign may be a zero's)
            why = f"{a} where the input gives {b}"
    else:
        e0, e1 = ulps(b, want), ulps(a, want)
        if (e0 <= SLACK and e1 > e0 + SLACK) or e1 > SLACK + FACTOR * e0:
            why = f"{e1} ulps where the input has {e0}"
    return why, e0, e1


def _excused(term: Term, s: Term, p: dict[Term, float], nodes: list[Term], computed: list[float], e: tuple) -> bool:
    """Whether a worse result at ``p`` is one no rewrite can promise to avoid (``e``: the errors in ulps).

    An intermediate value of the input was lost (``u/u`` is 1.0 for any wrong finite ``u``, even the
    5e-324 that ``y + (exp(z) - 1.0)`` gives at y = -z = 5e-324 for 1e-647, where ``y + expm1(z)``
    gives the 0.0 nearest it and 0/0 is nan); or the input's intermediate values carry errors (in
    ulps of their scale, or of the result's) that two forms hand on differently, and the simplified
    form stays within them (``log1p(s)`` passes on the error of ``s`` that ``log(1 + s)`` partly
    rounds away); or the point is a coincidence: at a point moved by a relative 2**-40 (another
    factor for each symbol) the input is no longer accurate, or the simplified form no longer
    worse. ``x + 1.0 - (0.1 + 1.0)`` is exactly 0.0 at x = 0.1 only because ``x + 1.0`` and the
    constant round alike there; ``x*x/x - x*y/x`` is exactly 0.0 at x = y only because both terms
    round alike. Zeros, infinities and subnormals do not move: what goes wrong there always counts.
    """
    exacts = exact_values(term, p)
    want = exacts[term]
    scale = abs(want) if mpmath.isfinite(want) else mpmath.mpf(0)
    if any(_lost(c, exacts[n]) for n, c in zip(nodes, computed, strict=True)):
        return True
    e0, e1 = e
    inherited = max((_inherited(c, exacts[n], scale) for n, c in zip(nodes[:-1], computed, strict=False)), default=0.0)
    if math.isfinite(e1) and e1 <= e0 + SLACK + 2 * inherited:
        return True
    q = {v: x * (1 + (i + 1) * 2.0**-40) for i, (v, x) in enumerate(p.items())}
    try:
        moved = exact(term, q)
    except OutOfReachError:
        return True  # no exact value to judge by
    with np.errstate(all="ignore"):
        b, a = (float(v) for v in evaluate([term, s], q, on_unused_input="ignore"))
    why, e0, _ = _verdict(moved, b, a)
    return why is None or (math.isfinite(e0) and e0 > SLACK + FACTOR)


def less_accurate(term: Term, points: list[dict[Term, float]]) -> list[tuple]:
    """Where safe ``simplify(term)`` is less accurate than ``term``: ``(point, term, simplified, why)``.

    A nan, an infinity or an error beyond the ulps allowed (see the module docstring) where the
    input computes better counts, unless :func:`_excused`; where the exact value is undefined
    (inf - inf, 0*inf, 0/0) a nan of the input must stay a nan.
    """
    s = simplify(term)
    nodes = [n for n in postorder(term) if n.args]
    env = {v: np.array([p[v] for p in points]) for v in SYMS[:3]}
    with np.errstate(all="ignore"):
        after, before, *computed = (
            np.broadcast_to(np.asarray(v, dtype=np.float64), (len(points),))
            for v in evaluate([s, term, *nodes], env, on_unused_input="ignore")
        )
    bad = []
    for k, p in enumerate(points):
        try:
            want = exact(term, p)
        except OutOfReachError:
            continue
        why, e0, e1 = _verdict(want, float(before[k]), float(after[k]))
        if why is not None and not _excused(term, s, p, nodes, [float(c[k]) for c in computed], (e0, e1)):
            bad.append((p, str(term), str(s), why))
    return bad


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(safe_terms(), st.lists(st.tuples(*[st.floats(width=64)] * 3), max_size=3))
def test_safe_simplify_is_never_less_accurate(term: Term, drawn: list[tuple[float, float, float]]) -> None:
    points = EXTREME + [dict(zip(SYMS[:3], p, strict=True)) for p in drawn]
    bad = less_accurate(term, points)
    assert not bad, bad[:3]
