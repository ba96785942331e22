"""Gradient kernels: reverse mode on each right-hand side, then scatter converted to gather.

For a statement ``T[l] = sum_r rhs`` and each input ``X`` to differentiate, every occurrence of
``X[g]`` in ``rhs`` contributes ``dX[g] += dT[l] * d(rhs)/d(occurrence)``:

- the local derivative is built by *backfilling* (the seed's order): walking from the root to the
  occurrence, each node wraps a hole in its rule (``a*b``: ``b * _`` for ``a``; ``a/b``: ``_ / b``;
  ``-a``: ``-_``...) and the hole is finally filled with 1, so ``D = (A*B)*C`` gives
  ``dA = dD * (C * B)`` and products multiply in tree order;
- each occurrence is its own contribution (``A*A`` gives two), with its own index solution
  (:mod:`.solve`): the written indices become plain loop variables, the forward variables are
  substituted, and guards keep the forward iteration's ranges and in-range reads;
- every gradient is zeroed before any contribution is added; contributions with the same loops
  and guards are summed in one statement.

The result is a :class:`~exprgraph.tensor.ir.Kernel` (parameters: the inputs still used, in
``ins`` order, then ``d<out>`` per output, then ``d<x>`` per ``grad_to``) that C generation,
:func:`build` and :func:`reference` handle like any other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from ..core import Term, substitute
from ..errors import KernelError
from .affine import index_var, reduce_atoms
from .expr import Access, Expr, binary, map_expr, neg, num, postorder
from .ir import Guard, Kernel, Loop, Statement, Tensor, format_kernel, merge_guards, statement_guards
from .names import check_name, fresh_name
from .solve import guard_gather, solve_gather

__all__ = ["grad_kernel", "grad_name", "occurrences", "local_derivative", "MAX_GRADIENT_NODES"]

#: largest total size (nodes) of the gradient right-hand sides
MAX_GRADIENT_NODES = 2_000_000

_ONE = num(1.0)


def grad_name(name: str) -> str:
    """The gradient tensor of ``name``: ``d<name>``."""
    return "d" + name


# -- local derivatives by backfilling ----------------------------------------------------------------


def _is_one(e: Expr) -> bool:
    return e.op == "num" and e.attr == 1


def _smul(a: Expr, b: Expr) -> Expr:
    """``a * b`` with ``x*1 -> x``, ``1*x -> x``, ``a*(-x) -> -(a*x)``, ``a*(1/d) -> a/d``."""
    negative = False
    while b.op == "neg":  # a*(-x) = -(a*x), without recursion on long chains of minus signs
        b, negative = b.args[0], not negative
    while a.op == "neg":
        a, negative = a.args[0], not negative
    if _is_one(b):
        out = a
    elif _is_one(a):
        out = b
    elif b.op == "div" and _is_one(b.args[0]):
        out = binary("div", a, b.args[1])
    else:
        out = binary("mul", a, b)
    return neg(out) if negative else out


def _sneg(a: Expr) -> Expr:
    """``-a`` with ``-(-x) -> x``."""
    return a.args[0] if a.op == "neg" else neg(a)


def _frames(parent: Expr, k: int) -> list[tuple] | None:
    """How ``parent`` wraps the hole for its operand ``k``; None when the derivative is zero."""
    op = parent.op
    args = parent.args
    if op == "add":
        return []
    if op == "sub":
        return [] if k == 0 else [("neg",)]
    if op == "neg":
        return [("neg",)]
    if op == "mul":
        return [("mul", args[1 - k])]
    if op == "div":
        a, b = args
        if k == 0:
            return [("div", b)]
        # d(a/b)/db = -a/(b*b)
        return [("neg",), ("mul", binary("div", a, binary("mul", b, b)))]
    if op == "mod":
        a, b = args
        if k == 0:
            return []
        # fmod(a, b) = a - trunc(a/b)*b, so d/db = -trunc(a/b) = -(a - fmod(a, b))/b
        return [("neg",), ("mul", binary("div", binary("sub", a, parent), b))]
    if op in ("floordiv", "ge", "gt"):
        return None
    if op == "call":
        fn = parent.attr
        u = args[0]
        if fn == "exp":
            return [("mul", parent)]
        if fn == "log":
            return [("div", u)]
        if fn == "sqrt":
            return [("div", binary("mul", num(2.0), parent))]
        if fn == "tanh":
            return [("mul", binary("sub", num(1.0), binary("mul", parent, parent)))]
        a, b = args
        if fn == "max":  # ties go to the first operand
            return [("mul", binary("ge", a, b) if k == 0 else binary("gt", b, a))]
        if fn == "min":
            return [("mul", binary("ge", b, a) if k == 0 else binary("gt", a, b))]
    raise KernelError(f"cannot differentiate {op!r}")  # pragma: no cover - the parser builds no other op


def local_derivative(frames: Sequence[tuple]) -> Expr:
    """Fill the holes: ``f1(f2(...fk(1)))`` for frames listed root first."""
    h = _ONE
    for frame in reversed(frames):
        kind = frame[0]
        if kind == "neg":
            h = _sneg(h)
        elif kind == "mul":
            h = _smul(frame[1], h)
        else:  # div
            h = binary("div", h, frame[1])
    return h


def occurrences(rhs: Expr, names: set[str]) -> list[tuple[Expr, Expr]]:
    """``(read node, local derivative)`` for each read of a tensor in ``names``, left to right."""
    out: list[tuple[Expr, Expr]] = []
    # stack entries: (node, frames of the path as a linked list (frame, parent link) or None, dead)
    stack: list[tuple[Expr, tuple | None]] = [(rhs, None)]
    while stack:
        node, link = stack.pop()
        if node.op == "ref":
            if node.attr.name in names:
                frames: list[tuple] = []
                while link is not None:
                    frames.extend(reversed(link[0]))
                    link = link[1]
                frames.reverse()
                out.append((node, local_derivative(frames)))
            continue
        for k in range(len(node.args) - 1, -1, -1):
            fr = _frames(node, k)
            if fr is None:
                continue  # zero derivative through this operand
            stack.append((node.args[k], (tuple(fr), link) if fr else link))
    return out


# -- the gradient kernel -----------------------------------------------------------------------------


def _canon(t: Term, subst: Mapping[Term, Term], ranges: Mapping[Term, tuple[int, int]]) -> Term:
    """``t`` after substitution, canonical, with divisions that are constant on the loop box folded."""
    return reduce_atoms(substitute(t, subst) if subst else t, ranges)


def _rewrite(
    expr: Expr, subst: Mapping[Term, Term], ranges: Mapping[Term, tuple[int, int]], rename: Mapping[str, str]
) -> Expr:
    def leaf(node: Expr) -> Expr:
        if node.op != "ref":
            return node
        acc = node.attr
        index = tuple(_canon(t, subst, ranges) for t in acc.index)
        return Expr("ref", (), Access(rename.get(acc.name, acc.name), index), node.pos)

    return map_expr(expr, leaf)


def _check(kernel: Kernel, grad_to: Sequence[str]) -> None:
    text = kernel.text
    if kernel.data_type != "float":
        raise KernelError("gradients need a float kernel (data_type 'float')")
    if not grad_to:
        raise KernelError("nothing to differentiate: give grad_to (the inputs to differentiate)")
    written = kernel.written
    for x in grad_to:
        if x not in kernel.ins:
            raise KernelError(f"grad_to names {x}, which is not an input")
        if x in written:
            raise KernelError(f"cannot differentiate {x}: the kernel also writes it")
    seen: set[str] = set()
    for st in kernel.statements:
        if st.accumulate:
            raise KernelError(
                "gradients need assigning statements (T[..] = expr, a sum over the other indices); "
                "this one accumulates",
                text,
                st.pos,
            )
        if st.target.name in seen:
            raise KernelError(
                f"gradients need each output written once; {st.target.name} is written twice", text, st.pos
            )
        seen.add(st.target.name)
        for acc, p in st.reads():
            if acc.name in written:
                raise KernelError(
                    f"gradients need statements that read inputs only; this one reads {acc.name}", text, p
                )
    for n in (*kernel.outs, *grad_to):
        d = grad_name(n)
        if d in kernel.tensors:
            raise KernelError(f"the gradient {d} of {n} would clash with the tensor {d}")
        check_name(d, "gradient name")


def grad_kernel(kernel: Kernel, grad_to: Sequence[str] | None = None, *, strategy: str = "solve") -> Kernel:
    """The gradient kernel of ``kernel`` with respect to ``grad_to`` (default: the case's ``grad_to``).

    ``strategy="solve"`` solves index equations (gather form, fewest iterations);
    ``strategy="guard"`` keeps the forward loops and guards equality instead (the fallback).

    >>> from exprgraph.tensor import parse_kernel, format_kernel
    >>> k = parse_kernel("C<4, 16>[i, j] = A<4, 16>[i, k] * B<16, 16>[k, j];", grad_to=["A"])
    >>> print(format_kernel(grad_kernel(k)))
    dA<4, 16>[i, k] = 0.0 for i in [0, 4), k in [0, 16);
    dA<4, 16>[i, k] = dA<4, 16>[i, k] + dC<4, 16>[i, j] * B<16, 16>[k, j] for i in [0, 4), k in [0, 16), j in [0, 16);
    """
    grad_to = tuple(kernel.grad_to if grad_to is None else grad_to)
    if strategy not in ("solve", "guard"):
        raise KernelError(f"strategy must be 'solve' or 'guard', not {strategy!r}")
    _check(kernel, grad_to)
    tensors = dict(kernel.tensors)
    gtensors: dict[str, Tensor] = {}
    for n in (*kernel.outs, *grad_to):
        t = kernel.tensors[n]
        gtensors[grad_name(n)] = Tensor(grad_name(n), t.shape, t.scalar)
    all_tensors = {**tensors, **gtensors}
    rename = {o: grad_name(o) for o in kernel.outs}
    targets = set(grad_to)
    contributions: list[Statement] = []
    budget = MAX_GRADIENT_NODES
    for st in kernel.statements:
        occ = occurrences(st.rhs, targets)
        if not occ:
            continue
        fwd_ranges = st.ranges
        fwd_order = [lp.var for lp in st.loops]
        fwd_guards = statement_guards(st, kernel.tensors)
        upstream = Expr("ref", (), st.target, st.pos)
        solved: dict[tuple, object] = {}  # occurrences with equal indices share one solution
        for node, local in occ:
            acc: Access = node.attr
            x = kernel.tensors[acc.name]
            extents = x.shape if acc.index else ()
            g = solved.get((acc.index, extents))
            if g is None:
                taken = set(all_tensors) | {kernel.name}
                solver = solve_gather if strategy == "solve" else guard_gather
                g = solver(acc.index, extents, fwd_ranges, taken, fwd_order)
                solved[(acc.index, extents)] = g
            if not g.feasible:
                continue
            ranges = {lp.var: (lp.lo, lp.hi) for lp in g.loops}
            contrib = _smul(upstream, local)
            rhs = _rewrite(contrib, g.subst, ranges, rename)
            budget -= len(postorder(rhs))
            if budget < 0:
                raise KernelError(f"the gradient is too large (more than {MAX_GRADIENT_NODES} nodes)")
            guards = [Guard(_canon(gd.expr, {}, ranges), gd.lo, gd.hi, gd.modulus) for gd in g.guards]
            for fg in (*st.guards, *fwd_guards):
                guards.append(Guard(_canon(fg.expr, g.subst, ranges), fg.lo, fg.hi, fg.modulus))
            merged = merge_guards(guards, ranges)
            if any(gd.never_holds_for(ranges) for gd in merged):
                continue
            target = Access(grad_name(acc.name), g.lhs)
            contributions.append(Statement(target, rhs, True, g.loops, merged, st.pos))
    statements = _merge(contributions)
    zeroes: list[Statement] = []
    for x in grad_to:
        first = next((s for s in statements if s.target.name == grad_name(x)), None)
        shape = kernel.tensors[x].shape
        if first is not None:
            index = first.target.index
        else:
            taken = set(all_tensors)
            index = tuple(index_var(fresh_name(taken, ("i", "j", "k", "l", "m", "n"))) for _ in shape)
        if kernel.tensors[x].scalar:
            index = ()
        loops = tuple(Loop(v, 0, e) for v, e in zip(index, shape, strict=False))
        zeroes.append(Statement(Access(grad_name(x), index), num(0.0), False, loops))
    used = {a.name for s in statements for a, _ in s.reads()}
    ins = tuple(n for n in kernel.ins if n in used) + tuple(grad_name(o) for o in kernel.outs)
    outs = tuple(grad_name(x) for x in grad_to)
    keep = {**{n: tensors[n] for n in kernel.ins if n in used}, **gtensors}
    out = Kernel(kernel.name, kernel.data_type, keep, (*zeroes, *statements), ins, outs, (), "", kernel)
    return replace(out, text=format_kernel(out))


def _merge(statements: list[Statement]) -> list[Statement]:
    """Sum contributions that share target, loops and guards (``A*A`` gives one statement)."""
    out: list[Statement] = []
    index: dict[tuple, int] = {}
    for st in statements:
        key = (st.target, st.loops, st.guards)
        k = index.get(key)
        if k is None:
            index[key] = len(out)
            out.append(st)
        else:
            prev = out[k]
            rhs = binary("sub", prev.rhs, st.rhs.args[0]) if st.rhs.op == "neg" else binary("add", prev.rhs, st.rhs)
            out[k] = Statement(prev.target, rhs, True, prev.loops, prev.guards, prev.pos)
    return out
