"""The standard table, tensor ops: indexed access, matmul, dot, transpose, reductions over axes.

The reductions are ``sum``, ``logsumexp``, ``amax``, ``amin``, ``prod`` and ``mean``; their gradients
put the reduced axes back with ``reshape`` and ``broadcast_to`` (:mod:`.ops_index`), so the gradient
of a reduction over a vector of known length is a broadcast of the upstream, never an array of ones.

Each op is declared next to its numpy evaluation and its gradient rule; importing this module
registers them. Imports the lower core modules and the op-building helpers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ShapeError
from .declare import _call, _infix
from .dtypes import FLOAT32, FLOAT64, INT64
from .grad_tools import _O, _one, _zero, broadcast_like, insert_axes, times
from .inference import _axis_key, _numeric, dot_rule, matmul_rule, sum_rule, transpose_rule
from .leaves import const
from .op import PREC_MUL, Op, register_op
from .shapes import normalize_axes


def _sum(x: Any, attr: Any = None) -> Any:
    return np.sum(x, axis=_axis_key(attr))


def _batch_axes(attr: Any, ndim: int, value_ndim: int) -> Any:
    """Axes of a term with ``ndim`` axes, read on a value with leading batch axes: the trailing ones."""
    lead = value_ndim - ndim
    axes = range(ndim) if attr is None else ((attr,) if isinstance(attr, int) else attr)
    return tuple(lead + a % ndim for a in axes) if ndim else ()


def _batch_perm(attr: Any, ndim: int, value_ndim: int) -> Any:
    """A permutation of a term's axes, extended to leave the leading batch axes in place."""
    lead = value_ndim - ndim
    perm = range(ndim - 1, -1, -1) if attr is None else attr
    return (*range(lead), *(lead + a % ndim for a in perm))


def _transpose(x: Any, attr: Any = None) -> Any:
    return np.transpose(x, attr)


def _swap_last(t: Any) -> Any:
    """``t`` with its last two axes exchanged (the matrix transpose of each batch entry)."""
    if t.ndim == 2:
        return _O.transpose(t)
    return _O.transpose(t, axes=(*range(t.ndim - 2), t.ndim - 1, t.ndim - 2))


def _grad_matprod(node: Any, g: Any, prod: Op) -> tuple:
    # C = A @ B: dA = dC @ B^T, dB = A^T @ dC; vectors as in numpy (batch axes summed by sum_to)
    a, b = node.args
    if a.ndim <= 1 and b.ndim <= 1:  # dot of vectors or with a scalar: an elementwise product
        return (None if a.is_const else times(g, b), None if b.is_const else times(g, a))
    if a.ndim >= 2 and b.ndim >= 2:
        da = prod(g, _swap_last(b))
        db = prod(_swap_last(a), g)
    elif b.ndim == 1:  # (..., m, n) @ (n,) -> (..., m)
        da = insert_axes(g, [g.ndim]) * b
        if a.ndim == 2:
            db = prod(_swap_last(a), g)
        else:
            db = _O.sum(prod(_swap_last(a), insert_axes(g, [g.ndim])), axis=-1)
    else:  # (n,) @ (..., n, k) -> (..., k)
        da = prod(b, g) if b.ndim == 2 else _O.sum(prod(b, insert_axes(g, [g.ndim])), axis=-1)
        db = insert_axes(a, [1]) * (g if b.ndim == 2 else insert_axes(g, [g.ndim - 1]))
    return (None if a.is_const else da, None if b.is_const else db)


def _grad_dot(node: Any, g: Any) -> tuple:
    # dot with a scalar operand is a product; otherwise the matrix product rule
    a, b = node.args
    if not a.ndim or not b.ndim:
        return (None if a.is_const else times(g, b), None if b.is_const else times(g, a))
    return _grad_matprod(node, g, _O.dot)


def _grad_matmul(node: Any, g: Any) -> tuple:
    return _grad_matprod(node, g, _O.matmul)


def expand_reduced(t: Any, axes: tuple[int, ...], x: Any) -> Any:
    """``t``, a reduction of ``x`` over ``axes``, broadcast back to ``x``'s shape (``broadcast_to``)."""
    if t.shape == x.shape:
        return t
    if all(d.__class__ is int for d in x.shape):
        # the reduced axes come back with length 1 (leading ones need not: broadcasting prepends them)
        if axes != tuple(range(len(axes))):
            t = _O.reshape(t, shape=tuple(1 if i in axes else d for i, d in enumerate(x.shape)))
        return _O.broadcast_to(t, shape=tuple(x.shape))
    if len(axes) < x.ndim:  # symbolic dimensions: widen by multiplying, as before
        t = insert_axes(t, axes)
    return broadcast_like(t, x)


def _reduced_axes(node: Any) -> tuple[int, ...]:
    x = node.args[0]
    return normalize_axes(node.attr, x.ndim, node.op.name)


