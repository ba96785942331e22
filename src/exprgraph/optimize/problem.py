"""The problem object: variables with bounds and starts, constraints with bounds, an objective.

A :class:`Problem` only records terms and numbers, checking each as it comes (a bound that is not
a number, ``lb > ub``, a length that does not match, a constraint reading an undeclared symbol),
and names the variable or constraint at fault in a :class:`~exprgraph.errors.ProblemError`.
:meth:`Problem.compile` finds the derivatives and builds the callbacks once
(:mod:`exprgraph.optimize.callbacks`); :meth:`Problem.solve` hands them to a solver.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core import Symbol, Term, as_term
from ..errors import ProblemError
from .callbacks import CompiledNLP
from .solve import solve as _solve

__all__ = ["Problem"]

INF = math.inf


def _numbers(value: Any, n: int, what: str, item: str) -> list[float]:
    """``value`` (a number or ``n`` numbers) as ``n`` floats; a ProblemError naming ``item`` otherwise."""
    if isinstance(value, (int, float, np.integer, np.floating)):
        values = [float(value)] * n
    else:
        try:
            values = [float(v) for v in value]
        except (TypeError, ValueError) as e:
            raise ProblemError(f"{what} of {item} must be a number or {n} numbers, got {value!r}", item=item) from e
        if len(values) != n:
            raise ProblemError(f"{what} of {item} has {len(values)} numbers, {n} needed", item=item)
    for v in values:
        if math.isnan(v):
            raise ProblemError(f"{what} of {item} is nan", item=item)
    return values


def _check_bounds(lb: float, ub: float, item: str) -> None:
    if lb > ub:
        raise ProblemError(f"inconsistent bounds for {item}: lower bound {lb} > upper bound {ub}", item=item)


class Problem:
    """An optimisation problem ``min f(x)`` s.t. ``lbg <= g(x) <= ubg``, ``lbx <= x <= ubx``.

    >>> p = Problem()
    >>> x = p.variable("x", lb=0.0, start=2.0)
    >>> y = p.variable("y")
    >>> _ = p.constraint(x + y, lb=1.0, ub=1.0, name="sum")
    >>> p.minimize(x * x + 2 * y * y)
    >>> p
    Problem(2 variables, 1 constraints)
    """

    def __init__(self) -> None:
        self._variables: list[Term] = []
        self._index: dict[Term, int] = {}
        self._lbx: list[float] = []
        self._ubx: list[float] = []
        self._x0: list[float] = []
        self._constraints: list[Term] = []
        self._names: list[str] = []
        self._lbg: list[float] = []
        self._ubg: list[float] = []
        self._objective: Term | None = None

    def __repr__(self) -> str:
        return f"Problem({len(self._variables)} variables, {len(self._constraints)} constraints)"

    # -- variables -------------------------------------------------------------------------
    def add_variable(self, symbol: Term, *, lb: float = -INF, ub: float = INF, start: float = 0.0) -> Term:
        """Declare an existing scalar ``symbol`` as a variable, with its bounds and start."""
        if not isinstance(symbol, Term) or symbol.op.name != "symbol":
            raise ProblemError(f"a variable must be a symbol, got {symbol!r}")
        if symbol.shape:
            raise ProblemError(f"variable {symbol.name} has shape {symbol.shape}; declare scalars", item=symbol.name)
        if symbol in self._index:
            raise ProblemError(f"variable {symbol.name} is declared twice", item=symbol.name)
        (low,), (high,), (x0,) = (_numbers(v, 1, w, symbol.name) for v, w in ((lb, "lb"), (ub, "ub"), (start, "start")))
        _check_bounds(low, high, f"variable {symbol.name}")
        self._index[symbol] = len(self._variables)
        self._variables.append(symbol)
        self._lbx.append(low)
        self._ubx.append(high)
        self._x0.append(x0)
        return symbol

    def variable(self, name: str, *, lb: float = -INF, ub: float = INF, start: float = 0.0) -> Term:
        """A new scalar variable ``name`` (a symbol) with bounds ``lb <= x <= ub`` and a start."""
        return self.add_variable(Symbol(name), lb=lb, ub=ub, start=start)

    def variables(self, name: str, n: int, *, lb: Any = -INF, ub: Any = INF, start: Any = 0.0) -> list[Term]:
        """``n`` scalar variables ``name_0 ... name_{n-1}``; each bound and start is a number or ``n`` numbers."""
        if not isinstance(n, (int, np.integer)) or n < 0:
            raise ProblemError(f"the number of variables {name} must be a non-negative integer, got {n!r}", item=name)
        lows, highs, starts = (
            _numbers(v, int(n), w, f"variables {name}") for v, w in ((lb, "lb"), (ub, "ub"), (start, "start"))
        )
        return [
            self.add_variable(Symbol(f"{name}_{i}"), lb=lows[i], ub=highs[i], start=starts[i]) for i in range(int(n))
        ]

    # -- constraints and objective ---------------------------------------------------------
    def _check_term(self, expr: Any, item: str) -> Term:
        try:
            t = as_term(expr)
        except (TypeError, ValueError) as e:
            raise ProblemError(f"{item} is not an expression: {expr!r}", item=item) from e
        if t.shape:
            raise ProblemError(f"{item} has shape {t.shape}; constraints and objectives are scalars", item=item)
        unknown = sorted(s.name for s in t.free_symbols if s not in self._index)
        if unknown:
            raise ProblemError(
                f"{item} reads {', '.join(unknown)}, which are not declared variables (declare them first)", item=item
            )
        return t

    def constraint(self, expr: Any, lb: float = -INF, ub: float = INF, *, name: str | None = None) -> int:
        """Add ``lb <= expr <= ub`` (``lb == ub`` for an equality); returns its index."""
        k = len(self._constraints)
        label = name if name is not None else f"g{k}"
        item = f"constraint {label}"
        t = self._check_term(expr, item)
        (low,), (high,) = (_numbers(v, 1, w, item) for v, w in ((lb, "lb"), (ub, "ub")))
        _check_bounds(low, high, item)
        self._constraints.append(t)
        self._names.append(label)
        self._lbg.append(low)
        self._ubg.append(high)
        return k

    def constraints(self, exprs: Sequence[Any], lb: Any = -INF, ub: Any = INF, *, name: str = "g") -> range:
        """Add ``lb[i] <= exprs[i] <= ub[i]`` named ``name[i]``; each bound is a number or one per expression."""
        n = len(exprs)
        lows, highs = (_numbers(v, n, w, f"constraints {name}") for v, w in ((lb, "lb"), (ub, "ub")))
        start = len(self._constraints)
        for i, e in enumerate(exprs):
            self.constraint(e, lows[i], highs[i], name=f"{name}[{i}]")
        return range(start, start + n)

    def minimize(self, expr: Any) -> None:
        """Set the objective to minimise (replaces any earlier one)."""
        self._objective = self._check_term(expr, "the objective")

    # -- read back -------------------------------------------------------------------------
    @property
    def x(self) -> list[Term]:
        """The variables, in order (the columns of the Jacobian and Hessian)."""
        return list(self._variables)

    @property
    def g(self) -> list[Term]:
        """The constraint expressions, in order."""
        return list(self._constraints)

    @property
    def f(self) -> Term | None:
        """The objective (None until :meth:`minimize`)."""
        return self._objective

    @property
    def constraint_names(self) -> list[str]:
        """The name of each constraint."""
        return list(self._names)

    def bounds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(lbx, ubx, x0, lbg, ubg)`` as float arrays."""
        return (
            np.array(self._lbx, dtype=np.float64),
            np.array(self._ubx, dtype=np.float64),
            np.array(self._x0, dtype=np.float64),
            np.array(self._lbg, dtype=np.float64),
            np.array(self._ubg, dtype=np.float64),
        )

    def index(self, variable: Term) -> int:
        """The position of ``variable`` among the variables."""
        try:
            return self._index[variable]
        except KeyError:
            raise ProblemError(f"{variable} is not a variable of this problem") from None

    def compile(self, backend: str = "auto", **options: Any) -> CompiledNLP:
        """The callbacks, derivatives and sparsity found and compiled once (:class:`CompiledNLP`)."""
        return CompiledNLP(self, backend=backend, **options)

    def solve(self, solver: str = "auto", **options: Any) -> Any:
        """Compile (see :meth:`compile`) and solve; ``options`` as :func:`exprgraph.optimize.solve` takes them."""
        return _solve(self, solver, **options)
