"""exprgraph.optimize: nonlinear programs built from terms, derivatives found once, solved by IPOPT.

- :class:`Problem` - variables (scalar symbols, or lists of them) with bounds and starts,
  constraints with lower and upper bounds, an objective;
- :meth:`Problem.compile` - a :class:`CompiledNLP`: the sparse gradient and constraint Jacobian
  and the Hessian of the Lagrangian as per-constraint blocks with a scatter-add
  (:mod:`exprgraph.diff.blocks`), each compiled once by :func:`exprgraph.compile.compile`;
- :func:`solve` / :meth:`Problem.solve` - IPOPT through ``cyipopt`` when it imports, else
  ``scipy.optimize.minimize(method="trust-constr")``; a :class:`Result` read as CasADi's
  ``nlpsol`` result (``x, f, g, lam_g, lam_x``, status, iterations, timings, log);
- ``solve(..., ipopt_library=...)`` - IPOPT through its own C interface over ctypes
  (:mod:`.ipopt_c`) on the libipopt named (a path, "casadi", "cyipopt", "system", "auto";
  ``EXPRGRAPH_IPOPT_LIBRARY``), found and loaded by :mod:`.ipopt_lib` (:func:`load_library`).

Neither cyipopt nor scipy is imported with the package: each solver backend imports its own on use
(a libipopt is loaded only when a solve asks for it).
In the numerics stack of docs/architecture.md: imports diff, compile, core, progress and errors.
"""

from __future__ import annotations

from ..errors import IpoptLibraryError, IpoptOptionError, NonFiniteError, ProblemError
from .callbacks import CompiledNLP
from .ipopt_lib import IpoptLibrary, load_library
from .problem import Problem
from .result import Iteration, Result
from .solve import SOLVERS, solve

__all__ = [
    "Problem",
    "CompiledNLP",
    "Result",
    "Iteration",
    "solve",
    "SOLVERS",
    "IpoptLibrary",
    "load_library",
    "ProblemError",
    "NonFiniteError",
    "IpoptLibraryError",
    "IpoptOptionError",
]
