"""Reverse-mode differentiation over the DAG: one backward sweep, gradients as terms.

The nodes of ``f`` are visited once, in reverse dependency order. Each node adds up the
contributions its users sent it (its adjoint ``df/dnode``, one variadic add for fan-in) and hands
its operands their contributions through the gradient rule of its op (``op.grad`` in the op
table). Every rule builds a constant number of new nodes per operand, and adjoints are shared
by all their users, so the gradient of ``f`` has a size linear in the size of ``f`` (never the
blow-up of the expanded tree). Only nodes on a path to a requested variable are visited.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar, overload

import numpy as np

from ..core import Symbol, Term, as_term, const, postorder
from ..core.op import get_op
from ..core.stdops import broadcast_like, sum_to
from ..errors import DifferentiationError
from .constants import constant_targets, restore_terms, standing_in
from .sweep import SWEEP

__all__ = [
    "grad",
    "GradientMap",
    "backprop",
    "backprop_groups",
    "live_order",
    "zeros_like",
    "one_like",
    "resolve_wrt",
    "collector_paused",
]

F = TypeVar("F", bound=Callable[..., Any])
_V = TypeVar("_V")

#: the C sweep (diff/_csweep_reverse.c, _csweep_groups.c: the same loop, rules replayed from templates), or None
_native = SWEEP

_ONE = const(1.0)
_ONE32 = const(1.0, "float32")
_ADD = get_op("add")
_CONST = get_op("const")


def collector_paused(fn: F) -> F:
    """Run ``fn`` with Python's cyclic garbage collector paused, restoring it after (errors too).

    A sweep builds terms, tuples, lists and dicts that never form reference cycles, so the
    collector has nothing to find in them; but with 10^5-10^6 new objects its repeated passes over
    every live object would about double the time (measured: a sparse Hessian at n = 10^5 took
    46 s with it, 21 s without). Nested calls leave the pause to the outermost one.
    """

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        if not gc.isenabled():
            return fn(*args, **kwargs)
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            gc.enable()

    return run  # type: ignore[return-value]


def one_like(t: Term) -> Term:
    """The scalar seed 1.0 for an output ``t``: float32 for a float32 ``t`` (its gradient stays float32)."""
    return _ONE32 if t.dtype == "float32" else _ONE


def zeros_like(t: Term) -> Term:
    """A float zero of ``t``'s shape (the gradient of something that does not depend on ``t``; float32 for float32)."""
    dtype = "float32" if t.dtype == "float32" else "float64"
    if not t.shape:
        return const(0.0, dtype)
    if all(d.__class__ is int for d in t.shape):
        return const(np.zeros(t.shape, dtype=dtype))
    return broadcast_like(const(0.0, dtype), t)


class GradientMap(dict[Term, _V]):
    """Partial derivatives of ``f`` by term: indexing by a term ``f`` does not depend on gives zero.

    A dict (iteration, ``in`` and ``get`` see the computed partials only); ``d[w]`` for a symbol or
    node that ``f`` does not contain answers ``zero(w)``, as CGraph's ``defaultdict`` answers 0 for
    ``ddy[y]``; a name (``d["y"]``) stands for the symbol so named. A node of ``f`` whose partial was
    not computed (not in ``wrt``) raises KeyError, since its partial is not zero.
    """

    __slots__ = ("f", "zero", "_nodes")

    def __init__(self, partials: Iterable[tuple[Term, _V]], f: Term, zero: Callable[[Term], _V]) -> None:
        super().__init__(partials)
        #: the differentiated term
        self.f = f
        #: the partial with respect to a term ``f`` does not contain
        self.zero = zero
        self._nodes: frozenset[Term] | None = None

    def __missing__(self, key: Term | str) -> _V:
        if isinstance(key, str):
            for t in self:
                if t.op.name == "symbol" and t.attr[0] == key:
                    return self[t]
            named = [s for s in self.f.free_symbols if s.attr[0] == key]
            if not named:
                return self.zero(Symbol(key))  # a name f does not use: a float64 scalar, partial zero
            key = named[0]
        elif key.__class__ is not Term:
            raise KeyError(key)
        if key.op.name == "symbol":
            contained = key in self.f.free_symbols
        else:
            if self._nodes is None:
                self._nodes = frozenset(postorder(self.f))
            contained = key in self._nodes
        if contained:
            raise KeyError(f"the partial by {key} was not computed: name it in wrt (or pass nodes=True)")
        return self.zero(key)


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


