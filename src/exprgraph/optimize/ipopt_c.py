"""IPOPT through its own C interface (IpStdCInterface) over ctypes, on any libipopt the user names.

A second route to IPOPT beside :mod:`~exprgraph.optimize.ipopt_backend` (cyipopt): the same
callbacks (a :class:`~exprgraph.optimize.CompiledNLP`), options, status table, iteration log and
:class:`~exprgraph.optimize.Result`, but the library is chosen at run time
(:func:`~exprgraph.optimize.ipopt_lib.load_library`: a path, ``EXPRGRAPH_IPOPT_LIBRARY``, CasADi's
bundled IPOPT, cyipopt-wheels', the system's), so a solve can run on the fastest IPOPT build of
the machine. IPOPT's arrays reach the callbacks as numpy views of its memory (no copy of ``x``,
the multipliers or the structure); each result is written into IPOPT's array once.

On the vm and auto backends IPOPT calls C functions of the extension that run the machines directly
(:meth:`~exprgraph.optimize.CompiledNLP.native`: no Python per call, the same values bit for bit; inside a solve
the Python road costs 20-50 us a call once IPOPT's linear algebra has evicted it from the caches; under "auto"
each C library takes over between two iterations once built), so a
``CompiledNLP`` method replaced on the instance is not called there; :data:`NATIVE` = False keeps the Python road.

Crash safety: no Python exception crosses into C. A callback that raises stores the exception and
returns false, every later callback returns false at once and the intermediate callback asks IPOPT
to stop; after ``IpoptSolve`` returns, the problem is freed and the exception is raised again.
"""

from __future__ import annotations

import ctypes
import os
import time
from typing import Any

import numpy as np

from ..errors import IpoptOptionError, OptionalDependencyError, ProblemError
from ..progress import Progress
from .callbacks import CompiledNLP
from .ipopt_backend import IterationLog, ipopt_bounds, ipopt_result, refused_option, require_variables
from .ipopt_lib import IpoptLibrary, load_library
from .result import Result

__all__ = ["solve_ipopt_c", "available"]

_VP = ctypes.c_void_p
_IDX = ctypes.c_int
_NUM = ctypes.c_double
_PROTOTYPES: dict[Any, dict[str, Any]] = {}

#: IPOPT calls the vm's machines through C callbacks (:meth:`CompiledNLP.native`) where they can serve; False: the
#: Python callbacks below always (the twin: the same values, bit for bit)
NATIVE = True


def _prototypes(bool_type: Any) -> dict[str, Any]:
    """The callback types of IpStdCInterface.h for IPOPT's Bool type (pointers as void*: views are made here)."""
    if bool_type not in _PROTOTYPES:
        b = bool_type
        _PROTOTYPES[bool_type] = {
            # n, x, new_x, obj_value, user_data
            "f": ctypes.CFUNCTYPE(b, _IDX, _VP, b, _VP, _VP),
            # n, x, new_x, grad_f, user_data
            "grad_f": ctypes.CFUNCTYPE(b, _IDX, _VP, b, _VP, _VP),
            # n, x, new_x, m, g, user_data
            "g": ctypes.CFUNCTYPE(b, _IDX, _VP, b, _IDX, _VP, _VP),
            # n, x, new_x, m, nele_jac, iRow, jCol, values, user_data
            "jac_g": ctypes.CFUNCTYPE(b, _IDX, _VP, b, _IDX, _IDX, _VP, _VP, _VP, _VP),
            # n, x, new_x, obj_factor, m, lambda, new_lambda, nele_hess, iRow, jCol, values, user_data
            "h": ctypes.CFUNCTYPE(b, _IDX, _VP, b, _NUM, _IDX, _VP, b, _IDX, _VP, _VP, _VP, _VP),
            # alg_mod, iter_count, obj, inf_pr, inf_du, mu, d_norm, regularization, alpha_du, alpha_pr, ls_trials, ud
            "intermediate": ctypes.CFUNCTYPE(b, _IDX, _IDX, *[_NUM] * 8, _IDX, _VP),
        }
    return _PROTOTYPES[bool_type]


def available(library: str | os.PathLike[str] | None = None) -> bool:
    """Whether a libipopt loads (``library`` as :func:`~exprgraph.optimize.ipopt_lib.load_library` takes it)."""
    try:
        load_library(library)
    except OptionalDependencyError:
        return False
    return True


def _view(kind: Any, address: int) -> np.ndarray:
    """IPOPT's array at ``address`` (``kind``: a ctypes array type of its length) as a float64 view, no copy."""
    return np.frombuffer(kind.from_address(address), dtype=np.float64)


