"""Numpy evaluation of kernels, independent of the C path: the reference the compiled code is checked against.

Each statement is evaluated on the full grid of its loop variables (broadcast numpy arrays, in
chunks when the grid is large): every read is gathered with its own bounds mask, explicit
guards are evaluated as masks, masked iterations contribute nothing, and the sum over the summed
variables is stored (assigning) or added (accumulating). No loop order, no bound tightening and
no guard analysis from the C path is used. Float kernels compute in float64 and store float32;
int kernels compute in int64 wrapped to int32 after every operation, with C's ``/`` and ``%``
(0 for a zero divisor) and floor semantics for ``//``.

:func:`reference_grad` is the matching numeric reverse mode: it backpropagates through each
statement's grid and *scatters* into the gradient (``np.add.at``), so it shares neither the
symbolic derivative nor the gather conversion with :func:`~exprgraph.tensor.grad.grad_kernel`.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..core import Term
from ..errors import KernelError
from .affine import evaluate_index
from .expr import Access, Expr, postorder
from .ir import Kernel, Statement

__all__ = ["reference", "evaluate_kernel", "reference_grad", "GRID_LIMIT"]

#: largest number of grid points evaluated at once
GRID_LIMIT = 1 << 21

_I32 = 1 << 32


def _wrap(x: Any) -> Any:
    """Two's-complement wrap of int64 values to the int32 range."""
    return ((np.asarray(x, np.int64) + (1 << 31)) % _I32) - (1 << 31)


def _bind(kernel: Kernel, args: Sequence[Any], kwargs: Mapping[str, Any], extra: Sequence[str] = ()) -> dict:
    params = kernel.params
    values = dict(zip(params, args, strict=False))
    if len(args) > len(params):
        raise TypeError(f"{kernel.name} takes at most {len(params)} arrays")
    for k, v in kwargs.items():
        if k not in params and k not in extra:
            raise TypeError(f"{kernel.name} has no parameter {k!r}")
        values[k] = v
    return values


def _storage(kernel: Kernel, name: str, value: Any, exact: bool = False) -> np.ndarray:
    """The array as the C kernel sees it (float32 / int32; float64 when ``exact``), as a fresh copy."""
    shape = kernel.tensors[name].shape
    if kernel.data_type == "float":
        dtype = np.float64 if exact else np.float32
    else:
        dtype = np.int32
    if value is None:
        return np.zeros(shape, dtype)
    arr = np.array(value, dtype=dtype, copy=True)
    if arr.shape != shape:
        if arr.size == 1 and shape == (1,):
            return arr.reshape(shape)
        raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")
    return arr


def reference(kernel: Kernel, *args: Any, **kwargs: Any) -> dict[str, np.ndarray]:
    """Run ``kernel`` in numpy on copies of the given arrays; return the written tensors by name.

    Arrays are given in ``params`` order or by name; outputs not given start as zeros.

    >>> import numpy as np
    >>> from exprgraph.tensor import parse_kernel
    >>> k = parse_kernel("C<2, 2>[i, j] = A<2, 3>[i, k] * B<3, 2>[k, j];")
    >>> reference(k, A=np.ones((2, 3)), B=np.ones((3, 2)))["C"].tolist()
    [[3.0, 3.0], [3.0, 3.0]]
    """
    return evaluate_kernel(kernel, _bind(kernel, args, kwargs))


def evaluate_kernel(kernel: Kernel, values: Mapping[str, Any], *, exact: bool = False) -> dict[str, np.ndarray]:
    """Like :func:`reference` with arrays by name; ``exact=True`` keeps float kernels in float64 throughout."""
    written = set(kernel.written)
    arrays: dict[str, np.ndarray] = {}
    for name in kernel.params:
        if values.get(name) is None and name not in written:
            raise TypeError(f"{kernel.name} needs the input {name}")
        arrays[name] = _storage(kernel, name, values.get(name), exact)
    for st in kernel.statements:
        _run_statement(kernel, st, arrays)
    return {n: arrays[n] for n in kernel.params if n in written}


# -- grids ---------------------------------------------------------------------------------------


