"""The problem object: variables with bounds and starts, constraints with bounds, an objective.

A :class:`Problem` only records terms and numbers, checking each as it comes (a bound that is not
a number, ``lb > ub``, a length that does not match, a constraint reading an undeclared symbol),
and names the variable or constraint at fault in a :class:`~exprgraph.errors.ProblemError`.
:meth:`Problem.compile` finds the derivatives and builds the callbacks once
(:mod:`exprgraph.optimize.callbacks`); :meth:`Problem.solve` hands them to a solver.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..core import Symbol, Term, as_term
from ..errors import ProblemError
from .callbacks import CompiledNLP
from .solve import solve as _solve

__all__ = ["Problem"]

INF = math.inf


def _numbers(value: Any, n: int, what: str, item: str) -> np.ndarray:
    """``value`` (a number or ``n`` numbers) as ``n`` float64s; a ProblemError naming ``item`` otherwise."""
    values: np.ndarray | None
    if isinstance(value, (str, bytes)):  # iterable, but "12" is not the numbers 1.0 and 2.0
        raise ProblemError(f"{what} of {item} must be a number or {n} numbers, got {value!r}", item=item)
    if isinstance(value, (int, float, np.integer, np.floating)):
        values = np.full(n, float(value))
    else:
        values = _as_floats(value)
        if values is None:
            try:
                values = np.array([float(v) for v in value], dtype=np.float64)
            except (TypeError, ValueError) as e:
                raise ProblemError(f"{what} of {item} must be a number or {n} numbers, got {value!r}", item=item) from e
        if len(values) != n:
            raise ProblemError(f"{what} of {item} has {len(values)} numbers, {n} needed", item=item)
    if np.isnan(values).any():
        raise ProblemError(f"{what} of {item} is nan", item=item)
    return values


def _as_floats(value: Any) -> np.ndarray | None:
    """A numeric 1-d array, or a list or tuple of Python floats, as float64 at once; None for anything else."""
    if isinstance(value, (list, tuple)) and value and all(v.__class__ is float for v in value):
        return np.array(value, dtype=np.float64)
    if isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype.kind in "biuf":
        return value.astype(np.float64)
    return None


def _check_bounds(lb: np.ndarray, ub: np.ndarray, items: Callable[[int], str]) -> None:
    """A ProblemError naming the first item (``items(i)``) whose lower bound is above its upper bound."""
    bad = np.flatnonzero(lb > ub)
    if len(bad):
        i = int(bad[0])
        item = items(i)
        raise ProblemError(f"inconsistent bounds for {item}: lower bound {lb[i]} > upper bound {ub[i]}", item=item)
    # lb = +inf or ub = -inf passes lb <= ub, but no number satisfies it (IPOPT clips it to +-1e20 and "succeeds")
    bad = np.flatnonzero((lb == INF) | (ub == -INF))
    if len(bad):
        i = int(bad[0])
        item = items(i)
        raise ProblemError(f"bounds [{lb[i]}, {ub[i]}] of {item} admit no number", item=item)


def _check_symbol(symbol: Any) -> None:
    """A ProblemError unless ``symbol`` is a scalar symbol (a variable to be)."""
    if not isinstance(symbol, Term) or symbol.op.name != "symbol":
        raise ProblemError(f"a variable must be a symbol, got {symbol!r}")
    if symbol.shape:
        raise ProblemError(f"variable {symbol.name} has shape {symbol.shape}; declare scalars", item=symbol.name)
    if symbol.dtype not in ("float64", "float32"):  # the solvers move every variable continuously
        raise ProblemError(f"variable {symbol.name} has dtype {symbol.dtype}; variables are floats", item=symbol.name)


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
        self._taken: set[str] = set()  # the variables' names
        self._lbx: list[float] = []
        self._ubx: list[float] = []
        self._x0: list[float] = []
        self._constraints: list[Term] = []
        self._names: list[str] = []
        self._lbg: list[float] = []
        self._ubg: list[float] = []
        self._objective: Term | None = None
        #: nodes of the constraints and objective checked so far: each reads declared variables only
        self._checked: set[Term] = set()

    def __repr__(self) -> str:
        return f"Problem({len(self._variables)} variables, {len(self._constraints)} constraints)"

    # -- variables -------------------------------------------------------------------------
    def add_variable(self, symbol: Term, *, lb: float = -INF, ub: float = INF, start: float = 0.0) -> Term:
        """Declare an existing scalar ``symbol`` as a variable, with its bounds and start."""
        _check_symbol(symbol)
        self._declare([symbol], lb, ub, start, symbol.name)
        return symbol

    def variable(self, name: str, *, lb: float = -INF, ub: float = INF, start: float = 0.0) -> Term:
        """A new scalar variable ``name`` (a symbol) with bounds ``lb <= x <= ub`` and a start."""
        return self.add_variable(Symbol(name), lb=lb, ub=ub, start=start)

    def variables(self, name: str, n: int, *, lb: Any = -INF, ub: Any = INF, start: Any = 0.0) -> list[Term]:
        """``n`` scalar variables ``name_0 ... name_{n-1}``; each bound and start is a number or ``n`` numbers."""
        if not isinstance(n, (int, np.integer)) or n < 0:
            raise ProblemError(f"the number of variables {name} must be a non-negative integer, got {n!r}", item=name)
        symbols = [Symbol(f"{name}_{i}") for i in range(int(n))]
        self._declare(symbols, lb, ub, start, f"variables {name}")
        return symbols

    def _declare(self, symbols: list[Term], lb: Any, ub: Any, start: Any, item: str) -> None:
        """Add ``symbols`` (scalar symbols: the callers' check) as variables, bounds and starts checked at once."""
        n = len(symbols)
        lows, highs, starts = (_numbers(v, n, w, item) for v, w in ((lb, "lb"), (ub, "ub"), (start, "start")))
        _check_bounds(lows, highs, lambda i: f"variable {symbols[i].name}")
        bad = np.flatnonzero(~np.isfinite(starts))  # as solve checks an x0 it is given
        if len(bad):
            name = symbols[int(bad[0])].name
            raise ProblemError(f"the start of variable {name} is {starts[bad[0]]}, not a finite number", item=name)
        index, taken = self._index, self._taken
        first = len(self._variables)
        for k, symbol in enumerate(symbols):
            # by name too: x and x with assumptions are two symbols, but the compiled callbacks bind inputs by name
            if symbol.name in taken or index.setdefault(symbol, first + k) != first + k:
                for s in symbols[:k]:  # (declared in this call: taken back, so the problem is unchanged)
                    del index[s]
                raise ProblemError(f"variable {symbol.name} is declared twice", item=symbol.name)
        taken.update(s.name for s in symbols)
        self._variables.extend(symbols)
        self._lbx.extend(lows.tolist())
        self._ubx.extend(highs.tolist())
        self._x0.extend(starts.tolist())

    # -- constraints and objective ---------------------------------------------------------
    def _check_term(self, expr: Any, item: str) -> Term:
        if expr.__class__ is Term:
            t = expr
        else:
            try:
                t = as_term(expr)
            except (TypeError, ValueError) as e:
                raise ProblemError(f"{item} is not an expression: {expr!r}", item=item) from e
        if t.shape:
            raise ProblemError(f"{item} has shape {t.shape}; constraints and objectives are scalars", item=item)
        if t.dtype == "bool":  # a comparison has no derivative to follow: its bounds belong in lb and ub
            raise ProblemError(
                f"{item} is a bool term ({t}); write a comparison as an expression with bounds", item=item
            )
        unknown = self._undeclared(t)
        if unknown:
            raise ProblemError(
                f"{item} reads {', '.join(unknown)}, which are not declared variables (declare them first)", item=item
            )
        return t

    def _undeclared(self, t: Term) -> list[str]:
        """The names of the symbols ``t`` reads that are not variables; each node is walked once per problem."""
        index, checked = self._index, self._checked
        if not t.args:
            return [t.name] if t.op.name == "symbol" and t not in index else []
        if t in checked:
            return []
        found: list[Term] = []
        checked.add(t)
        stack = [t]
        while stack:
            for a in stack.pop().args:
                if a in checked:
                    continue
                checked.add(a)
                if a.args:
                    stack.append(a)
                elif a.op.name == "symbol" and a not in index:
                    found.append(a)
        if not found:
            return []
        self._checked = set()  # nodes above an undeclared symbol were marked checked: forget them all
        return sorted({s.name for s in found})

    def constraint(self, expr: Any, lb: float = -INF, ub: float = INF, *, name: str | None = None) -> int:
        """Add ``lb <= expr <= ub`` (``lb == ub`` for an equality); returns its index."""
        label = name if name is not None else f"g{len(self._constraints)}"
        return self._add_constraints([expr], lb, ub, [label], f"constraint {label}").start

    def constraints(self, exprs: Sequence[Any], lb: Any = -INF, ub: Any = INF, *, name: str = "g") -> range:
        """Add ``lb[i] <= exprs[i] <= ub[i]`` named ``name[i]``; each bound is a number or one per expression."""
        if isinstance(exprs, (Term, str)) or not hasattr(exprs, "__iter__"):
            raise ProblemError(
                f"constraints {name} takes a list of expressions, got {exprs!r}", item=f"constraints {name}"
            )
        exprs = list(exprs)  # a generator too
        labels = [f"{name}[{i}]" for i in range(len(exprs))]
        return self._add_constraints(exprs, lb, ub, labels, f"constraints {name}")

    def _add_constraints(self, exprs: Sequence[Any], lb: Any, ub: Any, labels: list[str], item: str) -> range:
        """Check the expressions and bounds (all of them: nothing is added when one is wrong), then add them."""
        n = len(exprs)
        terms = [self._check_term(e, f"constraint {label}") for e, label in zip(exprs, labels, strict=True)]
        lows, highs = (_numbers(v, n, w, item) for v, w in ((lb, "lb"), (ub, "ub")))
        _check_bounds(lows, highs, lambda i: f"constraint {labels[i]}")
        start = len(self._constraints)
        self._constraints.extend(terms)
        self._names.extend(labels)
        self._lbg.extend(lows.tolist())
        self._ubg.extend(highs.tolist())
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
