"""Forward mode: tangents pushed from the variables up to the outputs, one sweep, as terms.

Each node's tangent ``dnode = sum_i (d node / d operand_i) d operand_i`` is built from its
operands' tangents when the sweep reaches it (children first), so ``jvp`` costs one pass over
the graph and never builds a Jacobian. The local rules come from the op table:

- an elementwise op (its shape rule is one of the broadcasting ones) has a diagonal Jacobian: a
  one-operand op's reverse rule fed with the tangent instead of an adjoint gives its forward
  term; with more operands, the rule at adjoint 1 gives the partials (terms that do not depend
  on the tangents, so shared), each multiplied by its operand's tangent; ``where(c, a, b)``
  gives ``where(c, da, db)``;
- ``sum``, ``transpose``, ``dot`` and ``matmul`` are linear in each operand: the tangent is the
  op applied with one operand replaced by its tangent, summed over the operands;
- any other op with a reverse rule is handled by transposing that (linear) rule symbolically.

A tangent may keep a smaller shape that broadcasts to its node's (a scalar tangent of a vector
sum, say); outputs get their full shape at the end.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..core import Symbol, Term, as_term, const
from ..core import sum as sum_
from ..core.op import get_op
from ..core.stdops import arith, boolean, broadcast_like, negate, product, real, same, sum_to, where_rule
from ..errors import DifferentiationError, ShapeError
from .constants import restore, standing_in
from .reverse import backprop, collector_paused, live_order, one_like, resolve_wrt, zeros_like
from .sweep import SWEEP

__all__ = ["forward", "jvp"]

#: shape rules of elementwise ops (each output entry depends on the same entry of each operand)
_ELEMENTWISE = frozenset({arith, same, real, boolean, where_rule})
#: ops linear in each operand separately (the tangent is the op with one operand swapped for its tangent)
_MULTILINEAR = frozenset({"sum", "transpose", "dot", "matmul"})

#: the C module (diff._csweep: its forward sweep is this module's loop, scalar elementwise nodes pushed in C), or None
_native = SWEEP

_ADD = get_op("add")
_CONST = get_op("const")
_WHERE = get_op("where")
_ZERO = const(0.0)
_ZERO32 = const(0.0, "float32")


def _scale(t: Term, p: Term) -> Term:
    """``t * p`` for a tangent ``t`` and a partial ``p`` (``p = -1 -> -t``, and the folds of ``product``)."""
    if p.op is _CONST and p.attr.__class__ is float and p.attr == -1.0 and t.dtype == "float64":
        return negate(t)
    return product(t, (p,))


def _is_zero(t: Term) -> bool:
    """Whether ``t`` is a constant whose entries are all zero."""
    if t.op is not _CONST:
        return False
    value = t.attr
    if value.__class__ in (int, float, bool):
        return value == 0
    return not value.array.any()


def _total(parts: list[Term]) -> Term | None:
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else Term(_ADD, tuple(parts))


def _rule_of(node: Term) -> Callable[..., Any]:
    """The gradient rule of ``node``'s op (``_pusher`` has refused ops without one)."""
    rule = node.op.grad
    if rule is None:  # pragma: no cover - checked by _pusher first
        raise DifferentiationError(f"op {node.op.name!r} has no gradient rule")
    return rule


def _elementwise(node: Term, moved: list[tuple[int, Term]]) -> Term | None:
    rule = _rule_of(node)
    args = node.args
    if len(moved) == 1 and all(a.op is _CONST for j, a in enumerate(args) if j != moved[0][0]):
        # one operand moves, the others are constants (the rule sends them nothing): the reverse
        # rule with the tangent in place of the adjoint gives (d node/d a) * t, nothing wasted
        i, t = moved[0]
        return rule(node, t)[i]
    if node.op is _WHERE:  # where(c, a, b): where(c, da, db)
        zero = _ZERO32 if node.dtype == "float32" else _ZERO
        branches = [zero, zero]
        for i, t in moved:
            if i:
                branches[i - 1] = t
        return Term(_WHERE, (args[0], *branches)) if branches != [zero, zero] else None
    # the partials once (the rule at g = 1; they do not depend on the tangents), one product each
    partials = rule(node, one_like(node))
    return _total([_scale(t, p) for i, t in moved if (p := partials[i]) is not None])


def _multilinear(node: Term, moved: list[tuple[int, Term]]) -> Term | None:
    args = node.args
    parts = []
    for i, t in moved:
        t = broadcast_like(t, args[i])
        parts.append(Term(node.op, (*args[:i], t, *args[i + 1 :]), node.attr))
    return _total(parts)


def _transposed(node: Term, moved: list[tuple[int, Term]]) -> Term | None:
    # the reverse rule is linear in its adjoint u: d(<rule(node, u)_i, t_i>)/du is the forward term
    u = Symbol("_forward_u", node.dtype if node.dtype in ("float64", "float32") else "float64", node.shape)
    if any(u in a.free_symbols for a in node.args):
        raise DifferentiationError(f"forward mode needs the symbol name _forward_u, which {node.op.name} uses")
    contributions = _rule_of(node)(node, u)
    parts = []
    for i, t in moved:
        c = contributions[i]
        if c is None:
            continue
        c = sum_to(c, node.args[i])
        inner = c * broadcast_like(t, node.args[i])
        found = backprop([sum_(inner) if inner.shape else inner], [one_like(u)], [u])
        if u in found:
            parts.append(found[u])
    return _total(parts)