def live_order(outputs: Iterable[Term], targets: set[Term] | frozenset[Term]) -> tuple[list[Term], set[Term]]:
    """The nodes under ``outputs`` with a target at or below them, children first, and that set.

    One iterative depth-first walk: a node is live when it is a target or one of its operands is.
    Leaves are looked at once and never stacked.
    """
    if _native is not None and isinstance(targets, (set, frozenset)):
        found = _native.live_order(outputs, targets)
        if found is not NotImplemented:  # (a C traversal is running: the Python walk below)
            order_live: tuple[list[Term], set[Term]] = found
            return order_live
    order: list[Term] = []
    live: set[Term] = set()
    seen: set[Term] = set()
    see, keep, mark = seen.add, order.append, live.add
    dead = live.isdisjoint
    stack: list[tuple[Any, Any]] = [(None, iter(outputs))]
    push, pop = stack.append, stack.pop
    while stack:
        node, rest = stack[-1]
        for a in rest:
            if a in seen:
                continue
            see(a)
            if a.args:
                push((a, iter(a.args)))
                break
            if a in targets:
                mark(a)
                keep(a)
        else:
            pop()
            if node is not None and (node in targets or not dead(node.args)):
                mark(node)
                keep(node)
    return order, live


def _seed_for(out: Term, seed: Any) -> Term:
    """``seed`` as a term of ``out``'s shape (a scalar seed is broadcast)."""
    seed = as_term(seed)
    if seed.shape != out.shape:
        seed = broadcast_like(seed, out)
        if seed.shape != out.shape:
            raise DifferentiationError(f"a seed of shape {seed.shape} does not fit an output of shape {out.shape}")
    return seed


def _seeded(outputs: Sequence[Term], seeds: Sequence[Any], live: set[Term]) -> dict[Term, Any]:
    pending: dict[Term, Any] = {}
    for out, seed in zip(outputs, seeds, strict=True):
        if out not in live:
            continue
        seed = _seed_for(out, seed)
        prev = pending.get(out)
        pending[out] = seed if prev is None else [*(prev if prev.__class__ is list else [prev]), seed]
    return pending


def _fan_in(parts: list[Term]) -> Term:
    """The sum of a node's adjoint parts: one variadic add, or one constant when all are float numbers."""
    for p in parts:
        if p.op is not _CONST or p.attr.__class__ is not float:
            return Term(_ADD, tuple(parts))
    total = parts[0].attr
    for p in parts[1:]:
        total += p.attr  # c1 + c2 + ... -> c, added in the order evaluation would add them
    return const(total)


@collector_paused
def backprop(outputs: Sequence[Term], seeds: Sequence[Any], targets: Iterable[Term]) -> dict[Term, Term]:
    """Adjoints ``sum_k <seed_k, d outputs_k / d target>`` for each target that the outputs depend on.

    ``seeds[k]`` has the shape of ``outputs[k]`` (a scalar seed is broadcast). Targets the outputs
    do not depend on are missing from the result. Raises :class:`DifferentiationError` when a
    node on a path to a target has an op without a gradient rule.
    """
    outputs = outputs if isinstance(outputs, (list, tuple)) else list(outputs)
    seeds = seeds if isinstance(seeds, (list, tuple)) else list(seeds)
    target_set = targets if isinstance(targets, (set, frozenset)) else set(targets)
    if constant_targets(target_set):  # the rules send constants nothing: sweep over symbols standing in for them
        return _by_stand_ins(outputs, seeds, target_set)
    if _native is not None:
        if len(seeds) != len(outputs):
            raise ValueError(f"backprop got {len(seeds)} seeds for {len(outputs)} outputs")
        found = _native.backprop(outputs, seeds, target_set, _seed_for)
        if found is not NotImplemented:  # (another C sweep is running: the set-based one below)
            swept: dict[Term, Term] = found
            return swept
    order, live = live_order(outputs, target_set)
    # adjoint parts per node: one term, or a list of them once a second user has sent one
    pending = _seeded(outputs, seeds, live)
    result: dict[Term, Term] = {}
    take, peek = pending.pop, pending.get
    for node in reversed(order):
        g = take(node, None)
        if g is None:
            continue
        if g.__class__ is list:
            g = _fan_in(g)
        args = node.args
        if node in target_set:
            result[node] = g
            if not any(a in live for a in args):
                continue  # a target with nothing to differentiate below it (a leaf, a tensor read)
        if not args:
            continue
        rule = node.op.grad
        if rule is None:
            raise DifferentiationError(
                f"op {node.op.name!r} has no gradient rule; give it one with the grad= entry of its Op"
            )
        for a, c in zip(args, rule(node, g), strict=True):
            if c is None or a not in live:
                continue
            if c.shape is not a.shape and c.shape != a.shape:
                c = sum_to(c, a)  # undo the broadcast of a in node
            prev = peek(a)
            if prev is None:
                pending[a] = c
            elif prev.__class__ is list:
                prev.append(c)
            else:
                pending[a] = [prev, c]
    return result


