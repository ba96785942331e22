"""Gradient kernels: reverse mode on each right-hand side, then scatter converted to gather.

For a statement ``T[l] = sum_r rhs`` and each input ``X`` to differentiate, the right-hand side is
differentiated by the core's reverse mode (:func:`exprgraph.diff.backprop`, so every op uses its
own gradient rule from the op table), seeded with the upstream read ``dT[l]`` and with each read
``X[g]`` as a target. Each distinct read contributes ``dX[g] += adjoint`` (reads at equal indices
are one term, their contributions summed; ``A*A`` gives ``dB*A + dB*A``); the rules multiply the
upstream first and then the factors from the root down, so ``D = (A*B)*C`` gives
``dA = dD*C*B``. Then:

- each read's index equations are solved (:mod:`.solve`): the written indices become plain loop
  variables, the forward variables are substituted, and guards keep the forward iteration's
  ranges and in-range reads;
- every gradient is zeroed before any contribution is added; contributions with the same loops
  and guards are summed in one statement.

The result is a :class:`~exprgraph.tensor.ir.Kernel` (parameters: the inputs still used, in
``ins`` order, then ``d<out>`` per output, then ``d<x>`` per ``grad_to``) that C generation,
:func:`build` and :func:`reference` handle like any other.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from ..core import Term, const
from ..core.op import get_op
from ..diff import backprop
from ..errors import DifferentiationError, KernelError
from .affine import index_var
from .index_arith import arith_for
from .ir import Guard, Kernel, Loop, Statement, Tensor, format_kernel, merge_guards, statement_guards
from .names import check_name, fresh_name
from .solve import Gather, Read, guard_gather, solve_gather
from .terms import accesses, index_of, map_accesses, read, tensor_name

__all__ = ["grad_kernel", "grad_name", "statement_adjoints", "MAX_GRADIENT_NODES"]

#: largest total size (distinct nodes) of the gradient right-hand sides
MAX_GRADIENT_NODES = 2_000_000

_ADD, _SUB, _NEG = get_op("add"), get_op("sub"), get_op("neg")


def grad_name(name: str) -> str:
    """The gradient tensor of ``name``: ``d<name>``."""
    return "d" + name


def statement_adjoints(st: Statement, seed: Term, names: set[str], text: str = "") -> list[tuple[Term, Term]]:
    """``(read, adjoint)`` for each distinct read of a tensor in ``names``, left to right.

    The adjoint is ``d(seed * rhs)/d(read)`` by reverse mode over the op table's gradient rules;
    reads the right-hand side does not depend on (``B // 2``) are left out.
    """
    targets = [a for a in accesses(st.rhs) if tensor_name(a) in names]
    if not targets:
        return []
    try:
        adjoints = backprop([st.rhs], [seed], targets)
    except DifferentiationError as exc:
        raise KernelError(f"cannot differentiate this statement: {exc}", text, st.pos) from None
    return [(a, adjoints[a]) for a in targets if a in adjoints]


# -- the gradient kernel -----------------------------------------------------------------------------


def _canon(t: Term, subst: Mapping[Term, Term], ranges: Mapping[Term, tuple[int, int]]) -> Term:
    """The kernel's term of ``t``'s value with ``subst`` on the loop box (dims drops what is constant there)."""
    box = arith_for(ranges)
    return box.term(box.value(t, subst), tuple(ranges))


def _rewrite(term: Term, subst: Mapping[Term, Term], ranges: Mapping[Term, tuple[int, int]]) -> Term:
    """``term`` with the indices of every read rewritten in the gradient's loop variables."""

    def at(acc: Term) -> Term:
        return read(acc.args[0], [_canon(t, subst, ranges) for t in index_of(acc)])

    return map_accesses(term, at)


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
        if st.name in seen:
            raise KernelError(f"gradients need each output written once; {st.name} is written twice", text, st.pos)
        seen.add(st.name)
        for acc, p in st.reads():
            if tensor_name(acc) in written:
                raise KernelError(
                    f"gradients need statements that read inputs only; this one reads {tensor_name(acc)}", text, p
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
    gtensors = {grad_name(n): _gradient_tensor(kernel.tensors[n]) for n in (*kernel.outs, *grad_to)}
    all_tensors = {**tensors, **gtensors}
    targets = set(grad_to)
    contributions: list[Statement] = []
    budget = MAX_GRADIENT_NODES
    for st in kernel.statements:
        seed = read(gtensors[grad_name(st.name)].symbol, st.out_vars)
        adjoints = statement_adjoints(st, seed, targets, kernel.text)
        if not adjoints:
            continue
        fwd_ranges = st.ranges
        fwd_order = [lp.var for lp in st.loops]
        fwd_guards = statement_guards(st, kernel.tensors)
        for acc, adjoint in adjoints:
            x = kernel.tensors[tensor_name(acc)]
            index = index_of(acc)
            extents = x.shape if index else ()
            taken = set(all_tensors) | {kernel.name}
            solver = solve_gather if strategy == "solve" else guard_gather
            g = solver(Read(index, extents, fwd_ranges, fwd_order), taken)
            if not g.feasible:
                continue
            ranges = {lp.var: (lp.lo, lp.hi) for lp in g.loops}
            rhs = _rewrite(adjoint, g.subst, ranges)
            budget -= rhs.size
            if budget < 0:
                raise KernelError(f"the gradient is too large (more than {MAX_GRADIENT_NODES} nodes)")
            merged = _gradient_guards(g, (*st.guards, *fwd_guards), ranges)
            if any(gd.never_holds_for(ranges) for gd in merged):
                continue
            target = read(gtensors[grad_name(x.name)].symbol, g.lhs)
            contributions.append(Statement(target, rhs, True, g.loops, merged, st.pos))
    statements = _merge(contributions)
    zeroes = [_zero_statement(kernel.tensors[name], gtensors, statements, all_tensors) for name in grad_to]
    used = {tensor_name(a) for s in statements for a, _ in s.reads()}
    ins = tuple(n for n in kernel.ins if n in used) + tuple(grad_name(o) for o in kernel.outs)
    outs = tuple(grad_name(x) for x in grad_to)
    keep = {**{n: tensors[n] for n in kernel.ins if n in used}, **gtensors}
    out = Kernel(kernel.name, kernel.data_type, keep, (*zeroes, *statements), ins, outs, (), "", kernel)
    return replace(out, text=format_kernel(out))


def _gradient_tensor(t: Tensor) -> Tensor:
    """The tensor holding the gradient with respect to ``t``: its shape, named ``d`` + its name."""
    return Tensor(grad_name(t.name), t.shape, t.scalar, t.dtype)


def _gradient_guards(g: Gather, forward: Sequence[Guard], ranges: Mapping[Term, tuple[int, int]]) -> tuple[Guard, ...]:
    """The guards of a contribution: the solver's, then the forward statement's in the solved variables, merged."""
    guards = [Guard(_canon(gd.expr, {}, ranges), gd.lo, gd.hi, gd.modulus) for gd in g.guards]
    for fg in forward:
        guards.append(Guard(_canon(fg.expr, g.subst, ranges), fg.lo, fg.hi, fg.modulus))
    return merge_guards(guards, ranges)


def _zero_statement(
    x: Tensor, gtensors: Mapping[str, Tensor], statements: Sequence[Statement], taken: Iterable[str]
) -> Statement:
    """``dX = 0`` over the whole of ``dX``, with the index names of its first contribution when there is one."""
    first = next((s for s in statements if s.name == grad_name(x.name)), None)
    shape = x.shape
    if first is not None:
        index = first.out_vars
    else:
        names = set(taken)
        index = tuple(index_var(fresh_name(names, ("i", "j", "k", "l", "m", "n"))) for _ in shape)
    if x.scalar:
        index = ()
    loops = tuple(Loop(v, 0, e) for v, e in zip(index, shape, strict=False))
    return Statement(read(gtensors[grad_name(x.name)].symbol, index), const(0.0), False, loops)


def _merge(statements: list[Statement]) -> list[Statement]:
    """Sum contributions that share target, loops and guards (reads at other indices of one tensor)."""
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
            rhs = Term(_SUB, (prev.rhs, st.rhs.args[0])) if st.rhs.op is _NEG else Term(_ADD, (prev.rhs, st.rhs))
            out[k] = Statement(prev.target, rhs, True, prev.loops, prev.guards, prev.pos)
    return out
