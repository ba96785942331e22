"""Fuzzing exprgraph.optimize: the compiled callbacks, the solves, and bad problems.

Each example is a random small NLP (2-8 scalar variables, some declared as a list; 0-5 constraints;
objective and constraints built from smooth terms over a pool with shared subterms; random finite,
infinite and equal bounds; starts inside or outside them). Its compiled callbacks are checked on each
backend against the dense Jacobian and Hessian of exprgraph.diff evaluated by exprgraph.evaluate, and
against central differences: the values at the reported patterns, every structural non-zero inside a
pattern, no entry twice. Solves of problems whose optimum is known (convex quadratics with box bounds,
least squares with linear equalities) must find it, on scipy's trust-constr and on IPOPT where a libipopt
or cyipopt is there; a Result's fields must agree with the callbacks at its x. Bad problems (infeasible,
unbounded, a nan or an infinity in a callback, wrong bounds, starts or variables) must end with a status
or a project error naming the item at fault, never a bare numpy/scipy exception.
"""

from __future__ import annotations

import ctypes
import itertools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from fuzz_support import EXAMPLES, FUZZ
from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.compile import cbuild, vm
from exprgraph.diff import hessian, jacobian
from exprgraph.errors import ExprgraphError, IpoptOptionError, NonFiniteError, ProblemError
from exprgraph.optimize import CompiledNLP, Problem, Result, ipopt_backend, ipopt_c, solve

