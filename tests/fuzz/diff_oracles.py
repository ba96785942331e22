"""Random terms and oracles shared by the derivative fuzzers (test_fuzz_derivatives*.py).

Terms are DAGs grown from a pool of earlier nodes (so subterms are shared), over the float64
symbols x, y, z and the int64 symbol k, with smooth ops, ops defined on part of the line (log,
sqrt, acos...) and piecewise ones (abs, maximum, where, floor, mod...). The finite-difference
oracle looks at a batch of points along random directions at once: a point counts only where
every value on its stencil is finite and moderate, and no piecewise op changes branch on the
stencil (a kink or a jump crossed there makes differences meaningless); there the gradient must
match a five-point difference within what two step sizes say about the differences' own error.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from hypothesis import strategies as st

import exprgraph as eg

X, Y, Z = eg.symbols("x y z")
K = eg.Symbol("k", "int64")
FLOATS = (X, Y, Z)
_op = eg.get_op

#: one-operand builders: (name, function of a term)
UNARY: list[tuple[str, Callable[[eg.Term], eg.Term]]] = [
    *((n, _op(n)) for n in ("sin", "cos", "tan", "tanh", "sigmoid", "exp", "log", "sqrt", "neg", "sinh", "cosh")),
    *((n, _op(n)) for n in ("atan", "asinh", "acos", "asin", "atanh", "erf", "erfc", "softplus", "log_sigmoid")),
    *((n, _op(n)) for n in ("log1p", "expm1", "log2", "log10", "abs", "floor", "ceil", "trunc", "sign")),
    ("square", lambda a: a**2),
    ("cube", lambda a: a**3),
    ("recip", lambda a: 1.0 / a),
    ("pow_half", lambda a: a**0.5),
    ("pow_m2", lambda a: a**-2),
    ("pow_int", lambda a: a ** eg.const(3)),
    ("times_k", lambda a: a * K),
    ("pow_k", lambda a: a**K),
    ("floor_times", lambda a: eg.floor(a) * a),
    ("plus_half_k", lambda a: a + K // 2),
    ("where_k", lambda a: eg.where(K > 1, a, -a)),
]
#: two-operand builders
BINARY: list[tuple[str, Callable[[eg.Term, eg.Term], eg.Term]]] = [
    *((n, _op(n)) for n in ("add", "sub", "mul", "truediv", "pow", "maximum", "minimum", "hypot", "atan2")),
    *((n, _op(n)) for n in ("logaddexp", "floordiv", "mod", "fmod", "truncdiv")),
    ("add3", lambda a, b: eg.add(a, b, a)),
    ("mul3", lambda a, b: eg.mul(a, b, a)),
    ("max3", lambda a, b: eg.maximum(a, b, a)),
    ("min3", lambda a, b: eg.minimum(a, a, b)),
    ("max_self", lambda a, b: eg.maximum(a, a) + b),
    ("where_lt", lambda a, b: eg.where(a < b, a * b, b)),
    ("where_ge", lambda a, b: eg.where(a >= b, eg.sin(a), b - a)),
    ("where_eq", lambda a, b: eg.where(eg.eq(a, b), a, b * 2.0)),
    ("where_ne", lambda a, b: eg.where(eg.ne(a, b), a, b)),
    ("where_logic", lambda a, b: eg.where((a < b) & (b < 1.0) | ~(a > 2.0), a, b)),
    ("div_const", lambda a, b: a / 3.0 + b),
    ("pow_int_exp", lambda a, b: a ** eg.const(2) * b),
]
#: smooth everywhere (on the reals) builders, for the large DAGs (values stay bounded)
BOUNDED_UNARY = [_op("sin"), _op("cos"), _op("tanh"), _op("sigmoid"), _op("atan"), _op("erf")]
BOUNDED_BINARY: list[Callable[[eg.Term, eg.Term], eg.Term]] = [
    lambda a, b: 0.5 * (a + b),
    lambda a, b: a * b,
    lambda a, b: a - b,
    lambda a, b: a / (2.0 + eg.cos(b)),
    lambda a, b: eg.maximum(a, b),
    lambda a, b: eg.where(a < b, a, eg.sin(b)),
    lambda a, b: abs(a) * b,
    lambda a, b: eg.hypot(a, 1.0 + b * b),
]

#: the int symbol k is reached through the builders that read it (an int ** negative int has no value)
LEAVES = [X, Y, Z, eg.const(2.0), eg.const(-0.5), eg.const(1.0)]


@st.composite
def dag_outputs(draw: st.DrawFn, outputs: int = 1, max_steps: int = 14, wrt: Sequence[eg.Term] = FLOATS) -> list:
    """Random float64 scalar terms of one DAG: nodes built from earlier ones (shared); the last ``outputs`` nodes."""
    pool = list(LEAVES)
    for _ in range(draw(st.integers(outputs, max_steps))):
        # prefer recent nodes (deep terms) but reach back to any (sharing)
        pick = st.one_of(st.sampled_from(pool), st.sampled_from(pool[-3:]))
        if draw(st.booleans()):
            t = draw(st.sampled_from(UNARY))[1](draw(pick))
        else:
            t = draw(st.sampled_from(BINARY))[1](draw(pick), draw(pick))
        pool.append(t)
    out = []
    for t in pool[-outputs:]:
        if t.dtype != "float64":
            t = t * 1.5
        if not any(s in t.free_symbols for s in wrt):
            t = t + X * Y
        out.append(t)
    return out


def dags(max_steps: int = 14) -> st.SearchStrategy[eg.Term]:
    """One random float64 scalar DAG (see :func:`dag_outputs`)."""
    return dag_outputs(1, max_steps).map(lambda ts: ts[0])


def large_dag(seed: int, nodes: int, symbols: Sequence[eg.Term]) -> eg.Term:
    """A DAG of about ``nodes`` distinct nodes built iteratively, each op reading two earlier nodes (heavy reuse)."""
    rng = np.random.default_rng(seed)
    pool: list[eg.Term] = list(symbols)
    while len(pool) < nodes:
        a = pool[int(len(pool) * rng.random() ** 0.5)]  # biased to recent nodes: a deep DAG
        b = pool[rng.integers(len(pool))]
        if rng.random() < 0.4:
            pool.append(BOUNDED_UNARY[rng.integers(len(BOUNDED_UNARY))](a))
        else:
            pool.append(BOUNDED_BINARY[rng.integers(len(BOUNDED_BINARY))](a, b))
    # the output adds up every node no other node reads (so the whole DAG is live)
    read = {a for t in pool for a in t.args}
    return eg.add(*(t for t in pool[len(symbols) :] if t not in read))


# -- the stencil: many points, many steps, one evaluation --------------------------------------------------

#: steps along the direction, as multiples of the base step h: the 5-point stencils at h and at h/2
STEPS = np.array([0.0, -2.0, -1.0, 1.0, 2.0, -1.0 / 2, 1.0 / 2])
H = 1e-3
#: a point counts only where every intermediate of the stencil is at most this large
MAX_MAGNITUDE = 1e6


def stencil_env(center: dict[eg.Term, np.ndarray], direction: dict[eg.Term, np.ndarray], extra: dict) -> dict:
    """The env of every point ``center + s*H*direction`` (points by rows, steps by columns)."""
    env = {s: c[:, None] + H * STEPS[None, :] * direction[s][:, None] for s, c in center.items()}
    env.update(extra)
    return env


def five_point(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The directional derivatives from the stencil values (rows: points): at step H and at H/2."""
    v = values
    with np.errstate(all="ignore"):
        at_h = (v[:, 1] - 8 * v[:, 2] + 8 * v[:, 3] - v[:, 4]) / (12 * H)
        # (the H/2 stencil's outer points are the H stencil's inner ones)
        at_half = (v[:, 2] - 8 * v[:, 5] + 8 * v[:, 6] - v[:, 3]) / (6 * H)
    return at_h, at_half


