"""The callbacks a solver calls, found and compiled once: objective, gradient, constraints, Jacobian, Hessian.

Derivatives come from :mod:`exprgraph.diff`: the gradient and the constraint Jacobian as sparse
Jacobians (their non-zeros only), the Hessian of the Lagrangian
``obj_factor * f + sum_i lam_i g_i`` as per-term blocks (:func:`exprgraph.diff.blocks.block_hessian`:
the objective split at its top-level sums, each constraint its own block) assembled by a
scatter-add. Each is compiled once with :func:`exprgraph.compile.compile` into a packed function
of the variables. Backends: ``"auto"`` (the default) runs the callbacks on the vm at once and on
the C library as soon as its background build finishes (numpy when neither the vm extension nor
a C compiler is there); ``"vm"`` runs on the vm only; ``"c"``, ``"llvm"``, ``"numpy"`` as
:func:`~exprgraph.compile.compile`. With loops (the default on every backend but ``"vm"`` alone) the
classes of repeated structure run as loops (the vm at one point with a loop's members as its lanes);
the vm alone runs straight-line code by default, ready sooner, which pays on solves of tens of
iterations.

Every call is timed (CPU of the calling thread: a background build does not count) and counted,
per callback and per backend that served it (:attr:`CompiledNLP.served`, and the call and IPOPT
iteration at which each callback switched from the vm to the library, :attr:`CompiledNLP.switched`),
and its values checked: a nan or an infinity is recorded with the constraint, variable or block it
belongs to, for :class:`~exprgraph.errors.NonFiniteError`.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from ..compile import CompiledFunction
from ..compile import compile as compile_terms
from ..compile.native import NEGATIVE_POWER
from ..compile.vm import nlp_callbacks
from ..compile.vm_auto import Switch
from ..core import Term, const
from ..diff.blocks import BlockHessian, block_hessian, jacobian_and_block_hessian
from ..diff.sparse import SparseMatrix, sparse_jacobian
from ..errors import BuildTimeoutError, CompilerNotFoundError, EvaluationError, NonFiniteError, ProblemError

if TYPE_CHECKING:
    from .problem import Problem

__all__ = ["CompiledNLP", "cpu_with_children", "CALLBACKS", "BACKENDS"]

#: the callbacks, in the order their timings are reported
CALLBACKS = ("objective", "gradient", "constraints", "jacobian", "hessian")
#: the callbacks' backends a :class:`CompiledNLP` takes
BACKENDS = ("auto", "vm", "c", "llvm", "numpy")


def cpu_with_children() -> float:
    """CPU seconds of this process and of its finished children (a C compiler)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _summands(f: Term) -> list[Term]:
    """The operands of ``f``'s top-level sums (nested ``add`` flattened), each once per use."""
    out: list[Term] = []
    stack = [f]
    while stack:
        t = stack.pop()
        if t.op.name == "add" and not t.shape:
            stack.extend(reversed(t.args))
        else:
            out.append(t)
    return out