def _by_stand_ins(
    outputs: Sequence[Term], seeds: Sequence[Any], targets: set[Term] | frozenset[Term]
) -> dict[Term, Term]:
    """:func:`backprop` by targets among which are constants: over stand-in symbols, put back in the adjoints."""
    taken = [s.attr[0] for seed in seeds if seed.__class__ is Term for s in seed.free_symbols]
    keys = list(targets)
    standing = standing_in(outputs, keys, taken)
    assert standing is not None  # (called for targets with a constant among them)
    outs, stand, back = standing
    found = backprop(outs, seeds, set(stand))
    known = [(t, s) for t, s in zip(keys, stand, strict=True) if s in found]
    values = restore_terms([found[s] for _, s in known], back)
    return {t: v for (t, _), v in zip(known, values, strict=True)}


@collector_paused
def backprop_groups(
    outputs: Sequence[Sequence[Term]], seeds: Sequence[Sequence[Any]], targets: Sequence[set[Term] | frozenset[Term]]
) -> list[dict[Term, Term]]:
    """``[backprop(outputs[k], seeds[k], targets[k]) for each group k]``: the same dicts, the same terms.

    The C sweep walks the graph once for all groups (a sparse Hessian sweeps once per colour group
    over much the same nodes) and then finds each group's nodes in the order its own walk would.
    """
    if len(seeds) != len(outputs) or len(targets) != len(outputs):
        raise ValueError(
            f"backprop_groups got {len(outputs)} output lists, {len(seeds)} seed lists, {len(targets)} target sets"
        )
    union: set[Term] = set().union(*targets)
    if _native is not None and not constant_targets(union):  # (the C sweep checks each group's seeds)
        found = _native.backprop_groups(outputs, seeds, targets, union, _seed_for)
        if found is not NotImplemented:  # (another C sweep is running: one backprop per group below)
            swept: list[dict[Term, Term]] = found
            return swept
    return [
        backprop(outs, group_seeds, group_targets)
        for outs, group_seeds, group_targets in zip(outputs, seeds, targets, strict=True)
    ]


@overload
def grad(f: Term, wrt: Term | str) -> Term: ...
@overload
def grad(f: Term, wrt: list | tuple) -> list[Term]: ...
@overload
def grad(f: Term, wrt: None = None) -> GradientMap[Term]: ...


@collector_paused
def grad(f: Term, wrt: Any = None) -> Any:
    """The gradient of the scalar term ``f`` as terms: ``df/dw`` for each variable in ``wrt``.

    ``wrt`` is one symbol (or name), giving one term; a list of them, giving a list; or None,
    giving a dict over all free symbols of ``f``. Each derivative has the shape of its variable.
    A variable may also be a node of ``f``: an intermediate, or a constant (the partial by all its
    uses, as if it were a symbol: :mod:`.constants`).

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
    adjoints = backprop([f], [one_like(f)], targets)
    values = [adjoints[t] if t in adjoints else zeros_like(t) for t in targets]
    if kind == "one":
        return values[0]
    if kind == "list":
        return values
    # a variable f does not use answers the zero term (CGraph's ddy[y])
    return GradientMap(zip(targets, values, strict=True), f, zeros_like)
