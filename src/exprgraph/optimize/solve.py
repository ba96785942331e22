"""Choosing a solver and checking the start: IPOPT when cyipopt imports, else scipy's trust-constr."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import OptionalDependencyError, ProblemError
from . import ipopt_backend, scipy_backend
from .callbacks import CompiledNLP
from .result import Result

if TYPE_CHECKING:
    from .problem import Problem

__all__ = ["solve", "SOLVERS"]

#: the solvers by name ("auto" picks the first one available)
SOLVERS = ("ipopt", "scipy")


def _pick(solver: str) -> str:
    if solver not in ("auto", *SOLVERS):
        raise ProblemError(f"unknown solver {solver!r}: one of 'auto', {', '.join(map(repr, SOLVERS))}")
    if solver != "auto":
        return solver
    if ipopt_backend.available():
        return "ipopt"
    if scipy_backend.available():
        return "scipy"
    raise OptionalDependencyError(
        "no solver: install cyipopt (pip install 'exprgraph[ipopt]', IPOPT included) or scipy (pip install scipy)"
    )


def _start(nlp: CompiledNLP, x0: Any) -> np.ndarray:
    if x0 is None:
        return nlp.x0.copy()
    try:
        x = np.asarray(x0, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError) as e:
        raise ProblemError(f"the start point must be {nlp.n} numbers, got {x0!r}") from e
    if x.shape != (nlp.n,):
        raise ProblemError(f"the start point has {x.size} numbers, the problem has {nlp.n} variables")
    bad = np.flatnonzero(~np.isfinite(x))
    if len(bad):
        name = nlp.variables[int(bad[0])].name
        raise ProblemError(f"the start of variable {name} is {x[bad[0]]}, not a finite number", item=name)
    return x


def solve(
    problem: Problem | CompiledNLP,
    solver: str = "auto",
    *,
    backend: str = "auto",
    x0: Any = None,
    options: dict[str, Any] | None = None,
    progress: bool | None = None,
    build_timeout: float | None = None,
) -> Result:
    """Solve ``problem`` (compiled first unless it is a :class:`CompiledNLP` already).

    ``solver``: "ipopt" (cyipopt), "scipy" (trust-constr) or "auto" (IPOPT when cyipopt imports);
    ``backend``: the callbacks' backend for :func:`exprgraph.compile.compile` ("auto": C, numpy
    without a C compiler); ``x0`` replaces the variables' starts; ``options`` go to the solver;
    ``progress`` turns the progress lines on long runs on or off (default: the environment's).
    The values of every callback are checked at the start point (a nan or an infinity raises
    :class:`~exprgraph.errors.NonFiniteError` naming the constraint or variable), and IPOPT's
    ``Invalid_Number_Detected`` raises it too; every other outcome is the solver's status.
    """
    name = _pick(solver)
    nlp = problem if isinstance(problem, CompiledNLP) else problem.compile(backend, build_timeout=build_timeout)
    x = _start(nlp, x0)
    nlp.check_point(np.clip(x, nlp.lbx, nlp.ubx))
    if name == "ipopt":
        return ipopt_backend.solve_ipopt(nlp, x, options, progress)
    return scipy_backend.solve_scipy(nlp, x, options, progress)