class CompiledNLP:
    """A problem's callbacks in the form IPOPT takes them (cyipopt's problem protocol), compiled once.

    ``loops`` is :func:`~exprgraph.compile.compile`'s: ``True`` finds the classes of repeated
    structure and runs them as loops (quicker calls), ``False`` compiles straight-line code (on the
    vm: ready sooner, AC-OPF case2869pegase 7.7 s against 12.4 s of CPU, calls about 1.3x slower);
    ``None`` (the default) is ``False`` for the vm alone and ``True`` for every other backend.
    ``build`` holds the CPU seconds of each phase (``derivatives``, ``compile``) and ``backend``
    the backend used ("auto": the vm, then the C library); ``cpu`` and ``calls`` the CPU seconds
    and calls of each callback so far (the whole callback: the compiled call, the check, the
    scatter into the gradient or the Hessian's assembly); ``served`` the calls and ``cpu_on`` the
    CPU seconds by the code that ran them (``"vm"``, ``"c"``, ...).
    """

    def __init__(
        self,
        problem: Problem,
        backend: str = "auto",
        *,
        build_timeout: float | None = None,
        loops: bool | int | None = None,
    ) -> None:
        self.problem = problem
        self.variables = problem.x
        self.names = problem.constraint_names
        self.n, self.m = len(self.variables), len(problem.g)
        self.lbx, self.ubx, self.x0, self.lbg, self.ubg = problem.bounds()
        if backend not in BACKENDS:
            raise ProblemError(f"unknown backend {backend!r} for the callbacks: one of {', '.join(BACKENDS)}")
        self.build: dict[str, float] = {}
        self.cpu: dict[str, float] = dict.fromkeys(CALLBACKS, 0.0)
        self.calls: dict[str, int] = dict.fromkeys(CALLBACKS, 0)
        #: calls of each callback by the code that served them ("vm", "c", ...)
        self.served: dict[str, dict[str, int]] = {name: {} for name in CALLBACKS}
        #: CPU seconds of the callbacks by the code that served them
        self.cpu_on: dict[str, float] = {}
        #: per callback that moved from the vm to the C library: (its call number, the solver's iteration)
        self.switched: dict[str, tuple[int, int]] = {}
        #: the solver's current iteration (the IPOPT backend keeps it up to date)
        self.iteration = 0
        self._where = ""
        self._handed: set[str] = set()  # the callbacks whose C library serves the C callbacks (hand_over)
        #: (callback, index) of the last non-finite value met, or None
        self.nonfinite: tuple[str, int] | None = None
        start = time.process_time()
        self._derivatives(problem)
        self.build["derivatives"] = time.process_time() - start
        # under "auto" the C builds run beside, in threads of their own: count this thread only
        clock = time.thread_time if backend == "auto" else cpu_with_children
        start = clock()
        self._loops = backend != "vm" if loops is None else loops
        self.backend = self._compile_all(backend, build_timeout)
        self.build["compile"] = clock() - start

    def __repr__(self) -> str:
        return (
            f"<CompiledNLP {self.n} variables, {self.m} constraints, jacobian nnz {len(self.jac.values)}, "
            f"hessian nnz {self.hess.nnz} ({len(self.hess.values)} block entries), backend {self.backend}>"
        )

    def _derivatives(self, problem: Problem) -> None:
        f = problem.f if problem.f is not None else const(0.0)
        self.f = f
        self.grad: SparseMatrix = sparse_jacobian([f], self.variables)
        parts = _summands(f)
        self.n_objective_terms = len(parts)
        self.jac: SparseMatrix
        self.hess: BlockHessian
        if self.m:  # the Hessian's first sweeps give the constraints' gradients: the Jacobian comes with it
            self.jac, self.hess = jacobian_and_block_hessian([*parts, *problem.g], self.variables, len(parts))
        else:
            self.jac, self.hess = _empty(0, self.n), block_hessian(parts, self.variables)
        if self.m and self.n and not self.jac.values:
            # constraints that read no variable: IPOPT refuses m > 0 with no Jacobian entry, so one explicit zero
            self.jac = SparseMatrix([0], [0], [const(0.0)], (self.m, self.n))
        self._grad_cols = np.asarray(self.grad.cols, dtype=np.int64)
        # the Hessian's per-call arrays, kept (its blocks and weights are consumed inside :meth:`hessian`)
        self._blocks = np.empty(len(self.hess.values))
        self._scratch = np.empty(len(self.hess.values))
        self._weights = np.empty(self.hess.n_terms)

    def _compile_all(self, backend: str, build_timeout: float | None) -> str:
        try:
            self._fns = self._compile_with(backend, build_timeout)
        except (CompilerNotFoundError, BuildTimeoutError):  # "auto" without the vm: numpy without a C build
            if backend != "auto":
                raise
            backend = "numpy"
            self._fns = self._compile_with(backend, build_timeout)
        return backend

    def _compile_with(self, backend: str, build_timeout: float | None) -> dict[str, CompiledFunction | None]:
        timeout = build_timeout if backend in ("c", "auto") else None
        # the costliest call first: under "auto" the background builds run in this order, one at a time
        outputs = {
            "hessian": self.hess.values,
            "jacobian": self.jac.values,
            "constraints": self.problem.g,
            "gradient": self.grad.values,
            "objective": [self.f],
        }
        fns = {
            name: compile_terms(
                list(terms), self.variables, backend, packed=True, build_timeout=timeout, loops=self._loops
            )
            if terms
            else None
            for name, terms in outputs.items()
        }
        return {name: fns[name] for name in CALLBACKS}

    # -- running -------------------------------------------------------------------------
    def active(self) -> dict[str, str]:
        """The code serving each compiled callback now: ``"vm"`` or ``"c"`` under "auto", else the backend."""
        return {name: self._code(fn) for name, fn in self._fns.items() if fn is not None}

    def native(self) -> Any | None:
        """The five callbacks in C over the vm's machines (``compile._cvm.NLPCallbacks``), or None where they
        cannot serve: a backend other than "vm" and "auto", the extension not built, a machine that does not run
        at one point.

        A solver's C interface calls them with no Python on the way; they compute what :meth:`objective`,
        :meth:`gradient`, :meth:`constraints`, :meth:`jacobian` and :meth:`hessian` compute, bit for bit. Under
        "auto", :meth:`hand_over` gives them each C library whose build has finished (call it between solver
        iterations); :meth:`absorb` adds what they recorded to this object's counts.
        """
        if self.backend not in ("vm", "auto"):
            return None
        switches = [None if fn is None else fn.library for fn in (self._fns[name] for name in CALLBACKS)]
        machines = tuple(s.vm.machine if isinstance(s, Switch) else s for s in switches)
        jac_rows, jac_cols = self.jacobianstructure()
        hess_rows, hess_cols = self.hessianstructure()
        index = self.hess.weight_index
        native = nlp_callbacks(
            machines,
            n=self.n,
            m=self.m,
            grad_cols=self._grad_cols,
            jac_rows=jac_rows.astype(np.int32),
            jac_cols=jac_cols.astype(np.int32),
            hess_rows=hess_rows.astype(np.int32),
            hess_cols=hess_cols.astype(np.int32),
            position=np.ascontiguousarray(self.hess.position, dtype=np.int64),
            term=np.ascontiguousarray(index, dtype=np.int64),
            n_terms=self.hess.n_terms,
            n_objective_terms=self.n_objective_terms,
            signed=index is not self.hess.term,
        )
        if native is not None:
            self._handed = set()
            self.hand_over(native)
        return native

    def hand_over(self, native: Any) -> None:
        """Under "auto": each callback whose C library has been loaded since the last call is served by it in
        ``native`` (:meth:`native`'s callbacks) from now on; call between two solver calls, in the solving thread."""
        if self.backend != "auto":
            return  # no library replaces a machine
        for k, name in enumerate(CALLBACKS):
            fn = self._fns[name]
            switch = None if fn is None else fn.library
            if not isinstance(switch, Switch) or switch.c is None or name in self._handed:
                continue
            native.use_library(k, *switch.c.packed_entry())
            self._handed.add(name)
            native_vm = native.record()[0]["vm"][0][k]
            if native_vm + self.served[name].get("vm", 0) and name not in self.switched:
                # as the Python road records it: the number of the call the library takes, the iteration
                self.switched[name] = (self.calls[name] + native_vm, self.iteration)

    def absorb(self, native: Any) -> EvaluationError | None:
        """Add the calls, CPU seconds and non-finite value that :meth:`native`'s callbacks recorded; the error a
        machine or library met (an integer power with a negative exponent), or None."""
        by_code, error, nonfinite = native.record()
        for code, (calls, cpu) in by_code.items():
            for name, count, spent in zip(CALLBACKS, calls, cpu, strict=True):
                if count:
                    self.calls[name] += count
                    self.cpu[name] += spent
                    self.cpu_on[code] = self.cpu_on.get(code, 0.0) + spent
                    self.served[name][code] = self.served[name].get(code, 0) + count
        if nonfinite is not None:
            self.nonfinite = (CALLBACKS[nonfinite[0]], nonfinite[1])
        return EvaluationError(NEGATIVE_POWER) if error else None

    def _code(self, fn: Any) -> str:
        library = fn.library
        return library.active if isinstance(library, Switch) else self.backend

    def wait(self, timeout: float | None = None) -> bool:
        """Under "auto", block until every background C build has finished (True) or ``timeout`` seconds passed."""
        switches = [fn.library for fn in self._fns.values() if fn is not None and isinstance(fn.library, Switch)]
        deadline = None if timeout is None else time.perf_counter() + timeout
        for switch in switches:
            left = None if deadline is None else max(0.0, deadline - time.perf_counter())
            if not switch.wait(left):
                return False
        return True

    def background_builds(self) -> dict[str, dict[str, Any]]:
        """Under "auto", each callback's C build: ``done``, ``seconds`` (wall, to the library), ``cpu``, ``error``."""
        out: dict[str, dict[str, Any]] = {}
        for name, fn in self._fns.items():
            switch = None if fn is None else fn.library
            if isinstance(switch, Switch):
                error = None if switch.error is None else str(switch.error)
                done = switch.finished is not None
                out[name] = {"done": done, "seconds": switch.build_seconds, "cpu": switch.build_cpu, "error": error}
        return out

    def _run(self, name: str, x: Any, size: int, into: np.ndarray | None = None) -> np.ndarray:
        fn = self._fns[name]
        if fn is None:
            out, where = np.zeros(size) if into is None else into, "none"
            out[:] = 0.0
        else:
            where = self._code(fn)
            out = fn(np.asarray(x, dtype=np.float64), out=into)
        served = self.served[name]
        if where not in served and served and where != self.backend:  # the library has replaced the vm
            self.switched[name] = (self.calls[name], self.iteration)
        served[where] = served.get(where, 0) + 1
        self._where = where
        self.calls[name] += 1
        if not np.isfinite(out).all():
            self.nonfinite = (name, int(np.flatnonzero(~np.isfinite(out))[0]))
        return out

    def _account(self, name: str, start: float) -> None:
        """Add the CPU seconds since ``start`` to callback ``name`` and to the code that served it."""
        spent = time.thread_time() - start
        self.cpu[name] += spent
        self.cpu_on[self._where] = self.cpu_on.get(self._where, 0.0) + spent

    def objective(self, x: Any) -> float:
        """The objective's value at ``x``."""
        start = time.thread_time()
        value = float(self._run("objective", x, 1)[0])
        self._account("objective", start)
        return value

    def gradient(self, x: Any) -> np.ndarray:
        """The objective's gradient at ``x`` (dense, one entry per variable)."""
        start = time.thread_time()
        out = np.zeros(self.n)
        out[self._grad_cols] = self._run("gradient", x, len(self.grad.values))
        self._account("gradient", start)
        return out

    def constraints(self, x: Any, out: np.ndarray | None = None) -> np.ndarray:
        """The constraints' values at ``x`` (written into ``out``, a float64 array of ``m``, when given)."""
        start = time.thread_time()
        result = self._run("constraints", x, self.m, out)
        self._account("constraints", start)
        return result

    def jacobian(self, x: Any, out: np.ndarray | None = None) -> np.ndarray:
        """The Jacobian's non-zeros at ``x``, in the order of :meth:`jacobianstructure` (into ``out`` when given)."""
        start = time.thread_time()
        result = self._run("jacobian", x, len(self.jac.values), out)
        self._account("jacobian", start)
        return result

    def jacobianstructure(self) -> tuple[np.ndarray, np.ndarray]:
        """Row and column of each Jacobian non-zero."""
        return np.asarray(self.jac.rows, dtype=np.int64), np.asarray(self.jac.cols, dtype=np.int64)

    def hessian(self, x: Any, lagrange: Any, obj_factor: float) -> np.ndarray:
        """The lower triangle of the Lagrangian's Hessian at ``x`` (order of :meth:`hessianstructure`)."""
        start = time.thread_time()
        blocks = self._run("hessian", x, len(self.hess.values), self._blocks)
        weights = self._weights
        weights[: self.n_objective_terms] = obj_factor
        weights[self.n_objective_terms :] = np.asarray(lagrange, dtype=np.float64).reshape(-1)
        out = self.hess.assemble(blocks, weights, self._scratch)
        self._account("hessian", start)
        return out

    def hessianstructure(self) -> tuple[np.ndarray, np.ndarray]:
        """Row and column of each entry of the Hessian's lower triangle."""
        return np.asarray(self.hess.rows, dtype=np.int64), np.asarray(self.hess.cols, dtype=np.int64)

    # -- checks ----------------------------------------------------------------------------
    def describe(self, where: str, index: int) -> str:
        """What value ``index`` of callback ``where`` is, in the problem's names."""
        var = self.variables
        if where == "objective":
            return "the objective"
        if where == "gradient":
            return f"d objective / d {var[self.grad.cols[index]].name}"
        if where == "constraints":
            return f"constraint {self.names[index]}"
        if where == "jacobian":
            return f"d {self.names[self.jac.rows[index]]} / d {var[self.jac.cols[index]].name}"
        k = int(self.hess.term[index])
        owner = (
            "the objective" if k < self.n_objective_terms else f"constraint {self.names[k - self.n_objective_terms]}"
        )
        p = int(self.hess.position[index])
        return f"d2 ({owner}) / d {var[self.hess.rows[p]].name} d {var[self.hess.cols[p]].name}"

    def nonfinite_error(self, context: str) -> NonFiniteError:
        """The error for the last non-finite value met (``context`` says where: "at the start point")."""
        if self.nonfinite is None:
            return NonFiniteError(f"a value was not finite {context}")
        where, index = self.nonfinite
        item = self.describe(where, index)
        return NonFiniteError(
            f"{item} is not finite {context} (callback {where}): check its domain (log, sqrt, division) "
            "and the variables' bounds and start",
            item=item,
            where=where,
        )

    def check_point(self, x: Any, context: str = "at the start point") -> None:
        """Evaluate every callback at ``x`` (multipliers 1); a NonFiniteError naming the first bad value."""
        self.nonfinite = None
        for name in CALLBACKS:
            size = {"objective": 1, "gradient": len(self.grad.values), "constraints": self.m}.get(name)
            if size is None:
                size = len(self.jac.values) if name == "jacobian" else len(self.hess.values)
            self._run(name, x, size)
            if self.nonfinite is not None:
                raise self.nonfinite_error(context)

    def timings(self) -> dict[str, float]:
        """CPU seconds of each callback so far."""
        return dict(self.cpu)


def _empty(m: int, n: int) -> SparseMatrix:
    return SparseMatrix([], [], [], (m, n))
