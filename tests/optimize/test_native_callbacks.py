"""The C callbacks over the vm's machines (CompiledNLP.native, compile/_cvm_nlp.c) against their twin, the
CompiledNLP methods the Python callbacks call: called through their addresses as IPOPT calls them, for both of
IPOPT's Bool types, bit for bit. No library is needed (a solve with both roads runs where a libipopt is found)."""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.compile import vm
from exprgraph.errors import EvaluationError
from exprgraph.optimize import CompiledNLP, Problem, ipopt_c, ipopt_lib
from exprgraph.optimize.callbacks import CALLBACKS

pytestmark = pytest.mark.skipif(vm._native is None, reason="the vm extension is not built")

BOOLS = [ctypes.c_bool, ctypes.c_int]
FINITE = st.floats(-3.0, 3.0, allow_nan=False)
NAMES = ("f", "g", "grad_f", "jac_g", "h")  # the order of pointers()


def shared_terms() -> Problem:
    """Three variables, a sum of objective terms, constraints whose Hessian blocks add into shared entries
    (some negated: the signed weights)."""
    p = Problem()
    x = p.variable("x", lb=-2.0, ub=2.0, start=0.5)
    y = p.variable("y", start=-0.25)
    z = p.variable("z", lb=0.1, start=1.0)
    p.constraint(x * x + y * y - z * y, ub=1.5, name="disc")
    p.constraint(x * y - eg.sin(x - z), lb=-1.0, name="prod")
    p.constraint(eg.log(z) - x * z, lb=-4.0, name="logz")
    p.minimize((1 - x) ** 2 + 100 * (y - x * x) ** 2 - x * z + eg.exp(-z))
    return p


def unconstrained() -> Problem:
    """No constraints: no g, J or multipliers."""
    p = Problem()
    x = p.variable("x", start=0.5)
    y = p.variable("y", start=1.5)
    p.minimize((x - y) ** 2 + eg.cos(x * y))
    return p


NLP = shared_terms().compile("vm")
FREE = unconstrained().compile("vm")


def c_function(native: Any, name: str, bool_type: Any) -> Any:
    """Callback ``name`` as IPOPT holds it: its address cast to the prototype for ``bool_type``."""
    address = native.pointers()[NAMES.index(name)]
    return ctypes.cast(address, ipopt_c._prototypes(bool_type)[name])


def ptr(a: np.ndarray) -> int:
    """The address of a contiguous array."""
    return int(a.ctypes.data)


def call_all(nlp: CompiledNLP, native: Any, bool_type: Any, point: np.ndarray, lam: np.ndarray, sigma: float) -> Any:
    """Every callback at (point, lam, sigma) through its address: (f, gradient, g, jacobian, hessian)."""
    ud, n, m = native.address, nlp.n, nlp.m
    obj, grad = np.zeros(1), np.full(n, np.nan)
    assert c_function(native, "f", bool_type)(n, ptr(point), 1, ptr(obj), ud)
    assert c_function(native, "grad_f", bool_type)(n, ptr(point), 0, ptr(grad), ud)
    g, jac = np.full(m, np.nan), np.full(len(nlp.jac.values), np.nan)
    assert c_function(native, "g", bool_type)(n, ptr(point), 0, m, ptr(g) if m else None, ud)
    assert c_function(native, "jac_g", bool_type)(n, ptr(point), 0, m, len(jac), None, None, ptr(jac), ud)
    hess = np.full(nlp.hess.nnz, np.nan)
    h = c_function(native, "h", bool_type)
    assert h(n, ptr(point), 0, sigma, m, ptr(lam) if m else None, 1, len(hess), None, None, ptr(hess), ud)
    return obj[0], grad, g, jac, hess


