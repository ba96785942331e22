"""Vector programs lowered to loops: one loop nest per vector node, no scalarising.

A program whose terms have constant shapes is read node by node, in its schedule order:

- moving ops that only re-index (``slice_axis``, ``transpose``, ``broadcast_to``, a contiguous
  ``reshape``, ``take`` at an evenly spaced constant index) become *views* (a base array, an offset
  and a stride per axis): nothing is computed or copied;
- elementwise ops (those with a scalar rendering) become one loop over the node's shape; an
  elementwise node read once, at the same positions, by an elementwise node of its shape (or by a
  reduction or a ``scatter_add``) is computed inside its reader's loop (a fused chain of at most
  :data:`FUSE_LIMIT` nodes), so a chain makes one pass over memory;
- reductions (``sum``, ``mean``, ``prod``, ``amax``, ``amin``, over any axes), contractions of at
  most two operands (``dot``, ``matmul``, ``einsum``, float dtypes), ``take`` and ``scatter_add`` at
  constant index arrays, ``concat`` and non-contiguous ``reshape`` are loop nests of their own.

The loops are data (:class:`Nest` of :class:`Let`, :class:`Acc`, :class:`Fold`, :class:`Store`
statements over :class:`View` reads) that each backend renders with its one rendering of each op:
C (:mod:`.vloop_c`, through :mod:`.crender`) and LLVM IR (:mod:`.vloop_llvm`, through the op
table's LLVM templates). The build follows the number of vector nodes, not of entries.
:func:`plan_loops` returns None for a program it does not read (an op outside the list, a symbolic
length, an index computed at run time): the caller then scalarises it as before.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from ..core import Symbol, Term, const, get_op
from ..core.dtypes import BOOL, FLOAT32, FLOAT64, INT64, is_float
from ..core.scalarise import contraction_subscripts
from .lower import Program
from .vloop_ir import Acc, Fold, Index, Let, Lookup, LoopPlan, Nest, Operand, Read, Shift, Store, View, dense

__all__ = ["plan_loops", "FUSE_LIMIT"]

#: most nodes computed in one fused loop body
FUSE_LIMIT = 16
#: the dtypes the loops compute in
_DTYPES = (FLOAT64, FLOAT32, INT64, BOOL)
_VIEWS = frozenset({"slice_axis", "transpose", "broadcast_to", "reshape", "take"})
_FOLDS = {"sum": "add", "mean": "add", "prod": "mul", "amax": "maximum", "amin": "minimum"}
_CONTRACT = frozenset({"dot", "matmul", "einsum"})


def plan_loops(program: Program) -> LoopPlan | None:
    """The loops of a vector ``program`` of constant shapes, or None when some node is not read here."""
    if not all(_supported(node, program) for node in program.steps):
        return None
    if not all(_int_shape(t) and t.dtype in _DTYPES for t in (*program.inputs, *program.outputs, *program.values)):
        return None
    plan = LoopPlan(program)
    for k, s in enumerate(program.inputs):
        plan.arrays[f"in{k}"] = ("in", s.dtype, k)
        plan.views[s] = dense(f"in{k}", s.dtype, tuple(s.shape))
    reader = _single_readers(program)
    for node in program.steps:
        _plan_node(plan, node, reader)
    for j, t in enumerate(program.outputs):
        # output j's entries, row-major, in its own array
        plan.arrays[f"out{j}"] = ("out", t.dtype, j)
        dest = dense(f"out{j}", t.dtype, tuple(t.shape))
        index = _vars(t.ndim)
        plan.emit(
            Nest(tuple(t.shape), "i", (Store(dest, index, Read(_view(plan, t), index), t.dtype),), "map"),
            [dest, _view(plan, t)],
        )
    plan.place_buffers()
    return plan


def _int_shape(t: Term) -> bool:
    return all(d.__class__ is int for d in t.shape)


def _supported(node: Term, program: Program) -> bool:
    """Whether ``node`` is read by these loops (else the program is scalarised)."""
    if (
        not _int_shape(node)
        or node.dtype not in _DTYPES
        or any(not _int_shape(a) or a.dtype not in _DTYPES for a in node.args)
    ):
        return False
    name = node.op.name
    if node.op.c_render is not None or name in ("slice_axis", "transpose", "broadcast_to", "reshape", "concat"):
        return True
    if name in ("take", "scatter_add"):
        return node.args[1] in program.values
    if name in _FOLDS:
        # an extremum of no entries has no value (the scalarised path names the error)
        return not (name in ("amax", "amin") and 0 in node.args[0].shape)
    if name in _CONTRACT:
        # at most two operands (more: scalarised); dot and matmul of at most two axes each
        small = name == "einsum" or all(a.ndim <= 2 for a in node.args)
        return len(node.args) <= 2 and is_float(node.dtype) and small
    return False


def _single_readers(program: Program) -> dict[Term, Term]:
    """For each step read by exactly one operand slot (and no output), the step reading it."""
    out: dict[Term, Term] = {}
    for node in program.steps:
        for a in node.args:
            if program.reads.get(a) == 1:
                out[a] = node
    return out


def _view(plan: LoopPlan, t: Term) -> View:
    """The view of ``t``: computed already, or a known value's (made when first read)."""
    found = plan.views.get(t)
    if found is None:
        found = plan.views[t] = _constant(plan, t, np.asarray(plan.program.values[t]))
    return found