class _Callbacks:
    """The C callbacks over a :class:`CompiledNLP`: IPOPT's arrays as numpy views, results written in place."""

    def __init__(self, nlp: CompiledNLP, bool_type: Any, adapter: IterationLog) -> None:
        self.nlp, self.adapter = nlp, adapter
        self.error: BaseException | None = None
        rows, cols = nlp.jacobianstructure()
        self.jac_rows, self.jac_cols = rows.astype(np.int32), cols.astype(np.int32)
        rows, cols = nlp.hessianstructure()
        self.hess_rows, self.hess_cols = rows.astype(np.int32), cols.astype(np.int32)
        # the ctypes array types of each length, made once (a view per call is then one from_address)
        self._n_type, self._m_type = _NUM * nlp.n, _NUM * nlp.m
        self._jac_type, self._hess_type = _NUM * len(self.jac_rows), _NUM * len(self.hess_rows)
        self._no_lambda = np.zeros(0)
        types = _prototypes(bool_type)
        # kept referenced until the problem is freed: IPOPT holds raw pointers to them
        self.c_f = types["f"](self._f)
        self.c_grad_f = types["grad_f"](self._grad_f)
        self.c_g = types["g"](self._g)
        self.c_jac_g = types["jac_g"](self._jac_g)
        self.c_h = types["h"](self._h)
        self.c_intermediate = types["intermediate"](self._intermediate)
        #: the callbacks in C (no Python per call), or None: the Python ones above serve
        self.native = nlp.native() if NATIVE else None

    def pointers(self) -> list[int | None]:
        """eval_f, eval_g, eval_grad_f, eval_jac_g, eval_h as CreateIpoptProblem takes them."""
        if self.native is not None:
            return list(self.native.pointers())
        fns = (self.c_f, self.c_g, self.c_grad_f, self.c_jac_g, self.c_h)
        return [ctypes.cast(fn, _VP).value for fn in fns]

    def user_data(self) -> int | None:
        """The user data pointer IPOPT passes to every callback: the C callbacks' object, else none."""
        return None if self.native is None else self.native.address

    def finish(self) -> None:
        """After the solve: what the C callbacks recorded added to the NLP's counts, and their error kept."""
        if self.native is not None:
            error = self.nlp.absorb(self.native)
            if error is not None and self.error is None:
                self.error = error

    def _fail(self, error: BaseException) -> bool:
        if self.error is None:  # the first error is the cause; later ones follow from it
            self.error = error
        return False

    def _f(self, n: int, x: int, new_x: bool, obj: int, _ud: Any) -> bool:
        if self.error is not None:
            return False
        try:
            value = self.nlp.objective(_view(self._n_type, x))
            _NUM.from_address(obj).value = value
            return True
        except BaseException as e:  # nothing may cross into C: kept, raised again after the solve
            return self._fail(e)

    def _grad_f(self, n: int, x: int, new_x: bool, grad: int, _ud: Any) -> bool:
        if self.error is not None:
            return False
        try:
            out = _view(self._n_type, grad)
            out[:] = self.nlp.gradient(_view(self._n_type, x))
            return True
        except BaseException as e:
            return self._fail(e)

    def _g(self, n: int, x: int, new_x: bool, m: int, g: int, _ud: Any) -> bool:
        if self.error is not None:
            return False
        try:
            if m:
                self.nlp.constraints(_view(self._n_type, x), out=_view(self._m_type, g))
            return True
        except BaseException as e:
            return self._fail(e)

    def _jac_g(
        self, n: int, x: Any, new_x: bool, m: int, nnz: int, i_row: Any, j_col: Any, values: Any, _ud: Any
    ) -> bool:
        if self.error is not None:
            return False
        try:
            if values is None and nnz:  # the structure, asked once: x and values NULL
                ctypes.memmove(i_row, self.jac_rows.ctypes.data, 4 * nnz)
                ctypes.memmove(j_col, self.jac_cols.ctypes.data, 4 * nnz)
            elif values is not None and nnz:
                self.nlp.jacobian(_view(self._n_type, x), out=_view(self._jac_type, values))
            return True
        except BaseException as e:
            return self._fail(e)

    def _h(self, n: int, x: Any, new_x: bool, sigma: float, m: int, lam: Any, new_lam: bool, nnz: int,
           i_row: Any, j_col: Any, values: Any, _ud: Any) -> bool:  # fmt: skip
        if self.error is not None:
            return False
        try:
            if values is None and nnz:
                ctypes.memmove(i_row, self.hess_rows.ctypes.data, 4 * nnz)
                ctypes.memmove(j_col, self.hess_cols.ctypes.data, 4 * nnz)
            elif values is not None and nnz:
                lagrange = _view(self._m_type, lam) if m and lam else self._no_lambda
                out = _view(self._hess_type, values)
                out[:] = self.nlp.hessian(_view(self._n_type, x), lagrange, sigma)
            return True
        except BaseException as e:
            return self._fail(e)

    def _intermediate(self, *info: Any) -> bool:
        if self.error is not None or (self.native is not None and self.native.error):
            return False  # IPOPT stops with User_Requested_Stop
        try:
            if self.native is not None:
                self.nlp.hand_over(self.native)  # under "auto": the libraries built since, between two iterations
            return self.adapter.intermediate(*info[:11])
        except BaseException as e:
            return self._fail(e)