def _grad_sum(node: Any, g: Any) -> tuple:
    # d sum(x)/dx_i = 1: every summed entry gets the upstream value, a broadcast of g
    (x,) = node.args
    return (expand_reduced(g, _reduced_axes(node), x),)


def _logsumexp_rule(args: tuple, attr: Any) -> tuple[str, tuple]:
    """``logsumexp(x, axis=...)``: the reduced axes disappear, as in ``sum``; the value is a float."""
    (x,) = args
    axes = normalize_axes(attr, x.ndim, "logsumexp")
    return (FLOAT32 if x.dtype == FLOAT32 else FLOAT64), tuple(d for i, d in enumerate(x.shape) if i not in axes)


def _logsumexp(x: Any, attr: Any = None) -> Any:
    # log(sum(exp(x))) folded with logaddexp: each step is max(a, b) + log1p(exp(-|a - b|)), so
    # nothing overflows (1000 and 1000 give 1000 + log(2)); an empty reduction is log(0) = -inf
    x = np.asarray(x)
    if x.dtype.kind != "f":
        x = x.astype(np.float64)
    if x.ndim == 0:
        return x[()]
    fold: Any = np.logaddexp.reduce  # typed loosely: numpy's stubs for ufunc.reduce differ by version
    return fold(x, axis=_axis_key(attr))


def _grad_logsumexp(node: Any, g: Any) -> tuple:
    # d logsumexp(x) / dx = exp(x - logsumexp(x)) (the softmax): put the reduced axes back on g and
    # on the result, then broadcast both over x
    (x,) = node.args
    axes = _reduced_axes(node)
    softmax = _O.exp(_O.sub(x, expand_reduced(node, axes, x)))
    return (times(expand_reduced(g, axes, x), softmax),)


def _grad_transpose(node: Any, g: Any) -> tuple:
    # the inverse permutation
    if node.attr is None:
        return (_O.transpose(g),)
    axes = normalize_axes(node.attr, node.args[0].ndim, "transpose")
    inverse = tuple(int(i) for i in np.argsort(axes))
    return (_O.transpose(g, axes=inverse),)


def _access_rule(args: tuple, attr: Any) -> tuple[str, tuple]:
    """``access(T, i, j, ...)``: one element of the tensor symbol ``T`` (int64 scalar indices, one per axis)."""
    tensor, index = args[0], args[1:]
    if tensor.op.name != "symbol" or not tensor.shape:
        raise ShapeError("access reads an element of a tensor: its first operand must be a symbol with a shape")
    shape = tensor.shape
    if len(index) != len(shape) and not (not index and tuple(shape) == (1,)):
        raise ShapeError(f"{tensor.name} has {len(shape)} dimension(s) but {len(index)} index(es)")
    for t in index:
        if t.dtype != INT64 or t.shape:
            raise ShapeError(f"an index of {tensor.name} must be an int64 scalar, not {t.dtype}{list(t.shape)}")
    return tensor.dtype, ()


def _access(tensor: Any, *index: Any) -> Any:
    arr = np.asarray(tensor)
    if not index:
        return arr.reshape(-1)[0]  # a tensor of one element read as a scalar
    return arr[tuple(np.asarray(i, np.intp) for i in index)]


register_op(
    Op(
        "access",
        (1, None),
        _access_rule,
        impl=_access,
        notation="index",
        doc="T[i, j]: the element of the tensor symbol T at int64 indices (index arrays broadcast together).",
    )
)


_infix(
    "matmul",
    "@",
    PREC_MUL,
    matmul_rule,
    np.matmul,
    associative=True,
    grad=_grad_matmul,
    counts_bools=True,
    doc="Matrix product (numpy matmul).",
)


_call(
    "dot",
    2,
    dot_rule,
    impl=np.dot,
    grad=_grad_dot,
    counts_bools=True,
    doc="numpy dot for operands of up to 2 dimensions.",
)


_call(
    "sum",
    1,
    sum_rule,
    impl=_sum,
    batch_attr=_batch_axes,
    attr_name="axis",
    attr_key=_axis_key,
    grad=_grad_sum,
    counts_bools=True,
    doc="Sum over axes (all by default).",
)


_call(
    "logsumexp",
    1,
    _logsumexp_rule,
    impl=_logsumexp,
    batch_attr=_batch_axes,
    attr_name="axis",
    attr_key=_axis_key,
    grad=_grad_logsumexp,
    float_result=True,
    doc="log(sum(exp(x))) over axes (all by default) without overflow, as a fold of logaddexp.",
)


_call(
    "transpose",
    1,
    transpose_rule,
    impl=_transpose,
    batch_attr=_batch_perm,
    attr_name="axes",
    attr_key=_axis_key,
    grad=_grad_transpose,
    doc="Permute axes (reverse by default).",
)


