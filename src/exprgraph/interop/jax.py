"""Terms as a JAX function, for ``jax.jit``, ``jax.grad`` and accelerators (needs ``exprgraph[jax]``).

``to_jax(outputs, inputs)`` returns a plain Python function of the inputs' values that computes
the outputs with ``jax.numpy``; JAX traces it like any function of its own. The DAG is laid out
once, children first, as a list of steps, and the function runs the steps in a loop: each shared
node is computed once and nothing recurses, so deep chains trace at the default recursion limit.

Each op's JAX function is found from its table entry: an op with a numpy ``ufunc`` uses the
``jax.numpy`` function of the same name (``np.true_divide`` -> ``jnp.true_divide``); the others
are listed in ``SPECIAL``. Float ``//`` and ``%`` are spelled out as numpy computes them
(``EXACT``): JAX's own differ in the sign of a zero quotient, which ``1/(a//b)`` turns into the
sign of an infinity; ``a**0.5`` is ``sqrt(a)`` and a float to an odd integer power keeps its
sign, as in our pow; an integer ``n // 0`` and ``n % 0`` are 0, as in ``evaluate``; ``maximum``
and ``minimum`` of -0.0 and 0.0 give the second, as numpy's do (XLA's order the zeros). Constants
carry their dtype and an int64 meeting a float32 computes in float64, as numpy promotes (JAX
alone would compute in float32). Values follow JAX's precision: float32 and int32 unless 64-bit
mode is on (``jax.config.update("jax_enable_x64", True)``); float32 terms compute in float32
either way. On CPU, XLA flushes subnormal numbers to zero (operands and results), which no
setting turns off, and its vectorised float64 division can be an ulp off: docs/interop.md lists
these edge semantics. ``log1p``, ``expm1`` and ``logaddexp`` are ``jax.numpy``'s, ``softplus``,
``log_sigmoid`` and ``logsumexp`` ``jax.nn``'s, ``erf`` and ``erfc`` ``jax.scipy.special``'s; ``access``
is a ``lax.dynamic_slice`` of one element. The reader, ``from_jax``, is in :mod:`.jax_read`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ..core import Symbol, Term
from ..core.dtypes import BOOL, FLOAT32, FLOAT64, INT64, is_float, promote
from ..core.ops_einsum import spec_text as einsum_text
from ..core.ops_index import slice_of
from ..core.stdops import bool_casts
from ..core.walk import postorder
from ..errors import ConversionError
from ._optional import require
from .registry import Converter, register_converter

__all__ = ["to_jax", "jax_function_of"]

#: ops without a numpy ufunc: their JAX spelling (names in ``jax.numpy``, or ``jax.nn.*``)
SPECIAL = {
    "sigmoid": "nn.sigmoid",
    "softplus": "nn.softplus",
    "log_sigmoid": "nn.log_sigmoid",
    "where": "where",
    "dot": "dot",
    "sum": "sum",
    "logsumexp": "nn.logsumexp",
    "transpose": "transpose",
    "erf": "scipy.special.erf",
    "erfc": "scipy.special.erfc",
}


def _copysign(size: Any, sign: Any) -> Any:
    """``|size|`` with the sign of ``sign`` (-0.0 counts as negative: 1/-0.0 is -inf), in primitives
    ``from_jax`` reads (``jnp.copysign`` traces to bit operations)."""
    import jax.numpy as jnp

    negative = (sign < 0) | ((sign == 0) & (1 / jnp.where(sign == 0, sign, 1) < 0))
    return jnp.where(negative, -jnp.abs(size), jnp.abs(size))


def _divmod(a: Any, b: Any) -> tuple[Any, Any]:
    """Float ``a // b`` and ``a % b`` exactly as numpy computes them (signs of zero included)."""
    import jax.numpy as jnp

    m = jnp.fmod(a, b)
    shift = (m != 0) & ((b < 0) != (m < 0))  # the remainder takes the divisor's sign
    mod = jnp.where(shift, m + b, jnp.where(m != 0, m, _copysign(jnp.zeros_like(m), b)))
    div = (a - m) / b
    div = jnp.where(shift, div - 1.0, div)
    floor = jnp.floor(div)
    floor = jnp.where(div - floor > 0.5, floor + 1.0, floor)
    floor = jnp.where(div != 0, floor, _copysign(jnp.zeros_like(floor), a / b))
    return jnp.where(b != 0, floor, a / b), mod