def _add_options(lib: IpoptLibrary, handle: int, options: dict[str, Any]) -> None:
    """Each option by its Python type, as cyipopt does: str -> string, int -> integer, float -> number."""
    c = lib.cdll
    for key, value in options.items():
        name = str(key).encode()
        if isinstance(value, (str, bytes)):
            ok = c.AddIpoptStrOption(handle, name, value.encode() if isinstance(value, str) else value)
        elif isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
            ok = c.AddIpoptIntOption(handle, name, int(value))
        elif isinstance(value, (float, np.floating)):
            ok = c.AddIpoptNumOption(handle, name, float(value))
        else:
            raise IpoptOptionError(
                f"IPOPT option {key!r} = {value!r}: give a str, an int or a float "
                "(IPOPT's yes/no options take 'yes' or 'no')",
                item=str(key),
            )
        if not ok:
            raise refused_option(key, value)


def _array(values: np.ndarray) -> Any:
    return values.ctypes.data_as(ctypes.POINTER(_NUM))


def _run(
    lib: IpoptLibrary, nlp: CompiledNLP, x: np.ndarray, settings: dict[str, Any], calls: _Callbacks
) -> dict[str, Any]:
    """Create the problem, set the options and the intermediate callback, solve, free; IPOPT's outputs."""
    # kept referenced until the problem is freed
    lbx, ubx, lbg, ubg = (ipopt_bounds(b) for b in (nlp.lbx, nlp.ubx, nlp.lbg, nlp.ubg))
    c = lib.cdll
    handle = c.CreateIpoptProblem(
        nlp.n, _array(lbx), _array(ubx), nlp.m, _array(lbg), _array(ubg),
        len(calls.jac_rows), len(calls.hess_rows), 0, *calls.pointers(),
    )  # fmt: skip
    if not handle:
        raise ProblemError(
            f"IPOPT refused the problem ({nlp.n} variables, {nlp.m} constraints, {len(calls.jac_rows)} Jacobian and "
            f"{len(calls.hess_rows)} Hessian entries)"
        )
    g, mult_g = np.zeros(nlp.m), np.zeros(nlp.m)
    mult_x_l, mult_x_u = np.zeros(nlp.n), np.zeros(nlp.n)
    obj = _NUM(0.0)
    try:
        _add_options(lib, handle, settings)
        if not c.SetIntermediateCallback(handle, ctypes.cast(calls.c_intermediate, _VP)):
            raise ProblemError("IPOPT refused the intermediate callback: use IPOPT 3.12 or later")
        multipliers = (_array(mult_g), _array(mult_x_l), _array(mult_x_u))
        code = c.IpoptSolve(handle, _array(x), _array(g), ctypes.byref(obj), *multipliers, calls.user_data())
    finally:
        c.FreeIpoptProblem(handle)
        calls.finish()
    return {
        "status": int(code),
        "obj_val": obj.value,
        "g": g,
        "mult_g": mult_g,
        "mult_x_L": mult_x_l,
        "mult_x_U": mult_x_u,
    }


def solve_ipopt_c(
    nlp: CompiledNLP,
    x0: np.ndarray,
    options: dict[str, Any] | None = None,
    progress: bool | None = None,
    library: str | os.PathLike[str] | IpoptLibrary | None = None,
) -> Result:
    """Solve with IPOPT's C interface from ``x0`` on ``library`` (a path, "casadi", "cyipopt", "system", None: search).

    ``options`` are IPOPT's, set as cyipopt sets them (``{"tol": 1e-8, "max_iter": 100}``; defaults
    ``print_level`` 0 and ``sb`` "yes"); the result is the cyipopt route's, plus ``library``.
    """
    lib = library if isinstance(library, IpoptLibrary) else load_library(library)
    require_variables(nlp)
    before, calls_before = dict(nlp.cpu), dict(nlp.calls)
    start = time.process_time()
    nlp.iteration = 0
    settings: dict[str, Any] = {"print_level": 0, "sb": "yes"}
    settings.update(options or {})
    x = np.array(x0, dtype=np.float64).reshape(-1)  # IPOPT writes the solution into it
    if x.shape != (nlp.n,):
        raise ProblemError(f"the start point has {x.size} numbers, the problem has {nlp.n} variables")
    with Progress("IPOPT", enabled=progress) as report:
        adapter = IterationLog(nlp, report)
        calls = _Callbacks(nlp, lib.bool_type, adapter)
        info = _run(lib, nlp, x, settings, calls)
    if calls.error is not None:
        raise calls.error
    total = time.process_time() - start
    code = info["status"]
    if code == -13:
        raise nlp.nonfinite_error("during the IPOPT solve")
    return ipopt_result(nlp, {**info, "x": x}, adapter.log, total, before, calls_before, lib.describe())
