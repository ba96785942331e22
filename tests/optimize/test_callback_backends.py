"""The callbacks on the vm and under "auto" (the vm, then the C library): the same numbers, counted per backend."""

from __future__ import annotations

import numpy as np
import pytest
from bench.opf_data import read_case  # the model lives with the benchmark (conftest)
from bench.opf_model import build_exprgraph
from opt_checks import fd_check
from test_opf_model import CASE3

import exprgraph as eg
from exprgraph.compile import cbuild, vm
from exprgraph.errors import NonFiniteError
from exprgraph.optimize import CompiledNLP, Problem
from exprgraph.optimize.ipopt_backend import STATUS

HAVE_CC = any(cbuild.shutil.which(c) for c in ("cc", "gcc", "clang"))
needs_vm = pytest.mark.skipif(vm._native is None, reason="needs the vm extension")
needs_vm_and_cc = pytest.mark.skipif(vm._native is None or not HAVE_CC, reason="needs the vm and a C compiler")


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXPRGRAPH_CACHE", str(tmp_path_factory.getbasetemp() / "eg-cache-opt"))


@pytest.fixture(scope="module")
def opf3(tmp_path_factory: pytest.TempPathFactory) -> Problem:
    path = tmp_path_factory.mktemp("opf3") / "case3_test.m"
    path.write_text(CASE3)
    prob, _ = build_exprgraph(read_case(str(path)))
    return prob


def _points(nlp: CompiledNLP, seed: int) -> list[tuple[np.ndarray, np.ndarray, float]]:
    rng = np.random.default_rng(seed)
    return [(rng.uniform(0.8, 1.2, nlp.n), rng.normal(size=nlp.m), float(rng.uniform(0.5, 2.0))) for _ in range(3)]


def _all(nlp: CompiledNLP, x: np.ndarray, lam: np.ndarray, sigma: float) -> list[np.ndarray]:
    return [
        np.atleast_1d(nlp.objective(x)),
        nlp.gradient(x),
        nlp.constraints(x),
        nlp.jacobian(x),
        nlp.hessian(x, lam, sigma),
    ]


@needs_vm
def test_vm_callbacks_equal_numpy_and_finite_differences(opf3: Problem) -> None:
    on_vm, on_numpy = opf3.compile("vm"), opf3.compile("numpy")
    assert on_vm.backend == "vm" and set(on_vm.active().values()) == {"vm"}
    for x, lam, sigma in _points(on_vm, 5):
        for got, want in zip(_all(on_vm, x, lam, sigma), _all(on_numpy, x, lam, sigma), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-12)
        fd_check(on_vm, x, lam, sigma)
    assert set(on_vm.cpu_on) == {"vm"} and on_vm.served["hessian"]["vm"] == on_vm.calls["hessian"]
    assert not on_vm.switched


@needs_vm_and_cc
def test_auto_switches_from_the_vm_to_the_library(opf3: Problem) -> None:
    nlp = opf3.compile("auto")
    assert nlp.backend == "auto"
    reference = opf3.compile("numpy")
    (x, lam, sigma), *_ = _points(nlp, 9)
    first = _all(nlp, x, lam, sigma)  # on the vm, or on the library if it was that quick
    assert nlp.wait(300)
    builds = nlp.background_builds()
    assert set(builds) == set(nlp.active()) and all(b["done"] and b["error"] is None for b in builds.values())
    assert set(nlp.active().values()) == {"c"}
    second = _all(nlp, x, lam, sigma)
    for a, b, want in zip(first, second, _all(reference, x, lam, sigma), strict=True):
        np.testing.assert_allclose(a, want, rtol=1e-13, atol=1e-12)
        np.testing.assert_allclose(b, want, rtol=1e-13, atol=1e-12)
    for name, served in nlp.served.items():
        assert sum(served.values()) == nlp.calls[name] == 2 and served["c"] >= 1
        if "vm" in served:  # it switched at its second call, before any solver iteration
            assert nlp.switched[name] == (1, 0)
    assert set(nlp.cpu_on) <= {"vm", "c"} and sum(nlp.cpu_on.values()) == pytest.approx(sum(nlp.cpu.values()))


@needs_vm
def test_ipopt_on_the_vm_reaches_the_numpy_optimum(opf3: Problem) -> None:
    pytest.importorskip("cyipopt")
    on_vm = opf3.solve("ipopt", backend="vm", progress=False)
    on_numpy = opf3.solve("ipopt", backend="numpy", progress=False)
    assert on_vm.status == "Solve_Succeeded" and on_vm.iterations == on_numpy.iterations
    assert on_vm.f == pytest.approx(on_numpy.f, rel=1e-12)
    np.testing.assert_allclose(on_vm.x, on_numpy.x, rtol=1e-9, atol=1e-10)