def _floor_divide(a: Any, b: Any) -> Any:
    import jax.numpy as jnp

    if jnp.issubdtype(jnp.result_type(a, b), jnp.floating):
        return _divmod(a, b)[0]
    # n // 0 is 0 (numpy's and evaluate's value; XLA's integer division by zero gives -1)
    zero = b == 0
    return jnp.where(zero, 0, jnp.floor_divide(a, jnp.where(zero, 1, b)))


def _mod(a: Any, b: Any) -> Any:
    import jax.numpy as jnp

    if jnp.issubdtype(jnp.result_type(a, b), jnp.floating):
        return _divmod(a, b)[1]
    zero = b == 0  # n % 0 is 0, as n // 0
    return jnp.where(zero, 0, jnp.mod(a, jnp.where(zero, 1, b)))


def _power(a: Any, b: Any) -> Any:
    """``a**b`` as our pow: ``a**0.5`` is ``sqrt(a)`` (-0.0 at -0.0, nan at -inf; pow: 0.0, inf), and a
    float to an odd integer power keeps its sign (above 2**53 the exponent made a float is even)."""
    import jax.numpy as jnp

    out = jnp.power(a, b)
    if not jnp.issubdtype(out.dtype, jnp.floating):
        return out
    if not jnp.issubdtype(jnp.result_type(b), jnp.floating):
        if not jnp.issubdtype(jnp.result_type(a), jnp.floating):
            return out
        return jnp.where(jnp.fmod(b, 2) != 0, _copysign(out, a), out)  # x**(2k + 1) has the sign of x
    half = b == 0.5
    # sqrt of 1.0 where the exponent is not 0.5, so that branch's gradient stays finite there
    return jnp.where(half, jnp.sqrt(jnp.where(half, a, 1.0)), out)


def _maximum(a: Any, b: Any) -> Any:
    """numpy's maximum: nan if either is nan, else the larger, ``b`` on a tie (XLA's orders -0.0 below 0.0)."""
    import jax.numpy as jnp

    if not jnp.issubdtype(jnp.result_type(a, b), jnp.floating):
        return jnp.maximum(a, b)
    return jnp.where(jnp.isnan(a) | (a > b), a, b)


def _minimum(a: Any, b: Any) -> Any:
    """numpy's minimum: nan if either is nan, else the smaller, ``b`` on a tie (-0.0 and 0.0 are a tie)."""
    import jax.numpy as jnp

    if not jnp.issubdtype(jnp.result_type(a, b), jnp.floating):
        return jnp.minimum(a, b)
    return jnp.where(jnp.isnan(a) | (a < b), a, b)


def _numbers(a: Any, b: Any) -> tuple[Any, Any]:
    """Operands with bools counted as integers (as our truncdiv and fmod count them)."""
    import jax.numpy as jnp

    a, b = jnp.asarray(a), jnp.asarray(b)
    return (a.astype(int) if a.dtype == bool else a), (b.astype(int) if b.dtype == bool else b)


def _truncdiv(a: Any, b: Any) -> Any:
    import jax.numpy as jnp

    a, b = _numbers(a, b)
    if jnp.issubdtype(jnp.result_type(a, b), jnp.floating):
        return jnp.trunc(a / b)
    zero = b == 0  # n // 0 is 0; lax.div rounds toward zero
    return jnp.where(zero, 0, jax_lax().div(a, jnp.where(zero, 1, b)))


def _fmod(a: Any, b: Any) -> Any:
    import jax.numpy as jnp

    a, b = _numbers(a, b)
    if jnp.issubdtype(jnp.result_type(a, b), jnp.floating):
        return jnp.fmod(a, b)
    zero = b == 0  # fmod(n, 0) is 0 for integers
    return jnp.where(zero, 0, jnp.fmod(a, jnp.where(zero, 1, b)))


def _rounding(name: str) -> Callable[[Any], Any]:
    """jnp's floor, ceil or trunc, integers returned as they are (our rounding keeps int64)."""

    def apply(x: Any) -> Any:
        import jax.numpy as jnp

        return getattr(jnp, name)(x) if jnp.issubdtype(jnp.result_type(x), jnp.floating) else x

    return apply


def _sign(x: Any) -> Any:
    import jax.numpy as jnp

    return jnp.where(x == 0, jnp.zeros_like(x), jnp.sign(x))  # numpy's: +0.0 for -0.0 (jnp keeps -0.0)