def _chunks(st: Statement) -> list[dict[Term, Any]]:
    """Environments covering the loop box: leading variables as scalars, the rest as broadcast aranges."""
    loops = st.loops
    n = len(loops)
    split = 0
    size = 1
    for lp in loops:
        size *= lp.extent
    while split < n and size > GRID_LIMIT:
        size //= max(1, loops[split].extent)
        split += 1
    tail = loops[split:]
    base: dict[Term, Any] = {}
    for k, lp in enumerate(tail):
        shape = [1] * len(tail)
        shape[k] = lp.extent
        base[lp.var] = np.arange(lp.lo, lp.hi, dtype=np.int64).reshape(shape)
    envs = []
    for point in itertools.product(*(range(lp.lo, lp.hi) for lp in loops[:split])):
        env = dict(base)
        for lp, v in zip(loops[:split], point, strict=True):
            env[lp.var] = np.int64(v)
        envs.append(env)
    return envs


def _tail_shape(st: Statement, env: Mapping[Term, Any]) -> tuple[int, ...]:
    return tuple(lp.extent for lp in st.loops if np.ndim(env[lp.var]) > 0)


def _gather(kernel: Kernel, arrays: Mapping[str, np.ndarray], acc: Access, env: Mapping, shape: tuple):
    """Values of ``acc`` over the grid (clipped where out of range) and the in-range mask."""
    tensor = kernel.tensors[acc.name]
    arr = arrays[acc.name]
    if not acc.index:
        return np.broadcast_to(arr.reshape(-1)[0], shape), np.ones(shape, bool)
    idx = []
    ok = np.ones(shape, bool)
    for t, extent in zip(acc.index, tensor.shape, strict=True):
        v = np.broadcast_to(np.asarray(evaluate_index(t, env), np.int64), shape)
        ok &= (v >= 0) & (v < extent)
        idx.append(np.clip(v, 0, extent - 1))
    return arr[tuple(idx)], ok


def _mask(kernel: Kernel, st: Statement, arrays: Mapping, env: Mapping, shape: tuple) -> np.ndarray:
    mask = np.ones(shape, bool)
    for g in st.guards:
        v = np.broadcast_to(np.asarray(evaluate_index(g.expr, env), np.int64), shape)
        if g.modulus is not None:
            mask &= v % g.modulus == 0
        else:
            if g.lo is not None:
                mask &= v >= g.lo
            if g.hi is not None:
                mask &= v < g.hi
    tensor = kernel.tensors[st.target.name]
    for t, extent in zip(st.target.index, tensor.shape, strict=False):
        v = np.broadcast_to(np.asarray(evaluate_index(t, env), np.int64), shape)
        mask &= (v >= 0) & (v < extent)
    return mask


def _values(kernel: Kernel, st: Statement, arrays: Mapping, env: Mapping, shape: tuple, mask: np.ndarray) -> dict:
    """Every node of the right-hand side evaluated over the grid (masked reads fold into ``mask``)."""
    is_int = kernel.data_type == "int"
    vals: dict[int, Any] = {}
    for node in postorder(st.rhs):
        op = node.op
        if op == "num":
            v = np.full(shape, node.attr, np.int64 if is_int else np.float64)
        elif op == "ref":
            raw, ok = _gather(kernel, arrays, node.attr, env, shape)
            mask &= ok
            v = raw.astype(np.int64 if is_int else np.float64)
        else:
            args = [vals[id(a)] for a in node.args]
            v = _apply_int(node, args) if is_int else _apply_float(node, args)
        vals[id(node)] = v
    return vals


def _apply_float(node: Expr, args: list) -> np.ndarray:
    op = node.op
    if op == "add":
        return args[0] + args[1]
    if op == "sub":
        return args[0] - args[1]
    if op == "mul":
        return args[0] * args[1]
    if op == "div":
        return args[0] / args[1]
    if op == "neg":
        return -args[0]
    if op == "mod":
        return np.fmod(args[0], args[1])
    if op == "floordiv":
        return np.floor(args[0] / args[1])
    if op == "ge":
        return (args[0] >= args[1]).astype(np.float64)
    if op == "gt":
        return (args[0] > args[1]).astype(np.float64)
    if op == "call":
        fn = {"exp": np.exp, "log": np.log, "sqrt": np.sqrt, "tanh": np.tanh, "max": np.fmax, "min": np.fmin}
        return fn[node.attr](*args)
    raise KernelError(f"cannot evaluate op {op!r}")  # pragma: no cover


