"""Elementwise value rules: arithmetic, comparisons, logic, ``Where``, ``Cast`` and reductions of small tensors.

Entries are ints, int64 terms (dimensions) or None (unknown); a float tensor's entries are integral
(an int or a term) or a non-integral float constant. Operands broadcast as numpy does (object arrays
of entries). Integer results that would wrap in int64 or divide by zero become unknown entries; a
comparison with a term is decided through ``inf.env`` (a :class:`~exprgraph.dims.DimEnv`): True or
False when it holds for every value of the dims, else unknown. Imports: core, errors, onnx_dims.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core import Term, as_term, get_op
from ..errors import DimOverflowError, ShapeError
from .onnx_dims import INT64_MAX, INT64_MIN, MAX_VALUE_SIZE, Dim, Value, _axes, _int_attr, _ints_attr, int64
from .onnx_values_io import BOOL_TYPE, FLOAT_TYPES, normal

if TYPE_CHECKING:
    from .onnx_shapes import Inference

__all__ = ["MATH_RULES", "array", "as_value", "operands", "decide"]

Rule = Callable[["Inference", Any], "Value | list[Value | None] | None"]
_NUMBER = (int, float)


def array(v: Value) -> np.ndarray:
    """The entries of ``v`` as a numpy object array of its shape (entries assigned one by one: terms iterate)."""
    out = np.empty(len(v.entries), dtype=object)
    for i, e in enumerate(v.entries):
        out[i] = e
    return out.reshape(v.shape)


def as_value(a: np.ndarray, kind: str) -> Value | None:
    """A Value holding ``a``'s entries (None when it is not small)."""
    if a.size > MAX_VALUE_SIZE:
        return None
    return Value(tuple(a.reshape(-1).tolist()), a.ndim == 0, kind, tuple(a.shape) if a.ndim > 1 else None)


def operands(inf: Inference, node: Any, first: int = 0) -> list[Value] | None:
    """The values of inputs ``first``.. (any rank), or None when one is not known."""
    out = [inf.tensor(node, i) for i in range(first, len(node.input))]
    return None if not out or any(v is None for v in out) else out  # type: ignore[return-value]


def _safe(fn: Callable[..., Dim], *args: Any) -> Dim:
    """``fn(*args)``; None for an unknown operand, an int64 wrap or a division by zero."""
    if any(a is None for a in args):
        return None
    try:
        return fn(*args)
    except (DimOverflowError, ArithmeticError):
        return None


def broadcast(vs: list[Value]) -> tuple[list[np.ndarray], tuple[int, ...]] | None:
    """The entries of ``vs`` broadcast together, each flattened, and the shape; None when not small."""
    try:
        shape = np.broadcast_shapes(*(v.shape for v in vs))
    except ValueError as exc:
        raise ShapeError(f"values of shapes {[v.shape for v in vs]} do not broadcast") from exc
    if math.prod(shape) > MAX_VALUE_SIZE:
        return None
    return [np.broadcast_to(array(v), shape).reshape(-1) for v in vs], shape


def elementwise(inf: Inference, node: Any, fn: Callable[..., Dim], kind: str | None = None) -> Value | None:
    """``fn(inf, x, y)`` over the broadcast entries of the inputs, folded left over a variadic op's inputs."""
    vs = operands(inf, node)
    if vs is None:
        return None
    plain = _plain_elementwise(inf, vs, fn, kind)
    if plain is not None:
        return plain
    found = broadcast(vs)
    if found is None:
        return None
    flat, shape = found
    out = np.empty(len(flat[0]), dtype=object)
    for i in range(len(out)):
        acc = flat[0][i]
        for a in flat[1:]:
            acc = _safe(fn, inf, acc, a[i])
        out[i] = acc
    return as_value(out.reshape(shape), kind or vs[0].kind)


def _plain_elementwise(inf: Inference, vs: list[Value], fn: Callable[..., Dim], kind: str | None) -> Value | None:
    """What :func:`elementwise` gives when every value is 0-d or 1-d and they broadcast (None otherwise: the
    general road then computes it, or says why the shapes do not broadcast), without numpy."""
    n, vector = 1, False
    for v in vs:
        if v.dims is not None or (v.scalar and len(v.entries) != 1):
            return None
        if not v.scalar:
            vector, k = True, len(v.entries)
            if k != 1:
                if n not in (1, k):
                    return None
                n = k
    rows = [v.entries if len(v.entries) == n else v.entries * n for v in vs]  # (a single entry repeated)
    out = []
    for i in range(n):
        acc = rows[0][i]
        for row in rows[1:]:
            acc = _safe(fn, inf, acc, row[i])
        out.append(acc)
    return Value(tuple(out), not vector, kind or vs[0].kind)


