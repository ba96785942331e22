"""Reverse-mode differentiation over the DAG: one backward sweep, gradients as terms.

The nodes of ``f`` are visited once, in reverse dependency order. Each node adds up the
contributions its users sent it (its adjoint ``df/dnode``, one variadic add for fan-in) and hands
its operands their contributions through the gradient rule of its op (``op.grad`` in the op
table). Every rule builds a constant number of new nodes per operand, and adjoints are shared
by all their users, so the gradient of ``f`` has a size linear in the size of ``f`` (never the
blow-up of the expanded tree). Only nodes on a path to a requested variable are visited.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, overload

import numpy as np

from ..core import Symbol, Term, add, as_term, const, toposort
from ..core.stdops import broadcast_like, sum_to
from ..errors import DifferentiationError

__all__ = ["grad", "backprop", "zeros_like", "resolve_wrt"]

_ONE = const(1.0)


def zeros_like(t: Term) -> Term:
    """A float zero of ``t``'s shape (the gradient of something that does not depend on ``t``)."""
    if not t.shape:
        return const(0.0)
    if all(d.__class__ is int for d in t.shape):
        return const(np.zeros(t.shape))
    return broadcast_like(const(0.0), t)


def resolve_wrt(outputs: Sequence[Term], wrt: Any) -> tuple[list[Term], str]:
    """The variables ``wrt`` names, and how to shape the answer: ``"one"``, ``"list"`` or ``"dict"``.

    ``wrt`` is a term, a symbol name, a list/tuple of those, or None (every free symbol of the
    outputs, ordered by name). A name is looked up among the outputs' free symbols (a name they
    do not use stands for a float64 scalar symbol, whose derivative is zero).
    """
    if wrt is None:
        free: set[Term] = set()
        for out in outputs:
            free |= out.free_symbols
        return sorted(free, key=lambda s: (s.name, s.dtype)), "dict"
    if isinstance(wrt, (Term, str)):
        return [_one_target(outputs, wrt)], "one"
    if isinstance(wrt, (list, tuple)):
        return [_one_target(outputs, w) for w in wrt], "list"
    raise TypeError(f"wrt must be a term, a name, a list of those, or None; not {type(wrt).__name__}")


def _one_target(outputs: Sequence[Term], w: Any) -> Term:
    if w.__class__ is Term:
        return w
    if isinstance(w, str):
        for out in outputs:
            for s in out.free_symbols:
                if s.name == w:
                    return s
        return Symbol(w)
    raise TypeError(f"a variable to differentiate by must be a term or a name, not {type(w).__name__} {w!r}")


def backprop(outputs: Sequence[Term], seeds: Sequence[Term], targets: Iterable[Term]) -> dict[Term, Term]:
    """Adjoints ``sum_k <seed_k, d outputs_k / d target>`` for each target that the outputs depend on.

    ``seeds[k]`` has the shape of ``outputs[k]`` (a scalar seed is broadcast). Targets the outputs
    do not depend on are missing from the result. Raises :class:`DifferentiationError` when a
    node on a path to a target has an op without a gradient rule.
    """
    target_set = set(targets)
    order = toposort(outputs)
    live: set[Term] = set()  # nodes with a target below them (or targets themselves)
    for node in order:
        if node in target_set:
            live.add(node)
            continue
        for a in node.args:
            if a in live:
                live.add(node)
                break
    pending: dict[Term, list[Term]] = {}
    for out, seed in zip(outputs, seeds, strict=True):
        if out in live:
            seed = as_term(seed)
            if seed.shape != out.shape:
                seed = broadcast_like(seed, out)
                if seed.shape != out.shape:
                    raise DifferentiationError(
                        f"a seed of shape {seed.shape} does not fit an output of shape {out.shape}"
                    )
            pending.setdefault(out, []).append(seed)
    result: dict[Term, Term] = {}
    for node in reversed(order):
        parts = pending.pop(node, None)
        if parts is None:
            continue
        g = parts[0] if len(parts) == 1 else add(*parts)
        if node in target_set:
            result[node] = g
        args = node.args
        if not args or not any(a in live for a in args):
            continue
        rule = node.op.grad
        if rule is None:
            raise DifferentiationError(
                f"op {node.op.name!r} has no gradient rule; give it one with the grad= entry of its Op"
            )
        contributions = rule(node, g)
        for a, c in zip(args, contributions, strict=True):
            if c is None or a not in live:
                continue
            pending.setdefault(a, []).append(sum_to(c, a))
    return result


@overload
def grad(f: Term, wrt: Term | str) -> Term: ...
@overload
def grad(f: Term, wrt: list | tuple) -> list[Term]: ...
@overload
def grad(f: Term, wrt: None = None) -> dict[Term, Term]: ...


def grad(f: Term, wrt: Any = None) -> Any:
    """The gradient of the scalar term ``f`` as terms: ``df/dw`` for each variable in ``wrt``.

    ``wrt`` is one symbol (or name), giving one term; a list of them, giving a list; or None,
    giving a dict over all free symbols of ``f``. Each derivative has the shape of its variable.

    >>> from exprgraph import symbols, sin
    >>> x, y = symbols("x y")
    >>> print(grad(x * sin(y), y))
    x*cos(y)
    >>> sorted(str(v) for v in grad(x * y + x).values())
    ['1.0 + y', 'x']
    """
    if f.__class__ is not Term:
        f = as_term(f)
    if f.shape != ():
        raise DifferentiationError(
            f"grad needs a scalar f, but f has shape {f.shape}: take sum(f), or use vjp/jacobian"
        )
    targets, kind = resolve_wrt([f], wrt)
    adjoints = backprop([f], [_ONE], targets)
    found = [adjoints.get(t) for t in targets]
    values = [zeros_like(t) if v is None else v for v, t in zip(found, targets, strict=True)]
    if kind == "one":
        return values[0]
    if kind == "list":
        return values
    return dict(zip(targets, values, strict=True))
