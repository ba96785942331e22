"""The stable rewrites: each replaces a formula that overflows or cancels, and only gains accuracy.

Every rewrite is checked at inputs where the naive formula fails (overflow to inf, log(0) = -inf,
1 + x rounding x away) against mpmath at 60 digits: the rewritten term is within a few units in
the last place there, the naive one far off. The stable ops themselves are checked against mpmath
over a wide range, in every backend.
"""

from __future__ import annotations

import importlib.util
import math

import mpmath
import numpy as np
import pytest

import exprgraph as eg
from exprgraph import Symbol
from exprgraph.compile import compile as eg_compile
from exprgraph.compile.cbuild import find_compiler
from exprgraph.errors import CompilerNotFoundError
from exprgraph.eval import evaluate
from exprgraph.simplify import simplify

mpmath.mp.dps = 60
x, y = Symbol("x"), Symbol("y")


def _sigmoid(v: mpmath.mpf) -> mpmath.mpf:
    return 1 / (1 + mpmath.exp(-v))


def _logaddexp(v: mpmath.mpf, w: mpmath.mpf) -> mpmath.mpf:
    # log(exp(v) + exp(w)), written so that 60 digits suffice even when one term is e**-1000 of the other
    return max(v, w) + mpmath.log1p(mpmath.exp(-abs(v - w)))


# (naive term, its stable form, exact value as a function of the point, points where the naive form fails)
CASES = [
    (eg.log(1 + x), eg.log1p(x), lambda p: mpmath.log1p(p[0]), [(1e-20,), (-3e-17,), (1e-300,)]),
    (eg.exp(x) - 1, eg.expm1(x), lambda p: mpmath.expm1(p[0]), [(1e-20,), (-2e-17,), (5e-310,)]),
    (3 * eg.exp(x) - 3, 3 * eg.expm1(x), lambda p: 3 * mpmath.expm1(p[0]), [(1e-18,)]),
    (
        eg.log(eg.exp(x) + eg.exp(y)),
        eg.logaddexp(y, x),
        lambda p: _logaddexp(p[0], p[1]),
        [(1000.0, 999.0), (-1000.0, -1001.5), (800.0, -800.0), (-760.0, -760.0)],
    ),
    (eg.log(1 + eg.exp(x)), eg.softplus(x), lambda p: mpmath.log1p(mpmath.exp(p[0])), [(800.0,), (-40.0,), (710.5,)]),
    (eg.log1p(eg.exp(x)), eg.softplus(x), lambda p: mpmath.log1p(mpmath.exp(p[0])), [(750.0,)]),
    (eg.log(eg.sigmoid(x)), eg.log_sigmoid(x), lambda p: mpmath.log(_sigmoid(p[0])), [(-800.0,), (40.0,), (-745.5,)]),
    (
        eg.log(1 - eg.sigmoid(x)),
        eg.log_sigmoid(-x),
        lambda p: -mpmath.log1p(mpmath.exp(p[0])),  # 1 - sigmoid(x) = sigmoid(-x), without cancelling
        [(40.0,), (800.0,)],
    ),
    (1 / (1 + eg.exp(-x)), eg.sigmoid(x), lambda p: _sigmoid(p[0]), [(-710.0,), (-709.9,)]),
    (-eg.log(1 + eg.exp(-x)), eg.log_sigmoid(x), lambda p: -mpmath.log1p(mpmath.exp(-p[0])), [(-800.0,), (38.0,)]),
]


def _relative_error(got: float, exact: mpmath.mpf) -> float:
    if exact == 0:
        return 0.0 if got == 0 else math.inf
    if not math.isfinite(got):
        return math.inf
    return float(abs((mpmath.mpf(got) - exact) / exact))


@pytest.mark.parametrize(("naive", "stable", "exact", "points"), CASES, ids=[str(c[0]) for c in CASES])
def test_each_rewrite_removes_overflow_or_cancellation(naive, stable, exact, points) -> None:
    # simplify finds the stable form by itself, by default and without the unsafe rules
    s = simplify(naive)
    assert s is simplify(stable) and simplify(naive, unsafe=False) is s, (str(naive), str(s))
    symbols = sorted(naive.free_symbols, key=lambda t: t.name)
    for point in points:
        env = dict(zip(symbols, point, strict=False))
        with np.errstate(all="ignore"):
            before, after = (float(v) for v in evaluate([naive, s], env))
        want = exact([mpmath.mpf(v) for v in point])
        assert _relative_error(after, want) < 4e-16, (str(s), point, after, want)
        assert _relative_error(before, want) > 1e-3, (str(naive), point, before, want)  # the naive form fails here


