"""IPOPT through its C interface (exprgraph.optimize.ipopt_c) on each libipopt found: the cyipopt route's answers,
errors from callbacks raised again (no crash), the library named, statuses and the iteration log."""

from __future__ import annotations

import ctypes.util
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from bench.opf_data import read_case  # the model lives with the benchmark (conftest)
from bench.opf_model import build_exprgraph
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_opf_model import CASE3

import exprgraph as eg
from exprgraph.errors import IpoptLibraryError, IpoptOptionError, NonFiniteError, OptionalDependencyError, ProblemError
from exprgraph.optimize import CompiledNLP, Problem, Result, ipopt_backend, ipopt_c, ipopt_lib, solve

PLACES = [place for place, _ in ipopt_lib.candidates() if place in ipopt_lib.PLACES]
needs_lib = pytest.mark.skipif(not PLACES, reason="no libipopt found (casadi, cyipopt-wheels or the system's)")
HAVE_CYIPOPT = ipopt_backend.available()


PARAMS: list[Any] = list(PLACES) or [pytest.param("none", marks=needs_lib)]


@pytest.fixture(params=PARAMS)
def place(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(autouse=True)
def no_library_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """A user's EXPRGRAPH_IPOPT_LIBRARY would move the cyipopt route these tests compare with."""
    monkeypatch.delenv(ipopt_lib.ENV_VAR, raising=False)


def disc() -> Problem:
    """min (1-x)^2 + 100 (y-x^2)^2 s.t. x^2 + y^2 <= 1.5, x in [-2, 2]: the disc's bound active."""
    p = Problem()
    x = p.variable("x", lb=-2.0, ub=2.0, start=-1.0)
    y = p.variable("y", start=1.0)
    p.constraint(x * x + y * y, ub=1.5, name="disc")
    p.minimize((1 - x) ** 2 + 100 * (y - x * x) ** 2)
    return p


def product() -> Problem:
    """min a + b s.t. a*b >= 1, b <= 0.8: a lower constraint bound and an upper variable bound active."""
    p = Problem()
    a = p.variable("a", lb=0.5, ub=10.0, start=2.0)
    b = p.variable("b", ub=0.8, start=0.0)
    p.constraint(a * b, lb=1.0, name="prod")
    p.minimize(a + b)
    return p


def opf3(tmp_path: Path) -> Problem:
    path = tmp_path / "case3_test.m"
    path.write_text(CASE3)
    return build_exprgraph(read_case(str(path)))[0]


def unconstrained() -> Problem:
    """No constraints at all (m = 0): the Hessian callback gets no multipliers."""
    p = Problem()
    x = p.variable("x", lb=-3.0, ub=3.0, start=2.0)
    z = p.variable("z", start=0.5)
    p.minimize((x - 1.0) ** 2 + eg.exp(z) - 2 * z)
    return p


def linear() -> Problem:
    """A linear program: no Hessian entries at all (IPOPT is told the Hessian has none)."""
    p = Problem()
    x = p.variable("x", lb=0.0, ub=4.0, start=1.0)
    y = p.variable("y", lb=0.0, start=1.0)
    p.constraint(x + 2 * y, lb=2.0, name="cover")
    p.minimize(3 * x + y)
    return p


def assert_same(got: Result, want: Result, tol: float = 1e-8) -> None:
    assert got.status == want.status and got.status_code == want.status_code and got.success == want.success
    assert got.f == pytest.approx(want.f, rel=tol, abs=tol)
    for field in ("x", "g", "lam_g", "lam_x"):
        np.testing.assert_allclose(getattr(got, field), getattr(want, field), rtol=tol, atol=tol, err_msg=field)


@pytest.mark.skipif(not HAVE_CYIPOPT, reason="compares with the cyipopt route")
@pytest.mark.parametrize("make", [disc, product, unconstrained, linear, opf3])
def test_same_answer_as_cyipopt(place: str, make, tmp_path: Path) -> None:
    p = make(tmp_path) if make is opf3 else make()
    nlp = p.compile("numpy")
    want = solve(nlp, "ipopt", progress=False)
    got = solve(nlp, "ipopt", ipopt_library=place, progress=False)
    assert got.library and not want.library
    assert want.success and got.solver == "ipopt"
    assert_same(got, want)
    assert got.library.startswith("IPOPT 3.") and f", {place}: " in got.library
    if place == "cyipopt":  # the very library cyipopt runs on: the same iterations and calls
        # (without Hessian entries IPOPT does not call eval_h here; cyipopt calls its hessian anyway)
        skip = {"hessian"} if nlp.hess.nnz == 0 else set()
        assert got.iterations == want.iterations
        assert {k: v for k, v in got.calls.items() if k not in skip} == {
            k: v for k, v in want.calls.items() if k not in skip
        }
        assert [it.f for it in got.log] == pytest.approx([it.f for it in want.log], rel=1e-12)


@needs_lib
def test_iteration_log_timings_and_calls(place: str) -> None:
    nlp = disc().compile("numpy")
    res = solve(nlp, ipopt_library=place, options={"tol": 1e-10})
    assert res.success and res.status == "Solve_Succeeded" and res.iterations > 5
    assert [it.iteration for it in res.log] == list(range(res.iterations + 1))
    assert res.log[-1].f == pytest.approx(res.f) and res.log[-1].inf_pr < 1e-8 and res.log[0].mu > 0
    assert nlp.iteration == res.iterations + 1  # the intermediate callback kept the iteration up to date
    assert res.calls["hessian"] >= res.iterations and res.calls["objective"] > 0
    assert 0.0 <= res.timings["callbacks"] <= res.timings["total"] + 1e-9
    assert res.stats()["iter_count"] == res.iterations
    assert repr(res).startswith("Result(solver='ipopt', status='Solve_Succeeded'")


@needs_lib
def test_options_as_with_cyipopt(place: str) -> None:
    nlp = disc().compile("numpy")
    res = solve(nlp, ipopt_library=place, options={"max_iter": 3, "tol": 1e-12, "mu_strategy": "adaptive"})
    assert res.status == "Maximum_Iterations_Exceeded" and res.status_code == -1 and not res.success
    assert res.iterations == 3 and len(res.log) == 4
    with pytest.raises(IpoptOptionError, match="refused option 'no_such_option'") as e:
        solve(nlp, ipopt_library=place, options={"no_such_option": 1})
    assert e.value.item == "no_such_option" and isinstance(e.value, TypeError)
    with pytest.raises(IpoptOptionError, match=r"'max_iter' = 2\.5"):
        solve(nlp, ipopt_library=place, options={"max_iter": 2.5})  # an integer option given a float
    with pytest.raises(IpoptOptionError, match="give a str, an int or a float"):
        solve(nlp, ipopt_library=place, options={"sb": True})
    assert solve(nlp, ipopt_library=place).success  # nothing left behind by the refused ones


@needs_lib
def test_infeasible_and_unbounded_give_their_status(place: str) -> None:
    p = Problem()
    x = p.variable("x", start=0.0)
    p.constraint(x * x, ub=-1.0, name="impossible")
    p.minimize(x)
    res = p.solve("ipopt", backend="numpy", ipopt_library=place)
    assert not res.success and res.status == "Infeasible_Problem_Detected" and res.status_code == 2
    q = Problem()
    y = q.variable("y", start=1.0)
    q.minimize(-y)
    res = q.solve("ipopt", backend="numpy", ipopt_library=place, options={"max_iter": 200})
    assert not res.success and res.status in ("Diverging_Iterates", "Maximum_Iterations_Exceeded")


class CallbackFailedError(Exception):
    """Raised by a callback under test."""


@needs_lib
@pytest.mark.parametrize("callback", ["objective", "gradient", "constraints", "jacobian", "hessian"])
def test_an_error_in_a_callback_comes_out_as_itself(place: str, callback: str, monkeypatch: pytest.MonkeyPatch) -> None:
    nlp = disc().compile("numpy")
    real = getattr(nlp, callback)
    calls = {"n": 0}

    def failing(*args: object, **kwargs: object) -> object:
        calls["n"] += 1
        if calls["n"] == 3:  # not at the first call: IPOPT is inside its iterations
            raise CallbackFailedError(f"{callback} failed")
        return real(*args, **kwargs)

    monkeypatch.setattr(nlp, callback, failing)
    with pytest.raises(CallbackFailedError, match=f"{callback} failed"):
        ipopt_c.solve_ipopt_c(nlp, nlp.x0.copy(), library=place)
    assert calls["n"] == 3  # every later callback stopped before reaching Python's work
    monkeypatch.setattr(nlp, callback, real)
    assert ipopt_c.solve_ipopt_c(nlp, nlp.x0.copy(), library=place).success  # the process lives on


@needs_lib
def test_an_error_in_the_intermediate_callback(place: str, monkeypatch: pytest.MonkeyPatch) -> None:
    nlp = product().compile("numpy")

    def intermediate(self: object, *info: float) -> bool:
        if int(info[1]) == 2:
            raise KeyboardInterrupt  # not an Exception: still caught in the callback, raised after the solve
        return True

    monkeypatch.setattr(ipopt_backend.IterationLog, "intermediate", intermediate)
    with pytest.raises(KeyboardInterrupt):
        ipopt_c.solve_ipopt_c(nlp, nlp.x0.copy(), library=place)


@needs_lib
@pytest.mark.parametrize("backend", ["numpy", "vm"])  # the Python callbacks; the vm's C callbacks
def test_a_nan_inside_the_solve_names_the_constraint(place: str, backend: str) -> None:
    p = Problem()
    x = p.variable("x", start=-0.5)
    p.constraint(eg.log(x) + x, lb=-3.0, name="log_x")
    p.minimize(x * x)
    nlp = p.compile(backend)
    with pytest.raises(NonFiniteError, match="constraint log_x is not finite during the IPOPT solve"):
        ipopt_c.solve_ipopt_c(nlp, nlp.x0.copy(), library=place)  # the start check skipped: IPOPT meets the nan


@needs_lib
def test_callbacks_get_views_of_ipopts_memory(place: str, monkeypatch: pytest.MonkeyPatch) -> None:
    nlp = disc().compile("numpy")
    seen: list[tuple[bool, bool]] = []
    real = nlp.hessian

    def hessian(x: np.ndarray, lagrange: np.ndarray, obj_factor: float) -> np.ndarray:
        seen.append((x.flags.owndata, lagrange.flags.owndata))
        return real(x, lagrange, obj_factor)

    monkeypatch.setattr(nlp, "hessian", hessian)
    res = ipopt_c.solve_ipopt_c(nlp, nlp.x0.copy(), library=place)
    assert res.success and seen and not any(own_x or own_lam for own_x, own_lam in seen)  # no copy of x or lambda


@needs_lib
def test_a_start_of_the_wrong_length_is_refused_before_ipopt_reads_it(place: str) -> None:
    nlp = disc().compile("numpy")
    with pytest.raises(ProblemError, match="the start point has 3 numbers, the problem has 2 variables"):
        ipopt_c.solve_ipopt_c(nlp, np.zeros(3), library=place)


def test_wrong_library_paths_are_named(tmp_path: Path) -> None:
    missing = tmp_path / "libipopt_missing.so"
    with pytest.raises(IpoptLibraryError, match=r"cannot load .*libipopt_missing\.so.* as IPOPT") as e:
        ipopt_lib.load_library(missing)
    assert e.value.path == str(missing) and isinstance(e.value, OptionalDependencyError)
    not_a_library = tmp_path / "libipopt_text.so"
    not_a_library.write_text("not a shared object")
    with pytest.raises(IpoptLibraryError, match="cannot load"):
        ipopt_lib.load_library(not_a_library)
    libm = ctypes.util.find_library("m")
    if libm is not None:  # a real library without IPOPT's C interface
        with pytest.raises(IpoptLibraryError, match=r"missing CreateIpoptProblem.*name the libipopt file itself"):
            ipopt_lib.load_library(libm)
    with pytest.raises(IpoptLibraryError):  # through solve too, before anything is compiled
        solve(disc(), "ipopt", ipopt_library=missing)
    assert not ipopt_c.available(missing)


def test_the_environment_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(ipopt_lib.ENV_VAR, str(tmp_path / "libipopt_from_env.so"))
    assert ipopt_lib.candidates()[0] == ("environment", str(tmp_path / "libipopt_from_env.so"))
    with pytest.raises(IpoptLibraryError, match=r"libipopt_from_env\.so"):
        solve(disc(), "ipopt", backend="numpy")  # the variable alone selects the C route
    assert solve(disc(), "scipy", backend="numpy").solver == "scipy"  # and leaves scipy alone
    with pytest.raises(ProblemError, match="ipopt_library is for solver='ipopt'"):
        solve(disc(), "scipy", backend="numpy", ipopt_library="auto")
    if PLACES:
        path = dict(ipopt_lib.candidates())[PLACES[0]]
        monkeypatch.setenv(ipopt_lib.ENV_VAR, path)
        res = solve(disc(), "ipopt", backend="numpy")
        assert res.success and res.library.endswith(f"environment: {path}")


def test_places_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ipopt_lib, "_FINDERS", {**ipopt_lib._FINDERS, "system": lambda: None})
    with pytest.raises(IpoptLibraryError, match="no libipopt in place 'system': install IPOPT"):
        ipopt_lib.load_library("system")
    monkeypatch.setattr(ipopt_lib, "_FINDERS", dict.fromkeys(ipopt_lib.PLACES, lambda: None))
    monkeypatch.delenv(ipopt_lib.ENV_VAR, raising=False)
    with pytest.raises(IpoptLibraryError, match="no libipopt found: install casadi or cyipopt-wheels"):
        ipopt_lib.load_library()


