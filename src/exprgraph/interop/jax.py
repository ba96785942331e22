"""Terms as a JAX function, for ``jax.jit``, ``jax.grad`` and accelerators (needs ``exprgraph[jax]``).

``to_jax(outputs, inputs)`` returns a plain Python function of the inputs' values that computes
the outputs with ``jax.numpy``; JAX traces it like any function of its own. The DAG is laid out
once, children first, as a list of steps, and the function runs the steps in a loop: each shared
node is computed once and nothing recurses, so deep chains trace at the default recursion limit.

Each op's JAX function is found from its table entry: an op with a numpy ``ufunc`` uses the
``jax.numpy`` function of the same name (``np.true_divide`` -> ``jnp.true_divide``); the others
are listed in ``SPECIAL``. Float ``//`` and ``%`` are spelled out as numpy computes them
(``EXACT``): JAX's own differ in the sign of a zero quotient, which ``1/(a//b)`` turns into the
sign of an infinity; ``a**0.5`` is ``sqrt(a)``, as in our pow. Values follow JAX's precision:
float32 unless 64-bit mode is on (``jax.config.update("jax_enable_x64", True)``); float32 terms
compute in float32 either way. ``log1p``, ``expm1`` and ``logaddexp`` are ``jax.numpy``'s,
``softplus``, ``log_sigmoid`` and ``logsumexp`` ``jax.nn``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..core import Symbol, Term
from ..core.dtypes import FLOAT32, is_float
from ..core.stdops import bool_casts
from ..core.walk import postorder
from ..errors import ConversionError
from ._optional import require

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
}


def _divmod(a: Any, b: Any) -> tuple[Any, Any]:
    """Float ``a // b`` and ``a % b`` exactly as numpy computes them (signs of zero included)."""
    import jax.numpy as jnp

    m = jnp.fmod(a, b)
    shift = (m != 0) & ((b < 0) != (m < 0))  # the remainder takes the divisor's sign
    mod = jnp.where(shift, m + b, jnp.where(m != 0, m, jnp.copysign(0.0, b)))
    div = (a - m) / b
    div = jnp.where(shift, div - 1.0, div)
    floor = jnp.floor(div)
    floor = jnp.where(div - floor > 0.5, floor + 1.0, floor)
    floor = jnp.where(div != 0, floor, jnp.copysign(0.0, a / b))
    return jnp.where(b != 0, floor, a / b), mod


def _floor_divide(a: Any, b: Any) -> Any:
    import jax.numpy as jnp

    if jnp.issubdtype(jnp.result_type(a, b), jnp.floating):
        return _divmod(a, b)[0]
    return jnp.floor_divide(a, b)


def _mod(a: Any, b: Any) -> Any:
    import jax.numpy as jnp

    if jnp.issubdtype(jnp.result_type(a, b), jnp.floating):
        return _divmod(a, b)[1]
    return jnp.mod(a, b)


def _power(a: Any, b: Any) -> Any:
    """``a**b`` with ``a**0.5`` read as ``sqrt(a)``, as our pow does (-0.0 at -0.0, nan at -inf; pow: 0.0, inf)."""
    import jax.numpy as jnp

    out = jnp.power(a, b)
    if not (jnp.issubdtype(out.dtype, jnp.floating) and jnp.issubdtype(jnp.result_type(b), jnp.floating)):
        return out
    half = b == 0.5
    # sqrt of 1.0 where the exponent is not 0.5, so that branch's gradient stays finite there
    return jnp.where(half, jnp.sqrt(jnp.where(half, a, 1.0)), out)


#: ops whose JAX function differs from numpy's in corner cases, computed our way instead
EXACT = {"floordiv": _floor_divide, "mod": _mod, "pow": _power}


def jax_function_of(op: Any) -> Callable[..., Any]:
    """The JAX function computing ``op`` (from its ufunc's name, or :data:`SPECIAL`)."""
    jax = require("jax", "jax")
    import jax.numpy as jnp

    if op.name in EXACT:
        return EXACT[op.name]
    if op.name in SPECIAL:
        path = SPECIAL[op.name].split(".")
        fn: Any = jax if path[0] == "nn" else jnp
        for part in path:
            fn = getattr(fn, part)
        return fn
    name = getattr(op.ufunc, "__name__", None)
    if name is not None and hasattr(jnp, name):
        return getattr(jnp, name)
    raise ConversionError(f"to_jax: the op {op.name!r} has no JAX counterpart")


def _step(node: Term, index: dict[Term, int]) -> tuple:
    """``(function, operand slots, keyword arguments, operand casts, fold)`` for one node.

    ``fold`` marks a variadic op with more than two operands, computed by folding the binary function.
    """
    op = node.op
    fn = jax_function_of(op)
    slots = tuple(index[a] for a in node.args)
    kwargs: dict[str, Any] = {}
    if op.name in ("sum", "logsumexp"):
        kwargs["axis"] = node.attr
    elif op.name == "transpose":
        kwargs["axes"] = node.attr
    # our arithmetic counts bools as ints (as float32 next to float32), and our float functions take
    # ints (JAX's may not): cast to the float of the result (float32 stays float32 in 64-bit mode)
    casts: tuple = ()
    if op.counts_bools:
        casts = tuple((i, "float32" if c == FLOAT32 else int) for i, c in enumerate(bool_casts(node)) if c is not None)
    elif op.float_result:
        want = "float32" if node.dtype == FLOAT32 else float
        casts = tuple((i, want) for i, a in enumerate(node.args) if not is_float(a.dtype))
    return fn, slots, kwargs, casts, len(slots) > 2 and op.arity[1] is None


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
            steps.append(("const", value))
        else:
            steps.append(_step(node, index))
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
                fn, slots, kwargs, casts, fold = step
                args = [results[j] for j in slots]
                for k, kind in casts:
                    args[k] = jnp.asarray(args[k]).astype(kind)
                if fold:
                    out = fn(args[0], args[1])
                    for extra in args[2:]:
                        out = fn(out, extra)
                    results[i] = out
                else:
                    results[i] = fn(*args, **kwargs)
        picked = tuple(results[j] for j in out_slots)
        return picked[0] if single else picked

    run.inputs = tuple(ins)  # type: ignore[attr-defined]
    run.__doc__ = f"JAX function of ({', '.join(s.name for s in ins)}) computing {len(outs)} output(s)."
    return run