def _ceil_div(a: Any, b: Any) -> Any:
    # ceil(a/b) = -((-a) // b), the floor division ours
    return -_floor_divide(-a, b)


def _broadcast_dim(a: Any, b: Any) -> Any:
    import jax.numpy as jnp

    return jnp.where(b == 1, a, b)  # a where b == 1, else b


def _access(tensor: Any, *index: Any) -> Any:
    # one dynamic_slice of size 1 (negative indices counted from the end, as numpy's)
    import jax.numpy as jnp

    if not index:
        return tensor.reshape(-1)[0]
    starts = [jnp.where(i < 0, i + d, i) for i, d in zip(index, tensor.shape, strict=True)]
    return jax_lax().dynamic_slice(tensor, starts, (1,) * len(index)).reshape(())


def jax_lax() -> Any:
    """``jax.lax`` (imported when a conversion runs)."""
    import jax.lax

    return jax.lax


_NUMPY = {FLOAT64: np.float64, FLOAT32: np.float32, INT64: np.int64, BOOL: np.bool_}

#: ops whose JAX function differs from numpy's in corner cases (or which jnp lacks), computed our way
EXACT: dict[str, Callable[..., Any]] = {
    "floordiv": _floor_divide,
    "mod": _mod,
    "pow": _power,
    "maximum": _maximum,
    "minimum": _minimum,
}
EXACT.update(truncdiv=_truncdiv, fmod=_fmod, ceil_div=_ceil_div, broadcast_dim=_broadcast_dim, access=_access)
EXACT.update({name: _rounding(name) for name in ("floor", "ceil", "trunc")})
EXACT["identity"] = lambda x: x


def _jnp() -> Any:
    return require("jax.numpy", "to_jax")


def _slice_axis(x: Any, spec: Any = None) -> Any:
    # count entries from start by step along the axis
    axis, start, count, step = spec
    return x[(slice(None),) * (axis % x.ndim) + (slice_of(start, count, step),)]


def _scatter_add(u: Any, index: Any, spec: Any = None) -> Any:
    # zeros of the result's shape with u added at the index along the axis (repeated indices add)
    axis, n = spec
    shape = (*u.shape[:axis], n, *u.shape[axis + np.ndim(index) :])
    return _jnp().zeros(shape, u.dtype).at[(slice(None),) * axis + (index,)].add(u)


#: the vector ops: one call on all operands, the node's attr as the keyword (no binary fold)
VECTOR_OPS: tuple[str, ...]
VECTOR_OPS = ("amax", "amin", "prod", "mean", "slice_axis", "take", "scatter_add", "concat", "reshape", "broadcast_to")
EXACT.update(
    amax=lambda x, axis=None: _jnp().max(x, axis=axis),
    amin=lambda x, axis=None: _jnp().min(x, axis=axis),
    prod=lambda x, axis=None: _jnp().prod(x, axis=axis),
    mean=lambda x, axis=None: _jnp().mean(x, axis=axis),
    slice_axis=_slice_axis,
    take=lambda x, index, axis=None: _jnp().take(x, index, axis=axis or 0),
    scatter_add=_scatter_add,
    concat=lambda *xs, axis=None: _jnp().concatenate(xs, axis=axis or 0),
    reshape=lambda x, shape=None: _jnp().reshape(x, shape),
    broadcast_to=lambda x, shape=None: _jnp().broadcast_to(x, shape),
)
EXACT["sign"] = _sign


def _topk_indices(x: Any, spec: Any = None) -> Any:
    # the largest: lax.top_k on the last axis (ties at the lower index first, as ours); the
    # smallest: a stable argsort, cut at k
    k, axis, largest = spec
    jnp = _jnp()
    x = x.astype(jnp.int8) if x.dtype == jnp.bool_ else x
    if largest:
        return jnp.moveaxis(jax_lax().top_k(jnp.moveaxis(x, axis, -1), k)[1], -1, axis).astype(jnp.int64)
    return jnp.take(jnp.argsort(x, axis=axis, stable=True), jnp.arange(k), axis=axis).astype(jnp.int64)