def _constant(plan: LoopPlan, t: Term, value: np.ndarray) -> View:
    """A known value's view: one value everywhere when all its entries are equal (bit for bit), else a table."""
    flat = np.ascontiguousarray(value).reshape(-1)
    bits = flat.view(f"u{flat.itemsize}") if flat.itemsize in (1, 2, 4, 8) else flat.view(np.uint8)
    if flat.size and bits.size == flat.size and (bits == bits[0]).all():
        return View("", t.dtype, tuple(t.shape), (0,) * t.ndim, 0, flat[0].item())
    return plan.table(value, t.dtype)


def _fusable(node: Term, reader: dict[Term, Term], size: int) -> bool:
    """Whether elementwise ``node`` is computed inside its only reader's loop (at the same positions)."""
    user = reader.get(node)
    if user is None or size >= FUSE_LIMIT:
        return False
    if user.op.c_render is not None:
        return user.shape == node.shape
    if user.op.name == "scatter_add":
        return user.args[0] is node
    return user.op.name in _FOLDS


def _plan_node(plan: LoopPlan, node: Term, reader: dict[Term, Term]) -> None:
    """The view of ``node``, with the loop that computes it when it is not a view of its operand."""
    name = node.op.name
    if node.op.c_render is not None:
        group = [m for a in dict.fromkeys(node.args) if a in plan.pending for m in plan.pending.pop(a)]
        group.append(node)
        if _fusable(node, reader, len(group)):
            plan.pending[node] = group
            return
        out = plan.buffer(node)
        index = _vars(node.ndim)
        lets, reads = _lets(plan, group, index)
        plan.emit(
            Nest(tuple(node.shape), "i", (*lets, Store(out, index, lets[-1].name, node.dtype)), "map"), [out, *reads]
        )
        plan.views[node] = out
    elif name in _VIEWS and (view := _view_of(plan, node)) is not None:
        plan.views[node] = view
    elif name in _FOLDS:
        _reduce(plan, node)
    elif name in _CONTRACT:
        _contract(plan, node)
    elif name == "scatter_add":
        _scatter(plan, node)
    else:  # concat, take at an irregular index, reshape of a strided view: gathered into a buffer
        _gather(plan, node)


def _vars(n: int, tag: str = "i") -> tuple[str, ...]:
    return tuple(f"{tag}{d}" for d in range(n))


def _lets(plan: LoopPlan, group: list[Term], index: tuple[Index, ...]) -> tuple[list[Let], list[View]]:
    """A fused group computed at ``index`` (operands first; the last is the group's root), and the views read."""
    local = {m: f"t{k}" for k, m in enumerate(group)}
    lets: list[Let] = []
    reads: list[View] = []
    for m in group:
        args: list[Operand] = []
        for a in m.args:
            if a in local:
                args.append(local[a])
                continue
            view = _view(plan, a).broadcast(tuple(m.shape))
            reads.append(view)
            args.append(Read(view, index[len(index) - m.ndim :]))
        lets.append(Let(local[m], m, tuple(args)))
    return lets, reads


def _operand(plan: LoopPlan, node: Term, index: tuple[Index, ...]) -> tuple[list[Let], Operand, list[View]]:
    """Statements and the operand of ``node`` at ``index`` (a pending fused group, or its view)."""
    group = plan.pending.pop(node, None)
    if group is None:
        view = _view(plan, node)
        return [], Read(view, index), [view]
    lets, reads = _lets(plan, group, index)
    return lets, lets[-1].name, reads


def _view_of(plan: LoopPlan, node: Term) -> View | None:
    """``node`` as a view of its operand's view, when it only re-indexes it (else None)."""
    src = _view(plan, node.args[0])
    name, attr = node.op.name, node.attr
    shape, strides = list(src.shape), list(src.strides)
    if name == "slice_axis":
        # x[start : start + count*step : step] along axis: offset and stride change
        axis, start, count, step = attr
        axis %= src.ndim
        offset = src.offset + start * strides[axis]
        shape[axis], strides[axis] = count, strides[axis] * step
        return replace(src, shape=tuple(shape), strides=tuple(strides), offset=offset)
    if name == "transpose":
        perm = tuple(reversed(range(src.ndim))) if attr is None else tuple(a % src.ndim for a in attr)
        return replace(src, shape=tuple(shape[p] for p in perm), strides=tuple(strides[p] for p in perm))
    if name == "broadcast_to":
        return src.broadcast(tuple(node.shape))
    if name == "reshape":
        if src.value is not None:
            return replace(src, shape=tuple(node.shape), strides=(0,) * node.ndim)
        if not src.contiguous():
            return None  # gathered into a buffer of its own
        return replace(dense(src.base, src.dtype, tuple(node.shape)), offset=src.offset)
    return _take_view(plan, node, src)