#: trust-constr warns as it meets singular Jacobians and nan or overflow in its own arithmetic: its status tells
pytestmark = [
    pytest.mark.filterwarnings("ignore::UserWarning:scipy"),
    pytest.mark.filterwarnings("ignore::RuntimeWarning:scipy"),
]
SEEDS = st.integers(0, 2**32 - 1)
INF = math.inf
HAVE_VM = vm._native is not None
HAVE_CC = any(cbuild.shutil.which(c) for c in ("cc", "gcc", "clang"))
#: the backends every example compiles (the vm when built: it also serves IPOPT's C callbacks)
QUICK_BACKENDS = ["numpy", *(["vm"] if HAVE_VM else [])]
#: a C or LLVM build takes a second or so: a tenth of the examples
SLOW = settings(FUZZ, max_examples=max(3, EXAMPLES // 10))
#: a solve takes milliseconds to tens of them, on each of three routes: half the examples
SOLVES = settings(FUZZ, max_examples=max(10, EXAMPLES // 2))


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXPRGRAPH_CACHE", str(tmp_path_factory.getbasetemp() / "eg-cache-optfuzz"))


# -- random problems -----------------------------------------------------------------------------


@dataclass
class Case:
    """A random problem and the terms it was built from."""

    problem: Problem
    variables: list[eg.Term]
    objective: eg.Term | None
    constraints: list[eg.Term] = field(default_factory=list)


#: a constraint's bounds: one-sided, two-sided, an equality, free, beyond IPOPT's infinity (1e19)
CONSTRAINT_BOUNDS = [(-INF, 1.0), (-1.0, INF), (-1.0, 1.0), (0.5, 0.5), (0.5, 0.5), (-INF, INF), (-3.0, 2.0)]
CONSTRAINT_BOUNDS += [(1e21, INF), (-INF, -1e21), (-1e25, 1e25)]
#: the steps of a random term: smooth everywhere (no domain to leave), arguments of exp bounded
KINDS = ["add", "sub", "mul", "scale", "square", "cube", "sin", "cos", "exp", "ratio", "over", "log", "root", "tanh"]
KINDS += ["power", "sumprod"]


def _grow(draw: st.DrawFn, pool: list[eg.Term], steps: int) -> None:
    """Add ``steps`` smooth terms over ``pool`` to it (each reads earlier ones: shared subterms)."""
    pick = st.sampled_from(pool)
    for _ in range(steps):
        a, b = draw(pick), draw(pick)
        c = eg.const(draw(st.sampled_from([0.5, -1.5, 2.0, 3.0, -0.25])))
        kind = draw(st.sampled_from(KINDS))
        if kind == "add":
            t = a + b
        elif kind == "sub":
            t = a - b
        elif kind == "mul":
            t = a * b
        elif kind == "scale":
            t = c * a
        elif kind == "square":
            t = a**2
        elif kind == "cube":
            t = a * a * a
        elif kind == "sin":
            t = eg.sin(a)
        elif kind == "cos":
            t = eg.cos(c * a)
        elif kind == "exp":
            t = eg.exp(eg.sin(a) * c)  # a bounded argument
        elif kind == "ratio":
            t = a / (1.0 + b * b)  # smooth, never a division by zero
        elif kind == "over":
            t = a / (2.0 + eg.sin(b))
        elif kind == "log":
            t = eg.log(1.0 + a * a)
        elif kind == "root":
            t = eg.sqrt(1.0 + a * a)
        elif kind == "tanh":
            t = eg.tanh(a) - a
        elif kind == "power":
            t = a ** draw(st.sampled_from([3, 4, 2.0]))
        else:
            others = draw(st.lists(pick, min_size=2, max_size=3))
            t = eg.add(*(o * a for o in others))
        pool.append(t)


@st.composite
def nlps(draw: st.DrawFn, max_constraints: int = 5) -> Case:
    """A random small NLP; bounds and starts drawn per variable, the terms from one shared pool."""
    p = Problem()
    n = draw(st.integers(2, 8))
    variables: list[eg.Term] = []
    k = 0
    while len(variables) < n:
        size = draw(st.integers(1, n - len(variables)))
        bounds = [draw(_bounds()) for _ in range(size)]
        lbs, ubs, starts = zip(*bounds, strict=True)
        if size == 1 and draw(st.booleans()):
            variables.append(p.variable(f"v{k}", lb=lbs[0], ub=ubs[0], start=starts[0]))
        else:
            variables.extend(p.variables(f"w{k}", size, lb=list(lbs), ub=list(ubs), start=list(starts)))
        k += 1
    pool: list[eg.Term] = [*variables, eg.const(1.0), eg.const(-2.0)]
    _grow(draw, pool, draw(st.integers(1, 10)))
    if draw(st.booleans()):  # one shape over neighbouring variables: the classes that compile to loops
        c = float(draw(st.sampled_from([0.5, -1.5, 2.0])))
        template = draw(st.sampled_from([lambda a, b: eg.sin(a * c) * b, lambda a, b: (a - c * b) ** 2]))
        family = [template(a, b) for a, b in itertools.pairwise(variables)]
        pool.append(family[0] if len(family) == 1 else eg.add(*family))
    chosen = st.sampled_from(pool[-6:] + variables)
    constraints = []
    for i in range(draw(st.integers(0, max_constraints))):
        g = draw(chosen)
        lb, ub = draw(st.sampled_from(CONSTRAINT_BOUNDS))
        p.constraint(g, lb=lb, ub=ub, name=f"c{i}")
        constraints.append(g)
    objective: eg.Term | None = None
    if draw(st.integers(0, 9)):  # now and then no objective at all (zero)
        parts = draw(st.lists(chosen, min_size=1, max_size=4))  # a top-level sum, a part maybe twice
        objective = parts[0] if len(parts) == 1 else eg.add(*parts)
        p.minimize(objective)
    return Case(p, variables, objective, constraints)


@st.composite
def _bounds(draw: st.DrawFn) -> tuple[float, float, float]:
    """(lb, ub, start): free, one-sided, a box, or fixed; the start inside or outside them."""
    lo = draw(st.sampled_from([-2.0, -1.0, 0.0, 0.5]))
    width = draw(st.sampled_from([0.0, 0.5, 1.0, 3.0]))
    lb, ub = draw(st.sampled_from([(-INF, INF), (lo, INF), (-INF, lo + width), (lo, lo + width), (lo, lo)]))
    start = draw(st.floats(-3.0, 3.0, allow_nan=False))
    return lb, ub, start


# -- the oracle: dense derivatives of exprgraph.diff, evaluated ---------------------------------------


def _numbers(terms: list[eg.Term], env: dict) -> np.ndarray:
    if not terms:
        return np.zeros(0)
    with np.errstate(all="ignore"):
        return np.array([float(v) for v in eg.evaluate(terms, env)], dtype=np.float64)


def _lagrangian(case: Case, lam: np.ndarray, sigma: float) -> eg.Term:
    f = case.objective if case.objective is not None else eg.const(0.0)
    parts = [eg.const(sigma) * f, *(eg.const(float(w)) * g for w, g in zip(lam, case.constraints, strict=True))]
    return parts[0] if len(parts) == 1 else eg.add(*parts)


def _scale(terms: list[eg.Term], env: dict) -> float:
    """The largest finite magnitude among the subterms' values (at least 1): the rounding allowance's scale."""
    nodes = [t for t in eg.postorder(terms) if t.dtype == "float64"] if terms else []
    values = np.abs(_numbers(nodes, env)) if nodes else np.zeros(0)
    values = values[np.isfinite(values)]
    return float(max(1.0, values.max(initial=0.0)))


def _assert_close(got: Any, want: Any, scale: float, what: Any, rtol: float = 1e-10) -> None:
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    assert np.all(np.abs(got - want) <= rtol * scale * (1.0 + np.abs(want))), (what, got, want)


def _pattern(rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int], what: str) -> np.ndarray:
    """The pattern as a boolean matrix; every entry in range and listed once."""
    assert len(rows) == len(cols), what
    assert np.all((0 <= rows) & (rows < shape[0]) & (0 <= cols) & (cols < shape[1])), (what, rows, cols)
    stored = np.zeros(shape, dtype=bool)
    stored[rows, cols] = True
    assert stored.sum() == len(rows), (what, "an entry listed twice", list(zip(rows, cols, strict=True)))
    return stored


def _points(case: Case, seed: int, count: int) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """The start, then random points (inside the bounds where finite), each with multipliers and a factor."""
    rng = np.random.default_rng(seed)
    lbx, ubx, x0, _, _ = case.problem.bounds()
    out = [(x0, rng.normal(size=len(case.constraints)), 1.0)]
    for _ in range(count):
        x = rng.uniform(-2.0, 2.0, len(x0))
        box = np.isfinite(lbx) & np.isfinite(ubx)
        x[box] = lbx[box] + (ubx[box] - lbx[box]) * rng.uniform(0, 1, len(x0))[box]
        out.append((x, rng.normal(size=len(case.constraints)) * 2.0, float(rng.uniform(-2.0, 2.0))))
    return out


def check_callbacks(case: Case, nlp: CompiledNLP, seed: int, count: int = 3) -> list[tuple[Any, ...]]:
    """Every callback of ``nlp`` against the oracle at the start and ``count`` random points; per point compared,
    ``(x, lam, sigma, values of the five callbacks)``."""
    xs, n, m = case.variables, len(case.variables), len(case.constraints)
    assert (nlp.n, nlp.m) == (n, m) and nlp.variables == xs
    f = case.objective if case.objective is not None else eg.const(0.0)
    grad = eg.grad(f, xs) if f.args or f.op.name == "symbol" else [eg.const(0.0)] * n
    J = jacobian(case.constraints, xs) if m else []
    jrows, jcols = nlp.jacobianstructure()
    jstored = _pattern(jrows, jcols, (m, n), "jacobian")
    hrows, hcols = nlp.hessianstructure()
    assert np.all(hrows >= hcols), "the Hessian's pattern is its lower triangle"
    hstored = _pattern(hrows, hcols, (n, n), "hessian")
    seen = []
    for x, lam, sigma in _points(case, seed, count):
        env = dict(zip(xs, x.tolist(), strict=True))
        terms = [f, *case.constraints]
        scale = _scale(terms, env)
        L = _lagrangian(case, lam, sigma)
        H = hessian(L, xs)
        assert isinstance(H, list)
        dense_h = _numbers([e for row in H for e in row], env).reshape(n, n)
        dense_j = _numbers([e for row in J for e in row], env).reshape(m, n)
        want_f, want_g, want_grad = _numbers([f], env)[0], _numbers(case.constraints, env), _numbers(grad, env)
        if not all(np.isfinite(a).all() for a in (dense_h, dense_j, want_f, want_g, want_grad)):
            continue  # overflow of a polynomial far out: nothing to compare
        hscale = _scale([L, *(e for row in H for e in row)], env)
        got = [np.atleast_1d(nlp.objective(x)), nlp.gradient(x), nlp.constraints(x), nlp.jacobian(x)]
        got.append(nlp.hessian(x, lam, sigma))
        seen.append((x, lam, sigma, got))
        _assert_close(got[0], [want_f], scale, ("objective", f, x))
        _assert_close(got[1], want_grad, scale, ("gradient", f, x))
        _assert_close(got[2], want_g, scale, ("constraints", x))
        jac = np.zeros((m, n))
        jac[jrows, jcols] = got[3]
        _assert_close(jac, dense_j, scale, ("jacobian", case.constraints, x))
        assert np.all(dense_j[~jstored] == 0.0), ("a Jacobian non-zero outside the pattern", case.constraints, x)
        hess = np.zeros((n, n))
        hess[hrows, hcols] = got[4]
        lower = np.tril(dense_h)
        _assert_close(hess, lower, hscale, ("hessian", L, x), rtol=1e-9)
        assert np.all(lower[~hstored] == 0.0), ("a Hessian non-zero outside the pattern", L, x)
        _check_differences(nlp, x, lam, sigma, jac, hess, hscale)
    return seen


def _check_differences(
    nlp: CompiledNLP, x: np.ndarray, lam: np.ndarray, sigma: float, jac: np.ndarray, hess: np.ndarray, scale: float
) -> None:
    """The gradient, the Jacobian and the Lagrangian's Hessian against central differences of the callbacks."""
    h = 1e-6 * max(1.0, float(np.abs(x).max()))
    rows, cols = nlp.jacobianstructure()
    n = nlp.n

    def lagrangian_gradient(z: np.ndarray) -> np.ndarray:
        j = np.zeros((nlp.m, n))
        j[rows, cols] = nlp.jacobian(z)
        return sigma * nlp.gradient(z) + j.T @ lam

    grad = nlp.gradient(x)
    for k, e in enumerate(np.eye(n)):
        up, down = x + h * e, x - h * e
        tol = 1e-4 * scale**2
        assert abs((nlp.objective(up) - nlp.objective(down)) / (2 * h) - grad[k]) <= tol, ("gradient", k)
        column = (nlp.constraints(up) - nlp.constraints(down)) / (2 * h)
        assert np.all(np.abs(column - jac[:, k]) <= tol), ("jacobian column", k, column, jac[:, k])
        second = (lagrangian_gradient(up) - lagrangian_gradient(down)) / (2 * h)
        full = np.tril(hess) + np.tril(hess, -1).T
        assert np.all(np.abs(second - full[:, k]) <= tol), ("hessian column", k, second, full[:, k])


def _ptr(a: np.ndarray) -> int:
    return int(a.ctypes.data)


def _native_values(nlp: CompiledNLP, x: np.ndarray, lam: np.ndarray, sigma: float) -> list[np.ndarray]:
    """The five callbacks through the addresses IPOPT's C interface calls (CompiledNLP.native)."""
    native = nlp.native()
    assert native is not None
    kinds = ipopt_c._prototypes(ctypes.c_bool)
    pointers = native.pointers()  # in the order f, g, grad_f, jac_g, h
    fns = {name: ctypes.cast(pointers[k], kinds[name]) for k, name in enumerate(("f", "g", "grad_f", "jac_g", "h"))}
    ud, n, m = native.address, nlp.n, nlp.m
    x, lam = np.ascontiguousarray(x), np.ascontiguousarray(lam)
    obj, grad = np.zeros(1), np.full(n, np.nan)
    g, jac, hess = np.full(m, np.nan), np.full(len(nlp.jac.values), np.nan), np.full(nlp.hess.nnz, np.nan)
    assert fns["f"](n, _ptr(x), 1, _ptr(obj), ud) and fns["grad_f"](n, _ptr(x), 0, _ptr(grad), ud)
    assert fns["g"](n, _ptr(x), 0, m, _ptr(g) if m else None, ud)
    assert fns["jac_g"](n, _ptr(x), 0, m, len(jac), None, None, _ptr(jac) if len(jac) else None, ud)
    assert fns["h"](n, _ptr(x), 0, sigma, m, _ptr(lam) if m else None, 1, len(hess), None, None, _ptr(hess), ud)
    return [obj, grad, g, jac, hess]


# -- 1. the callbacks ----------------------------------------------------------------------------


@FUZZ
@given(nlps(), SEEDS)
def test_callbacks_match_dense_derivatives_and_differences(case: Case, seed: int) -> None:
    by_backend = {}
    for backend in QUICK_BACKENDS:
        # the vm runs straight-line code by default, loops on request; numpy loops by default
        nlp = case.problem.compile(backend, loops=seed % 2 == 0 if backend == "vm" else None)
        assert nlp.backend == backend
        by_backend[backend] = check_callbacks(case, nlp, seed)
        if backend == "vm":  # IPOPT's C route calls the machines from C: the Python callbacks' numbers, bit for bit
            for x, lam, sigma, values in by_backend[backend]:
                for got, want in zip(_native_values(nlp, x, lam, sigma), values, strict=True):
                    np.testing.assert_array_equal(got, want)
    first, *others = by_backend.values()
    for other in others:  # the backends: the same numbers to rounding
        for a, b in zip(first, other, strict=True):
            for u, v in zip(a[3], b[3], strict=True):
                np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-12)


@pytest.mark.skipif(not HAVE_CC, reason="needs a C compiler")
@SLOW
@given(nlps(max_constraints=3), SEEDS, st.sampled_from(["c", "llvm", "auto"]))
def test_callbacks_on_the_compiled_backends(case: Case, seed: int, backend: str) -> None:
    try:
        nlp = case.problem.compile(backend)
    except ExprgraphError as e:  # llvmlite missing: a named error, not a crash
        assert backend == "llvm", e
        return
    if backend == "auto":
        assert nlp.wait(120.0)
    check_callbacks(case, nlp, seed, count=2)


# -- 2. solves with a known optimum ---------------------------------------------------------------


@dataclass
class Known:
    """A convex problem and its unique minimiser."""

    problem: Problem
    x: np.ndarray
    f: float


@st.composite
def box_quadratics(draw: st.DrawFn) -> Known:
    """min sum a_i (x_i - c_i)^2 over a box: the minimiser is c clipped to the box."""
    n = draw(st.integers(2, 6))
    a = np.array(draw(st.lists(st.floats(0.5, 4.0), min_size=n, max_size=n)))
    c = np.array(draw(st.lists(st.floats(-3.0, 3.0), min_size=n, max_size=n)))
    bounds = [draw(_bounds()) for _ in range(n)]
    lb, ub, start = (np.array(v) for v in zip(*bounds, strict=True))
    p = Problem()
    xs = p.variables("x", n, lb=lb, ub=ub, start=start)
    p.minimize(eg.add(*(float(ai) * (x - float(ci)) ** 2 for ai, x, ci in zip(a, xs, c, strict=True))))
    best = np.clip(c, lb, ub)
    return Known(p, best, float(np.sum(a * (best - c) ** 2)))


@st.composite
def equality_least_squares(draw: st.DrawFn) -> Known:
    """min |B x - d|^2 + |x|^2 / 10 s.t. A x = b (k < n rows): the minimiser from the KKT system."""
    n = draw(st.integers(2, 6))
    k = draw(st.integers(1, n - 1))
    rng = np.random.default_rng(draw(SEEDS))
    B, d = rng.normal(size=(n, n)).round(2), rng.normal(size=n).round(2)
    A, b = rng.normal(size=(k, n)).round(2), rng.normal(size=k).round(2)
    Q = 2 * (B.T @ B + 0.1 * np.eye(n))
    kkt = np.block([[Q, A.T], [A, np.zeros((k, k))]])
    if np.linalg.cond(kkt) > 1e6:
        A = np.eye(k, n)
        kkt = np.block([[Q, A.T], [A, np.zeros((k, k))]])
    best = np.linalg.solve(kkt, np.concatenate([2 * B.T @ d, b]))[:n]
    p = Problem()
    xs = p.variables("x", n, start=rng.uniform(-2, 2, n))
    residuals = [eg.add(*(float(B[i, j]) * xs[j] for j in range(n))) - float(d[i]) for i in range(n)]
    p.minimize(eg.add(*(r * r for r in residuals), *(0.1 * x * x for x in xs)))
    p.constraints([eg.add(*(float(A[i, j]) * xs[j] for j in range(n))) for i in range(k)], lb=b, ub=b, name="eq")
    f = float(np.sum((B @ best - d) ** 2) + 0.1 * best @ best)
    return Known(p, best, f)


#: the solve routes: scipy's trust-constr, IPOPT through cyipopt, IPOPT through its C interface (ctypes)
ROUTES = {
    "scipy": {"solver": "scipy"},
    "cyipopt": {"solver": "ipopt"},
    "ipopt-c": {"solver": "ipopt", "ipopt_library": "auto"},
}


def _routes() -> list[Any]:
    have = {"scipy": True, "cyipopt": ipopt_backend.available(), "ipopt-c": ipopt_c.available()}
    skip = pytest.mark.skip(reason="no cyipopt / no libipopt found")
    return [pytest.param(route, marks=[] if have[route] else [skip]) for route in ROUTES]


def _solve(nlp: CompiledNLP, route: str, iterations: int, **kwargs: Any) -> Result:
    solver = ROUTES[route]["solver"]
    options = {"maxiter": iterations} if solver == "scipy" else {"max_iter": iterations, "tol": 1e-10}
    return solve(nlp, **ROUTES[route], options=options, progress=False, **kwargs)


def check_result(nlp: CompiledNLP, r: Result, tol: float, kkt_tol: float = 1e-4) -> None:
    """A Result's fields against the callbacks at its x; a success is feasible to ``tol`` and stationary to
    ``kkt_tol`` (:func:`check_multipliers`)."""
    assert r.x.shape == (nlp.n,) and r.g.shape == (nlp.m,)
    assert r.lam_g.shape == (nlp.m,) and r.lam_x.shape == (nlp.n,)
    assert isinstance(r.status, str) and r.status and isinstance(r.success, bool)
    if not np.all(np.isfinite(r.x)):
        assert not r.success, r
        return
    f = nlp.objective(r.x)
    assert r.f == pytest.approx(f, rel=1e-9, abs=1e-9) or (np.isnan(r.f) and np.isnan(f)), (r, f)
    np.testing.assert_allclose(r.g, nlp.constraints(r.x), rtol=1e-9, atol=1e-9)
    if r.success:
        assert np.all(r.x >= nlp.lbx - tol) and np.all(r.x <= nlp.ubx + tol), (r.x, nlp.lbx, nlp.ubx)
        assert np.all(r.g >= nlp.lbg - tol) and np.all(r.g <= nlp.ubg + tol), (r.g, nlp.lbg, nlp.ubg)
        # trust-constr leaves a barrier multiplier of ~1e-3 on a bound near, not at, the point: read its signs
        # only where they are larger
        check_multipliers(nlp, r, kkt_tol, 1e-2 if r.solver == "scipy" else kkt_tol)


def check_multipliers(nlp: CompiledNLP, r: Result, tol: float, sign_tol: float) -> None:
    """CasADi's convention, L = f + lam_g . g + lam_x . x: grad L = 0 (to ``tol``), and a multiplier's sign (above
    ``sign_tol``) says which bound is active (positive: the upper one)."""
    rows, cols = nlp.jacobianstructure()
    jac = np.zeros((nlp.m, nlp.n))
    jac[rows, cols] = nlp.jacobian(r.x)
    grad = nlp.gradient(r.x)
    residual = grad + jac.T @ r.lam_g + r.lam_x
    scale = 1.0 + np.abs(grad).max(initial=0.0) + np.abs(r.lam_g).max(initial=0.0) + np.abs(r.lam_x).max(initial=0.0)
    assert np.all(np.abs(residual) <= tol * scale), ("grad L != 0", residual, r)
    # a constraint whose gradient vanishes at x takes any multiplier (trust-constr gave -25188 to cos(x/2) <= 1 at 0)
    moving = np.abs(jac).max(axis=1, initial=0.0) > 1e-6
    for lam, value, lb, ub, determined in (
        (r.lam_x, r.x, nlp.lbx, nlp.ubx, np.ones(nlp.n, dtype=bool)),
        (r.lam_g, r.g, nlp.lbg, nlp.ubg, moving),
    ):
        big = (np.abs(lam) > sign_tol * scale) & determined
        upper, lower = big & (lam > 0), big & (lam < 0)
        assert np.all(np.abs(value - ub)[upper] <= 1e3 * tol * (1 + np.abs(ub[upper]))), ("upper", lam, value, ub, r)
        assert np.all(np.abs(value - lb)[lower] <= 1e3 * tol * (1 + np.abs(lb[lower]))), ("lower", lam, value, lb, r)


@pytest.mark.parametrize("route", _routes())
@SOLVES
@given(st.one_of(box_quadratics(), equality_least_squares()), st.sampled_from(QUICK_BACKENDS))
def test_solves_find_the_known_optimum(route: str, known: Known, backend: str) -> None:
    nlp = known.problem.compile(backend)
    r = _solve(nlp, route, 300)
    check_result(nlp, r, 1e-6)
    assert r.solver == ROUTES[route]["solver"] and r.success, r
    # trust-constr's barrier stops short of an active bound (scipy alone: x = -1.996 for a bound at -2, 0.5126
    # for one at 0.5, "gtol satisfied")
    tol = 5e-2 if route == "scipy" else 1e-5
    np.testing.assert_allclose(r.x, known.x, rtol=tol, atol=tol)
    assert abs(r.f - known.f) <= tol * (1 + abs(known.f)), (r.f, known.f)


# -- 3. bad problems -------------------------------------------------------------------------------


@pytest.mark.parametrize("route", _routes())
@SOLVES
@given(nlps(), st.integers(1, 25), st.sampled_from(QUICK_BACKENDS))
def test_solves_of_random_problems_end_with_a_status_or_a_named_error(
    route: str, case: Case, iterations: int, backend: str
) -> None:
    nlp = case.problem.compile(backend)
    try:
        r = _solve(nlp, route, iterations)
    except NonFiniteError as e:
        assert e.item and e.where, e
        return
    check_result(nlp, r, 1e-5)


def _state(p: Problem) -> tuple[Any, ...]:
    """What a problem holds: a failed declaration leaves it as it was."""
    return (p.x, p.g, p.f, p.constraint_names, *(b.tolist() for b in p.bounds()))


@st.composite
def faults(draw: st.DrawFn, case: Case) -> tuple[Any, type[Exception], str]:
    """A bad declaration for ``case.problem``: (action, the error it raises, the item the error names)."""
    p, v = case.problem, draw(st.sampled_from(case.variables))
    nan, bad_number = math.nan, draw(st.sampled_from([math.nan, INF, -INF]))
    kind = draw(st.integers(0, 12))
    if kind == 0:
        lb, ub = draw(st.sampled_from([(1.0, 0.0), (nan, 1.0), (0.0, nan), (INF, INF), (-INF, -INF), (INF, 3.0)]))
        return (lambda: p.variable("bad", lb=lb, ub=ub)), ProblemError, "bad"
    if kind == 1:
        return (lambda: p.variable("bad", start=bad_number)), ProblemError, "bad"
    if kind == 2:
        size = draw(st.integers(2, 4))
        which = draw(st.sampled_from(["lb", "ub", "start"]))
        wrong = draw(st.sampled_from([[0.0] * (size + 1), [0.0] * (size - 1), [[0.0]] * size, "abc", [None] * size]))
        return (lambda: p.variables("bad", size, **{which: wrong})), ProblemError, "variables bad"
    if kind == 3:  # the variable again, or another symbol of its name
        again = draw(st.sampled_from([v, eg.Symbol(v.name, positive=True), eg.Symbol(v.name, dtype="float32")]))
        return (lambda: p.add_variable(again)), ProblemError, v.name
    if kind == 4:
        other = draw(st.sampled_from([eg.Symbol("vec", shape=(2,)), v + 1.0, eg.const(1.0), "x", 3.0]))
        return (lambda: p.add_variable(other)), ProblemError, ""
    if kind == 5:
        symbol = draw(st.sampled_from([eg.Symbol("k", dtype="int64"), eg.Symbol("b", dtype="bool")]))
        return (lambda: p.add_variable(symbol)), ProblemError, symbol.name
    if kind == 6:
        u = eg.Symbol("undeclared")
        return (lambda: p.constraint(v * u + 1.0, name="stray")), ProblemError, "constraint stray"
    if kind == 7:
        expr = draw(st.sampled_from([v > 0.0, eg.eq(v, 1.0), eg.Symbol("m", shape=(3,)) * v, "v"]))
        return (lambda: p.constraint(expr, name="odd")), ProblemError, "constraint odd"
    if kind == 8:
        lb, ub = draw(st.sampled_from([(1.0, 0.0), (nan, 1.0), (0.0, nan), (INF, INF), (-INF, -INF), ("a", 1.0)]))
        return (lambda: p.constraint(v * v, lb=lb, ub=ub, name="cb")), ProblemError, "constraint cb"
    if kind == 9:
        wrong = draw(st.sampled_from([[0.0] * 3, [0.0], [[1.0], [2.0]], [nan, 1.0]]))
        return (lambda: p.constraints([v, v * v], lb=wrong, name="pair")), ProblemError, "constraints pair"
    if kind == 10:
        return (lambda: p.minimize(v < 1.0)), ProblemError, "the objective"
    if kind == 11:
        return (lambda: p.minimize(eg.Symbol("elsewhere") * v)), ProblemError, "the objective"
    return (lambda: p.variables("bad", draw(st.sampled_from([-1, 2.5, "3", None])))), ProblemError, "bad"


@FUZZ
@given(nlps(max_constraints=2), st.data())
def test_bad_declarations_raise_a_problem_error_naming_the_item(case: Case, data: st.DataObject) -> None:
    action, error, item = data.draw(faults(case))
    before = _state(case.problem)
    with pytest.raises(error) as caught:
        action()
    assert item in caught.value.item and item in str(caught.value), (caught.value, caught.value.item)
    assert _state(case.problem) == before, "a failed declaration changed the problem"


@pytest.mark.parametrize("route", _routes())
@SOLVES
@given(nlps(max_constraints=2), st.integers(0, 5), st.integers(1, 15), st.sampled_from(QUICK_BACKENDS))
def test_bad_problems_end_with_a_status_or_a_named_error(
    route: str, case: Case, kind: int, iterations: int, backend: str
) -> None:
    p, v = case.problem, case.variables[0]
    lbx, ubx, x0, _, _ = p.bounds()
    at_start = float(np.clip(x0[0], lbx[0], ubx[0]))  # where the solve checks the callbacks first
    infeasible = unbounded = False
    x0_arg: Any = None
    if kind == 0:  # no point satisfies it
        p.constraint(v * v + 1.0, ub=0.5, name="bad")
        infeasible = True
    elif kind == 1:  # a log of a negative number or a division by zero at the start
        p.constraint(eg.log(v - at_start - 1.0) if iterations % 2 else 1.0 / (v - at_start), ub=1.0, name="bad")
    elif kind == 2:  # a nan or an infinity where the iterates may go: defined at the start, not past it
        if iterations % 2:
            p.minimize(eg.log(v * v + 1e-3) * (v - 0.5))
        else:
            p.constraint(eg.sqrt(v - at_start + 1.0) + eg.log(v - at_start + 2.0), lb=-1.0, name="edge")
            p.minimize(3.0 * v + (case.objective if case.objective is not None else 0.0))
    elif kind == 3:  # unbounded below where the variable is free
        if lbx[0] == -INF:
            p.minimize(v)
            unbounded = not case.constraints
    elif kind == 4:  # a start of the wrong length, or not numbers
        n = len(case.variables)
        x0_arg = [["a"] * n, [None] * n, [0.0] * (n + 1), [0.0] * (n - 1), {"x": 1.0}][iterations % 5]
        with pytest.raises(ProblemError):
            _solve(p.compile(backend), route, iterations, x0=x0_arg)
        return
    else:  # a start outside the bounds (below them, where a log is not defined)
        x0_arg = x0 - 10.0
        if lbx[0] > -INF:
            p.constraint(eg.log(v - (lbx[0] - 0.5)), lb=-5.0, name="domain")
    nlp = p.compile(backend)
    try:
        r = _solve(nlp, route, iterations, x0=x0_arg)
    except NonFiniteError as e:
        assert e.item and e.where and e.item in str(e), e
        if kind == 1:
            assert "constraint bad" in e.item or e.where in ("objective", "gradient", "hessian"), e
        return
    assert kind != 1, ("a nan or an infinity at the start was not reported", r)
    check_result(nlp, r, 1e-5)
    if infeasible or unbounded:
        assert not r.success, r


# -- regressions -------------------------------------------------------------------------------------


@pytest.mark.parametrize("route", _routes()[1:])
def test_constraints_reading_no_variable_solve_on_ipopt(route: str) -> None:
    # regression: every constraint a constant gave a Jacobian without entries, which IPOPT refuses for m > 0:
    # cyipopt raised a bare RuntimeError, the C route a ProblemError saying "it needs at least one variable"
    p = Problem()
    x, y = p.variable("x", lb=-1.0, ub=1.0, start=0.5), p.variable("y", start=2.0)
    p.constraint(eg.const(1.0), lb=0.0, ub=2.0, name="always")
    p.minimize((x - 0.25) ** 2 + y * y)
    nlp = p.compile(QUICK_BACKENDS[-1])
    rows, cols = nlp.jacobianstructure()
    assert (rows.tolist(), cols.tolist(), nlp.jacobian(np.zeros(2)).tolist()) == ([0], [0], [0.0])
    r = _solve(nlp, route, 50)
    assert r.success and np.allclose(r.x, [0.25, 0.0], atol=1e-7) and r.g.tolist() == [1.0]


@pytest.mark.parametrize("route", _routes()[1:])
def test_ipopt_without_variables_is_a_problem_error(route: str) -> None:
    # regression: cyipopt raised a bare TypeError ("n must be a positive integer"), the C route on the vm a bare
    # ValueError of the C callbacks; scipy solves it
    p = Problem()
    p.minimize(eg.const(2.0))
    for backend in QUICK_BACKENDS:
        with pytest.raises(ProblemError, match="IPOPT needs at least one variable"):
            _solve(p.compile(backend), route, 10)
    assert _solve(p.compile("numpy"), "scipy", 10).f == 2.0


@pytest.mark.parametrize(
    ("declare", "item"),
    [
        # regression: lb = +inf (or ub = -inf) passed lb <= ub; IPOPT clipped it to 1e20 and reported
        # Solve_Succeeded at x = 5e19 for a constraint x + y >= inf
        (lambda p, x: p.constraint(x + 1.0, lb=INF, name="c"), "constraint c"),
        (lambda p, x: p.constraints([x, x * x], ub=[1.0, -INF], name="k"), "constraint k[1]"),
        (lambda p, x: p.variable("z", lb=INF), "variable z"),
        (lambda p, x: p.variables("w", 2, ub=-INF), "variable w_0"),
        # regression: an infinite start was taken (solve refused it only as x0=); scipy ran from x = -inf
        (lambda p, x: p.variable("z", lb=0.0, ub=1.0, start=-INF), "z"),
        (lambda p, x: p.variables("w", 2, start=[0.0, INF]), "w_1"),
        # regression: a bool term was a constraint or an objective (no derivative: the solvers wandered), an
        # int or bool symbol a variable (solved as a float)
        (lambda p, x: p.constraint(x > 1.0, lb=0.5, name="cmp"), "constraint cmp"),
        (lambda p, x: p.minimize(eg.lt(x, 2.0)), "the objective"),
        (lambda p, x: p.add_variable(eg.Symbol("k", dtype="int64")), "k"),
        (lambda p, x: p.add_variable(eg.Symbol("b", dtype="bool")), "b"),
        # regression: x and x with an assumption are two symbols of one name: declared, then every compile failed
        # with a CompileError naming no variable ("two inputs have the same name")
        (lambda p, x: p.add_variable(eg.Symbol("x", positive=True)), "x"),
        (lambda p, x: p.add_variable(eg.Symbol("x", dtype="float32")), "x"),
        # regression: a string was read as its characters: lb="12" gave two variables the bounds 1.0 and 2.0
        (lambda p, x: p.variables("w", 2, lb="12"), "variables w"),
        (lambda p, x: p.constraint(x, ub="5", name="s"), "constraint s"),
        # regression: a term or a number where a list belongs was a bare TypeError ("has no len()")
        (lambda p, x: p.constraints(x, name="one"), "constraints one"),
        (lambda p, x: p.constraints(3.0, name="num"), "constraints num"),
    ],
)
def test_declarations_no_solver_can_take_are_problem_errors(declare: Any, item: str) -> None:
    p = Problem()
    x = p.variable("x", start=0.5)
    p.minimize(x * x)
    before = _state(p)
    with pytest.raises(ProblemError) as caught:
        declare(p, x)
    assert caught.value.item == item and item in str(caught.value)
    assert _state(p) == before


@pytest.mark.skipif(not ipopt_backend.available(), reason="no cyipopt")
@pytest.mark.parametrize("options", [{"max_iter": "ten"}, {"no_such_option": 1}, {"tol": -1.0}])
def test_an_option_cyipopt_refuses_is_an_ipopt_option_error(options: dict[str, Any]) -> None:
    # regression: the cyipopt route raised cyipopt's bare TypeError "Error while assigning an option" (the C route
    # named it in an IpoptOptionError)
    p = Problem()
    x = p.variable("x", start=1.0)
    p.minimize(x * x)
    with pytest.raises(IpoptOptionError) as caught:
        solve(p, "ipopt", options=options, progress=False)
    assert caught.value.item == next(iter(options)) and isinstance(caught.value, TypeError)


def test_constraints_take_any_iterable_of_expressions() -> None:
    p = Problem()
    xs = p.variables("x", 3)
    assert list(p.constraints((x * x for x in xs), ub=1.0)) == [0, 1, 2] and p.g[2] is xs[2] * xs[2]


@pytest.mark.parametrize("route", _routes())
def test_a_start_outside_the_bounds_runs_from_the_checked_point(route: str) -> None:
    # regression: the start was checked clipped into the bounds, but scipy ran from it unclipped: log(x) at x = -5
    # was scipy's bare ValueError "array must not contain infs or NaNs"
    p = Problem()
    x, y = p.variable("x", lb=1.0, ub=3.0, start=-5.0), p.variable("y", start=1.0)
    p.constraint(eg.sqrt(x - 0.5) + y, lb=0.0, name="root")
    p.minimize(eg.log(x) + (y - 1.0) ** 2)
    nlp = p.compile(QUICK_BACKENDS[-1])
    r = _solve(nlp, route, 100)
    check_result(nlp, r, 1e-6)
    assert r.success and np.allclose(r.x, [1.0, 1.0], atol=1e-2 if route == "scipy" else 1e-6), r.x


@pytest.mark.parametrize("options", [{"max_iter": 10}, {"no_such_option": 1}])
def test_an_option_name_scipy_refuses_is_a_problem_error(options: dict[str, Any]) -> None:
    # regression: trust-constr's bare TypeError "unexpected keyword argument"
    p = Problem()
    x = p.variable("x", start=1.0)
    p.minimize(x * x)
    with pytest.raises(ProblemError, match=f"trust-constr refused the options .*{next(iter(options))}"):
        solve(p, "scipy", options=options, progress=False)


@pytest.mark.parametrize("route", _routes()[1:])
def test_a_finite_bound_beyond_1e20_is_not_moved_to_1e20(route: str) -> None:
    # regression: the IPOPT routes clipped every bound to +-1e20, so a lower bound of 1e21 became one of 1e20 and
    # IPOPT reported Solve_Succeeded at x = 1e20 (below the bound); an infinity alone is IPOPT's 1e20 now
    p = Problem()
    x, y = p.variable("x", start=1.0), p.variable("y", start=1.0)
    p.constraint(x, lb=1e21, name="far")
    p.minimize(x * 1e-21 + y * y + 1.0)
    nlp = p.compile(QUICK_BACKENDS[-1])
    r = _solve(nlp, route, 50)
    check_result(nlp, r, 1e-6)
    assert not r.success or r.g[0] >= 1e21 * (1 - 1e-9), r


@pytest.mark.parametrize("route", _routes()[1:])
def test_a_result_ipopt_did_not_evaluate_reads_the_values_at_its_x(route: str) -> None:
    # regression: IPOPT's Not_Enough_Degrees_Of_Freedom returns before any evaluation: the Result said f = 0 and
    # g = 0 at x = the start, where f is 0.79 and g is (1, -0.4, 0.21)
    p = Problem()
    x, y = p.variable("x", start=0.3), p.variable("y", start=0.7)
    p.constraints([x + y, x - y, x * y], lb=0.5, ub=0.5, name="eq")
    p.minimize(x * x + y)
    nlp = p.compile(QUICK_BACKENDS[-1])
    r = _solve(nlp, route, 50)
    assert r.status == "Not_Enough_Degrees_Of_Freedom" and not r.success
    check_result(nlp, r, 1e-6)
    assert r.f == pytest.approx(0.79) and np.allclose(r.g, [1.0, -0.4, 0.21])
