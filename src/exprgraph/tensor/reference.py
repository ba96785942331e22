"""Numpy evaluation of kernels, independent of the C path: the reference the compiled code is checked against.

Each statement is evaluated on the full grid of its loop variables (broadcast numpy arrays, in
chunks when the grid is large): every read is gathered with its own bounds mask (through the
``access`` op's numpy evaluation), explicit guards are evaluated as masks, masked iterations
contribute nothing, and the sum over the summed variables is stored (assigning) or added
(accumulating). No loop order, no bound tightening and no guard analysis from the C path is used.
Every other node is computed by its op's numpy evaluation from the op table, on arrays of the
kernel's own types as C computes them: ``float`` kernels in float32 (float64 with ``exact=True``),
``int`` kernels in int32, so that integer arithmetic wraps as C's does; operands are converted as
the C renderer converts them (:func:`~exprgraph.compile.crender.operand_dtypes`). Sums are added up
in float64 (int64 for ``int`` kernels, then wrapped) and stored in the tensor's type.

:func:`reference_grad` is the matching numeric reverse mode: it evaluates each statement's
derivative terms (the op table's gradient rules, as :func:`~exprgraph.tensor.grad.grad_kernel`
builds them) on the *forward* grid and *scatters* them into the gradient (``np.add.at``), so it
shares neither the index solving nor the C path with the gradient kernel.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..compile.crender import operand_dtypes
from ..core import Symbol, Term
from ..core.dtypes import BOOL, FLOAT64, INT64
from ..errors import KernelError
from .affine import evaluate_index
from .grad import grad_name, statement_adjoints
from .ir import Kernel, Statement
from .terms import ACCESS, accesses, index_of, read, tensor_name, value_nodes

__all__ = ["reference", "evaluate_kernel", "reference_grad", "GRID_LIMIT"]

#: largest number of grid points evaluated at once
GRID_LIMIT = 1 << 21

_I32 = 1 << 32
#: numpy types of each dtype's values while a kernel computes: float kernels, exact float kernels, int kernels
_FLOAT = {FLOAT64: np.float32, INT64: np.int32, BOOL: np.bool_}
_EXACT = {FLOAT64: np.float64, INT64: np.int64, BOOL: np.bool_}


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
    dtype: type[np.generic]
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
    types = _EXACT if exact and kernel.data_type == "float" else _FLOAT
    for st in kernel.statements:
        _run_statement(kernel, st, arrays, types)
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


def _access(arr: Any, *idx: Any) -> Any:
    """The access op's numpy evaluation: ``arr[idx]``."""
    impl = ACCESS.impl
    if impl is None:  # pragma: no cover - the standard table gives access its impl
        raise KernelError("the access op has no numpy evaluation")
    return impl(arr, *idx)


def _gather(arrays: Mapping[str, np.ndarray], acc: Term, env: Mapping, shape: tuple) -> tuple[Any, np.ndarray]:
    """Values of the read ``acc`` over the grid (at clipped indices where out of range) and the in-range mask."""
    arr = arrays[tensor_name(acc)]
    index = index_of(acc)
    ok = np.ones(shape, bool)
    if not index:
        return np.broadcast_to(_access(arr), shape), ok
    idx = []
    for t, extent in zip(index, arr.shape, strict=True):
        v = np.broadcast_to(np.asarray(evaluate_index(t, env), np.int64), shape)
        ok &= (v >= 0) & (v < extent)
        idx.append(np.clip(v, 0, extent - 1))
    return _access(arr, *idx), ok


def _mask(st: Statement, arrays: Mapping, env: Mapping, shape: tuple) -> np.ndarray:
    """The iterations of the grid that run: explicit guards hold, the written element and every read in range."""
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
    for acc in (st.target, *accesses(st.rhs)):
        index = index_of(acc)
        for t, extent in zip(index, arrays[tensor_name(acc)].shape if index else (), strict=True):
            v = np.broadcast_to(np.asarray(evaluate_index(t, env), np.int64), shape)
            mask &= (v >= 0) & (v < extent)
    return mask


def _values(root: Term, arrays: Mapping, env: Mapping, shape: tuple, types: Mapping[str, Any]) -> Any:
    """The value of a right-hand side over the grid: reads gathered, every other node by its op's numpy evaluation."""
    vals: dict[Term, Any] = {}
    for node in value_nodes(root):
        if node.op is ACCESS:
            vals[node] = _gather(arrays, node, env, shape)[0]
        elif node.is_const:
            vals[node] = np.asarray(node.value, types[node.dtype])
        else:
            vals[node] = _apply(node, [vals[a] for a in node.args], types)
    return vals[root]