def _take_view(plan: LoopPlan, node: Term, src: View) -> View | None:
    """``take`` at an evenly spaced index (or at one position) as a view, else None."""
    axis = 0 if node.attr is None else node.attr % src.ndim
    index = _index(plan, node, src.shape[axis])
    if index.ndim > 1 or not index.size:
        return None
    shape, strides = list(src.shape), list(src.strides)
    offset = src.offset + int(index.reshape(-1)[0]) * strides[axis]
    if index.ndim == 0:
        # x.take(k, axis): axis dropped
        del shape[axis], strides[axis]
        return replace(src, shape=tuple(shape), strides=tuple(strides), offset=offset)
    step = int(index[1] - index[0]) if index.size > 1 else 0
    if index.size > 1 and not (np.diff(index) == step).all():
        return None
    shape[axis], strides[axis] = index.size, strides[axis] * step
    return replace(src, shape=tuple(shape), strides=tuple(strides), offset=offset)


def _index(plan: LoopPlan, node: Term, n: int) -> np.ndarray:
    """The constant index of a take or scatter_add, wrapped into ``0 .. n-1`` (numpy's negative indices)."""
    return np.asarray(plan.program.values[node.args[1]]).astype(np.int64) % max(n, 1)


def _positions(plan: LoopPlan, index: np.ndarray, loop: tuple[str, ...]) -> tuple[Index, list[View]]:
    """Index expression of the positions ``index`` read at loop variables ``loop`` (a table unless affine)."""
    if index.ndim == 0:
        return Shift("", int(index)), []
    if index.ndim == 1 and index.size > 1 and (np.diff(index) == 1).all():
        return Shift(loop[0], int(index[0])), []  # start + j
    table = plan.table(index, INT64)
    return Lookup(table, loop), [table]


def _step(fold: str, dtype: str) -> Term:
    """The binary term of one step of a fold in ``dtype``."""
    return Term(get_op(fold), (Symbol("a", dtype), Symbol("b", dtype)), None)


def _start(name: str, dtype: str) -> Any:
    """The value reduction ``name`` starts from (+0.0 for a float sum, as numpy's: a sum of -0.0s is +0.0)."""
    if name in ("sum", "mean"):
        return 0.0 if is_float(dtype) else 0
    if name == "prod":
        return 1
    if dtype == BOOL:
        return name == "amin"
    if is_float(dtype):
        return -math.inf if name == "amax" else math.inf
    return -(2**63) if name == "amax" else 2**63 - 1


def _reduce(plan: LoopPlan, node: Term) -> None:
    # out[o] = fold over the reduced positions r of x[o, r] (mean: then divided by the count)
    x = node.args[0]
    attr = node.attr
    axes = (
        tuple(range(x.ndim))
        if attr is None
        else tuple(sorted(a % x.ndim for a in ((attr,) if isinstance(attr, int) else attr)))
    )
    kept = [d for d in range(x.ndim) if d not in axes]
    index = tuple(f"i{kept.index(d)}" if d in kept else f"r{axes.index(d)}" for d in range(x.ndim))
    lets, item, reads = _operand(plan, x, index)
    out = plan.buffer(node)
    name = node.op.name
    fold = Fold("acc", _step(_FOLDS[name], node.dtype), item, x.dtype)
    inner = Nest(tuple(x.shape[d] for d in axes), "r", (*lets, fold), "sum" if _FOLDS[name] == "add" else "")
    result: Operand = "acc"
    tail: list[Let] = []
    if name == "mean":
        # mean = sum / count
        count = const(float(math.prod(x.shape[d] for d in axes)), node.dtype)
        tail.append(
            Let(
                "mean",
                Term(get_op("truediv"), (Symbol("a", node.dtype), count), None),
                ("acc", Read(_literal(count), ())),
            )
        )
        result = "mean"
    body = (
        Acc("acc", node.dtype, _start(name, node.dtype)),
        inner,
        *tail,
        Store(out, _vars(node.ndim), result, node.dtype),
    )
    plan.emit(Nest(tuple(node.shape), "i", body), [out, *reads])
    plan.views[node] = out


def _literal(t: Term) -> View:
    return View("", t.dtype, (), (), 0, t.attr)