@needs_lib
def test_auto_uses_a_libipopt_without_cyipopt(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ipopt_lib.ENV_VAR, raising=False)
    monkeypatch.setattr(ipopt_backend, "available", lambda: False)
    res = solve(product(), backend="numpy")
    assert res.success
    assert res.x.tolist() == pytest.approx([1.25, 0.8], abs=1e-6) and res.lam_g[0] == pytest.approx(-1.25, rel=1e-5)


@needs_lib
def test_auto_prefers_the_c_interface_even_beside_cyipopt(monkeypatch: pytest.MonkeyPatch) -> None:
    # the same IPOPT with the callbacks in C: "auto" takes the C route whenever a libipopt is found
    monkeypatch.delenv(ipopt_lib.ENV_VAR, raising=False)
    monkeypatch.setattr(ipopt_backend, "available", lambda: True)
    res = solve(product(), backend="numpy", progress=False)
    assert res.success and res.library == ipopt_lib.load_library("auto").describe()


@pytest.mark.skipif(not HAVE_CYIPOPT, reason="needs cyipopt")
def test_auto_falls_back_to_cyipopt_without_a_library(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ipopt_lib.ENV_VAR, raising=False)
    monkeypatch.setattr(ipopt_c, "available", lambda library=None: False)
    res = solve(product(), backend="numpy", progress=False)
    assert res.success and res.solver == "ipopt" and res.library == ""