#: ops whose value or derivative jumps somewhere: a point counts only where none changes branch on its stencil
_BRANCHES: dict[str, Callable[[list[np.ndarray], np.ndarray], list[np.ndarray]]] = {
    **dict.fromkeys(("abs", "sign", "sqrt", "log", "log2", "log10"), lambda a, v: [np.sign(a[0])]),
    "maximum": lambda a, v: [np.argmax(np.broadcast_arrays(*a), axis=0)],
    "minimum": lambda a, v: [np.argmin(np.broadcast_arrays(*a), axis=0)],
    "amax": lambda a, v: [np.argmax(a[0])],  # (the vector fuzzer's whole-vector reductions, one point at a time)
    "amin": lambda a, v: [np.argmin(a[0])],
    **dict.fromkeys(("floor", "ceil", "trunc", "floordiv", "truncdiv"), lambda a, v: [v]),
    **dict.fromkeys(("lt", "le", "gt", "ge", "eq", "ne", "logical_and", "logical_or", "logical_not"), lambda a, v: [v]),
    "mod": lambda a, v: [np.floor_divide(a[0], a[1]), np.sign(a[1])],
    "fmod": lambda a, v: [np.trunc(a[0] / a[1]), np.sign(a[0])],
    "where": lambda a, v: [a[0]],
    "pow": lambda a, v: [np.sign(a[0]), np.sign(a[1])],
    "hypot": lambda a, v: [np.sign(a[0]), np.sign(a[1])],
    "atan2": lambda a, v: [np.sign(a[0]), np.sign(a[1])],
}


