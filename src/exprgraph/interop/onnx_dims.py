"""Dimensions of ONNX shape inference: bounded int64s, ``exprgraph.dims`` terms, or None for unknown.

:class:`Dims` does arithmetic on them, simplified as it goes, and never lets an int leave int64
(:class:`~exprgraph.errors.DimOverflowError`) or a term grow past :data:`MAX_TERM_SIZE` nodes
(it becomes unknown); :class:`Value` holds the known entries of a small integer tensor (a shape
computed in the graph) and :data:`VALUE_RULES` compute them (an int64 result that would wrap at
run time becomes an unknown entry); the helpers read node attributes, checking their types, and
axes. Used by :mod:`.onnx_shape_rules` and :mod:`.onnx_shapes`. Imports: the core, dims and errors.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core import Term, const, get_op
from ..core.shapes import broadcast_shapes
from ..dims import CEIL_DIV, simplify_dim
from ..errors import DimOverflowError, ShapeError, TermTooLargeError
from ._optional import require

if TYPE_CHECKING:
    from .onnx_shapes import Inference

__all__ = ["Dim", "Shape", "Value", "Dims", "broadcast_with_unknowns", "VALUE_RULES"]
__all__ += ["INT64_MIN", "INT64_MAX", "MAX_RANK", "MAX_TERM_SIZE", "MAX_VALUE_SIZE", "int64"]

Dim = int | Term | None
Shape = tuple[Dim, ...] | None

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
#: most axes a tensor may have (numpy allows 64; ONNX models stay far below either)
MAX_RANK = 256
#: largest integer tensor followed as a symbolic value (shape tensors are short)
MAX_VALUE_SIZE = 64
#: a dimension term with more distinct nodes than this is not followed: it becomes unknown
MAX_TERM_SIZE = 512

#: ONNX writes "to the end" as a huge int; anything past this counts as the end of the axis
_BIG = 2**62


def int64(x: int, what: str = "a dimension value") -> int:
    """``x`` when it fits in int64, else DimOverflowError (ONNX computes shapes in int64)."""
    if not INT64_MIN <= x <= INT64_MAX:
        raise DimOverflowError(f"{what} {x} does not fit in int64")
    return x


@dataclass(frozen=True)
class Value:
    """The known contents of a small integer tensor: its entries (ints, terms or None) and whether it is 0-d."""

    entries: tuple[Dim, ...]
    scalar: bool = False


class Dims:
    """Arithmetic on dimensions (int64 ints, terms or None for unknown), simplified as it goes."""

    def __init__(self, positive: bool) -> None:
        self.positive = positive

    def simplify(self, d: Any) -> Dim:
        """``d`` simplified: an int checked to fit in int64, a term in canonical form (None when too large)."""
        if d is None:
            return None
        if d.__class__ is int:
            return int64(d)
        if d.__class__ is not Term:
            raise ShapeError(f"{d!r} is not a dimension (an int or an int64 term)")
        try:
            out = simplify_dim(d, positive=self.positive)
        except OverflowError as exc:  # a constant folded past int64
            raise DimOverflowError(str(exc)) from exc
        except TermTooLargeError:
            return None  # too complex to follow: unknown
        if isinstance(out, int):
            return int64(out)
        return None if out.size > MAX_TERM_SIZE else out

    def binary(self, a: Dim, b: Dim, ints: Callable[[int, int], int], terms: Callable[[Any, Any], Any]) -> Dim:
        if a is None or b is None:
            return None
        if a.__class__ is int and b.__class__ is int:
            return int64(ints(a, b))  # both operands are int64, so the exact result is small
        return self.simplify(terms(a if a.__class__ is Term else const(a), b if b.__class__ is Term else const(b)))

    def add(self, a: Dim, b: Dim) -> Dim:
        return self.binary(a, b, lambda x, y: x + y, lambda x, y: x + y)

    def sub(self, a: Dim, b: Dim) -> Dim:
        return self.binary(a, b, lambda x, y: x - y, lambda x, y: x - y)

    def mul(self, a: Dim, b: Dim) -> Dim:
        return self.binary(a, b, lambda x, y: x * y, lambda x, y: x * y)

    def floordiv(self, a: Dim, b: Dim) -> Dim:
        return self.binary(a, b, lambda x, y: x // y, lambda x, y: x // y)

    def ceildiv(self, a: Dim, b: Dim) -> Dim:
        return self.binary(a, b, lambda x, y: -(-x // y), lambda x, y: CEIL_DIV(x, y))

    def max(self, a: Dim, b: Dim) -> Dim:
        return self.binary(a, b, max, lambda x, y: get_op("maximum")(x, y))

    def min(self, a: Dim, b: Dim) -> Dim:
        return self.binary(a, b, min, lambda x, y: get_op("minimum")(x, y))

    def prod(self, dims: Any) -> Dim:
        out: Dim = 1
        for d in dims:
            out = self.mul(out, d)
        return out

    def total(self, dims: Any) -> Dim:
        out: Dim = 0
        for d in dims:
            out = self.add(out, d)
        return out


def broadcast_with_unknowns(shapes: list) -> tuple:
    rank = max(len(s) for s in shapes)
    out: list[Dim] = []
    for i in range(rank, 0, -1):
        dims = [s[-i] for s in shapes if len(s) >= i]
        known = [d for d in dims if d is not None and not (d.__class__ is int and d == 1)]
        if len(known) == len([d for d in dims if not (d.__class__ is int and d == 1)]) and known:
            out.append(broadcast_shapes(*[(d,) for d in known])[0])
        elif any(d.__class__ is int and d != 1 for d in known):
            out.append(next(d for d in known if d.__class__ is int))
        elif not known and all(d is not None for d in dims):
            out.append(1)
        else:
            out.append(None)
    return tuple(out)


def _attr(node: Any, name: str, default: Any = None) -> Any:
    for a in node.attribute:
        if a.name == name:
            onnx = require("onnx", "onnx")
            value = onnx.helper.get_attribute_value(a)
            return value.decode(errors="replace") if isinstance(value, bytes) else value
    return default


def _int_attr(node: Any, name: str, default: Any = None) -> Any:
    """Attribute ``name`` as an int (``default`` when absent); ShapeError when it is another type."""
    value = _attr(node, name, default)
    if value is default:
        return value
    if value.__class__ is not int:
        raise ShapeError(f"attribute {name!r} must be an int, not {type(value).__name__}")
    return value


def _ints_attr(node: Any, name: str) -> list[int] | None:
    """Attribute ``name`` as a list of ints (None when absent); ShapeError when it is another type."""
    value = _attr(node, name)
    if value is None:
        return None
    if not isinstance(value, list) or any(v.__class__ is not int for v in value):
        raise ShapeError(f"attribute {name!r} must be a list of ints, not {type(value).__name__}")
    return value


def _axis(axis: Any, rank: int) -> int:
    if axis.__class__ is not int:
        raise ShapeError(f"axis {axis!r} is not an int")
    if not -rank <= axis < rank:
        raise ShapeError(f"axis {axis} out of range for rank {rank}")
    return axis % rank


def _axes(axes: list, rank: int) -> list[int]:
    """``axes`` resolved against ``rank``; ShapeError when one is out of range or repeated."""
    out = [_axis(a, rank) for a in axes]
    if len(set(out)) < len(out):
        raise ShapeError(f"repeated axis in {list(axes)}")
    return out


# -- symbolic values of small integer tensors: (inference, node) -> Value or None ------------------------


def _or_unknown(fn: Callable[..., Dim], *args: Any) -> Dim:
    """``fn(*args)``, or None where the int64 result would wrap or divide by zero at run time."""
    try:
        return fn(*args)
    except (DimOverflowError, ArithmeticError):
        return None


def _v_shape(inf: Inference, node: Any) -> Value | None:
    x = inf.shape(node, 0)
    if x is None:
        return None
    return Value(tuple(x[_int_attr(node, "start", 0) : _int_attr(node, "end", len(x))]))


def _v_size(inf: Inference, node: Any) -> Value | None:
    x = inf.shape(node, 0)
    return None if x is None else Value((_or_unknown(inf.d.prod, x),), True)


def _v_gather(inf: Inference, node: Any) -> Value | None:
    data, idx = inf.value(node, 0), inf.value(node, 1)
    if data is None or idx is None or data.scalar or _int_attr(node, "axis", 0) not in (0, -1):
        return None
    n = len(data.entries)
    picked = []
    for i in idx.entries:
        if not isinstance(i, int):
            return None  # an index computed at run time
        if not -n <= i < n:
            raise ShapeError(f"index {i} out of range for {n} entries")
        picked.append(data.entries[i])
    return Value(tuple(picked), idx.scalar)


def _v_slice(inf: Inference, node: Any) -> Value | None:
    data = inf.value(node, 0)
    starts, ends = inf.ints(node, 1), inf.ints(node, 2)
    if data is None or starts is None or ends is None or len(starts) != 1 or len(ends) != 1:
        return None
    has = [len(node.input) > i and bool(node.input[i]) for i in (3, 4)]
    axes, steps = inf.ints(node, 3) if has[0] else [0], inf.ints(node, 4) if has[1] else [1]
    if axes not in ([0], [-1]) or steps is None or len(steps) != 1 or steps[0] == 0:
        return None
    n = len(data.entries)
    start, end = (max(-n - 1, min(v, n)) for v in (starts[0], ends[0]))
    return Value(tuple(data.entries[start : end : steps[0]]))


def _v_concat(inf: Inference, node: Any) -> Value | None:
    parts = [inf.value(node, i) for i in range(len(node.input))]
    known = [p for p in parts if p is not None and not p.scalar]
    if len(known) < len(parts) or sum(len(p.entries) for p in known) > MAX_VALUE_SIZE:
        return None
    return Value(tuple(e for p in known for e in p.entries))


def _v_same(inf: Inference, node: Any) -> Value | None:
    return inf.value(node, 0)


def _v_cast(inf: Inference, node: Any) -> Value | None:
    # a cast to a narrower int type keeps the entries that fit; to a float or bool type, values are not followed
    v, bounds = inf.value(node, 0), _INT_RANGES.get(_int_attr(node, "to", 0))
    if v is None or bounds is None:
        return None
    low, high = bounds
    return Value(tuple(None if isinstance(e, int) and not low <= e <= high else e for e in v.entries), v.scalar)


#: ONNX element type (TensorProto enum) -> the range of the int type it names
_INT_RANGES = {7: (INT64_MIN, INT64_MAX), 6: (-(2**31), 2**31 - 1), 5: (-(2**15), 2**15 - 1), 3: (-128, 127),
               2: (0, 255), 4: (0, 2**16 - 1), 12: (0, 2**32 - 1), 13: (0, INT64_MAX)}  # fmt: skip


def _v_constant(inf: Inference, node: Any) -> Value | None:
    value = _attr(node, "value")
    if value is not None:
        return inf.tensor_value(value)
    scalar = _int_attr(node, "value_int")
    if scalar is not None:
        return Value((scalar,), True)
    ints = _ints_attr(node, "value_ints")
    return None if ints is None else Value(tuple(ints))


def _v_unsqueeze(inf: Inference, node: Any) -> Value | None:
    v = inf.value(node, 0)
    return None if v is None or not v.scalar else Value(v.entries)


def _v_squeeze(inf: Inference, node: Any) -> Value | None:
    v = inf.value(node, 0)
    return None if v is None or len(v.entries) != 1 else Value(v.entries, True)


def _divide(d: Dims, x: Dim, y: Dim) -> Dim:
    """ONNX integer Div: truncates toward zero (None on division by zero)."""
    if isinstance(x, int) and isinstance(y, int):
        q = abs(x) // abs(y)
        return int64(q if (x < 0) == (y < 0) else -q)
    return d.floordiv(x, y)  # symbolic dimensions are positive, where truncation is floor


def _v_arith(fn_name: str) -> Callable[[Inference, Any], Value | None]:
    def rule(inf: Inference, node: Any) -> Value | None:
        a, b = inf.value(node, 0), inf.value(node, 1)
        if a is None or b is None:
            return None
        fn: Callable[[Dim, Dim], Dim] = (
            getattr(inf.d, fn_name) if fn_name != "div" else lambda x, y: _divide(inf.d, x, y)
        )
        xs, ys = a.entries, b.entries
        if len(xs) == 1 and len(ys) != 1:
            xs = xs * len(ys)
        if len(ys) == 1 and len(xs) != 1:
            ys = ys * len(xs)
        if len(xs) != len(ys):
            raise ShapeError(f"values of {len(a.entries)} and {len(b.entries)} entries do not broadcast")
        return Value(tuple(_or_unknown(fn, x, y) for x, y in zip(xs, ys, strict=True)), a.scalar and b.scalar)

    return rule


VALUE_RULES: dict[str, Callable[[Inference, Any], Value | None]] = {
    "Shape": _v_shape,
    "Constant": _v_constant,
    "Size": _v_size,
    "Gather": _v_gather,
    "Slice": _v_slice,
    "Concat": _v_concat,
    "Identity": _v_same,
    "Cast": _v_cast,
    "Unsqueeze": _v_unsqueeze,
    "Squeeze": _v_squeeze,
    "Add": _v_arith("add"),
    "Sub": _v_arith("sub"),
    "Mul": _v_arith("mul"),
    "Div": _v_arith("div"),
    "Max": _v_arith("max"),
    "Min": _v_arith("min"),
}
