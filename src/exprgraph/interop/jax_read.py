"""Read JAX programs into terms: ``from_jax(fn or jaxpr, *example_args)`` (needs ``exprgraph[jax]``).

A function is traced with ``jax.make_jaxpr`` on the example arguments (arrays or ``jax.ShapeDtypeStruct``); a
(closed) jaxpr is read as it is. Its equations are read in order into terms, one per variable; the jaxprs of
``jit``/``pjit``, ``closed_call``, ``custom_jvp_call``, ``custom_vjp_call`` and ``remat`` are inlined with an
explicit stack of frames (no recursion, however deep the nesting). Inputs become symbols named after the
function's parameters (or ``x0, x1...``; ``names=`` chooses); a function made by
:func:`~exprgraph.interop.jax.to_jax` gives back its own input symbols. The primitives read are in
:data:`PRIMITIVES` and :data:`STRUCTURAL` (static slices, ``rev``, ``dynamic_slice`` at constant starts,
``gather`` as a ``take`` along one axis at constant indices and ``scatter-add`` its adjoint, ``concatenate``,
``stack``, ``pad``, ``tile``, ``reshape``, ``squeeze`` and the reductions among them) and
:data:`~exprgraph.interop.jax_read_ops.MULTIPLE` (``top_k``: values and indices); any other raises
:class:`~exprgraph.errors.ConversionError` naming it (``cumsum``, ``sort``, ``scan``, ``while``...: no op of
ours computes them). Dtypes: float64, float32, int64 and bool are ours; int32 (JAX's integers without 64-bit
mode) is read as int64, so its wrap-around at 2**31 is not kept.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..core import BOOL, FLOAT32, FLOAT64, INT64, Symbol, Term, const, get_op
from ..core.dtypes import is_float
from ..core.ops_einsum import contraction
from ..core.ops_index import broadcast_to, concat, getitem, reshape, slice_axis, stack, take
from ..core.stdops import insert_axes
from ..errors import ConversionError, ShapeError
from ..eval import evaluate
from ._optional import require
from .jax_read_ops import MULTIPLE, pad, tile
from .registry import Converter, register_converter

__all__ = ["from_jax", "PRIMITIVES", "STRUCTURAL"]


def _op(name: str) -> Callable[..., Term]:
    return lambda *a, **p: get_op(name)(*a)


def _div(a: Term, b: Term, **p: Any) -> Term:
    # lax.div rounds integer quotients toward zero (C's /): our truncdiv; floats divide
    return get_op("truncdiv")(a, b) if not is_float(a.dtype) else a / b


def _select_n(which: Term, *cases: Term, **p: Any) -> Term:
    # select_n(p, a, b) is a where p is false (0), b where true (1); an int p picks cases[p]
    if which.dtype == BOOL:
        return get_op("where")(which, cases[1], cases[0])
    out = cases[-1]
    for i in range(len(cases) - 2, -1, -1):
        out = get_op("where")(get_op("eq")(which, const(i)), cases[i], out)
    return out


def _round(x: Term, rounding_method: Any = 0, **p: Any) -> Term:
    # x - floor(x) is exact: above 1/2 round up, below down; a tie goes to the even neighbour
    # (rounding_method 1, jnp.round) or away from zero (0, lax.round's default)
    if not is_float(x.dtype):
        return x
    half = const(0.5, x.dtype)
    low = get_op("floor")(x)
    frac = x - low
    up = low + const(1.0, x.dtype)
    if int(rounding_method) == 1:
        tie = get_op("where")(get_op("eq")(low % const(2.0, x.dtype), const(0.0, x.dtype)), low, up)
    else:
        tie = get_op("where")(x < const(0.0, x.dtype), low, up)
    return get_op("where")(frac > half, up, get_op("where")(frac < half, low, tie))


def _logic(name: str, bitwise: str) -> Callable[..., Term]:
    def build(*args: Term, **p: Any) -> Term:
        if any(a.dtype != BOOL for a in args):
            raise ConversionError(f"from_jax: {bitwise} of integers is bitwise; no exprgraph op computes it")
        return get_op(name)(*args)

    return build


def _reduce(name: str) -> Callable[..., Term]:
    def build(x: Term, axes: Sequence[int] = (), **p: Any) -> Term:
        axes = tuple(int(a) for a in axes)
        if not axes:
            return x
        return get_op(name)(x, axis=None if len(axes) == x.ndim else (axes[0] if len(axes) == 1 else axes))

    return build


#: JAX primitive -> builder of its term from the operands' terms and the equation's params
PRIMITIVES: dict[str, Callable[..., Term]] = {
    name: _op(ours)
    for name, ours in {
        "add": "add",
        "sub": "sub",
        "mul": "mul",
        "neg": "neg",
        "pow": "pow",
        "rem": "fmod",  # lax.rem has the dividend's sign (C's fmod)
        "max": "maximum",
        "min": "minimum",
        "abs": "abs",
        "sign": "sign",
        "floor": "floor",
        "ceil": "ceil",
        "exp": "exp",
        "log": "log",
        "log1p": "log1p",
        "log2": "log2",  # a primitive of its own since JAX 0.12 (before: log(x)/log(2))
        "expm1": "expm1",
        "sqrt": "sqrt",
        "sin": "sin",
        "cos": "cos",
        "tan": "tan",
        "tanh": "tanh",
        "asin": "asin",
        "acos": "acos",
        "atan": "atan",
        "atan2": "atan2",
        "sinh": "sinh",
        "cosh": "cosh",
        "asinh": "asinh",
        "acosh": "acosh",
        "atanh": "atanh",
        "erf": "erf",
        "erfc": "erfc",
        "logistic": "sigmoid",
        "lt": "lt",
        "le": "le",
        "gt": "gt",
        "ge": "ge",
        "eq": "eq",
        "ne": "ne",
    }.items()
}
PRIMITIVES.update(
    div=_div,
    select_n=_select_n,
    round=_round,
    reduce_sum=_reduce("sum"),
    reduce_max=_reduce("amax"),
    reduce_min=_reduce("amin"),
    reduce_prod=_reduce("prod"),
    concatenate=lambda *xs, dimension=0, **p: concat(xs, axis=int(dimension)),
    stack=lambda *xs, axis=0, **p: stack(xs, axis=int(axis)),
    rev=lambda x, dimensions=(), **p: getitem(
        x, tuple(slice(None, None, -1 if i in dimensions else 1) for i in range(x.ndim))
    ),
    integer_pow=lambda x, y, **p: x ** const(int(y)),
    rsqrt=lambda x, **p: const(1.0, x.dtype) / get_op("sqrt")(x),
    square=lambda x, **p: x * x,
    exp2=lambda x, **p: const(2.0, x.dtype) ** x,
    is_finite=lambda x, **p: get_op("eq")(x - x, const(0.0, x.dtype)),  # x - x is 0 unless x is inf or nan
    stop_gradient=lambda x, **p: x,
    copy=lambda x, **p: x,
    copy_p=lambda x, **p: x,
    transpose=lambda x, permutation=(), **p: get_op("transpose")(x, axes=tuple(int(a) for a in permutation)),
    dot_general=lambda a, b, dimension_numbers=None, **p: _dot_general(a, b, dimension_numbers),
    broadcast_in_dim=lambda x, shape=(), broadcast_dimensions=(), **p: _broadcast(x, shape, broadcast_dimensions),
    reshape=lambda x, new_sizes=(), dimensions=None, **p: _reshape(x, tuple(new_sizes), dimensions),
    squeeze=lambda x, dimensions=(), **p: _drop_axes(x, tuple(dimensions)),
    expand_dims=lambda x, dimensions=(), **p: _reshape(x, _with_ones(tuple(x.shape), tuple(dimensions))),
    convert_element_type=lambda x, new_dtype=None, **p: _convert(x, str(np.dtype(new_dtype))),
    **{"and": _logic("logical_and", "and"), "or": _logic("logical_or", "or"), "not": _logic("logical_not", "not")},
)

#: primitives whose work is another jaxpr, inlined: the params key holding it
STRUCTURAL = {
    "jit": "jaxpr",
    "pjit": "jaxpr",
    "closed_call": "call_jaxpr",
    "core_call": "call_jaxpr",
    "custom_jvp_call": "call_jaxpr",
    "custom_vjp_call": "call_jaxpr",
    "custom_vjp_call_jaxpr": "fun_jaxpr",
    "remat": "jaxpr",
    "checkpoint": "jaxpr",
}


def _dot_general(a: Term, b: Term, numbers: Any) -> Term:
    """``dot_general`` as numpy's ``dot``/``matmul`` where it is one (contract a's last axis with b's first
    or next-to-last, leading batch axes in order), else as an ``einsum``."""
    (ca, cb), (ba, bb) = numbers
    ca, cb, ba, bb = (tuple(int(i) for i in v) for v in (ca, cb, ba, bb))
    batch = tuple(range(len(ba)))
    if ba == batch and bb == batch and ca == (a.ndim - 1,):
        if not batch and b.ndim <= 2 and cb == (0,):
            return get_op("dot")(a, b)
        if b.ndim >= 2 and a.ndim >= 2 and cb == (b.ndim - 2,):
            return get_op("matmul")(a, b)
    return contraction(a, b, (ca, cb), (ba, bb))  # any other contraction (jnp.einsum's): an einsum


def _reverse(x: Term, axes: tuple[int, ...]) -> Term:
    """``rev``: the entries of ``axes`` in reverse order (a slice of step -1 on each)."""
    return getitem(x, tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(x.ndim)))


def _with_ones(shape: tuple, positions: tuple) -> tuple:
    """``shape`` with length-1 axes inserted to sit at ``positions`` of the result."""
    out, rest = [], iter(shape)
    for i in range(len(shape) + len(positions)):
        out.append(1 if i in positions else next(rest))
    return tuple(out)


def _broadcast(x: Term, shape: Sequence[int], dims: Sequence[int]) -> Term:
    """``x`` broadcast to ``shape``, its axes at positions ``dims``: a reshape, then ``broadcast_to``."""
    shape = tuple(int(d) for d in shape)
    if tuple(x.shape) == shape:
        return x
    placed = [1] * len(shape)
    for axis, d in zip(dims, x.shape, strict=True):
        placed[int(axis)] = d
    return broadcast_to(reshape(x, tuple(placed)), shape)


def _drop_axes(x: Term, axes: tuple[int, ...]) -> Term:
    """``x`` without its length-1 ``axes`` (a reshape)."""
    return reshape(x, tuple(d for i, d in enumerate(x.shape) if i not in axes)) if axes else x


def _reshape(x: Term, shape: tuple, dimensions: Any = None) -> Term:
    """``x``'s entries in row-major order in ``shape`` (``dimensions``, a transpose first, is refused)."""
    if dimensions is not None:
        raise ConversionError("from_jax: reshape with dimensions (a transpose first) is not read")
    return reshape(x, tuple(int(d) for d in shape))