@pytest.mark.parametrize("bool_type", BOOLS)
@settings(max_examples=30, deadline=None)
@given(
    point=st.lists(FINITE, min_size=3, max_size=3),
    lam=st.lists(FINITE, min_size=3, max_size=3),
    sigma=FINITE,
)
def test_the_c_callbacks_give_the_nlps_values_bit_for_bit(
    bool_type: Any, point: list[float], lam: list[float], sigma: float
) -> None:
    native = NLP.native()
    assert native is not None
    x, mult = np.array(point), np.array(lam)
    x[2] = abs(x[2]) + 0.1  # log(z) defined
    f, grad, g, jac, hess = call_all(NLP, native, bool_type, x, mult, sigma)
    assert f == NLP.objective(x)
    np.testing.assert_array_equal(grad, NLP.gradient(x))
    np.testing.assert_array_equal(g, NLP.constraints(x))
    np.testing.assert_array_equal(jac, NLP.jacobian(x))
    np.testing.assert_array_equal(hess, NLP.hessian(x, mult, sigma))
    by_code, error, nonfinite = native.record()
    (calls, cpu), (on_c, _) = by_code["vm"], by_code["c"]
    assert calls == (1, 1, 1, 1, 1) and on_c == (0,) * 5 and all(s >= 0.0 for s in cpu)
    assert not error and nonfinite is None


@settings(max_examples=20, deadline=None)
@given(point=st.lists(FINITE, min_size=2, max_size=2), sigma=FINITE)
def test_without_constraints(point: list[float], sigma: float) -> None:
    native = FREE.native()
    assert native is not None
    x = np.array(point)
    f, grad, g, jac, hess = call_all(FREE, native, ctypes.c_bool, x, np.zeros(0), sigma)
    assert f == FREE.objective(x) and len(g) == len(jac) == 0
    np.testing.assert_array_equal(grad, FREE.gradient(x))
    np.testing.assert_array_equal(hess, FREE.hessian(x, np.zeros(0), sigma))


@pytest.mark.parametrize("bool_type", BOOLS)
def test_structures_are_written_as_int32(bool_type: Any) -> None:
    native = NLP.native()
    for name, (rows, cols) in (("jac_g", NLP.jacobianstructure()), ("h", NLP.hessianstructure())):
        i_row, j_col = np.full(len(rows), -1, np.int32), np.full(len(rows), -1, np.int32)
        fn = c_function(native, name, bool_type)
        if name == "jac_g":
            assert fn(3, None, 0, 3, len(rows), ptr(i_row), ptr(j_col), None, native.address)
        else:
            assert fn(3, None, 0, 1.0, 3, None, 0, len(rows), ptr(i_row), ptr(j_col), None, native.address)
        assert (i_row.tolist(), j_col.tolist()) == (list(rows), list(cols))


def test_a_non_finite_value_is_recorded_as_the_python_road_records_it() -> None:
    nlp = shared_terms().compile("vm")
    native = nlp.native()
    x = np.array([0.5, 0.25, -1.0])  # log(z) of a negative z: the constraint "logz" is nan
    g = np.zeros(3)
    assert c_function(native, "g", ctypes.c_bool)(3, ptr(x), 1, 3, ptr(g), native.address)  # returned, as IPOPT wants
    assert np.isnan(g[2]) and nlp.absorb(native) is None
    assert nlp.nonfinite == ("constraints", 2)
    assert "constraint logz is not finite" in str(nlp.nonfinite_error("here"))
    assert nlp.calls["constraints"] == 1 and nlp.served["constraints"] == {"vm": 1}


def test_a_machine_error_returns_false_and_stops_later_calls() -> None:
    p = Problem()
    x = p.variable("x", start=1.0)
    p.minimize(x * x + eg.const(2) ** eg.const(-1))  # an int64 power with a negative exponent: an error
    nlp = p.compile("vm")
    native = nlp.native()
    assert native is not None
    obj, point = np.zeros(1), np.array([1.0])
    assert not c_function(native, "f", ctypes.c_int)(1, ptr(point), 1, ptr(obj), native.address)
    assert native.error
    grad = np.zeros(1)
    assert not c_function(native, "grad_f", ctypes.c_int)(1, ptr(np.array([5.0])), 0, ptr(grad), native.address)
    assert native.record()[0]["vm"][0] == (1, 0, 0, 0, 0)  # the later call did not run
    assert isinstance(nlp.absorb(native), EvaluationError)
    with pytest.raises(EvaluationError):
        nlp.objective(point)  # the twin raises at the same point