def steady(terms: Sequence[eg.Term], env: dict) -> np.ndarray:
    """Per point (row): every value of ``terms``' nodes finite and moderate, no branch changed on the stencil."""
    nodes = eg.postorder(list(terms))
    with np.errstate(all="ignore"):
        values = eg.evaluate(nodes, env)
    rows = next(np.shape(v)[0] for v in values if np.ndim(v) == 2)
    ok = np.ones(rows, dtype=bool)
    value_of = dict(zip(nodes, values, strict=True))
    for node, v in zip(nodes, values, strict=True):
        a = np.asarray(v, dtype=np.float64)
        if a.ndim == 2:
            ok &= np.all(np.isfinite(a) & (np.abs(a) <= MAX_MAGNITUDE), axis=1)
        branch = _BRANCHES.get(node.op.name)
        if branch is None:
            continue
        args = [np.broadcast_to(np.asarray(value_of[o], dtype=np.float64), (rows, len(STEPS))) for o in node.args]
        with np.errstate(all="ignore"):
            for sig in branch(args, np.broadcast_to(np.asarray(v, dtype=np.float64), (rows, len(STEPS)))):
                sig = np.asarray(sig, dtype=np.float64)
                ok &= np.all((sig == sig[:, :1]) | (np.isnan(sig) & np.isnan(sig[:, :1])), axis=1)
    return ok


def steady_point(terms: Sequence[eg.Term], envs: Sequence[dict]) -> bool:
    """One point's stencil (one env per step, the center first): :func:`steady` for terms of any shape."""
    nodes = eg.postorder(list(terms))
    with np.errstate(all="ignore"):
        runs = [dict(zip(nodes, eg.evaluate(nodes, env), strict=True)) for env in envs]
    for node in nodes:
        values = [np.asarray(run[node], dtype=np.float64) for run in runs]
        if not all(np.all(np.isfinite(v) & (np.abs(v) <= MAX_MAGNITUDE)) for v in values):
            return False
        branch = _BRANCHES.get(node.op.name)
        if branch is None:
            continue
        with np.errstate(all="ignore"):
            sigs = [
                branch([np.asarray(run[a], dtype=np.float64) for a in node.args], v)
                for run, v in zip(runs, values, strict=True)
            ]
        if any(not np.array_equal(s, t, equal_nan=True) for sig in sigs[1:] for s, t in zip(sig, sigs[0], strict=True)):
            return False
    return True


def finite_everywhere(terms: Sequence[eg.Term], env: dict, points: int) -> np.ndarray:
    """Per point: every node of ``terms`` has a finite value (where one is not, a mode may say nan where another
    says a number: ``acos(maximum(x, 1.0))`` at x < 1 is 0 by reverse mode, ``0*-inf`` by forward mode)."""
    nodes = eg.postorder(list(terms))
    with np.errstate(all="ignore"):
        values = eg.evaluate(nodes, env)
    ok = np.ones(points, dtype=bool)
    for v in values:
        a = np.asarray(v, dtype=np.float64)
        ok &= np.all(np.isfinite(np.broadcast_to(a, (points, *a.shape[1:]))).reshape(points, -1), axis=1)
    return ok