def test_rewrites_on_float32_terms() -> None:
    # float32 overflows at 88 and rounds 1 + x at 6e-8: the same rewrites, computed in float32
    a, b = Symbol("a", "float32"), Symbol("b", "float32")
    cases = [
        (eg.log(1 + a), {a: 1e-9}, lambda v: mpmath.log1p(v[a])),
        (eg.exp(a) - 1, {a: -1e-9}, lambda v: mpmath.expm1(v[a])),
        (eg.log(eg.exp(a) + eg.exp(b)), {a: 100.0, b: 99.0}, lambda v: mpmath.log(mpmath.exp(v[a]) + mpmath.exp(v[b]))),
        (eg.log(1 + eg.exp(a)), {a: 95.0}, lambda v: mpmath.log1p(mpmath.exp(v[a]))),
        (eg.log(eg.sigmoid(a)), {a: -110.0}, lambda v: mpmath.log(_sigmoid(v[a]))),
    ]
    for naive, point, exact in cases:
        s = simplify(naive)
        assert s.dtype == "float32" and s is not naive
        env = {k: np.float32(v) for k, v in point.items()}
        with np.errstate(all="ignore"):
            before, after = evaluate([naive, s], env)
        assert after.dtype == np.float32
        want = exact({k: mpmath.mpf(float(v)) for k, v in env.items()})
        assert _relative_error(float(after), want) < 2e-7, (str(s), after, want)
        assert _relative_error(float(before), want) > 1e-3, (str(naive), before, want)


def _usable(backend: str) -> bool:
    """Whether ``backend`` compiles here: C needs a compiler, LLVM the llvmlite package."""
    if backend == "c":
        try:
            return bool(find_compiler())
        except CompilerNotFoundError:
            return False
    return backend != "llvm" or importlib.util.find_spec("llvmlite") is not None


WIDE = np.array([-1e4, -800.0, -745.0, -40.0, -1.0, -1e-5, -1e-20, 0.0, 1e-20, 1e-5, 0.5, 1.0, 40.0, 709.0, 800.0])
OPS = [
    (eg.log1p(x), lambda v, w: mpmath.log1p(v) if v > -1 else None),
    (eg.expm1(x), lambda v, w: mpmath.expm1(v)),
    (eg.softplus(x), lambda v, w: mpmath.log1p(mpmath.exp(v))),
    (eg.log_sigmoid(x), lambda v, w: -mpmath.log1p(mpmath.exp(-v))),
    (eg.logaddexp(x, y), lambda v, w: _logaddexp(v, w)),
]


@pytest.mark.parametrize("backend", [b for b in ("evaluate", "numpy", "c", "llvm") if _usable(b)])
def test_stable_ops_are_accurate_everywhere(backend: str) -> None:
    xs, ys = np.meshgrid(WIDE, WIDE[::-1] * 0.75)
    xs, ys = xs.ravel(), ys.ravel()
    terms = [t for t, _ in OPS]
    with np.errstate(all="ignore"):
        if backend == "evaluate":
            got = evaluate(terms, {x: xs, y: ys})
        else:
            got = eg_compile(terms, [x, y], backend=backend)(xs, ys)
    for (term, exact), values in zip(OPS, got, strict=True):
        worst = 0.0
        for v, w, g in zip(xs, ys, values, strict=True):
            want = exact(mpmath.mpf(v), mpmath.mpf(w))
            if want is None or abs(want) > 1e308 or (want != 0 and abs(want) < 1e-300):
                continue  # outside the domain, or beyond double's range (over- or underflow is right)
            worst = max(worst, _relative_error(float(g), want))
        assert worst < 8e-16, (str(term), backend, worst)
    # the edges of the domain and the infinities
    edges = np.array([-1.0, -np.inf, np.inf])
    singles = [eg.log1p(x), eg.expm1(x), eg.softplus(x), eg.log_sigmoid(x)]
    with np.errstate(all="ignore"):
        if backend == "evaluate":
            log1p, expm1, softplus, log_sigmoid = evaluate(singles, {x: edges})
        else:
            log1p, expm1, softplus, log_sigmoid = eg_compile(singles, [x], backend=backend)(edges)
    assert log1p[0] == -np.inf and np.isnan(log1p[1]) and log1p[2] == np.inf
    assert expm1.tolist()[1:] == [-1.0, np.inf]
    assert softplus.tolist()[1:] == [0.0, np.inf]
    assert log_sigmoid[1] == -np.inf and log_sigmoid[2] == 0.0 and np.signbit(log_sigmoid[2])