def _contract(plan: LoopPlan, node: Term) -> None:
    # out[o] = sum over the summed letters s of a[o, s] * b[o, s] (dot and matmul as their einsum)
    subs, out_sub = contraction_subscripts(node)
    sizes: dict[str, int] = {}
    for sub, a in zip(subs, node.args, strict=True):
        sizes.update(zip(sub, a.shape, strict=True))
    summed = [ch for ch in sizes if ch not in out_sub]
    var = {ch: f"i{out_sub.index(ch)}" if ch in out_sub else f"r{summed.index(ch)}" for ch in sizes}
    views = [_view(plan, a) for a in node.args]
    dtype = node.dtype
    lets: list[Let] = []
    items: list[Operand] = []
    for k, (sub, a, view) in enumerate(zip(subs, node.args, views, strict=True)):
        item: Operand = Read(view, tuple(var[ch] for ch in sub))
        if a.dtype != dtype:
            # the operand converted to the result's dtype first (numpy's einsum promotes its operands)
            lets.append(
                Let(
                    f"c{k}",
                    Term(get_op("mul"), (Symbol("a", a.dtype), const(1, dtype)), None),
                    (item, Read(_literal(const(1, dtype)), ())),
                )
            )
            item = f"c{k}"
        items.append(item)
    if len(items) == 2:
        lets.append(Let("p", _step("mul", dtype), tuple(items)))
        items = ["p"]
    inner = Nest(
        tuple(sizes[ch] for ch in summed), "r", (*lets, Fold("acc", _step("add", dtype), items[0], dtype)), "sum"
    )
    out = plan.buffer(node)
    body = (Acc("acc", dtype, _start("sum", dtype)), inner, Store(out, _vars(node.ndim), "acc", dtype))
    plan.emit(Nest(tuple(node.shape), "i", body), [out, *views])
    plan.views[node] = out


def _scatter(plan: LoopPlan, node: Term) -> None:
    # out = zeros; out[..., idx[j], ...] += u[..., j, ...] in u's order (numpy's add.at)
    u = node.args[0]
    axis, n = node.attr
    index = _index(plan, node, n)
    k = index.ndim
    out = plan.buffer(node)
    zero = View("", node.dtype, (), (), 0, 0)
    plan.emit(Nest(tuple(node.shape), "i", (Store(out, _vars(node.ndim), Read(zero, ()), node.dtype),), "map"), [out])
    uvars = _vars(u.ndim)
    position, tables = _positions(plan, index, uvars[axis : axis + k])
    lets, item, reads = _operand(plan, u, uvars)
    where = (*uvars[:axis], position, *uvars[axis + k :])
    # s = out[p] + u[j] (a bool update counts as an int), then out[p] = s
    add = Term(get_op("add"), (Symbol("a", node.dtype), Symbol("b", u.dtype)), None)
    body = (*lets, Let("s", add, (Read(out, where), item)), Store(out, where, "s", node.dtype))
    distinct = isinstance(position, Shift) and bool(position.var)  # start + j: no two updates meet
    plan.emit(Nest(tuple(u.shape), "i", body, "map" if distinct else ""), [out, *tables, *reads])
    plan.views[node] = out


def _gather(plan: LoopPlan, node: Term) -> None:
    """``concat``, ``take`` at an irregular index, or ``reshape`` of a strided view, into a buffer."""
    out = plan.buffer(node)
    name = node.op.name
    if name == "concat":
        # out[..., offset + j, ...] = part[..., j, ...] for each part in turn
        axis = 0 if node.attr is None else node.attr % node.ndim
        at = 0
        for a in node.args:
            src = _view(plan, a)
            index = _vars(a.ndim)
            shifted: tuple[Index, ...] = (*index[:axis], Shift(index[axis], at), *index[axis + 1 :])
            plan.emit(Nest(tuple(a.shape), "i", (Store(out, shifted, Read(src, index), a.dtype),), "map"), [out, src])
            at += a.shape[axis]
    elif name == "take":
        # out[a, j, b] = x[a, idx[j], b]
        x = node.args[0]
        axis = 0 if node.attr is None else node.attr % x.ndim
        src = _view(plan, x)
        where = _index(plan, node, x.shape[axis])
        ov = _vars(node.ndim)
        position, tables = _positions(plan, where, ov[axis : axis + where.ndim])
        read = Read(src, (*ov[:axis], position, *ov[axis + where.ndim :]))
        plan.emit(Nest(tuple(node.shape), "i", (Store(out, ov, read, x.dtype),), "map"), [out, src, *tables])
    else:  # reshape: the source's entries in row-major order
        src = _view(plan, node.args[0])
        index = _vars(src.ndim)
        flat = dense(out.base, out.dtype, tuple(src.shape))
        plan.emit(Nest(tuple(src.shape), "i", (Store(flat, index, Read(src, index), src.dtype),), "map"), [out, src])
    plan.views[node] = out