@needs_lib
def test_library_is_loaded_once_and_described(place: str) -> None:
    lib = ipopt_lib.load_library(place)
    again, by_path = ipopt_lib.load_library(place), ipopt_lib.load_library(lib.path)
    assert again.cdll is lib.cdll and by_path.cdll is lib.cdll and by_path.source == "argument"
    assert lib.source == place and lib.bool_type in (ctypes.c_bool, ctypes.c_int)
    assert lib.version is None or lib.version >= (3, 0, 0)
    assert str(lib) == lib.describe() and lib.path in lib.describe()
    nlp = product().compile("numpy")
    res = ipopt_c.solve_ipopt_c(nlp, nlp.x0.copy(), library=lib)  # a loaded library is taken as it is
    assert res.success and res.library == lib.describe()


def total(terms: list[eg.Term]) -> eg.Term:
    """The sum of one or more terms (``add`` takes two or more)."""
    return terms[0] if len(terms) == 1 else eg.add(*terms)


def quadratic_program(seed: int, n: int, m: int) -> tuple[Problem, CompiledNLP]:
    """A random strictly convex quadratic objective, linear inequalities and boxes, plus one smooth nonlinearity."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n, n))
    q = a @ a.T + n * np.eye(n)
    c = rng.normal(size=n)
    p = Problem()
    xs = p.variables("x", n, lb=-2.0, ub=2.0, start=rng.uniform(-0.5, 0.5, n).tolist())
    quad = total([float(q[i, j]) * xs[i] * xs[j] for i in range(n) for j in range(n)])
    p.minimize(0.5 * quad + total([float(c[i]) * xs[i] for i in range(n)]) + eg.exp(0.1 * xs[0]))
    rows = rng.normal(size=(m, n))
    p.constraints([total([float(rows[k, i]) * xs[i] for i in range(n)]) for k in range(m)], ub=0.5, name="lin")
    return p, p.compile("numpy")


@needs_lib
@pytest.mark.skipif(not HAVE_CYIPOPT, reason="compares with the cyipopt route")
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), n=st.integers(1, 5), m=st.integers(0, 4))
def test_random_convex_programs_agree_with_cyipopt(seed: int, n: int, m: int) -> None:
    _, nlp = quadratic_program(seed, n, m)
    want = solve(nlp, "ipopt", progress=False, options={"tol": 1e-10})
    for place in PLACES:
        got = solve(nlp, "ipopt", ipopt_library=place, progress=False, options={"tol": 1e-10})
        assert got.success and want.success
        assert_same(got, want)  # 1e-8 (80 random programs: equal to 1e-16 on both libraries)
