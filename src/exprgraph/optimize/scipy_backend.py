"""The fallback solver: ``scipy.optimize.minimize(method="trust-constr")`` on the same compiled callbacks.

scipy is optional too (imported when a solve asks for it). trust-constr takes the objective's
Hessian and the constraints' (weighted by their multipliers) apart: both come from the one
block Hessian with other weights. Its multipliers already follow CasADi's sign convention.
"""

from __future__ import annotations

import importlib
import time
from typing import Any

import numpy as np

from ..errors import OptionalDependencyError, ProblemError
from ..progress import Progress
from .callbacks import CALLBACKS, CompiledNLP
from .result import Iteration, Result

__all__ = ["solve_scipy", "available"]


def _scipy() -> tuple[Any, Any]:
    """``scipy.optimize`` and ``scipy.sparse`` (optional: imported on use)."""
    try:
        opt = importlib.import_module("scipy.optimize")
        sparse = importlib.import_module("scipy.sparse")
    except ImportError as e:
        raise OptionalDependencyError(
            "no solver: install cyipopt (pip install 'exprgraph[ipopt]') or scipy (pip install scipy)"
        ) from e
    return opt, sparse


def available() -> bool:
    """Whether scipy's optimiser imports."""
    try:
        _scipy()
    except OptionalDependencyError:
        return False
    return True


def _arguments(nlp: CompiledNLP, opt: Any, sparse: Any) -> dict[str, Any]:
    """The keyword arguments of ``minimize``: the callbacks as trust-constr takes them."""
    rows, cols = nlp.jacobianstructure()
    no_lam = np.zeros(nlp.m)

    def hess_f(x: np.ndarray) -> Any:
        return nlp.hess.to_scipy(nlp.hessian(x, no_lam, 1.0)).tocsr()

    def jac_g(x: np.ndarray) -> Any:
        return sparse.coo_matrix((nlp.jacobian(x), (rows, cols)), (nlp.m, nlp.n)).tocsr()

    def hess_g(x: np.ndarray, v: np.ndarray) -> Any:
        return nlp.hess.to_scipy(nlp.hessian(x, v, 0.0)).tocsr()

    kwargs: dict[str, Any] = {"fun": nlp.objective, "jac": nlp.gradient, "hess": hess_f, "method": "trust-constr"}
    if nlp.m:
        kwargs["constraints"] = [opt.NonlinearConstraint(nlp.constraints, nlp.lbg, nlp.ubg, jac=jac_g, hess=hess_g)]
    if np.isfinite(nlp.lbx).any() or np.isfinite(nlp.ubx).any():
        kwargs["bounds"] = opt.Bounds(nlp.lbx, nlp.ubx)
    return kwargs


def solve_scipy(
    nlp: CompiledNLP, x0: np.ndarray, options: dict[str, Any] | None = None, progress: bool | None = None
) -> Result:
    """Solve with trust-constr from ``x0``; ``options`` are trust-constr's (``{"maxiter": 500}``)."""
    opt, sparse = _scipy()
    kwargs = _arguments(nlp, opt, sparse)
    log: list[Iteration] = []
    before, calls_before = dict(nlp.cpu), dict(nlp.calls)
    start = time.process_time()
    with Progress("trust-constr", enabled=progress) as report:

        def callback(xk: np.ndarray, state: Any) -> bool:
            log.append(
                Iteration(
                    int(state.nit),
                    float(state.fun),
                    float(state.constr_violation),
                    float(state.optimality),
                    float(state.tr_radius),
                )
            )
            report.update(int(state.nit), note=f"f {state.fun:.8g}, violation {state.constr_violation:.1e}")
            return False

        settings: dict[str, Any] = {"maxiter": 3000}
        settings.update(options or {})
        try:
            res = opt.minimize(x0=np.asarray(x0, dtype=np.float64), callback=callback, options=settings, **kwargs)
        except TypeError as e:
            if nlp.calls != calls_before:
                raise
            # raised before the first callback: scipy refused an option's name ("unexpected keyword argument")
            raise ProblemError(f"trust-constr refused the options {settings}: {e}", item="options") from e
    total = time.process_time() - start
    lam_g = np.asarray(res.v[0], dtype=np.float64) if nlp.m else np.zeros(0)
    lam_x = np.asarray(res.v[-1], dtype=np.float64) if "bounds" in kwargs else np.zeros(nlp.n)
    timings = {name: nlp.cpu[name] - before[name] for name in CALLBACKS}
    timings["callbacks"] = sum(timings.values())
    timings["solver"] = total - timings["callbacks"]
    timings["total"] = total
    return Result(
        x=np.asarray(res.x, dtype=np.float64),
        f=float(res.fun),
        g=nlp.constraints(res.x) if nlp.m else np.zeros(0),
        lam_g=lam_g,
        lam_x=lam_x,
        status=str(res.message),
        status_code=int(res.status),
        success=int(res.status) in (1, 2) and bool(np.isfinite(res.fun)),
        iterations=int(res.nit),
        solver="scipy",
        timings=timings,
        calls={name: nlp.calls[name] - calls_before[name] for name in CALLBACKS},
        log=log,
        variables=nlp.variables,
    )
