"""The C callbacks of exprgraph.optimize.ipopt_c called through raw function pointers, as IPOPT calls them.

IPOPT's ``Bool`` is a C ``bool`` from 3.14 on and an ``int`` before: the callbacks are built for the type the
loaded library declares. No IPOPT before 3.14 is installed here, so these tests play IPOPT's part: each
callback's address (what ``CreateIpoptProblem`` receives) is cast back to a C function of the same prototype
and called with C arrays, for both Bool types. No library is needed.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exprgraph.optimize import Problem, ipopt_c
from exprgraph.optimize.ipopt_backend import IterationLog
from exprgraph.progress import Progress

BOOLS = [ctypes.c_bool, ctypes.c_int]
FINITE = st.floats(-3.0, 3.0, allow_nan=False)


def two_constraints() -> Problem:
    """Two variables, two constraints with a Hessian entry off the diagonal."""
    p = Problem()
    x = p.variable("x", lb=-2.0, ub=2.0, start=0.5)
    y = p.variable("y", start=-0.25)
    p.constraint(x * x + y * y, ub=1.5, name="disc")
    p.constraint(x * y, lb=-1.0, name="prod")
    p.minimize((1 - x) ** 2 + 100 * (y - x * x) ** 2)
    return p


NLP = two_constraints().compile("vm")


def c_function(calls: Any, name: str, bool_type: Any) -> Any:
    """The callback ``name`` as IPOPT holds it: its address cast to the C prototype."""
    address = ctypes.cast(getattr(calls, f"c_{name}"), ctypes.c_void_p).value
    assert address is not None
    return ctypes.cast(address, ipopt_c._prototypes(bool_type)[name])


def make_calls(bool_type: Any) -> Any:
    """The callbacks over NLP for ``bool_type``, with an iteration log."""
    return ipopt_c._Callbacks(NLP, bool_type, IterationLog(NLP, Progress("test", enabled=False)))


def ptr(a: np.ndarray) -> int:
    """The address of a contiguous array."""
    return int(a.ctypes.data)


@pytest.mark.parametrize("bool_type", BOOLS)
@settings(max_examples=25, deadline=None)
@given(x=FINITE, y=FINITE, sigma=FINITE, l0=FINITE, l1=FINITE)
def test_callbacks_write_what_the_nlp_computes(
    bool_type: Any, x: float, y: float, sigma: float, l0: float, l1: float
) -> None:
    calls = make_calls(bool_type)
    point, lam = np.array([x, y]), np.array([l0, l1])
    obj = np.zeros(1)
    assert c_function(calls, "f", bool_type)(2, ptr(point), 1, ptr(obj), None)
    assert obj[0] == NLP.objective(point)
    grad = np.zeros(2)
    assert c_function(calls, "grad_f", bool_type)(2, ptr(point), 0, ptr(grad), None)
    np.testing.assert_array_equal(grad, NLP.gradient(point))
    g = np.zeros(2)
    assert c_function(calls, "g", bool_type)(2, ptr(point), 0, 2, ptr(g), None)
    np.testing.assert_array_equal(g, NLP.constraints(point))
    nnz = len(NLP.jacobianstructure()[0])
    jac = np.zeros(nnz)
    assert c_function(calls, "jac_g", bool_type)(2, ptr(point), 0, 2, nnz, None, None, ptr(jac), None)
    np.testing.assert_array_equal(jac, NLP.jacobian(point))
    hnnz = len(NLP.hessianstructure()[0])
    hess = np.zeros(hnnz)
    h = c_function(calls, "h", bool_type)
    assert h(2, ptr(point), 0, sigma, 2, ptr(lam), 1, hnnz, None, None, ptr(hess), None)
    np.testing.assert_array_equal(hess, NLP.hessian(point, lam, sigma))
    assert calls.error is None


@pytest.mark.parametrize("bool_type", BOOLS)
def test_structures_are_written_as_int32(bool_type: Any) -> None:
    calls = make_calls(bool_type)
    rows, cols = NLP.jacobianstructure()
    i_row, j_col = np.full(len(rows), -1, np.int32), np.full(len(rows), -1, np.int32)
    assert c_function(calls, "jac_g", bool_type)(2, None, 0, 2, len(rows), ptr(i_row), ptr(j_col), None, None)
    assert (i_row.tolist(), j_col.tolist()) == (list(rows), list(cols))
    rows, cols = NLP.hessianstructure()
    i_row, j_col = np.full(len(rows), -1, np.int32), np.full(len(rows), -1, np.int32)
    h = c_function(calls, "h", bool_type)
    assert h(2, None, 0, 1.0, 2, None, 0, len(rows), ptr(i_row), ptr(j_col), None, None)
    assert (i_row.tolist(), j_col.tolist()) == (list(rows), list(cols))


@pytest.mark.parametrize("bool_type", BOOLS)
def test_an_error_returns_false_and_is_kept(bool_type: Any) -> None:
    calls = make_calls(bool_type)
    obj = np.zeros(1)
    # a NULL x: reading it raises inside the callback, which must answer false, never crash
    f = c_function(calls, "f", bool_type)
    assert not f(2, None, 1, ptr(obj), None)
    first = calls.error
    assert first is not None
    # later calls answer false without running (the first error is the cause)
    assert not c_function(calls, "grad_f", bool_type)(2, ptr(np.zeros(2)), 0, ptr(np.zeros(2)), None)
    assert calls.error is first


@pytest.mark.parametrize("bool_type", BOOLS)
def test_intermediate_logs_the_iteration(bool_type: Any) -> None:
    calls = make_calls(bool_type)
    step = c_function(calls, "intermediate", bool_type)
    assert step(0, 3, 1.5, 1e-3, 2e-4, 0.1, 0.5, 0.0, 1.0, 0.25, 1, None)
    (it,) = calls.adapter.log
    assert (it.iteration, it.f, it.inf_pr, it.inf_du, it.mu, it.alpha) == (3, 1.5, 1e-3, 2e-4, 0.1, 0.25)
    assert NLP.iteration == 4