@needs_vm
def test_nan_on_the_vm_names_the_constraint() -> None:
    p = Problem()
    x = p.variable("x", lb=-1.0, ub=1.0, start=-0.5)
    y = p.variable("y", start=1.0)
    p.constraint(eg.sqrt(x) + y, lb=0.0, name="needs_nonnegative_x")
    p.minimize(x * x + y * y)
    with pytest.raises(NonFiniteError, match="constraint needs_nonnegative_x is not finite at the start point"):
        p.solve("auto", backend="vm", progress=False)


@needs_vm
def test_ipopt_on_the_vm_reports_infeasible_and_inconsistent_bounds() -> None:
    pytest.importorskip("cyipopt")
    p = Problem()
    x = p.variable("x", start=0.0)
    y = p.variable("y", start=0.0)
    p.constraint(x * x + y * y, ub=-1.0, name="impossible")
    p.minimize(x + y)
    res = p.solve("ipopt", backend="vm", progress=False)
    assert not res.success and res.status == "Infeasible_Problem_Detected"
    q = Problem()
    z = q.variable("z", lb=0.0, ub=1.0, start=0.5)
    q.constraint(z, lb=2.0, ub=3.0, name="beyond")  # consistent on its own, impossible with z's bounds
    q.minimize(z * z)
    res = q.solve("ipopt", backend="vm", progress=False)
    assert not res.success and res.status == "Infeasible_Problem_Detected"


@needs_vm
def test_nan_past_the_start_ends_with_the_solvers_status() -> None:
    pytest.importorskip("cyipopt")
    p = Problem()
    x = p.variable("x", start=0.0)
    p.minimize((x - 3.0) ** 2 + 0.0 * eg.log(2.6 - x))  # nan beyond x = 2.6, on the way to the minimum at 3
    res = p.solve("ipopt", backend="vm", options={"max_iter": 60}, progress=False)
    assert not res.success and res.status in STATUS.values() and res.x[0] <= 2.6  # IPOPT's word, no crash
    q = Problem()
    u = q.variable("u", start=0.0)
    v = q.variable("v", start=1.0)
    q.constraint(eg.sqrt(2.0 - u) + v, lb=0.0, name="root")  # nan past u = 2
    q.minimize((u - 3.0) ** 2 + v * v)
    res = q.solve("ipopt", backend="vm", progress=False)
    assert not res.success and res.status in STATUS.values() and res.x[0] == pytest.approx(2.0, abs=1e-6)


@needs_vm
def test_hessian_results_do_not_share_the_kept_buffers(opf3: Problem) -> None:
    """The Hessian reuses its block and scratch arrays between calls: each result is still its own array."""
    nlp = opf3.compile("vm")
    (x1, lam1, s1), (x2, lam2, s2), _ = _points(nlp, 9)
    first = nlp.hessian(x1, lam1, s1)
    kept = first.copy()
    second = nlp.hessian(x2, lam2, s2)
    np.testing.assert_array_equal(first, kept)  # the second call did not write into the first result
    hessian = nlp._fns["hessian"]
    assert hessian is not None
    blocks = hessian(x2)
    weights = np.concatenate([np.full(nlp.n_objective_terms, s2), lam2])
    np.testing.assert_allclose(second, nlp.hess.assemble(blocks, weights), rtol=1e-15, atol=0)


@needs_vm
def test_straight_line_callbacks_equal_the_loops(opf3: Problem) -> None:
    """Straight-line callbacks (the vm's default, ready sooner) give the loops' numbers; the info says which
    code was made."""
    # loops=8: classes of 8 members or more (the three buses' largest classes have 12: fewer than the default's)
    looped, flat = opf3.compile("vm", loops=8), opf3.compile("vm")
    assert not any(fn.info["classes"] for fn in flat._fns.values() if fn is not None)
    assert any(fn.info["classes"] for fn in looped._fns.values() if fn is not None)
    for x, lam, sigma in _points(looped, 13):
        for got, want in zip(_all(flat, x, lam, sigma), _all(looped, x, lam, sigma), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("backend", ["numpy", pytest.param("vm", marks=needs_vm)])
def test_constraints_and_jacobian_write_into_the_array_given(opf3: Problem, backend: str) -> None:
    # out=: the values land in the caller's array (IPOPT's own memory through the C route), no copy
    nlp = opf3.compile(backend)
    for x, _, _ in _points(nlp, 11):
        g, jac = np.full(nlp.m, np.nan), np.full(len(nlp.jac.values), np.nan)
        assert nlp.constraints(x, out=g) is g and nlp.jacobian(x, out=jac) is jac
        np.testing.assert_array_equal(g, nlp.constraints(x))
        np.testing.assert_array_equal(jac, nlp.jacobian(x))
