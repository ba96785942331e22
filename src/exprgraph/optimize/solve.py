"""Choosing a solver and checking the start: IPOPT (through IPOPT's C interface on a libipopt that is found or
named, or through cyipopt), else scipy's trust-constr."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import OptionalDependencyError, ProblemError
from . import ipopt_backend, ipopt_c, scipy_backend
from .callbacks import CompiledNLP
from .ipopt_lib import ENV_VAR, IpoptLibrary, load_library
from .result import Result

if TYPE_CHECKING:
    from .problem import Problem

__all__ = ["solve", "SOLVERS"]

#: the solvers by name ("auto" picks the first one available)
SOLVERS = ("ipopt", "scipy")


def _pick(solver: str, library: Any) -> tuple[str, Any]:
    """The solver to run and, for IPOPT's C interface, the library to ask for (None: cyipopt)."""
    if solver not in ("auto", *SOLVERS):
        raise ProblemError(f"unknown solver {solver!r}: one of 'auto', {', '.join(map(repr, SOLVERS))}")
    if library is None and solver != "scipy" and os.environ.get(ENV_VAR, "").strip():
        library = "auto"  # the environment names a libipopt: IPOPT's C interface on it
    if library is not None:
        if solver == "scipy":
            raise ProblemError("ipopt_library is for solver='ipopt' (or 'auto'): drop it to solve with scipy")
        # loaded before the compile: a wrong path fails at once
        return "ipopt", library if isinstance(library, IpoptLibrary) else load_library(library)
    if solver != "auto":
        return solver, None
    if ipopt_c.available():
        # a libipopt found (casadi's, cyipopt-wheels', the system's): its C interface, where IPOPT calls the
        # vm's callbacks with no Python per call (cyipopt's API takes Python callables)
        return "ipopt", load_library("auto")
    if ipopt_backend.available():  # cyipopt over an IPOPT our places do not find
        return "ipopt", None
    if scipy_backend.available():
        return "scipy", None
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
    ipopt_library: str | os.PathLike[str] | IpoptLibrary | None = None,
) -> Result:
    """Solve ``problem`` (compiled first unless it is a :class:`CompiledNLP` already).

    ``solver``: "ipopt" (cyipopt), "scipy" (trust-constr) or "auto" (IPOPT through its C interface when a
    libipopt is found, else through cyipopt when it imports, else scipy); ``ipopt_library`` runs IPOPT through
    its own C interface
    (:mod:`~exprgraph.optimize.ipopt_c`) on a libipopt: a path, a place ("casadi", "cyipopt", "system")
    or "auto" (``EXPRGRAPH_IPOPT_LIBRARY``, then those places); with it unset, the environment
    variable alone selects that route too, else IPOPT runs through cyipopt;
    ``backend``: the callbacks' backend for :func:`exprgraph.compile.compile` ("auto": C, numpy
    without a C compiler); ``x0`` replaces the variables' starts; ``options`` go to the solver;
    ``progress`` turns the progress lines on long runs on or off (default: the environment's).
    The values of every callback are checked at the start point (a nan or an infinity raises
    :class:`~exprgraph.errors.NonFiniteError` naming the constraint or variable), and IPOPT's
    ``Invalid_Number_Detected`` raises it too; every other outcome is the solver's status.
    """
    name, library = _pick(solver, ipopt_library)
    nlp = problem if isinstance(problem, CompiledNLP) else problem.compile(backend, build_timeout=build_timeout)
    # into the bounds, where the start is checked: scipy would run from a start outside them (a log's nan there
    # was its bare ValueError), and IPOPT moves it inside them anyway
    x = np.clip(_start(nlp, x0), nlp.lbx, nlp.ubx)
    nlp.check_point(x)
    if name == "ipopt" and library is not None:
        return ipopt_c.solve_ipopt_c(nlp, x, options, progress, library)
    if name == "ipopt":
        return ipopt_backend.solve_ipopt(nlp, x, options, progress)
    return scipy_backend.solve_scipy(nlp, x, options, progress)