def _numbers(*xs: Any) -> bool:
    return all(x.__class__ in _NUMBER for x in xs)


def _dim(x: Any) -> bool:
    """An int or a term: something the dimension algebra computes with."""
    return x.__class__ is int or x.__class__ is Term


def _add(inf: Inference, x: Any, y: Any) -> Dim:
    # x + y
    return normal(x + y) if _numbers(x, y) and float in (x.__class__, y.__class__) else _dims(inf, "add", x, y)


def _sub(inf: Inference, x: Any, y: Any) -> Dim:
    # x - y
    return normal(x - y) if _numbers(x, y) and float in (x.__class__, y.__class__) else _dims(inf, "sub", x, y)


def _mul(inf: Inference, x: Any, y: Any) -> Dim:
    # x * y
    return normal(x * y) if _numbers(x, y) and float in (x.__class__, y.__class__) else _dims(inf, "mul", x, y)


def _dims(inf: Inference, name: str, x: Any, y: Any) -> Dim:
    """``inf.d.<name>(x, y)`` when both are dims (ints or terms), else unknown."""
    return getattr(inf.d, name)(x, y) if _dim(x) and _dim(y) else None


def _max(inf: Inference, x: Any, y: Any) -> Dim:
    # max(x, y)
    return normal(max(x, y)) if _numbers(x, y) else _dims(inf, "max", x, y)


def _min(inf: Inference, x: Any, y: Any) -> Dim:
    # min(x, y)
    return normal(min(x, y)) if _numbers(x, y) else _dims(inf, "min", x, y)


def _sign_of(inf: Inference, x: Any) -> int | None:
    """-1, 0 or 1 when the sign of ``x`` is the same for every value of the dims, else None."""
    if x.__class__ in _NUMBER:
        return (x > 0) - (x < 0)
    if x.__class__ is not Term:
        return None
    lo, hi = inf.env.bound(x)
    if lo > 0:
        return 1
    if hi < 0:
        return -1
    return 0 if lo == hi == 0 else None


def _low_high(inf: Inference, x: Any) -> tuple[Any, Any]:
    """Bounds of an int or term for every value of the dims."""
    return (x, x) if x.__class__ in _NUMBER else inf.env.bound(x)


def _int_div(inf: Inference, x: Any, y: Any) -> Dim:
    # integer x / y truncates toward zero: floor(x/y) when x >= 0 < y, -((-x)//y) when x <= 0 < y
    if x.__class__ is int and y.__class__ is int:
        q = abs(x) // abs(y)
        return int64(q if (x < 0) == (y < 0) else -q)
    if not (_dim(x) and _dim(y)) or _low_high(inf, y)[0] <= 0:
        return None
    low, high = _low_high(inf, x)
    if low >= 0:
        return inf.d.floordiv(x, y)
    return inf.d.sub(0, inf.d.floordiv(inf.d.sub(0, x), y)) if high <= 0 else None


def _float_div(inf: Inference, x: Any, y: Any) -> Dim:
    # float x / y: a number, or a dim when y divides x for every value
    if _numbers(x, y):
        return normal(x / y)
    if _dim(x) and _dim(y) and inf.env.divisible(x, y) is True and _low_high(inf, y)[0] > 0:
        return inf.d.floordiv(x, y)
    return None


def _mod(fmod: bool) -> Callable[[Inference, Any, Any], Dim]:
    def rule(inf: Inference, x: Any, y: Any) -> Dim:
        # Mod: x - y*floor(x/y) (the divisor's sign); fmod=1: x - y*trunc(x/y) (the dividend's sign)
        if _numbers(x, y):
            return normal(math.fmod(x, y) if fmod else x % y) if y != 0 else None
        if not (_dim(x) and _dim(y)) or _low_high(inf, y)[0] <= 0 or (fmod and _low_high(inf, x)[0] < 0):
            return None
        return inf.d.mod(x, y)

    return rule


def _pow(inf: Inference, x: Any, y: Any) -> Dim:
    # x ** k for an int k >= 0: x*x*...*x
    if y.__class__ is not int or y < 0:
        return None
    if x.__class__ is int:
        return int64(x**y) if abs(x) < 2 or y < 64 else None
    if x.__class__ is float:
        return normal(x**y)
    out: Dim = 1
    for _ in range(min(y, 9)):
        out = inf.d.mul(out, x)
    return out if y <= 8 else None