def _constant(t: Term, what: str) -> np.ndarray:
    """The value of a term computed from constants only (JAX's index arithmetic on literals)."""
    if t.free_symbols:
        raise ConversionError(f"from_jax: {what} at positions computed from the inputs; exprgraph's are constants")
    return np.asarray(evaluate(t, {}))


def _gather(x: Term, indices: Term, dimension_numbers: Any = None, slice_sizes: Any = (), **p: Any) -> Term:
    """``gather`` that is numpy's ``take`` along one axis (``x[idx]``, ``m[:, idx]``) at constant indices."""
    dn = dimension_numbers
    values = _constant(indices, "gather")
    (axis,) = tuple(dn.start_index_map)[:1] or (-1,)
    k = values.ndim - 1
    offsets = tuple(range(axis)) + tuple(range(axis + k, x.ndim - 1 + k))
    simple = (
        len(dn.start_index_map) == 1
        and tuple(dn.collapsed_slice_dims) == (axis,)
        and not tuple(getattr(dn, "operand_batching_dims", ()))
        and values.shape[-1:] == (1,)
        and tuple(int(d) for d in slice_sizes) == tuple(1 if i == axis else d for i, d in enumerate(x.shape))
        and tuple(dn.offset_dims) == offsets
    )
    if not simple:
        raise ConversionError(f"from_jax: gather with dimension numbers {dn} is no take along one axis")
    try:
        return take(x, values[..., 0].astype(np.int64), axis=axis)
    except ShapeError as exc:
        raise ConversionError(f"from_jax: gather: {exc}") from None


