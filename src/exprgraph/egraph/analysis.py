"""E-class analyses: facts attached to each class and kept through merges.

An analysis gives every class a value: ``make`` computes it for a new e-node from its children's
values, ``merge`` combines the values of two classes being joined, and ``modify`` may change the
e-graph in response (add a node, union with another class). The e-graph re-runs ``make`` on the
users of a class whose value changed, so facts flow upwards until nothing changes (egg's
design).

Constant folding is built into the e-graph (it needs no subclass): :func:`fold_node` evaluates
one e-node on constant operands through the op table's numpy evaluation, exactly as
:func:`exprgraph.eval.evaluate` would. Subclass :class:`Analysis` for other facts; the
:class:`Intervals` analysis below is a worked example (value bounds of every class).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core import Symbol, Term, const
from ..core.exact_fold import fold_exact, is_exact
from ..errors import EvaluationError
from ..eval import evaluate
from .enode import ENode, op_of, term_of

if TYPE_CHECKING:
    from .egraph import EGraph

__all__ = ["Analysis", "Intervals", "fold_node", "infer_dtype"]


class Analysis:
    """Base class of user analyses: override :meth:`make` and :meth:`merge` (and :meth:`modify`)."""

    def make(self, egraph: EGraph, node: ENode) -> Any:
        """The value of a new e-node (``egraph.get_data(child)`` reads the children's values)."""
        return None

    def merge(self, a: Any, b: Any) -> Any:
        """The value of the union of two classes holding ``a`` and ``b``."""
        return a if a is not None else b

    def modify(self, egraph: EGraph, c: int) -> None:
        """React to class ``c`` having a new value (add nodes, union classes); nothing by default."""


_DUMMIES: dict[str, Term] = {}


def infer_dtype(head: Any, child_dtypes: tuple) -> str:
    """The dtype of a node with ``head`` over scalar operands of ``child_dtypes`` (the op's own rule)."""
    if head.__class__ is Term:
        return head.dtype
    args = []
    for d in child_dtypes:
        dummy = _DUMMIES.get(d)
        if dummy is None:
            dummy = _DUMMIES[d] = Symbol(f"_{d}", d)
        args.append(dummy)
    try:
        return term_of(head, tuple(args)).dtype
    except (TypeError, ValueError):
        # shape-dependent ops (matmul on scalars, say): the widest operand dtype
        for d in ("float64", "int64", "bool"):
            if d in child_dtypes:
                return d
        return "float64"


def fold_node(head: Any, args: tuple[Term, ...], nonfinite: bool = False) -> Term | None:
    """The constant ``head(*args)`` evaluates to, or None (no numpy evaluation, an error, nan/inf)."""
    op = op_of(head)
    if op.impl is None and op.ufunc is None:
        return None
    try:
        term = term_of(head, args)
        if term.shape != ():
            return None
        if term.dtype == "float64" and all(is_exact(a) for a in args):  # exact over exact stays exact
            out = fold_exact(term)
            return out if out is not None and out.op.name == "const" else None
        value = evaluate(term)
    except (EvaluationError, TypeError, ValueError, ArithmeticError):
        return None
    value = np.asarray(value)
    if value.shape != ():
        return None
    value = value.item()
    if not nonfinite and isinstance(value, float) and not math.isfinite(value):
        return None
    try:
        return const(value, dtype=term.dtype)
    except (TypeError, ValueError, OverflowError):
        return None


class Intervals(Analysis):
    """Bounds ``(lo, hi)`` on the value of each class (nan-free reals), from constants and arithmetic.

    A worked example of a user analysis: ``make`` propagates bounds through ``+ - * neg exp sqrt``
    and the like, ``merge`` intersects them (both bounds hold for a merged class), and conditions
    may read them with ``egraph.get_data(c)``.
    """

    def make(self, egraph: EGraph, node: ENode) -> Any:
        """Bounds of a constant, or of an arithmetic node from its operands' bounds."""
        op = node.op.name
        if not node.children:
            if op == "const" and isinstance(node.attr, (int, float)) and not isinstance(node.attr, bool):
                v = float(node.attr)
                return (v, v) if math.isfinite(v) else None
            return None
        kids = [egraph.get_data(c) for c in node.children]
        if any(k is None for k in kids):
            if op in ("exp", "sigmoid"):
                return (0.0, math.inf) if op == "exp" else (0.0, 1.0)
            if op == "abs":
                return (0.0, math.inf)
            return None
        return _interval(op, kids)

    def merge(self, a: Any, b: Any) -> Any:
        """The intersection (each side's bounds hold for the merged class)."""
        if a is None:
            return b
        if b is None:
            return a
        return (max(a[0], b[0]), min(a[1], b[1]))


def _interval(op: str, kids: list) -> Any:
    if op == "add":
        return (sum(k[0] for k in kids), sum(k[1] for k in kids))
    if op == "sub":
        (a, b), (c, d) = kids
        return (a - d, b - c)
    if op == "neg":
        (a, b) = kids[0]
        return (-b, -a)
    if op == "mul" and len(kids) == 2:
        (a, b), (c, d) = kids
        products = [x * y for x in (a, b) for y in (c, d)]
        if any(p != p for p in products):  # 0 * inf: no bound
            return None
        return (min(products), max(products))
    if op == "exp":
        a, b = kids[0]
        return (math.exp(min(a, 700.0)), math.exp(min(b, 700.0)))
    if op == "sqrt":
        a, b = kids[0]
        return (math.sqrt(max(a, 0.0)), math.sqrt(max(b, 0.0))) if b >= 0 else None
    if op == "abs":
        a, b = kids[0]
        if a >= 0:
            return (a, b)
        if b <= 0:
            return (-b, -a)
        return (0.0, max(-a, b))
    return None
