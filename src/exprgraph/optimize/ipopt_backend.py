"""IPOPT through ``cyipopt`` (optional: imported when a solve asks for it, never at package import).

Works with any ``cyipopt`` (the ``cyipopt-wheels`` package bundles IPOPT; ``cyipopt`` built over a
system IPOPT works the same). The compiled callbacks are handed over as they are; the iteration
log comes from IPOPT's intermediate callback, which also reports progress on long runs.
"""

from __future__ import annotations

import importlib
import time
from typing import Any

import numpy as np

from ..errors import IpoptOptionError, OptionalDependencyError, ProblemError
from ..progress import Progress
from .callbacks import CALLBACKS, CompiledNLP
from .result import Iteration, Result

__all__ = [
    "solve_ipopt",
    "available",
    "STATUS",
    "BIG",
    "ipopt_bounds",
    "IterationLog",
    "ipopt_result",
    "require_variables",
    "refused_option",
]

#: IPOPT's ApplicationReturnStatus codes, by the names CasADi reports as ``return_status``
STATUS = {
    0: "Solve_Succeeded",
    1: "Solved_To_Acceptable_Level",
    2: "Infeasible_Problem_Detected",
    3: "Search_Direction_Becomes_Too_Small",
    4: "Diverging_Iterates",
    5: "User_Requested_Stop",
    6: "Feasible_Point_Found",
    -1: "Maximum_Iterations_Exceeded",
    -2: "Restoration_Failed",
    -3: "Error_In_Step_Computation",
    -4: "Maximum_CpuTime_Exceeded",
    -5: "Maximum_WallTime_Exceeded",
    -10: "Not_Enough_Degrees_Of_Freedom",
    -11: "Invalid_Problem_Definition",
    -12: "Invalid_Option",
    -13: "Invalid_Number_Detected",
    -100: "Unrecoverable_Exception",
    -101: "NonIpopt_Exception_Thrown",
    -102: "Insufficient_Memory",
    -199: "Internal_Error",
}
#: IPOPT takes bounds at or beyond 1e19 as infinite
BIG = 1e20


def ipopt_bounds(values: np.ndarray) -> np.ndarray:
    """Bounds as IPOPT takes them: an infinity as +-:data:`BIG`, a finite bound as it is (clipped, a lower bound of
    1e25 became one of 1e20, and IPOPT "solved" at x = 1e20). IPOPT reads an upper bound at or above 1e19 (a lower
    one at or below -1e19) as none: its options nlp_upper_bound_inf and nlp_lower_bound_inf move that line."""
    values = np.asarray(values, dtype=np.float64)
    return np.where(np.isinf(values), np.copysign(BIG, values), values)


def require_variables(nlp: CompiledNLP) -> None:
    """A ProblemError for a problem without variables, which IPOPT refuses (cyipopt with a bare TypeError)."""
    if nlp.n == 0:
        raise ProblemError("IPOPT needs at least one variable: the problem has none (solver='scipy' takes it)")


def refused_option(key: Any, value: Any) -> IpoptOptionError:
    """The error for an option IPOPT refused (both routes)."""
    return IpoptOptionError(
        f"IPOPT refused option {key!r} = {value!r}: check its name and the type and range of its value "
        "in IPOPT's options list (an integer option takes an int, a number option a float)",
        item=str(key),
    )


def _cyipopt() -> Any:
    try:  # optional: the solver backend imports it on use, the package never does
        cyipopt = importlib.import_module("cyipopt")
    except ImportError as e:
        raise OptionalDependencyError(
            "IPOPT needs the cyipopt package: pip install 'exprgraph[ipopt]' (cyipopt-wheels bundles IPOPT)"
        ) from e
    return cyipopt


def available() -> bool:
    """Whether cyipopt imports."""
    try:
        _cyipopt()
    except OptionalDependencyError:
        return False
    return True