def _scatter_add(x: Term, indices: Term, updates: Term, dimension_numbers: Any = None, **p: Any) -> Term:
    """``scatter-add`` that adds along one axis at constant indices (``x.at[idx].add(u)``): ``x + scatter_add``."""
    dn = dimension_numbers
    values = _constant(indices, "scatter-add")
    (axis,) = tuple(dn.scatter_dims_to_operand_dims)[:1] or (-1,)
    k = values.ndim - 1
    simple = (
        len(dn.scatter_dims_to_operand_dims) == 1
        and tuple(dn.inserted_window_dims) == (axis,)
        and not tuple(getattr(dn, "operand_batching_dims", ()))
        and values.shape[-1:] == (1,)
        and tuple(dn.update_window_dims) == tuple(range(axis)) + tuple(range(axis + k, x.ndim - 1 + k))
    )
    if not simple:
        raise ConversionError(f"from_jax: scatter-add with dimension numbers {dn} adds along more than one axis")
    try:
        index = const(values[..., 0].astype(np.int64))
        return x + get_op("scatter_add")(updates, index, spec=(axis, int(x.shape[axis])))
    except ShapeError as exc:
        raise ConversionError(f"from_jax: scatter-add: {exc}") from None


def _convert(x: Term, dtype: str) -> Term:
    """``convert_element_type`` where it changes no value: widening, bools as numbers, truth values."""
    want = _dtype(dtype)
    if want == x.dtype:
        return x
    if x.dtype == BOOL:
        return get_op("where")(x, const(1, want), const(0, want))
    if want == BOOL:
        return get_op("ne")(x, const(0.0 if is_float(x.dtype) else 0, x.dtype))
    if want == FLOAT64:
        return x * const(1.0)  # int64 or float32 to float64 (int64 exactly up to 2**53)
    raise ConversionError(f"from_jax: convert_element_type of {x.dtype} to {dtype} rounds; no exprgraph op does")