def _apply(node: Term, operands: list, types: Mapping[str, Any]) -> np.ndarray:
    """``node``'s op on the operand arrays, converted first as C converts them; the result in its C type."""
    op = node.op
    vs = [v if v.dtype == types[d] else v.astype(types[d]) for v, d in zip(operands, operand_dtypes(node), strict=True)]
    fn = op.impl if op.impl is not None else op.ufunc
    if fn is None:  # pragma: no cover - the parser calls only ops with a numpy evaluation
        raise KernelError(f"op {op.name!r} has no numpy evaluation")
    return np.asarray(fn(*vs)).astype(types[node.dtype], copy=False)


def _out_axes(st: Statement, env: Mapping) -> tuple[list[int], list[int], list[Term]]:
    """Grid axes of the written variables (in target order), the summed axes, and the scalar out vars."""
    grid_vars = [lp.var for lp in st.loops if np.ndim(env[lp.var]) > 0]
    out_axes = [grid_vars.index(v) for v in st.out_vars if v in grid_vars]
    summed = [k for k, v in enumerate(grid_vars) if v not in st.out_vars]
    scalar_out = [v for v in st.out_vars if v not in grid_vars]
    return out_axes, summed, scalar_out


def _run_statement(kernel: Kernel, st: Statement, arrays: dict[str, np.ndarray], types: Mapping[str, Any]) -> None:
    is_int = kernel.data_type == "int"
    target = arrays[st.name]
    ranges = {lp.var: (lp.lo, lp.hi) for lp in st.loops}
    box_shape = tuple(ranges[v][1] - ranges[v][0] for v in st.out_vars)
    # a statement without summed indices assigns its one value: start from -0.0, which every addition
    # leaves unchanged (-0.0 + v is v, -0.0 included), so a computed -0.0 is kept as the C code keeps
    # it; a sum starts from +0.0 as the C accumulator does
    start = 0.0 if is_int or st.reduction_vars else -0.0
    total: np.ndarray = np.full(box_shape, start, np.int64 if is_int else np.float64)
    with np.errstate(all="ignore"):
        for env in _chunks(st):
            shape = _tail_shape(st, env)
            mask = _mask(st, arrays, env, shape)
            total_type = np.int64 if is_int else np.float64
            v = np.where(mask, _values(st.rhs, arrays, env, shape, types), 0).astype(total_type)
            out_axes, summed, scalar_out = _out_axes(st, env)
            part = v.sum(axis=tuple(summed)) if summed else v
            # remaining axes are the grid's written variables in grid order: put them in target order
            grid_order = sorted(out_axes)
            part = np.transpose(part, [grid_order.index(a) for a in out_axes]) if out_axes else part
            where: list[int | slice] = []
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
    douts = tuple(grad_name(o) for o in kernel.outs)
    values = _bind(kernel, args, kwargs, douts)
    arrays: dict[str, np.ndarray] = {}
    for name in kernel.ins:
        if values.get(name) is None:
            raise TypeError(f"reference_grad needs the input {name}")
        arrays[name] = _storage(kernel, name, values[name], exact=True)
    for out in kernel.outs:
        value = values.get(grad_name(out))
        if value is None:
            raise TypeError(f"reference_grad needs {grad_name(out)}")
        arrays[grad_name(out)] = np.array(value, np.float64).reshape(kernel.tensors[out].shape)
        arrays[out] = np.broadcast_to(0.0, kernel.tensors[out].shape)  # not read: its shape bounds the writes
    grads = {x: np.zeros(kernel.tensors[x].shape, np.float64) for x in grad_to}
    written = set(kernel.written)
    for st in kernel.statements:
        if st.accumulate:
            raise KernelError("reference_grad needs assigning statements (no T = T + ...)")
        for acc, _ in st.reads():
            if tensor_name(acc) in written:
                raise KernelError("reference_grad needs statements that read inputs only")
        written_tensor = kernel.tensors[st.name]
        seed = read(Symbol(grad_name(written_tensor.name), written_tensor.dtype, written_tensor.shape), st.out_vars)
        adjoints = statement_adjoints(st, seed, set(grad_to))
        with np.errstate(all="ignore"):
            for env in _chunks(st):
                _scatter(st, adjoints, arrays, env, grads)
    return {grad_name(x): g for x, g in grads.items()}


def _scatter(st: Statement, adjoints: list, arrays: Mapping, env: Mapping, grads: dict) -> None:
    """Add each read's adjoint, evaluated on the forward grid, into its gradient at the read's indices."""
    shape = _tail_shape(st, env)
    keep = _mask(st, arrays, env, shape).ravel()
    for acc, adjoint in adjoints:
        g = np.broadcast_to(_values(adjoint, arrays, env, shape, _EXACT), shape).ravel()[keep]
        target = grads[tensor_name(acc)]
        index = index_of(acc)
        if not index:
            target.reshape(-1)[0] += g.sum()
            continue
        idx = [np.broadcast_to(np.asarray(evaluate_index(t, env), np.int64), shape).ravel()[keep] for t in index]
        np.add.at(target, tuple(idx), g)
