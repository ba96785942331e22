"""Hypothesis strategies for random terms, shared by the diff, simplify and compile tests."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import exprgraph as eg

X, Y, Z = eg.symbols("x y z")
SYMBOLS = (X, Y, Z)

# smooth everywhere on the reals (so finite differences apply at any point)
SMOOTH_UNARY = [
    ("sin", eg.sin),
    ("cos", eg.cos),
    ("tanh", eg.tanh),
    ("sigmoid", eg.sigmoid),
    ("exp_tanh", lambda a: eg.exp(eg.tanh(a))),
    ("log1p_sq", lambda a: eg.log(1.0 + a * a)),
    ("sqrt1p_sq", lambda a: eg.sqrt(1.0 + a * a)),
    ("neg", lambda a: -a),
    ("square", lambda a: a**2),
    ("cube", lambda a: a**3),
    ("tan_bounded", lambda a: eg.tan(0.5 * eg.tanh(a))),
]
SMOOTH_BINARY = [
    ("add", lambda a, b: a + b),
    ("sub", lambda a, b: a - b),
    ("mul", lambda a, b: a * b),
    ("div", lambda a, b: a / (1.5 + eg.sin(b))),
    ("add3", lambda a, b: eg.add(a, b, a * b)),
    ("mul3", lambda a, b: eg.mul(a, b, 0.5)),
    ("pow", lambda a, b: (1.0 + a * a) ** eg.tanh(b)),
]

# anything goes (values may be nan or inf at some points)
ANY_UNARY = [
    *SMOOTH_UNARY,
    ("abs", abs),
    ("exp", eg.exp),
    ("log", eg.log),
    ("sqrt", eg.sqrt),
    ("recip", lambda a: 1.0 / a),
    ("neg2", lambda a: eg.neg(eg.neg(a))),
    ("times1", lambda a: a * 1),
    ("plus0", lambda a: a + 0),
    ("pow1", lambda a: a**1),
    ("pow2f", lambda a: a**2.0),
    ("pow_m2", lambda a: a**-2),
    ("abs_neg", lambda a: abs(-a)),
]
ANY_BINARY = [
    *SMOOTH_BINARY,
    ("truediv", lambda a, b: a / b),
    ("max", eg.maximum),
    ("min", eg.minimum),
    ("max3", lambda a, b: eg.maximum(a, b, a)),
    ("minus_self", lambda a, b: a - a + b),
    ("cancel", lambda a, b: (a * b) / b),
    ("times0", lambda a, b: a * 0 + b),
    ("like", lambda a, b: 3 * a - a + b + b),
    ("powpow", lambda a, b: (a**2) ** 3 + b),
    ("exp_prod", lambda a, b: eg.exp(a) * eg.exp(b)),
    ("log_exp", lambda a, b: eg.log(eg.exp(a)) + b),
    ("log_sqrt", lambda a, b: eg.log(eg.sqrt(a)) * b),
    ("const_fold", lambda a, b: a * (2.0 + 3.0) + b),
]
# discontinuous: a rounding difference in an operand can move the result by a whole step
JUMPY_BINARY = [
    ("floordiv", lambda a, b: a // b),
    ("mod", lambda a, b: a % b),
    ("where", lambda a, b: eg.where(a < b, a, b)),
    ("where_not", lambda a, b: eg.where(~(a < b), a * b, b)),
    ("cmp_self", lambda a, b: eg.where(a < a, b, a)),
    ("logic", lambda a, b: eg.where((a < b) & (b < 1.0) | (a > 2.0), a, b)),
    ("where_ge", lambda a, b: eg.where((a >= b) | eg.eq(a, 1.0), a - b, b)),
]
# exact on small integers held in floats (no rounding at all)
EXACT_UNARY = [("neg", lambda a: -a), ("abs", abs), ("square", lambda a: a**2), ("times1", lambda a: a * 1)]
EXACT_BINARY = [
    ("add", lambda a, b: a + b),
    ("sub", lambda a, b: a - b),
    ("mul", lambda a, b: a * b),
    ("minus_self", lambda a, b: a - a + b),
    ("like", lambda a, b: 3 * a - a + b + b),
    ("max", eg.maximum),
    ("min", eg.minimum),
    *JUMPY_BINARY,
]


KINDS = {
    "smooth": (SMOOTH_UNARY, SMOOTH_BINARY),
    "continuous": (ANY_UNARY, ANY_BINARY),
    "any": (ANY_UNARY, ANY_BINARY + JUMPY_BINARY),
    "exact": (EXACT_UNARY, EXACT_BINARY),
}


@st.composite
def terms(draw: st.DrawFn, smooth: bool = True, max_depth: int = 4, kind: str | None = None) -> eg.Term:
    """A random float64 scalar term over x, y, z: kind "smooth", "any" (with jumps), "continuous" or "exact"."""
    kind = kind or ("smooth" if smooth else "any")
    unary, binary = KINDS[kind]
    leaves = st.one_of(st.sampled_from(SYMBOLS), st.sampled_from([0.5, 2.0, -1.5, 3.0]).map(eg.const))

    def build(depth: int) -> eg.Term:
        if depth == 0 or draw(st.integers(0, 4)) == 0:
            return draw(leaves)
        if draw(st.booleans()):
            _, fn = draw(st.sampled_from(unary))
            return fn(build(depth - 1))
        _, fn = draw(st.sampled_from(binary))
        return fn(build(depth - 1), build(depth - 1))

    t = build(max_depth)
    if not t.free_symbols:
        t = t + X
    return t


points = st.lists(st.floats(-2.0, 2.0, allow_nan=False), min_size=3, max_size=3).map(
    lambda v: dict(zip(SYMBOLS, v, strict=True))
)


def point_arrays(n: int = 64, seed: int = 0, lo: float = -2.0, hi: float = 2.0) -> dict:
    """``n`` random points for x, y, z."""
    rng = np.random.default_rng(seed)
    return {s: rng.uniform(lo, hi, n) for s in SYMBOLS}


def random_terms(
    n: int, seed: int = 0, smooth: bool = False, max_depth: int = 4, kind: str | None = None
) -> list[eg.Term]:
    """``n`` random terms from a seeded numpy generator (for tests that batch many terms at once)."""
    rng = np.random.default_rng(seed)
    unary, binary = KINDS[kind or ("smooth" if smooth else "any")]
    leaves = [*SYMBOLS, eg.const(0.5), eg.const(2.0), eg.const(-1.5)]

    def build(depth: int) -> eg.Term:
        if depth == 0 or rng.integers(0, 5) == 0:
            return leaves[rng.integers(len(leaves))]
        if rng.integers(0, 2):
            return unary[rng.integers(len(unary))][1](build(depth - 1))
        return binary[rng.integers(len(binary))][1](build(depth - 1), build(depth - 1))

    out = []
    while len(out) < n:
        t = build(max_depth)
        if t.free_symbols:
            out.append(t)
    return out


def special_points(n: int = 40, seed: int = 0) -> list[np.ndarray]:
    """Random values for x, y, z with 0, -0, +-1, +-inf, nan, tiny and huge among them."""
    rng = np.random.default_rng(seed)
    specials = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-300, 1e300, 2.0])
    out = []
    for _ in SYMBOLS:
        v = rng.uniform(-3, 3, n)
        v[: len(specials)] = rng.permutation(specials)
        out.append(v)
    return out


def assert_same(got: object, want: object) -> None:
    """Same dtype and shape; floats equal to 1e-12 relative, nan and inf in the same places."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0, equal_nan=True)
        assert np.array_equal(np.isinf(got), np.isinf(want))
    else:
        np.testing.assert_array_equal(got, want)


