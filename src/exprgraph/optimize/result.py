"""What a solve returns, read as CasADi's ``nlpsol`` result: ``x, f, g, lam_g, lam_x`` and its stats.

Multipliers follow CasADi's (and IPOPT's) convention for ``L = f + lam_g . g + lam_x . x``: a
multiplier is positive where an upper bound is active, negative where a lower bound is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core import Term

__all__ = ["Result", "Iteration"]


@dataclass(frozen=True)
class Iteration:
    """One line of the solver's iteration log."""

    #: iteration number (0 is the start point)
    iteration: int
    #: objective value
    f: float
    #: primal infeasibility (largest constraint violation)
    inf_pr: float
    #: dual infeasibility (optimality error)
    inf_du: float
    #: barrier parameter (IPOPT) or trust radius (trust-constr)
    mu: float = float("nan")
    #: step size taken (IPOPT's alpha_pr)
    alpha: float = float("nan")


@dataclass(frozen=True, eq=False)
class Result:
    """The solution and how it was reached; ``result["x"]`` works too, as with CasADi's dict."""

    #: the variables' values, in the problem's order
    x: np.ndarray
    #: the objective's value
    f: float
    #: the constraints' values
    g: np.ndarray
    #: the constraints' multipliers
    lam_g: np.ndarray
    #: the bounds' multipliers (upper minus lower)
    lam_x: np.ndarray
    #: the solver's status message (IPOPT's ``return_status`` name, or scipy's message)
    status: str
    #: the solver's status code (IPOPT's ApplicationReturnStatus, scipy's status)
    status_code: int
    #: whether the solver reports a solution (IPOPT: solved or solved to acceptable level)
    success: bool
    #: iterations taken
    iterations: int
    #: "ipopt" or "scipy"
    solver: str
    #: CPU seconds: each callback, ``callbacks`` (their sum), ``solver`` (the rest of the solve), ``total``
    timings: dict[str, float] = field(default_factory=dict)
    #: calls of each callback
    calls: dict[str, int] = field(default_factory=dict)
    #: the iteration log
    log: list[Iteration] = field(default_factory=list)
    #: the variables, to read values by symbol
    variables: list[Term] = field(default_factory=list, repr=False)
    #: the libipopt that solved through IPOPT's C interface (``"IPOPT 3.14.19, casadi: /.../libipopt.so"``);
    #: empty for cyipopt and scipy
    library: str = ""

    def __getitem__(self, key: str) -> Any:
        if key in ("x", "f", "g", "lam_g", "lam_x"):
            return getattr(self, key)
        raise KeyError(f"{key!r}: a result has x, f, g, lam_g and lam_x (and .stats())")

    def value(self, variable: Term) -> float:
        """The value of one variable (a symbol of the problem)."""
        for i, v in enumerate(self.variables):
            if v is variable:
                return float(self.x[i])
        raise KeyError(f"{variable} is not a variable of the problem")

    def stats(self) -> dict[str, Any]:
        """CasADi-style statistics: ``return_status``, ``success``, ``iter_count``, ``t_proc_*``, ``n_call_*``."""
        out: dict[str, Any] = {
            "return_status": self.status,
            "success": self.success,
            "iter_count": self.iterations,
            "t_proc_total": self.timings.get("total", 0.0),
        }
        for name, seconds in self.timings.items():
            if name in self.calls:
                out[f"t_proc_{name}"] = seconds
                out[f"n_call_{name}"] = self.calls[name]
        return out

    def __repr__(self) -> str:
        return (
            f"Result(solver={self.solver!r}, status={self.status!r}, success={self.success}, "
            f"f={self.f!r}, iterations={self.iterations})"
        )