def _scatter_along(u: Any, index: Any, spec: Any = None) -> Any:
    # zeros of length n along the axis, each row of u added at its positions (repeats add)
    axis, n = spec
    jnp = _jnp()
    u, index = jnp.moveaxis(u.astype(jnp.int64) if u.dtype == jnp.bool_ else u, axis, -1), jnp.moveaxis(index, axis, -1)
    rows = u.reshape(int(np.prod(u.shape[:-1])), u.shape[-1])  # k = 0 too
    out = jnp.zeros((rows.shape[0], n), u.dtype).at[jnp.arange(rows.shape[0])[:, None], index.reshape(rows.shape)]
    return jnp.moveaxis(out.add(rows).reshape((*u.shape[:-1], n)), -1, axis)


def _arange(stop: Any, spec: Any = None) -> Any:
    # the length depends on the value of stop: JAX needs it concrete (outside jit)
    if isinstance(stop, require("jax", "to_jax").core.Tracer):
        raise ConversionError("to_jax: arange's length is the value of its stop: JAX cannot trace it (under jit)")
    return _jnp().arange(spec[0], int(stop), spec[1], dtype=_jnp().int64)


VECTOR_OPS += ("einsum", "topk_indices", "take_along", "scatter_along", "arange")
EXACT.update(
    einsum=lambda *xs, spec=None: _jnp().einsum(einsum_text(spec), *xs),
    topk_indices=_topk_indices,
    take_along=lambda x, index, axis=None: _jnp().take_along_axis(x, index, axis=axis),
    scatter_along=_scatter_along,
    arange=_arange,
)


def jax_function_of(op: Any) -> Callable[..., Any]:
    """The JAX function computing ``op`` (from its ufunc's name, or :data:`SPECIAL`)."""
    jax = require("jax", "jax")
    import jax.numpy as jnp

    if op.name in EXACT:
        return EXACT[op.name]
    if op.name in SPECIAL:
        path = SPECIAL[op.name].split(".")
        if path[0] == "scipy":
            import jax.scipy.special  # a submodule jax does not import itself
        fn: Any = jax if path[0] in ("nn", "scipy") else jnp
        for part in path:
            fn = getattr(fn, part)
        return fn
    name = getattr(op.ufunc, "__name__", None)
    if name is not None and hasattr(jnp, name):
        return getattr(jnp, name)
    raise ConversionError(f"to_jax: the op {op.name!r} has no JAX counterpart")


def _step(node: Term, index: dict[Term, int]) -> tuple:
    """``(function, operand slots, keyword arguments, operand casts, widen)`` for one node.

    ``widen`` is empty for an op of one operand; else one flag per binary step (one step, or one
    per operand after the first for a variadic op, computed by folding the binary function): cast
    both operands of that step to float64 first (``where``: both branches).
    """
    op = node.op
    fn = jax_function_of(op)
    slots = tuple(index[a] for a in node.args)
    kwargs: dict[str, Any] = {}
    if op.name in ("sum", "logsumexp"):
        kwargs["axis"] = node.attr
    elif op.name == "transpose":
        kwargs["axes"] = node.attr
    elif op.name in VECTOR_OPS and op.attr_name is not None and node.attr is not None:
        kwargs[op.attr_name] = node.attr
    # our arithmetic counts bools as ints (as float32 next to float32), and our float functions take
    # ints (JAX's may not): cast to the float of the result (float32 stays float32 in 64-bit mode)
    casts: tuple = ()
    dtypes = [a.dtype for a in node.args]
    if op.counts_bools:
        cast_to = bool_casts(node)
        casts = tuple((i, "float32" if c == FLOAT32 else int) for i, c in enumerate(cast_to) if c is not None)
        dtypes = [d if c is None else c for d, c in zip(dtypes, cast_to, strict=True)]
    elif op.float_result:
        want = "float32" if node.dtype == FLOAT32 else float
        casts = tuple((i, want) for i, a in enumerate(node.args) if not is_float(a.dtype))
        return fn, slots, kwargs, casts, ()
    if op.name in VECTOR_OPS or op.name == "access":
        return fn, slots, kwargs, casts, ()  # one call on all operands, no binary fold
    return fn, slots, kwargs, casts, _widen(op.name, dtypes)


#: the dtypes JAX combines into float32 where numpy (and evaluate) give float64
_JAX_FLOAT32 = frozenset({FLOAT32, INT64})


def _widen(name: str, dtypes: list[str]) -> tuple[bool, ...]:
    """Which binary steps of an op on operands of ``dtypes`` must cast both operands to float64 first."""
    if name == "where":
        return (set(dtypes[1:]) == _JAX_FLOAT32,)
    if len(dtypes) < 2:
        return ()
    flags = []
    have = dtypes[0]
    for d in dtypes[1:]:
        flags.append({have, d} == _JAX_FLOAT32)
        have = promote(have, d)
    return tuple(flags)