class IterationLog:
    """The callbacks of a :class:`CompiledNLP` under cyipopt's names, and the iteration log both IPOPT routes keep."""

    def __init__(self, nlp: CompiledNLP, report: Progress) -> None:
        self.nlp = nlp
        self.log: list[Iteration] = []
        self.report = report
        self.objective, self.gradient, self.constraints = nlp.objective, nlp.gradient, nlp.constraints
        self.jacobian, self.jacobianstructure = nlp.jacobian, nlp.jacobianstructure
        self.hessian, self.hessianstructure = nlp.hessian, nlp.hessianstructure

    def intermediate(self, *info: float) -> bool:
        """Record one iteration (IPOPT calls it after each, with alg_mod, iter_count, obj_value, inf_pr,
        inf_du, mu, d_norm, regularization_size, alpha_du, alpha_pr, ls_trials); never asks to stop."""
        it, f, inf_pr, inf_du, mu, alpha_pr = int(info[1]), *(float(info[k]) for k in (2, 3, 4, 5, 9))
        self.log.append(Iteration(it, f, inf_pr, inf_du, mu, alpha_pr))
        self.nlp.iteration = it + 1  # the callbacks that follow belong to the next iteration
        self.report.update(it, note=f"f {f:.8g}, inf_pr {inf_pr:.1e}, inf_du {inf_du:.1e}")
        return True


def solve_ipopt(
    nlp: CompiledNLP, x0: np.ndarray, options: dict[str, Any] | None = None, progress: bool | None = None
) -> Result:
    """Solve with IPOPT from ``x0``; ``options`` are IPOPT's (``{"tol": 1e-8, "max_iter": 100}``)."""
    cyipopt = _cyipopt()
    require_variables(nlp)
    before = dict(nlp.cpu)
    calls_before = dict(nlp.calls)
    start = time.process_time()
    nlp.iteration = 0
    with Progress("IPOPT", enabled=progress) as report:
        adapter = IterationLog(nlp, report)
        problem = cyipopt.Problem(
            n=nlp.n,
            m=nlp.m,
            problem_obj=adapter,
            lb=ipopt_bounds(nlp.lbx),
            ub=ipopt_bounds(nlp.ubx),
            cl=ipopt_bounds(nlp.lbg),
            cu=ipopt_bounds(nlp.ubg),
        )
        settings: dict[str, Any] = {"print_level": 0, "sb": "yes"}
        settings.update(options or {})
        for key, value in settings.items():
            try:
                problem.add_option(key, value)
            except TypeError as e:  # cyipopt's bare "Error while assigning an option": named, as the C route does
                raise refused_option(key, value) from e
        x, info = problem.solve(np.asarray(x0, dtype=np.float64))
    total = time.process_time() - start
    if int(info["status"]) == -13:
        raise nlp.nonfinite_error("during the IPOPT solve")
    return ipopt_result(nlp, {**info, "x": x}, adapter.log, total, before, calls_before)


def ipopt_result(
    nlp: CompiledNLP,
    info: dict[str, Any],
    log: list[Iteration],
    total: float,
    cpu_before: dict[str, float],
    calls_before: dict[str, int],
    library: str = "",
) -> Result:
    """The :class:`Result` of an IPOPT solve from IPOPT's output ``info`` (x, obj_val, g, mult_g, mult_x_L,
    mult_x_U, status) and the callbacks' CPU and calls since ``cpu_before``/``calls_before``."""
    code = int(info["status"])
    f, g = float(info["obj_val"]), np.asarray(info["g"], dtype=np.float64)
    if nlp.calls["objective"] == calls_before["objective"]:
        # IPOPT stopped before its first evaluation (Not_Enough_Degrees_Of_Freedom, Invalid_Problem_Definition):
        # its f and g are zeros, not the values at x (the start)
        f, g = nlp.objective(info["x"]), nlp.constraints(info["x"]).copy()
    timings = {name: nlp.cpu[name] - cpu_before[name] for name in CALLBACKS}
    timings["callbacks"] = sum(timings.values())
    timings["solver"] = total - timings["callbacks"]
    timings["total"] = total
    return Result(
        x=np.asarray(info["x"], dtype=np.float64),
        f=f,
        g=g,
        lam_g=np.asarray(info["mult_g"], dtype=np.float64),
        lam_x=np.asarray(info["mult_x_U"], dtype=np.float64) - np.asarray(info["mult_x_L"], dtype=np.float64),
        status=STATUS.get(code, str(info.get("status_msg", code))),
        status_code=code,
        success=code in (0, 1),
        iterations=log[-1].iteration if log else 0,
        solver="ipopt",
        timings=timings,
        calls={name: nlp.calls[name] - calls_before[name] for name in CALLBACKS},
        log=log,
        variables=nlp.variables,
        library=library,
    )