def _pusher(op: Any) -> Any:
    """The function that builds the forward term of a node of ``op``."""
    if op.grad is None:
        raise DifferentiationError(f"op {op.name!r} has no gradient rule; give it one with the grad= entry of its Op")
    if op.name in _MULTILINEAR:
        return _multilinear
    if op.infer in _ELEMENTWISE:
        return _elementwise
    return _transposed


@collector_paused
def forward(outputs: Sequence[Term], tangents: Mapping[Term, Any]) -> list[Term | None]:
    """The tangent of each output for the given tangents of some of its nodes (None: no dependence).

    ``tangents`` maps variables (or any nodes) to tangent terms or numbers of their shape.
    """
    seeds: dict[Term, Term] = {}
    for var, t in tangents.items():
        t = as_term(t)
        if _is_zero(t):
            continue  # a zero tangent moves nothing (structurally zero, as in every forward mode)
        if t.shape != var.shape:
            try:
                t = broadcast_like(t, var)
            except ShapeError:
                pass
            if t.shape != var.shape:
                raise DifferentiationError(f"a tangent of shape {t.shape} does not fit {var} of shape {var.shape}")
        seeds[var] = t
    taken = [s.attr[0] for t in seeds.values() for s in t.free_symbols]
    standing = standing_in(outputs, list(seeds), taken)
    if standing is not None:  # the rules push no tangent from a constant: push from symbols standing in for them
        moved = forward(standing[0], dict(zip(standing[1], seeds.values(), strict=True)))
        return restore(moved, standing[2])
    found = _native.forward(outputs, seeds, _push) if _native is not None else NotImplemented
    if found is NotImplemented:  # the pure Python sweep (or another C walk is running)
        found = _sweep(outputs, seeds)
    out: list[Term | None] = []
    for o, t in zip(outputs, found, strict=True):
        if t is not None and t.shape != o.shape:
            t = broadcast_like(t, o)
        out.append(t)
    return out


#: op -> the function that builds the forward term of its nodes
_pushers: dict[Any, Any] = {}


def _push(node: Term, moved: list[tuple[int, Term]]) -> Term | None:
    """The forward term of ``node`` from the tangents of its moving operands (None: no dependence)."""
    op = node.op
    push = _pushers.get(op)
    if push is None or push[0] is not op.grad:  # (a rule replaced later is looked at anew)
        push = _pushers[op] = (op.grad, _pusher(op))
    result: Term | None = push[1](node, moved)
    return result


def _sweep(outputs: Sequence[Term], seeds: dict[Term, Term]) -> list[Term | None]:
    """The tangent of each output (None: no dependence), pushed node by node from the seeds."""
    order, _ = live_order(outputs, set(seeds))
    tan: dict[Term, Term] = dict(seeds)
    get = tan.get
    for node in order:  # live nodes only: each depends on a seeded node
        args = node.args
        if not args or node in seeds:
            continue
        if len(args) == 1:
            t = get(args[0])
            if t is None:
                continue
            moved = [(0, t)]
        else:
            moved = [(i, t) for i, a in enumerate(args) if (t := get(a)) is not None]
            if not moved:
                continue
        t = _push(node, moved)
        if t is not None:
            tan[node] = t
    return [tan.get(o) for o in outputs]


def tangent_seeds(outputs: list[Term], wrt: Any, v: Any, caller: str, what: str) -> tuple[Any, str, dict[Term, Any]]:
    """``(variables, kind, {variable: tangent})`` from ``wrt`` (a term or a list) and the matching ``v``."""
    targets, kind = resolve_wrt(outputs, wrt)
    if kind == "dict":
        raise TypeError(f"{caller} needs the variables wrt as a term or a list, matching the {what} v")
    vs = [v] if kind == "one" else list(v)
    if len(vs) != len(targets):
        raise ValueError(f"{caller} got {len(vs)} {what} for {len(targets)} variables")
    seeds: dict[Term, Any] = {}
    for t, tangent in zip(targets, vs, strict=True):
        if t in seeds:
            raise ValueError(f"{caller} got the variable {t} twice")
        seeds[t] = tangent
    return targets, kind, seeds


@collector_paused
def jvp(f: Any, wrt: Any, v: Any) -> Any:
    """The Jacobian-vector product ``(df/dwrt) v``: the derivative of ``f`` along the tangent ``v``.

    One forward sweep, no Jacobian. ``f`` is a term (or a list of terms, giving a list); ``wrt``
    one variable or a list; ``v`` the matching tangent (or list of tangents), each of its
    variable's shape (numbers and arrays are made constants). Each result has its output's shape.

    >>> from exprgraph import symbols, sin
    >>> x, y = symbols("x y")
    >>> print(jvp(x * y, [x, y], [1.0, 2.0]))
    y + 2.0*x
    """
    outputs = [as_term(t) for t in f] if isinstance(f, (list, tuple)) else [as_term(f)]
    _, _, seeds = tangent_seeds(outputs, wrt, v, "jvp", "tangents")
    found = forward(outputs, seeds)
    results = [zeros_like(o) if t is None else t for o, t in zip(outputs, found, strict=True)]
    return results if isinstance(f, (list, tuple)) else results[0]