_NUMPY = {FLOAT64: np.float64, FLOAT32: np.float32, INT64: np.int64, BOOL: np.bool_}


def _dtype(name: str) -> str:
    if name == "bool":
        return BOOL
    if name.startswith(("int", "uint")):
        return INT64
    if name in ("float32", "float16", "bfloat16"):
        return FLOAT32
    if name == "float64":
        return FLOAT64
    raise ConversionError(f"from_jax: the dtype {name} has no exprgraph counterpart")


def _literal(value: Any, aval: Any) -> Term:
    array = np.asarray(value)
    data: Any = array.astype(_NUMPY[_dtype(str(aval.dtype))])
    return const(data if data.shape else data[()].item())


def _read(closed: Any, inputs: list[Term]) -> list[Term]:
    """The terms of a closed jaxpr's outputs for its input terms (sub-jaxprs inlined, an explicit stack)."""
    frames = [_Frame(closed, inputs)]
    while True:
        frame = frames[-1]
        if frame.pending is not None:  # a sub-jaxpr finished: bind its outputs
            frame.bind(frame.pending)
            frame.pending = None
        if frame.at == len(frame.jaxpr.eqns):
            outs = [frame.get(v) for v in frame.jaxpr.outvars]
            frames.pop()
            if not frames:
                return outs
            frames[-1].pending = outs
            continue
        eqn = frame.jaxpr.eqns[frame.at]
        args = [frame.get(v) for v in eqn.invars]
        name = eqn.primitive.name
        if name in STRUCTURAL:
            frames.append(_Frame(eqn.params[STRUCTURAL[name]], args))
            continue
        several = MULTIPLE.get(name)
        if several is not None:  # a primitive with several outputs (top_k: values and indices)
            frame.bind([_checked(t, eqn, k) for k, t in enumerate(several(*args, **eqn.params))])
            continue
        build = PRIMITIVES.get(name)
        if build is None:
            raise ConversionError(f"from_jax: no exprgraph op for JAX's primitive {name!r}")
        frame.bind([_checked(build(*args, **eqn.params), eqn)])


def _checked(term: Term, eqn: Any, out: int = 0) -> Term:
    """``term``, if its dtype and shape are output ``out``'s in JAX (JAX's promotion is explicit in a jaxpr)."""
    aval = eqn.outvars[out].aval
    if term.dtype != _dtype(str(aval.dtype)) or tuple(term.shape) != tuple(aval.shape):
        raise ConversionError(
            f"from_jax: {eqn.primitive.name} gives {aval.dtype}{list(aval.shape)} in JAX,"
            f" {term.dtype}{list(term.shape)} as exprgraph computes it"
        )
    return term


class _Frame:
    """One jaxpr being read: its variables' terms and the next equation."""

    def __init__(self, closed: Any, inputs: list[Term]) -> None:
        self.jaxpr = getattr(closed, "jaxpr", closed)
        consts = getattr(closed, "consts", ())
        self.env: dict[Any, Term] = {}
        for var, value in zip(self.jaxpr.constvars, consts, strict=True):
            self.env[var] = _literal(value, var.aval)
        for var, term in zip(self.jaxpr.invars, inputs, strict=True):
            self.env[var] = term
        self.at = 0
        self.pending: list[Term] | None = None

    def get(self, var: Any) -> Term:
        if hasattr(var, "val"):  # a Literal
            return _literal(var.val, var.aval)
        return self.env[var]

    def bind(self, terms: list[Term]) -> None:
        eqn = self.jaxpr.eqns[self.at]
        for var, term in zip(eqn.outvars, terms, strict=True):
            self.env[var] = term
        self.at += 1