def random_points(seed: int, n: int, symbols: Sequence[eg.Term] = FLOATS, lo: float = -2.0, hi: float = 2.0) -> tuple:
    """``n`` random centers and unit directions for ``symbols``, and a value of k (0..3: k ** k must have a value)."""
    rng = np.random.default_rng(seed)
    center = {s: rng.uniform(lo, hi, n) for s in symbols}
    d = rng.standard_normal((len(symbols), n))
    d /= np.linalg.norm(d, axis=0)
    direction = {s: d[i] for i, s in enumerate(symbols)}
    return center, direction, {K: rng.integers(0, 4)}


def directional(partials: Sequence[Any], direction: dict, symbols: Sequence[eg.Term]) -> np.ndarray:
    """``<gradient, direction>`` per point from the partials' values at the centers."""
    total = 0.0
    with np.errstate(all="ignore"):
        for p, s in zip(partials, symbols, strict=True):
            total = total + np.asarray(p, dtype=np.float64) * direction[s]
    return np.asarray(total)


def assert_matches_differences(
    analytic: np.ndarray, stencil_values: np.ndarray, ok: np.ndarray, what: object, rtol: float = 1e-6
) -> int:
    """``analytic`` (per point) against the five-point differences of ``stencil_values`` where ``ok``.

    The two step sizes bound the differences' own error (truncation and rounding): a point whose
    two estimates disagree by more than 1e-3 of their size is undecided. Returns the points checked.
    """
    at_h, at_half = five_point(stencil_values)
    with np.errstate(all="ignore"):
        spread = np.abs(at_h - at_half)
        scale = np.abs(at_half) + np.abs(analytic)
        decided = ok & np.isfinite(analytic) & (spread <= 1e-3 * (1.0 + np.abs(at_half)))
        allowed = rtol * scale + 1e-9 + 30 * spread
        bad = decided & ~(np.abs(analytic - at_half) <= allowed)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise AssertionError(
            f"{what}: derivative {analytic[k]!r} but differences say {at_half[k]!r} (and {at_h[k]!r}) at point {k}"
        )
    return int(decided.sum())


def values_at(terms: Sequence[eg.Term], env: dict, shape: tuple[int, ...]) -> list[np.ndarray]:
    """The values of ``terms`` as float64 arrays of ``shape`` (IEEE: nan and inf without warnings)."""
    with np.errstate(all="ignore"):
        return [np.broadcast_to(np.asarray(v, dtype=np.float64), shape) for v in eg.evaluate(list(terms), env)]


def close(got: Any, want: Any, rtol: float = 1e-9, atol: float = 1e-12) -> np.ndarray:
    """Where two arrays of values agree to rounding (nan with nan, the same infinity)."""
    got, want = np.broadcast_arrays(np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64))
    with np.errstate(all="ignore"):
        same = (got == want) | (np.isnan(got) & np.isnan(want))
        return same | (np.abs(got - want) <= atol + rtol * np.maximum(np.abs(got), np.abs(want)))


# -- the C sweeps and their Python twins --------------------------------------------------------------------

#: the modules whose C sweep is switched by ``_native`` (the package exports functions of the same names)
_SWITCHED = [importlib.import_module(f"exprgraph.diff.{name}") for name in ("reverse", "forward", "pattern")]
_BLOCKS = importlib.import_module("exprgraph.diff.blocks")


@contextmanager
def python_sweeps() -> Iterator[None]:
    """Within: every sweep of diff runs its Python twin (the modules' ``_native`` set to None)."""
    modules, blocks = _SWITCHED, _BLOCKS
    saved = [m._native for m in modules], blocks.SWEEP
    try:
        for m in modules:
            m._native = None
        blocks.SWEEP = None
        yield
    finally:
        for m, n in zip(modules, saved[0], strict=True):
            m._native = n
        blocks.SWEEP = saved[1]