def test_under_auto_each_library_takes_over_when_handed() -> None:
    nlp = shared_terms().compile("auto")
    native = nlp.native()  # the builds may have finished already: then the libraries serve from the start
    assert native is not None
    x, lam = np.array([0.3, -0.7, 1.2]), np.array([0.5, -1.5, 2.0])
    before = call_all(nlp, native, ctypes.c_bool, x, lam, 0.75)
    assert nlp.wait(120) and all(build["error"] is None for build in nlp.background_builds().values())
    nlp.hand_over(native)
    after = call_all(nlp, native, ctypes.c_bool, x, lam, 0.75)
    by_code = native.record()[0]
    on_vm, on_c = by_code["vm"][0], by_code["c"][0]
    assert min(on_c) >= 1 and all(v + c == 2 for v, c in zip(on_vm, on_c, strict=True))
    for a, b in zip(before, after, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-13)  # the library's libm may round a last bit otherwise
    f, grad, g, jac, hess = after  # the library through the C callbacks gives the Python road's bits
    assert f == nlp.objective(x)
    np.testing.assert_array_equal(grad, nlp.gradient(x))
    np.testing.assert_array_equal(g, nlp.constraints(x))
    np.testing.assert_array_equal(jac, nlp.jacobian(x))
    np.testing.assert_array_equal(hess, nlp.hessian(x, lam, 0.75))
    nlp.absorb(native)
    assert all(nlp.served[name]["c"] == 1 + on_c[k] for k, name in enumerate(CALLBACKS))
    assert {name for k, name in enumerate(CALLBACKS) if on_vm[k]} == set(nlp.switched)


def test_other_backends_have_no_c_callbacks(monkeypatch: pytest.MonkeyPatch) -> None:
    assert shared_terms().compile("numpy").native() is None
    assert shared_terms().compile("c").native() is None
    monkeypatch.setattr(vm, "ONE_POINT", False)
    assert shared_terms().compile("vm").native() is None


def test_bad_tables_are_refused() -> None:
    rows = np.zeros(1, np.int32)
    base: dict[str, Any] = dict(
        n=1, m=0, grad_cols=np.zeros(1, np.int64), jac_rows=rows[:0], jac_cols=rows[:0], hess_rows=rows,
        hess_cols=rows, position=np.zeros(1, np.int64), term=np.zeros(1, np.int64), n_terms=1,
        n_objective_terms=1, signed=False,
    )  # fmt: skip
    none = (None,) * 5
    assert vm.nlp_callbacks(none, **base) is not None
    with pytest.raises(IndexError, match="position"):
        vm.nlp_callbacks(none, **{**base, "position": np.array([1], np.int64)})
    with pytest.raises(IndexError, match="term"):
        vm.nlp_callbacks(none, **{**base, "term": np.array([2], np.int64)})
    with pytest.raises(IndexError, match="grad_cols"):
        vm.nlp_callbacks(none, **{**base, "grad_cols": np.array([-1], np.int64)})
    with pytest.raises(TypeError, match="int32"):
        vm.nlp_callbacks(none, **{**base, "hess_rows": np.zeros(1, np.int64)})
    with pytest.raises(ValueError, match="n_terms"):
        vm.nlp_callbacks(none, **{**base, "m": 2})
    wrong = NLP._fns["objective"].library  # reads 3 columns, not 1
    with pytest.raises(ValueError, match="objective machine reads 3 columns"):
        vm.nlp_callbacks((wrong, None, None, None, None), **base)


PLACES = [place for place, _ in ipopt_lib.candidates() if place in ipopt_lib.PLACES]


@pytest.mark.skipif(not PLACES, reason="no libipopt found (casadi, cyipopt-wheels or the system's)")
@pytest.mark.parametrize("place", PLACES or ["none"])
def test_a_solve_on_either_road_is_the_same_solve(place: str, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = []
    for native in (False, True):
        monkeypatch.setattr(ipopt_c, "NATIVE", native)
        nlp = shared_terms().compile("vm")
        res = ipopt_c.solve_ipopt_c(nlp, nlp.x0.copy(), library=place)
        runs.append((res, dict(nlp.calls), dict(nlp.served)))
    (a, calls_a, served_a), (b, calls_b, served_b) = runs
    assert a.status == b.status and a.iterations == b.iterations
    np.testing.assert_array_equal(a.x, b.x)
    assert calls_a == calls_b and served_a == served_b