_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _dynamic_slice(x: Term, *starts: Term, slice_sizes: Sequence[int] = (), **p: Any) -> Term:
    """A slice at constant starts (JAX clamps them so the slice fits); one element of a tensor symbol at
    computed starts as ``access``."""
    sizes = [int(k) for k in slice_sizes]
    if all(not s.free_symbols for s in starts):
        out = x
        for axis, (start, size) in enumerate(zip(starts, sizes, strict=True)):
            first = min(max(int(_constant(start, "dynamic_slice")), 0), x.shape[axis] - size)
            out = slice_axis(out, axis, first, first + size)
        return out
    if x.op.name != "symbol" or any(k != 1 for k in sizes):
        raise ConversionError("from_jax: dynamic_slice at computed starts of more than one element has no exprgraph op")
    index = [
        get_op("minimum")(get_op("maximum")(i, const(0)), const(int(d) - 1))
        for i, d in zip(starts, x.shape, strict=True)
    ]
    return insert_axes(get_op("access")(x, *index), range(x.ndim))


def _slice(
    x: Term, start_indices: Sequence[int] = (), limit_indices: Sequence[int] = (), strides: Any = None, **p: Any
) -> Term:
    """A static slice, one ``slice_axis`` per axis it cuts."""
    steps = strides or (1,) * x.ndim
    key = tuple(slice(int(a), int(b), int(c)) for a, b, c in zip(start_indices, limit_indices, steps, strict=True))
    return getitem(x, key)


PRIMITIVES["dynamic_slice"] = _dynamic_slice
PRIMITIVES["gather"] = _gather
PRIMITIVES["pad"] = lambda x, value, padding_config=(), **p: pad(x, value, padding_config)
PRIMITIVES["tile"] = lambda x, reps=(), **p: tile(x, tuple(int(r) for r in reps))


PRIMITIVES["scatter-add"] = _scatter_add
PRIMITIVES["slice"] = _slice


def _iota(dtype: Any = None, shape: tuple = (), dimension: int = 0, **p: Any) -> Term:
    """``iota`` (``jnp.arange`` of a length): the positions along one axis, broadcast to the shape, a constant."""
    along = np.arange(shape[dimension]).reshape([-1 if i == dimension else 1 for i in range(len(shape))])
    return _literal(np.broadcast_to(along, shape), np.empty(0, dtype))


PRIMITIVES["iota"] = _iota


def _input_symbols(fn: Any, avals: list[Any], names: Sequence[str] | None) -> list[Term]:
    """Symbols for the inputs: ``to_jax``'s own, ``names``, the parameters' names, or ``x0, x1...``."""
    given = getattr(fn, "inputs", None)
    if names is None and given is not None and len(given) == len(avals):
        names = [s.name for s in given]  # to_jax's symbols, given back where the examples' shapes are theirs
        same = all(
            s.dtype == _dtype(str(a.dtype)) and tuple(s.shape) == tuple(a.shape)
            for s, a in zip(given, avals, strict=True)
        )
        if same:
            return list(given)
    if names is None:
        try:
            found = inspect.signature(fn).parameters.values() if callable(fn) else ()
            params = [p.name for p in found if p.default is p.empty and p.kind in _POSITIONAL]
        except (TypeError, ValueError):
            params = []
        names = params if len(params) == len(avals) else [f"x{i}" for i in range(len(avals))]
    if len(names) != len(avals):
        raise ConversionError(f"from_jax: {len(names)} names for {len(avals)} inputs")
    return [Symbol(n, _dtype(str(a.dtype)), tuple(int(d) for d in a.shape)) for n, a in zip(names, avals, strict=True)]


def from_jax(fn: Any, *example_args: Any, names: Sequence[str] | None = None) -> Any:
    """Terms computing a JAX function (traced on ``example_args``) or a jaxpr: a term, or a list for several outputs."""
    jax = require("jax", "jax")
    if hasattr(fn, "eqns") or hasattr(fn, "jaxpr"):
        closed = fn
    elif callable(fn):
        closed = jax.make_jaxpr(fn)(*example_args)
    else:
        raise ConversionError(f"from_jax takes a function or a jaxpr, not {type(fn).__name__}")
    jaxpr = getattr(closed, "jaxpr", closed)
    symbols = _input_symbols(fn, [v.aval for v in jaxpr.invars], names)
    outs = _read(closed, symbols)
    return outs[0] if len(outs) == 1 else outs


register_converter(Converter("jax", "from", from_jax, "jax"))