def decide(inf: Inference, op: str, x: Any, y: Any) -> bool | None:
    """``x op y`` (op: eq lt le gt ge) for every value of the dims: True, False, or None when undecided."""
    if _numbers(x, y):
        return {"eq": x == y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[op]
    if not (_dim(x) and _dim(y)):
        return None
    if x is y:
        return op in ("eq", "le", "ge")
    try:
        return inf.env.statically_known(get_op(op)(as_term(x), as_term(y)))
    except (ArithmeticError, ValueError):
        return None


def _compare(op: str) -> Callable[[Inference, Any, Any], Dim]:
    def rule(inf: Inference, x: Any, y: Any) -> Dim:
        # Equal/Less/...: 1 when it holds for every value, 0 when for none
        known = decide(inf, op, x, y)
        return None if known is None else int(known)

    return rule


def _logic(table: Callable[[int, int], int], short: int | None) -> Rule:
    def rule(inf: Inference, node: Any) -> Value | None:
        # And: 0 when either is 0; Or: 1 when either is 1; Xor: from both
        vs = operands(inf, node)
        found = None if vs is None or len(vs) != 2 else broadcast(vs)
        if found is None:
            return None
        (a, b), shape = found
        out = np.empty(len(a), dtype=object)
        for i in range(len(out)):
            x, y = a[i], b[i]
            out[i] = short if short is not None and short in (x, y) else None if None in (x, y) else table(x, y)
        return as_value(out.reshape(shape), "bool")

    return rule


def _where(inf: Inference, node: Any) -> Value | None:
    # Where(c, x, y): x where c is 1, y where c is 0; where c is unknown, x when x and y are the same
    c_shape = inf.shape(node, 0)
    if inf.tensor(node, 0) is None and c_shape is not None and all(d.__class__ is int for d in c_shape):
        unknown = Value((None,) * math.prod(c_shape), not c_shape, "bool", c_shape if len(c_shape) > 1 else None)  # type: ignore[arg-type]
        vs = [unknown, *(operands(inf, node, 1) or [])] if len(node.input) == 3 else None
    else:
        vs = operands(inf, node)
    found = None if vs is None or len(vs) != 3 else broadcast(vs)
    if vs is None or found is None:
        return None
    (c, x, y), shape = found
    out = np.empty(len(c), dtype=object)
    for i in range(len(out)):
        same = x[i] is y[i] or (_numbers(x[i], y[i]) and x[i] == y[i])
        out[i] = x[i] if c[i] == 1 or (c[i] is None and same) else y[i] if c[i] == 0 else None
    return as_value(out.reshape(shape), vs[1].kind)


def _unary(fn: Callable[[Inference, Any], Dim]) -> Rule:
    def rule(inf: Inference, node: Any) -> Value | None:
        v = inf.tensor(node, 0)
        if v is None:
            return None
        return Value(tuple(_safe(fn, inf, e) for e in v.entries), v.scalar, v.kind, v.dims)

    return rule


def _neg(inf: Inference, x: Any) -> Dim:
    # -x
    return normal(-x) if x.__class__ is float else inf.d.sub(0, x)


def _abs(inf: Inference, x: Any) -> Dim:
    # |x| = x when x >= 0, -x when x <= 0, else max(x, -x)
    if x.__class__ in _NUMBER:
        return int64(abs(x)) if x.__class__ is int else normal(abs(x))
    low, high = _low_high(inf, x)
    return x if low >= 0 else inf.d.sub(0, x) if high <= 0 else inf.d.max(x, inf.d.sub(0, x))


def _round(fn: Callable[[float], int]) -> Callable[[Inference, Any], Dim]:
    def rule(inf: Inference, x: Any) -> Dim:
        # Floor/Ceil/Round of an integral entry is itself
        return fn(x) if x.__class__ is float else x

    return rule


#: ONNX element type (TensorProto enum) -> the range of the int type it names
_INT_RANGES = {7: (INT64_MIN, INT64_MAX), 6: (-(2**31), 2**31 - 1), 5: (-(2**15), 2**15 - 1), 3: (-128, 127),
               2: (0, 255), 4: (0, 2**16 - 1), 12: (0, 2**32 - 1), 13: (0, INT64_MAX)}  # fmt: skip
#: float element types -> the largest int magnitude they hold exactly (float, double, float16, bfloat16)
_EXACT = {1: 2**24, 11: 2**53, 10: 2**11, 16: 2**8}


def _cast_entry(inf: Inference, x: Any, to: int) -> Dim:
    # Cast: to an int type, floats truncate and ints outside its range are unknown; to bool, x != 0;
    # to a float type, ints it holds exactly
    if to in _INT_RANGES:
        low, high = _INT_RANGES[to]
        x = int(x) if x.__class__ is float else x
        return None if x.__class__ is int and not low <= x <= high else x
    if to == BOOL_TYPE:
        known = decide(inf, "eq", x, 0)
        return None if known is None else int(not known)
    limit = _EXACT[to]
    if x.__class__ is int:
        return x if abs(x) <= limit else None
    return x if x.__class__ is float or to == 11 or (x.__class__ is Term and inf.env.bound(x)[1] <= limit) else None


def _cast(inf: Inference, node: Any) -> Value | None:
    v, to = inf.tensor(node, 0), _int_attr(node, "to", 0)
    if v is None or (to not in _INT_RANGES and to not in FLOAT_TYPES and to != BOOL_TYPE):
        return None
    kind = "int" if to in _INT_RANGES else "bool" if to == BOOL_TYPE else "float"
    return Value(tuple(_safe(_cast_entry, inf, e, to) for e in v.entries), v.scalar, kind, v.dims)


def _reduce(name: str) -> Rule:
    def rule(inf: Inference, node: Any) -> Value | None:
        # ReduceSum/Prod/Max/Min over every axis of a small tensor: one entry
        v = inf.tensor(node, 0)
        if v is None:
            return None
        given = inf.ints(node, 1) if len(node.input) > 1 and node.input[1] else _ints_attr(node, "axes")
        if given is None and len(node.input) > 1 and node.input[1]:
            return None
        if not given and _int_attr(node, "noop_with_empty_axes", 0):
            return v
        rank = len(v.shape)
        if given and sorted(_axes(given, max(rank, 1))) != list(range(rank)):
            return None  # a partial reduction of an n-d tensor: not followed
        fn = {"sum": _add, "prod": _mul, "max": _max, "min": _min}[name]
        acc: Dim = v.entries[0] if v.entries else {"sum": 0, "prod": 1}.get(name)
        for e in v.entries[1:]:
            acc = _safe(fn, inf, acc, e)
        keep = _int_attr(node, "keepdims", 1)
        return Value((acc,), not keep or rank == 0, v.kind, (1,) * rank if keep and rank > 1 else None)

    return rule


def _binary(fn: Callable[[Inference, Any, Any], Dim]) -> Rule:
    return lambda inf, node: elementwise(inf, node, fn)


def _div_rule(inf: Inference, node: Any) -> Value | None:
    a = inf.tensor(node, 0)
    return elementwise(inf, node, _float_div if a is not None and a.kind == "float" else _int_div)


def _mod_rule(inf: Inference, node: Any) -> Value | None:
    return elementwise(inf, node, _mod(bool(_int_attr(node, "fmod", 0))))


def _comparison(op: str) -> Rule:
    return lambda inf, node: elementwise(inf, node, _compare(op), "bool")


def _not(inf: Inference, node: Any) -> Value | None:
    # Not: 1 - x
    v = inf.tensor(node, 0)
    return (
        None if v is None else Value(tuple(None if e is None else 1 - e for e in v.entries), v.scalar, "bool", v.dims)
    )


def _sign(inf: Inference, x: Any) -> Dim:
    # Sign(x): -1, 0 or 1 when the sign is the same for every value
    return _sign_of(inf, x)


MATH_RULES: dict[str, Rule] = {
    "Add": _binary(_add),
    "Sub": _binary(_sub),
    "Mul": _binary(_mul),
    "Div": _div_rule,
    "Mod": _mod_rule,
    "Max": _binary(_max),
    "Min": _binary(_min),
    "Sum": _binary(_add),
    "Pow": _binary(_pow),
    "Neg": _unary(_neg),
    "Abs": _unary(_abs),
    "Sign": _unary(_sign),
    "Floor": _unary(_round(math.floor)),
    "Ceil": _unary(_round(math.ceil)),
    "Round": _unary(_round(round)),
    "Cast": _cast,
    "Equal": _comparison("eq"),
    "Less": _comparison("lt"),
    "LessOrEqual": _comparison("le"),
    "Greater": _comparison("gt"),
    "GreaterOrEqual": _comparison("ge"),
    "Not": _not,
    "And": _logic(lambda x, y: x & y, 0),
    "Or": _logic(lambda x, y: x | y, 1),
    "Xor": _logic(lambda x, y: x ^ y, None),
    "Where": _where,
    "ReduceSum": _reduce("sum"),
    "ReduceProd": _reduce("prod"),
    "ReduceMax": _reduce("max"),
    "ReduceMin": _reduce("min"),
}
