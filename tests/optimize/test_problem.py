"""exprgraph.optimize: the problem object, its checks, the compiled callbacks and both solvers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from opt_checks import fd_check

import exprgraph as eg
from exprgraph.compile import vm
from exprgraph.errors import NonFiniteError, ProblemError
from exprgraph.optimize import Problem, Result, solve

needs_vm = pytest.mark.skipif(vm._native is None, reason="needs the vm extension")


def rosenbrock_on_disc() -> tuple[Problem, list[eg.Term]]:
    """min (1-x)^2 + 100 (y-x^2)^2 s.t. x^2 + y^2 <= 1.5, x in [-2, 2]."""
    p = Problem()
    x = p.variable("x", lb=-2.0, ub=2.0, start=-1.0)
    y = p.variable("y", start=1.0)
    p.constraint(x * x + y * y, ub=1.5, name="disc")
    p.minimize((1 - x) ** 2 + 100 * (y - x * x) ** 2)
    return p, [x, y]


def test_problem_records_and_reads_back() -> None:
    p, (x, y) = rosenbrock_on_disc()
    assert repr(p) == "Problem(2 variables, 1 constraints)"
    assert p.x == [x, y] and p.constraint_names == ["disc"] and p.index(y) == 1
    lbx, _ubx, x0, _lbg, ubg = p.bounds()
    assert lbx.tolist() == [-2.0, -math.inf] and x0.tolist() == [-1.0, 1.0] and ubg.tolist() == [1.5]
    vs = p.variables("v", 3, lb=[0, 1, 2], ub=5.0, start=(1, 2, 3))
    assert [v.name for v in vs] == ["v_0", "v_1", "v_2"]
    r = p.constraints([vs[0] + vs[1], vs[2] * x], lb=0.0, ub=[1.0, 2.0], name="pair")
    assert list(r) == [1, 2] and p.constraint_names[1:] == ["pair[0]", "pair[1]"]


@pytest.mark.parametrize(
    ("action", "match"),
    [
        (lambda p, x: p.variable("z", lb=2.0, ub=1.0), "inconsistent bounds for variable z"),
        (lambda p, x: p.constraint(x, lb=3.0, ub=1.0, name="c"), "inconsistent bounds for constraint c"),
        (lambda p, x: p.variables("w", 3, lb=[0.0, 1.0]), "lb of variables w has 2 numbers, 3 needed"),
        (lambda p, x: p.constraints([x, x * x], ub=[1.0, 2.0, 3.0], name="k"), "ub of constraints k has 3 numbers"),
        (lambda p, x: p.variable("x"), "variable x is declared twice"),
        (lambda p, x: p.constraint(x * eg.Symbol("u"), name="uses_u"), "constraint uses_u reads u"),
        (lambda p, x: p.minimize(eg.Symbol("s", shape=(2,))), "the objective has shape"),
        (lambda p, x: p.variable("q", start=float("nan")), "start of q is nan"),
        (lambda p, x: p.variable("r", lb="low"), "lb of r must be a number"),
        (lambda p, x: p.add_variable(x + 1), "a variable must be a symbol"),
    ],
)
def test_bad_input_names_the_item(action, match: str) -> None:
    p = Problem()
    x = p.variable("x")
    with pytest.raises(ProblemError, match=match):
        action(p, x)


def test_bad_start_and_solver_name() -> None:
    p, _ = rosenbrock_on_disc()
    nlp = p.compile("numpy")
    with pytest.raises(ProblemError, match="3 numbers, the problem has 2"):
        solve(nlp, "scipy", x0=[1.0, 2.0, 3.0])
    with pytest.raises(ProblemError, match="start of variable y is inf"):
        solve(nlp, "scipy", x0=[1.0, math.inf])
    with pytest.raises(ProblemError, match="unknown solver"):
        solve(nlp, "newton")


def test_nan_at_the_start_names_the_constraint() -> None:
    p = Problem()
    x = p.variable("x", lb=-1.0, ub=1.0, start=-0.5)
    y = p.variable("y", start=1.0)
    p.constraint(eg.log(x) + y, lb=0.0, name="needs_positive_x")
    p.minimize(x * x + y * y)
    with pytest.raises(NonFiniteError, match="constraint needs_positive_x is not finite at the start point") as e:
        solve(p, "scipy", backend="numpy")
    assert e.value.item == "constraint needs_positive_x" and e.value.where == "constraints"
    p2 = Problem()
    z = p2.variable("z", lb=0.0, start=0.0)
    p2.minimize(z**1.5 + z)  # finite value, infinite second derivative at 0: the Hessian block is named
    with pytest.raises(NonFiniteError, match=r"d2 \(the objective\) / d z d z"):
        solve(p2, "scipy", backend="numpy")


@pytest.mark.parametrize("backend", ["numpy", "c", pytest.param("vm", marks=needs_vm)])
def test_callbacks_match_finite_differences(backend: str) -> None:
    p, _ = rosenbrock_on_disc()
    p.constraint(eg.sin(p.x[0]) * eg.exp(p.x[1]) - p.x[0] * p.x[1] ** 3, lb=-5.0, ub=5.0, name="wiggle")
    nlp = p.compile(backend)
    assert nlp.backend == backend
    rng = np.random.default_rng(3)
    for _ in range(3):
        fd_check(nlp, rng.uniform(-1.0, 1.0, 2), rng.normal(size=2), float(rng.uniform(0.5, 2.0)))
    assert nlp.calls["hessian"] == 3 and nlp.cpu["jacobian"] >= 0.0


def test_no_compiler_keeps_the_vm_or_falls_back_to_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC", "no-such-compiler-for-exprgraph")
    p = Problem()
    x = p.variable("x_fallback_only", start=3.0)
    p.minimize((x - 1.25) ** 4 + x * x * 0.375)
    nlp = p.compile()
    if vm._native is None:  # no vm extension: the C build fails at once, numpy runs
        assert nlp.backend == "numpy"
        return
    assert nlp.backend == "auto" and nlp.wait(120)
    assert nlp.active() == {"objective": "vm", "gradient": "vm", "hessian": "vm"}
    assert all(b["error"] for b in nlp.background_builds().values())
    assert nlp.gradient([1.0])[0] == pytest.approx(4 * (1.0 - 1.25) ** 3 + 0.75)


def check_disc_solution(res: Result, x: eg.Term, y: eg.Term) -> None:
    # the unconstrained minimum (1, 1) is outside the disc: the optimum lies on the circle
    assert res.success, res.status
    assert res.value(x) ** 2 + res.value(y) ** 2 == pytest.approx(1.5, abs=1e-5)
    assert res.lam_g[0] > 0  # an active upper bound: a positive multiplier (CasADi's convention)
    assert res["f"] == res.f and res.iterations > 0 and res.log
    assert res.timings["callbacks"] <= res.timings["total"] + 1e-9
    stats = res.stats()
    assert stats["success"] and stats["iter_count"] == res.iterations and stats["n_call_hessian"] > 0


def test_scipy_solves() -> None:
    p, (x, y) = rosenbrock_on_disc()
    res = p.solve("scipy", backend="numpy", options={"gtol": 1e-10, "xtol": 1e-12})
    check_disc_solution(res, x, y)
    assert res.solver == "scipy" and res.f == pytest.approx(0.00861566, abs=1e-6)  # SLSQP agrees


def test_ipopt_solves_like_scipy() -> None:
    pytest.importorskip("cyipopt")
    p, (x, y) = rosenbrock_on_disc()
    res = p.solve("ipopt", backend="numpy")
    check_disc_solution(res, x, y)
    assert res.status == "Solve_Succeeded" and res.solver == "ipopt"
    scipy_res = p.solve("scipy", backend="numpy", options={"gtol": 1e-10, "xtol": 1e-12})
    np.testing.assert_allclose(res.x, scipy_res.x, atol=1e-4)
    np.testing.assert_allclose(res.lam_g, scipy_res.lam_g, rtol=1e-3)


def test_ipopt_bound_multipliers_and_equalities() -> None:
    pytest.importorskip("cyipopt")
    p = Problem()
    a = p.variable("a", lb=0.5, ub=10.0, start=2.0)
    b = p.variable("b", ub=0.8, start=0.0)
    p.constraint(a * b, lb=1.0, name="prod")  # lower bound active: a negative multiplier
    p.minimize(a + b)
    res = p.solve("ipopt", backend="numpy")
    assert res.x.tolist() == pytest.approx([1.25, 0.8], abs=1e-6)
    assert res.lam_g[0] == pytest.approx(-1.25, rel=1e-5)
    assert res.lam_x.tolist() == pytest.approx([0.0, 0.5625], abs=1e-5)


def test_ipopt_reports_infeasible_and_unbounded() -> None:
    pytest.importorskip("cyipopt")
    p = Problem()
    x = p.variable("x", start=0.0)
    p.constraint(x * x, ub=-1.0, name="impossible")
    p.minimize(x)
    res = p.solve("ipopt", backend="numpy")
    assert not res.success and res.status == "Infeasible_Problem_Detected"
    q = Problem()
    y = q.variable("y", start=1.0)
    q.minimize(-y)
    res = q.solve("ipopt", backend="numpy", options={"max_iter": 200})
    assert not res.success and res.status in ("Diverging_Iterates", "Maximum_Iterations_Exceeded")


def test_scipy_reports_its_status_on_infeasible() -> None:
    p = Problem()
    x = p.variable("x", start=0.0)
    p.constraint(x * x, ub=-1.0, name="impossible")
    p.minimize(x)
    res = p.solve("scipy", backend="numpy", options={"maxiter": 200})
    assert not res.success and res.status


def test_feasibility_problem_and_no_constraints() -> None:
    p = Problem()
    x = p.variable("x", lb=-3.0, ub=3.0, start=2.0)
    p.minimize((x - 1.0) ** 2)
    res = p.solve("scipy", backend="numpy")
    assert res.success and res.x[0] == pytest.approx(1.0, abs=1e-5) and len(res.g) == 0


def test_a_c_build_past_its_time_limit_keeps_the_vm_or_falls_back_to_numpy() -> None:
    p = Problem()
    x = p.variable("x_timeout_only", start=3.0)
    p.minimize(eg.exp(x * 0.8125) + (x - 2.0625) ** 4)
    nlp = p.compile("auto", build_timeout=0.001)
    assert nlp.backend == ("numpy" if vm._native is None else "auto") and nlp.gradient([1.0]).shape == (1,)
    if vm._native is not None:
        assert nlp.wait(120) and nlp.active()["gradient"] == "vm"


def test_unknown_backend_is_named() -> None:
    p, _ = rosenbrock_on_disc()
    with pytest.raises(ProblemError, match="unknown backend 'cuda'"):
        p.compile("cuda")


def test_a_failed_check_forgets_the_nodes_it_passed() -> None:
    # x*u is walked (and was marked) before u is found: a later constraint reusing it must still fail
    p = Problem()
    x = p.variable("x")
    u = eg.Symbol("u")
    shared = x * u
    for _ in range(2):
        with pytest.raises(ProblemError, match="constraint c reads u"):
            p.constraint(shared + 1.0, name="c")
    with pytest.raises(ProblemError, match="the objective reads u"):
        p.minimize(shared - 3.0)
    assert p.g == [] and p.f is None
    p.add_variable(u)  # declared now: the very same terms pass
    assert p.constraint(shared + 1.0, name="c") == 0
    p.minimize(shared - 3.0)
    assert p.g == [shared + 1.0]


def test_checks_see_every_symbol_of_shared_subterms() -> None:
    p = Problem()
    x, y = p.variable("x"), p.variable("y")
    z = eg.Symbol("z")
    common = eg.sin(x * y)
    p.constraints([common + x, common * y], name="ok")
    with pytest.raises(ProblemError, match=r"constraint more\[1\] reads z"):
        p.constraints([common - 1.0, common * z, common], name="more")
    assert len(p.g) == 2  # nothing of the failed call was added
    with pytest.raises(ProblemError, match="reads w, z"):
        p.constraint(eg.Symbol("w") + z + common)
    assert p.constraint(x * y, name="last") == 2


def test_vector_bounds_are_checked_and_stored_as_given() -> None:
    p = Problem()
    xs = p.variables("x", 3, lb=np.array([0, -1, 2]), ub=(1, 1, 3), start=[0.5, 0.0, 2.5])
    lbx, ubx, x0, _, _ = p.bounds()
    assert lbx.tolist() == [0.0, -1.0, 2.0] and ubx.tolist() == [1.0, 1.0, 3.0] and x0.tolist() == [0.5, 0.0, 2.5]
    with pytest.raises(ProblemError, match=r"inconsistent bounds for variable w_1: lower bound 5\.0"):
        p.variables("w", 3, lb=np.array([0.0, 5.0, 0.0]), ub=1.0)
    with pytest.raises(ProblemError, match="lb of variables v is nan"):
        p.variables("v", 2, lb=np.array([0.0, np.nan]))
    with pytest.raises(ProblemError, match="ub of variables v must be a number or 2 numbers"):
        p.variables("v", 2, ub=[1.0, "high"])
    with pytest.raises(ProblemError, match=r"inconsistent bounds for constraint k\[1\]"):
        p.constraints([xs[0], xs[1] * xs[2]], lb=[0.0, 3.0], ub=np.array([1.0, 2.0]), name="k")
    r = p.constraints([xs[0], xs[1] * xs[2]], lb=np.array([0, 1]), ub=[1.0, np.inf], name="k")
    _, _, _, lbg, ubg = p.bounds()
    assert list(r) == [0, 1] and lbg.tolist() == [0.0, 1.0] and ubg.tolist() == [1.0, np.inf]
    assert len(p.x) == 3  # the failed declarations added nothing


def test_a_repeated_variable_takes_back_the_whole_call() -> None:
    p = Problem()
    p.variable("v_1")
    with pytest.raises(ProblemError, match="variable v_1 is declared twice"):
        p.variables("v", 3)
    assert [s.name for s in p.x] == ["v_1"]
    v0 = p.variable("v_0")  # taken back: free to declare again
    assert p.index(v0) == 1