def _apply_int(node: Expr, args: list) -> np.ndarray:
    op = node.op
    if op == "add":
        return _wrap(args[0] + args[1])
    if op == "sub":
        return _wrap(args[0] - args[1])
    if op == "mul":
        return _wrap(args[0] * args[1])
    if op == "neg":
        return _wrap(-args[0])
    if op in ("div", "mod", "floordiv"):
        a, b = args
        zero = b == 0
        safe = np.where(zero, 1, b)
        if op == "floordiv":
            q = np.floor_divide(a, safe)
            return _wrap(np.where(zero, 0, q))
        # C division truncates toward zero
        q = np.sign(a) * np.sign(safe) * (np.abs(a) // np.abs(safe))
        if op == "div":
            return _wrap(np.where(zero, 0, q))
        return _wrap(np.where(zero | (b == -1), 0, a - safe * q))
    if op == "ge":
        return (args[0] >= args[1]).astype(np.int64)
    if op == "gt":
        return (args[0] > args[1]).astype(np.int64)
    if op == "call" and node.attr in ("max", "min"):
        return (np.maximum if node.attr == "max" else np.minimum)(*args)
    raise KernelError(f"an int kernel cannot evaluate {op!r}")  # pragma: no cover


def _out_axes(st: Statement, env: Mapping) -> tuple[list[int], list[int], list[Term]]:
    """Grid axes of the written variables (in target order), the summed axes, and the scalar out vars."""
    grid_vars = [lp.var for lp in st.loops if np.ndim(env[lp.var]) > 0]
    out_axes = [grid_vars.index(v) for v in st.out_vars if v in grid_vars]
    summed = [k for k, v in enumerate(grid_vars) if v not in st.out_vars]
    scalar_out = [v for v in st.out_vars if v not in grid_vars]
    return out_axes, summed, scalar_out


def _run_statement(kernel: Kernel, st: Statement, arrays: dict[str, np.ndarray]) -> None:
    is_int = kernel.data_type == "int"
    target = arrays[st.target.name]
    ranges = {lp.var: (lp.lo, lp.hi) for lp in st.loops}
    box_shape = tuple(ranges[v][1] - ranges[v][0] for v in st.out_vars)
    total = np.zeros(box_shape, np.int64 if is_int else np.float64)
    with np.errstate(all="ignore"):
        for env in _chunks(st):
            shape = _tail_shape(st, env)
            mask = _mask(kernel, st, arrays, env, shape)
            vals = _values(kernel, st, arrays, env, shape, mask)
            v = np.where(mask, vals[id(st.rhs)], 0)
            out_axes, summed, scalar_out = _out_axes(st, env)
            part = v.sum(axis=tuple(summed)) if summed else v
            # remaining axes are the grid's written variables in grid order: put them in target order
            grid_order = sorted(out_axes)
            part = np.transpose(part, [grid_order.index(a) for a in out_axes]) if out_axes else part
            where = []
            for var in st.out_vars:
                lo = ranges[var][0]
                if var in scalar_out:
                    where.append(int(env[var]) - lo)
                else:
                    where.append(slice(None))
            total[tuple(where)] += part
    if is_int:
        total = _wrap(total)
    box = tuple(slice(ranges[v][0], ranges[v][1]) for v in st.out_vars) if st.out_vars else (0,)
    if not st.out_vars:
        view_add = total.reshape(())
        old = target.reshape(-1)[0] if st.accumulate else 0
        target.reshape(-1)[0] = _store(old + view_add, is_int, target.dtype)
        return
    if st.accumulate:
        old = target[box].astype(np.int64 if is_int else np.float64)
        target[box] = _store(old + total, is_int, target.dtype)
    else:
        target[box] = _store(total, is_int, target.dtype)


def _store(x: Any, is_int: bool, dtype: Any = np.float32) -> Any:
    if is_int:
        return _wrap(x).astype(np.int32)
    return np.asarray(x, np.float64).astype(dtype)


# -- numeric reverse mode ----------------------------------------------------------------------------


def reference_grad(
    kernel: Kernel, grad_to: Sequence[str] | None = None, *args: Any, **kwargs: Any
) -> dict[str, np.ndarray]:
    """Gradients ``d<x>`` (float64) of ``kernel``'s outputs weighted by ``d<out>``, by numeric reverse mode.

    Arguments: the kernel's inputs and ``d<out>`` for each output, by name. The kernel must be a
    list of assigning statements writing distinct outputs from inputs only (as :func:`grad_kernel`).
    """
    if kernel.data_type != "float":
        raise KernelError("gradients need a float kernel")
    grad_to = tuple(kernel.grad_to if grad_to is None else grad_to)
    douts = tuple("d" + o for o in kernel.outs)
    values = _bind(kernel, args, kwargs, douts)
    arrays: dict[str, np.ndarray] = {}
    for name in kernel.ins:
        if values.get(name) is None:
            raise TypeError(f"reference_grad needs the input {name}")
        arrays[name] = _storage(kernel, name, values[name], exact=True)
    upstream = {}
    for out in kernel.outs:
        shape = kernel.tensors[out].shape
        value = values.get("d" + out)
        if value is None:
            raise TypeError(f"reference_grad needs d{out}")
        upstream[out] = np.array(value, np.float64).reshape(shape)
    grads = {x: np.zeros(kernel.tensors[x].shape, np.float64) for x in grad_to}
    written = set(kernel.written)
    for st in kernel.statements:
        if st.accumulate:
            raise KernelError("reference_grad needs assigning statements (no T = T + ...)")
        for acc, _ in st.reads():
            if acc.name in written:
                raise KernelError("reference_grad needs statements that read inputs only")
        with np.errstate(all="ignore"):
            for env in _chunks(st):
                _backprop(kernel, st, arrays, env, upstream[st.target.name], grads)
    return {"d" + x: g for x, g in grads.items()}


def _backprop(kernel: Kernel, st: Statement, arrays: Mapping, env: Mapping, dout: np.ndarray, grads: dict) -> None:
    shape = _tail_shape(st, env)
    mask = _mask(kernel, st, arrays, env, shape)
    vals = _values(kernel, st, arrays, env, shape, mask)
    up, _ = _gather(kernel, {st.target.name: dout}, st.target, env, shape)
    adj: dict[int, np.ndarray] = {id(st.rhs): np.where(mask, up, 0.0)}
    for node in reversed(postorder(st.rhs)):
        g = adj.pop(id(node), None)
        if g is None:
            continue
        if node.op == "ref":
            acc = node.attr
            if acc.name in grads:
                idx = [np.broadcast_to(np.asarray(evaluate_index(t, env), np.int64), shape).ravel() for t in acc.index]
                keep = mask.ravel()
                flat = np.broadcast_to(g, shape).ravel()[keep]
                target = grads[acc.name]
                if acc.index:
                    np.add.at(target, tuple(i[keep] for i in idx), flat)
                else:
                    target.reshape(-1)[0] += flat.sum()
            continue
        if node.op == "num":
            continue
        a = [vals[id(x)] for x in node.args]
        for child, contrib in zip(node.args, _local(node, a, g), strict=True):
            if contrib is None:
                continue
            prev = adj.get(id(child))
            adj[id(child)] = contrib if prev is None else prev + contrib


def _local(node: Expr, a: list, g: np.ndarray) -> list:
    """Contributions to the operands' adjoints of a node with adjoint ``g``."""
    op = node.op
    if op == "add":
        return [g, g]
    if op == "sub":
        return [g, -g]
    if op == "mul":
        return [g * a[1], g * a[0]]
    if op == "div":
        return [g / a[1], -g * a[0] / (a[1] * a[1])]
    if op == "neg":
        return [-g]
    if op == "mod":  # fmod(x, y) = x - trunc(x/y)*y
        return [g, -g * np.trunc(a[0] / a[1])]
    if op in ("floordiv", "ge", "gt"):
        return [None, None]
    if op == "call":
        fn = node.attr
        x = a[0]
        if fn == "exp":
            return [g * np.exp(x)]
        if fn == "log":
            return [g / x]
        if fn == "sqrt":
            return [g * 0.5 / np.sqrt(x)]
        if fn == "tanh":
            t = np.tanh(x)
            return [g * (1 - t * t)]
        if fn == "max":
            first = a[0] >= a[1]
            return [g * first, g * ~first]
        if fn == "min":
            first = a[0] <= a[1]
            return [g * first, g * ~first]
    raise KernelError(f"cannot differentiate op {op!r}")  # pragma: no cover