def intermediate_scale(t: eg.Term, env: dict) -> np.ndarray:
    """Per point, the largest finite magnitude among the values of ``t``'s subterms (at least 1)."""
    nodes = eg.postorder(t)
    with np.errstate(all="ignore"):
        values = eg.evaluate(nodes, env)
    shape = np.broadcast_shapes(*(np.shape(v) for v in values))
    scale = np.ones(shape)
    for v in values:
        a = np.abs(np.asarray(v, dtype=np.float64))
        scale = np.maximum(scale, np.where(np.isfinite(a), a, 0.0))
    return scale


def assert_close_conditioned(t: eg.Term, got: object, want: object, env: dict, rtol: float = 1e-12) -> None:
    """Like :func:`assert_same`, but the float tolerance also scales with the intermediate magnitudes.

    A last-bit difference of a libm function in a large intermediate (sin of 700, say) shows in the
    result as ``ulp(700)``, so the allowance is ``rtol * (|want| + scale of the intermediates)``.
    """
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype.kind != "f":
        np.testing.assert_array_equal(got, want)
        return
    flips = (np.isnan(got) != np.isnan(want)) | (np.isposinf(got) != np.isposinf(want))
    flips |= np.isneginf(got) != np.isneginf(want)
    if flips.any():  # allowed only next to a singularity, where the last bit of a libm decides
        near = _near_a_singularity(t, env, rtol)
        assert np.all(np.broadcast_to(near, flips.shape)[flips]), (
            "nan or inf differ where the result is well conditioned"
        )
        got = np.where(flips, want, got)
    finite = np.isfinite(want)
    allowed = rtol * (np.where(finite, np.abs(want), 0.0) + intermediate_scale(t, env))
    with np.errstate(all="ignore"):
        diff = np.abs(np.where(finite, got - want, 0.0))
    worst = np.argmax(diff - allowed) if diff.size else 0
    assert np.all(diff <= allowed), f"{got.ravel()[worst]!r} vs {want.ravel()[worst]!r}"


#: ops singular at 0 in the argument given: a last-bit difference there decides between inf, nan and a finite value
_SINGULAR_AT_ZERO = {"log": 0, "log2": 0, "log10": 0, "sqrt": 0, "div": 1, "pow": 0}


def _near_a_singularity(t: eg.Term, env: dict, rtol: float) -> np.ndarray:
    """Points where some log, sqrt, divisor or power base of ``t`` is within rounding of 0.

    There a libm's last bit decides between a cancellation to 0 (an infinity or a nan) and a tiny
    finite value (``log(log(exp(x)) + abs(x))`` at x = -1), so the comparison does not hold.
    """
    nodes = [n for n in eg.postorder(t) if n.op.name in _SINGULAR_AT_ZERO and n.args]
    args = [n.args[_SINGULAR_AT_ZERO[n.op.name]] for n in nodes]
    scale = intermediate_scale(t, env)
    near = np.zeros(scale.shape, dtype=bool)
    if args:
        with np.errstate(all="ignore"):
            values = eg.evaluate(args, env)
        for v in values:
            a = np.abs(np.asarray(v, dtype=np.float64))
            near |= np.broadcast_to(a <= 64 * rtol * scale, near.shape)
    return near


def compiled_backends() -> list[str]:
    """The compiled backends this machine can run: numpy always, c with a C compiler, llvm with llvmlite."""
    from exprgraph.compile.cbuild import find_compiler
    from exprgraph.errors import CompilerNotFoundError

    out = ["numpy"]
    try:
        find_compiler()
        out.append("c")
    except CompilerNotFoundError:
        pass
    try:
        import llvmlite  # noqa: F401

        out.append("llvm")
    except ImportError:
        pass
    return out