def _as_float64(value: Any) -> Any:
    import jax.numpy as jnp

    return jnp.asarray(value).astype(float)  # float64 in 64-bit mode, else float32 (without a warning)


def _apply(fn: Any, name: str, args: list[Any], kwargs: dict[str, Any], widen: tuple[bool, ...]) -> Any:
    """``fn`` on ``args``: directly, or folded over binary steps, each widened to float64 if flagged."""
    if not widen:
        return fn(*args, **kwargs)
    if name == "where":
        if widen[0]:
            args = [args[0], _as_float64(args[1]), _as_float64(args[2])]
        return fn(*args)
    out = args[0]
    for flag, extra in zip(widen, args[1:], strict=True):
        if flag:
            # the exponent of pow stays an integer (its parity decides the sign of the result)
            out, extra = _as_float64(out), (extra if name == "pow" else _as_float64(extra))
        out = fn(out, extra)
    return out


def _inputs(order: list[Term], inputs: Iterable[Any] | None) -> list[Term]:
    """The input symbols: those given (symbols or names), else the outputs' free symbols by name."""
    symbols = {n.name: n for n in order if n.op.name == "symbol"}
    if inputs is None:
        ins = [symbols[name] for name in sorted(symbols)]
    else:
        # a name the outputs do not use is an input they ignore
        ins = [s if s.__class__ is Term else symbols.get(s, Symbol(s)) for s in inputs]
        for given, s in zip(inputs, ins, strict=True):
            if s.op.name != "symbol":
                raise ConversionError(f"to_jax: input {given!r} is not a symbol")
    missing = set(symbols.values()) - set(ins)
    if missing:
        raise ConversionError(f"to_jax: the outputs use symbols not in inputs: {sorted(s.name for s in missing)}")
    return ins


def to_jax(outputs: Term | Sequence[Term], inputs: Iterable[Any] | None = None) -> Callable[..., Any]:
    """A JAX-traceable function ``f(*values)`` of ``inputs`` (symbols or names) computing ``outputs``.

    ``inputs`` defaults to the free symbols of the outputs sorted by name (``f.inputs`` lists
    them). ``f`` returns one array for one output term, a tuple for a list of them.
    """
    require("jax", "jax")
    import jax.numpy as jnp

    single = outputs.__class__ is Term
    outs = [outputs] if single else list(outputs)
    order = postorder(outs)
    ins = _inputs(order, inputs)
    index = {node: i for i, node in enumerate(order)}
    arg_slot = {s: i for i, s in enumerate(ins)}
    # each step: ("input", position) | ("const", value) | (fn, slots, kwargs, int slots)
    steps: list[tuple] = []
    for node in order:
        if node.op.name == "symbol":
            steps.append(("input", arg_slot[node]))
        elif node.op.name == "const":
            value = node.attr.array if hasattr(node.attr, "array") else node.attr
            # a typed value: JAX would take a Python number as weakly typed (x32 + 0.1 in float32)
            steps.append(("const", np.asarray(value, dtype=_NUMPY[node.dtype])))
        else:
            steps.append((*_step(node, index), node.op.name))
    out_slots = [index[t] for t in outs]

    def run(*values: Any) -> Any:
        if len(values) != len(ins):
            raise TypeError(
                f"this function takes {len(ins)} values ({', '.join(s.name for s in ins)}), got {len(values)}"
            )
        results: list[Any] = [None] * len(steps)
        for i, step in enumerate(steps):
            kind = step[0]
            if kind == "input":
                results[i] = values[step[1]]
            elif kind == "const":
                results[i] = step[1]
            else:
                fn, slots, kwargs, casts, widen, name = step
                args = [results[j] for j in slots]
                for k, kind in casts:
                    args[k] = jnp.asarray(args[k]).astype(kind)
                results[i] = _apply(fn, name, args, kwargs, widen)
        picked = tuple(results[j] for j in out_slots)
        return picked[0] if single else picked

    run.inputs = tuple(ins)  # type: ignore[attr-defined]
    run.__doc__ = f"JAX function of ({', '.join(s.name for s in ins)}) computing {len(outs)} output(s)."
    return run


register_converter(Converter("jax", "to", to_jax, "jax"))