def _reduction_rule(keep_dtype: bool, float_result: bool = False) -> Any:
    """The dtype/shape rule of a reduction over axes: the reduced axes disappear."""

    def rule(args: tuple, attr: Any, _keep: bool = keep_dtype, _float: bool = float_result) -> tuple[str, tuple]:
        (x,) = args
        axes = normalize_axes(attr, x.ndim, "reduction")
        if _float:
            dtype = FLOAT32 if x.dtype == FLOAT32 else FLOAT64
        else:
            dtype = x.dtype if _keep else _numeric(x.dtype)
        return dtype, tuple(d for i, d in enumerate(x.shape) if i not in axes)

    return rule


def _extremum_rule(args: tuple, attr: Any) -> tuple[str, tuple]:
    """``amax``/``amin`` over axes: as ``sum``, in the operand's dtype; an empty axis has no extremum."""
    (x,) = args
    for i in normalize_axes(attr, x.ndim, "amax/amin"):
        if x.shape[i].__class__ is int and x.shape[i] == 0:
            raise ShapeError(f"amax/amin over axis {i} of length 0: an empty reduction has no extremum")
    return _reduction_rule(True)(args, attr)


def _amax(x: Any, attr: Any = None) -> Any:
    return np.max(x, axis=_axis_key(attr))


def _amin(x: Any, attr: Any = None) -> Any:
    return np.min(x, axis=_axis_key(attr))


def _prod(x: Any, attr: Any = None) -> Any:
    return np.prod(x, axis=_axis_key(attr))


def _mean(x: Any, attr: Any = None) -> Any:
    return np.mean(x, axis=_axis_key(attr))


def _sum_over(t: Any, axes: tuple[int, ...]) -> Any:
    return _O.sum(t, axis=None if len(axes) == t.ndim else axes)


def _grad_extremum(node: Any, g: Any) -> tuple:
    # d max(x)/dx_i = [x_i == max(x)] / #{j : x_j == max(x)}: ties share the upstream equally
    (x,) = node.args
    if not x.ndim:
        return (g,)
    axes = _reduced_axes(node)
    hit = _O.where(_O.eq(x, expand_reduced(node, axes, x)), _one(x), _zero(x))
    count = expand_reduced(_sum_over(hit, axes), axes, x)
    return (_O.truediv(times(expand_reduced(g, axes, x), hit), count),)


def _grad_prod(node: Any, g: Any) -> tuple:
    # d prod(x)/dx_i = prod_{j != i} x_j, without dividing by zero: with z = (x where x != 0, else 1)
    # and P = prod(z), it is P/z_i when no entry is 0; P at the zero entry and 0 elsewhere when one
    # entry is 0; and 0 everywhere when two or more are
    (x,) = node.args
    if not x.ndim:
        return (g,)
    axes = _reduced_axes(node)
    one, zero = _one(x), _zero(x)
    is_zero = _O.eq(x, zero)
    z = _O.where(is_zero, one, x)
    p = expand_reduced(_O.prod(z, axis=node.attr), axes, x)
    zeros = expand_reduced(_sum_over(_O.where(is_zero, one, zero), axes), axes, x)
    one_zero = _O.where(_O.eq(zeros, one), _O.where(is_zero, p, zero), zero)
    others = _O.where(_O.eq(zeros, zero), _O.truediv(p, z), one_zero)
    return (times(expand_reduced(g, axes, x), others),)


def _grad_mean(node: Any, g: Any) -> tuple:
    # d mean(x)/dx_i = 1/n, n the number of entries averaged: a broadcast of g/n
    (x,) = node.args
    axes = _reduced_axes(node)
    n: Any = 1
    for i in axes:
        n = n * x.shape[i]  # ints multiply to an int, symbolic dimensions to an int64 term
    count = n if n.__class__ is not int else const(np.float32(n) if g.dtype == FLOAT32 else float(n))
    return (expand_reduced(_O.truediv(g, count), axes, x),)


def _declare_reduction(name: str, rule: Any, impl: Any, grad: Any, doc: str, **kw: Any) -> None:
    _call(
        name,
        1,
        rule,
        impl=impl,
        batch_attr=_batch_axes,
        attr_name="axis",
        attr_key=_axis_key,
        grad=grad,
        doc=doc,
        **kw,
    )


_declare_reduction("amax", _extremum_rule, _amax, _grad_extremum, "Maximum over axes (all by default).")
_declare_reduction("amin", _extremum_rule, _amin, _grad_extremum, "Minimum over axes (all by default).")
_declare_reduction(
    "prod", _reduction_rule(False), _prod, _grad_prod, "Product over axes (all by default).", counts_bools=True
)
_declare_reduction(
    "mean",
    _reduction_rule(False, True),
    _mean,
    _grad_mean,
    "Arithmetic mean over axes (all by default), a float.",
    float_result=True,
)
