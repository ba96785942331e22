"""Reading an ONNX model's small tensors as values, and its element types (for ``annotate_shapes``).

A tensor of at most :data:`MAX_VALUE_SIZE` entries of an integer, bool or float type becomes a
:class:`Value`; its data may live in another file (``external_data``), read only from a regular file
inside the base directory the caller names. Element types are propagated through the nodes without
running onnx's own (C++) inference, which a hostile model can abort. Imports: errors and onnx_dims.
"""

from __future__ import annotations

import math
import os
import stat
import struct
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..errors import ExternalDataError, ShapeError
from .onnx_dims import INT64_MAX, MAX_RANK, MAX_VALUE_SIZE, DimOverflowError, Value, _attr, _int_attr
from .onnx_rules_types import output_types

__all__ = ["INT_TYPES", "FLOAT_TYPES", "BOOL_TYPE", "kind_of", "normal", "read_external", "element_types"]

#: ONNX integer element types (TensorProto enum) -> bytes per entry
INT_TYPES = {2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 12: 4, 13: 8}
#: ONNX float element types -> bytes per entry (float, double, float16, bfloat16)
FLOAT_TYPES = {1: 4, 11: 8, 10: 2, 16: 2}
BOOL_TYPE = 9


def kind_of(elem_type: int) -> str | None:
    """The family of an ONNX element type: ``"int"``, ``"float"``, ``"bool"``, or None (not followed)."""
    if elem_type in INT_TYPES:
        return "int"
    if elem_type in FLOAT_TYPES:
        return "float"
    return "bool" if elem_type == BOOL_TYPE else None


def normal(x: Any) -> Any:
    """A number as a value entry: an integral float becomes an int, a non-finite one unknown."""
    if x.__class__ is float:
        if not math.isfinite(x):
            return None
        if x.is_integer() and abs(x) < 2**53:
            return int(x)
        return x  # a non-integral float constant, in a float value only
    return x


def tensor_value(inf: Any, proto: Any, dims: tuple[int, ...] | None = None) -> Value | None:
    """The entries of a small integer, bool or float TensorProto of any rank (of ``dims``, read from it
    when not given); None for any other tensor."""
    elem = proto.data_type
    kind = _KINDS.get(elem)
    if kind is None:
        return None
    if dims is None:
        dims = inf.tensor_shape(proto)
    count = math.prod(dims)
    if count > MAX_VALUE_SIZE:
        return None
    if proto.data_location == _EXTERNAL:
        if inf.base_dir is None:
            return None  # data in another file is read only from a base directory the caller names
        proto = loaded(inf.onnx, proto, count * (INT_TYPES | FLOAT_TYPES).get(elem, 1), inf.base_dir)
    plain = _plain_entries(proto, count)
    if plain is None:
        array = inf.numpy_helper.to_array(proto)
        if array.size != count:
            raise ShapeError(f"holds {array.size} entries for dims {list(dims)}")
        plain = array.reshape(-1).tolist()
    if kind == "int":
        entries = tuple(plain)
        if elem == _UINT64 and any(e > INT64_MAX for e in entries):
            return None  # a uint64 past int64: not a shape
    elif kind == "bool":
        entries = tuple(int(bool(e)) for e in plain)
    else:
        entries = tuple(normal(v) for v in plain)
    return Value(entries, not dims, kind, dims if len(dims) > 1 else None)


#: element type -> its kind (the types followed as values)
_KINDS = {**dict.fromkeys(INT_TYPES, "int"), **dict.fromkeys(FLOAT_TYPES, "float"), BOOL_TYPE: "bool"}
#: TensorProto's data_location of a tensor whose data is in another file; its uint64 element type
_EXTERNAL, _UINT64 = 1, 13


#: element type -> the struct code of one entry of its little-endian raw bytes, and its size
_RAW_CODES = {1: ("f", 4), 2: ("B", 1), 3: ("b", 1), 4: ("H", 2), 5: ("h", 2), 6: ("i", 4), 7: ("q", 8), 9: ("?", 1)}
_RAW_CODES |= {10: ("e", 2), 11: ("d", 8), 12: ("I", 4), 13: ("Q", 8)}
#: element type -> the TensorProto field that holds its entries when there are no raw bytes
_TYPED_FIELDS = {1: "float_data", 6: "int32_data", 7: "int64_data", 9: "int32_data", 11: "double_data"}


def _plain_entries(proto: Any, count: int) -> Sequence[Any] | None:
    """The ``count`` entries of a tensor of a common type as Python numbers, read directly (``numpy_helper``
    costs ~10 us a call and small tensors are read for every Constant); None for anything else, which
    goes through onnx's reader (other types, segments, sizes that do not match)."""
    elem = proto.data_type
    if proto.HasField("raw_data"):
        code = _RAW_CODES.get(elem)
        raw = proto.raw_data
        if code is None or proto.HasField("segment") or len(raw) != count * code[1]:
            return None
        unpacker = _UNPACKERS.get((code[0], count)) or _unpacker(code[0], count)
        return unpacker.unpack(raw)
    field = _TYPED_FIELDS.get(elem)
    if field is None or proto.HasField("segment"):
        return None
    data = getattr(proto, field)[:]
    return data if len(data) == count else None


#: (struct code, count) -> the reader of that many little-endian entries (count <= MAX_VALUE_SIZE: a small table)
_UNPACKERS: dict[tuple[str, int], struct.Struct] = {}


def _unpacker(code: str, count: int) -> struct.Struct:
    """The reader of ``count`` little-endian entries of struct type ``code`` (made once)."""
    out = _UNPACKERS[(code, count)] = struct.Struct(f"<{count}{code}")
    return out


def loaded(onnx: Any, proto: Any, nbytes: int, base_dir: str | os.PathLike[str]) -> Any:
    """A copy of ``proto`` holding its external data, read from inside ``base_dir``."""
    copy = onnx.TensorProto()
    copy.CopyFrom(proto)
    copy.raw_data = read_external(proto, Path(base_dir), nbytes)
    copy.data_location = onnx.TensorProto.DEFAULT
    del copy.external_data[:]
    return copy


def _location(proto: Any, nbytes: int) -> tuple[str, int, int, str]:
    """The checked (location, offset, length, description) of ``proto``'s external data."""
    info = {entry.key: entry.value for entry in proto.external_data}
    location = info.get("location", "")
    where = f"external data at {location[:200]!r}"
    parts = Path(location.replace("\\", "/")).parts
    if not location or "\0" in location or os.path.isabs(location) or ".." in parts or ":" in location:
        raise ExternalDataError(f"{where}: a location must be a relative path inside the base directory")
    try:
        offset, length = int(info.get("offset", "0")), int(info.get("length", str(nbytes)))
    except ValueError as exc:
        raise ExternalDataError(f"{where}: offset and length must be integers") from exc
    if offset < 0 or length != nbytes:
        raise ExternalDataError(f"{where}: offset {offset} and length {length} (expected {nbytes} bytes)")
    return location, offset, length, where


def read_external(proto: Any, base_dir: Path, nbytes: int) -> bytes:
    """The ``nbytes`` bytes of ``proto``'s external data, from a regular file inside ``base_dir``."""
    location, offset, length, where = _location(proto, nbytes)
    try:
        base = base_dir.resolve(strict=True)
        path = (base / location).resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise ExternalDataError(f"{where}: {exc}") from exc
    if not path.is_relative_to(base):
        raise ExternalDataError(f"{where}: resolves outside the base directory {str(base)!r} (through a symlink)")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise ExternalDataError(f"{where}: {exc}") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ExternalDataError(f"{where}: not a regular file")
        if offset + length > st.st_size:
            raise ExternalDataError(f"{where}: bytes {offset}..{offset + length} past the end of the file")
        os.lseek(fd, offset, os.SEEK_SET)
        data = b""
        while len(data) < length:
            chunk = os.read(fd, length - len(data))
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    if len(data) != length:
        raise ExternalDataError(f"{where}: the file changed while it was read")
    return data


def tensor_dims(proto: Any) -> tuple[int, ...]:
    """The dims of a TensorProto, checked: at most MAX_RANK of them, none negative."""
    dims = tuple(proto.dims[:])  # (ints: the field is int64; a slice copies it quicker than tuple() does)
    if len(dims) > MAX_RANK:
        raise DimOverflowError(f"rank {len(dims)} is more than the limit {MAX_RANK}")
    if dims and min(dims) < 0:
        i = next(i for i, n in enumerate(dims) if n < 0)
        raise DimOverflowError(f"dim {i} is {dims[i]}: a dimension is never negative")
    return dims


# -- element types, for annotate_shapes ------------------------------------------------------------------------

_INT64_OUT = {"Shape", "Size", "NonZero", "ArgMax", "ArgMin", "SequenceLength"}
_BOOL_OUT = {"Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "And", "Or", "Xor", "Not", "IsInf", "IsNaN"}


def element_types(graph: Any, tensor: Any, known: Callable[[str], bool]) -> dict[str, int]:
    """Element type of every value: declared for inputs and initializers, propagated through the nodes."""
    types = {v.name: v.type.tensor_type.elem_type for v in graph.value_info if v.type.tensor_type.elem_type}
    types.update({i.name: i.type.tensor_type.elem_type for i in graph.input})
    types.update({t.name: t.data_type for t in graph.initializer})
    for node in graph.node:
        ins = [types.get(name, 0) for name in node.input]
        try:
            outs = _output_types(node, ins, tensor, known)
        except ShapeError:
            outs = []
        for name, elem in zip(node.output, outs, strict=False):
            if name and elem:
                types[name] = elem
    return types


def _control_types(node: Any, ins: list[int]) -> list[int]:
    """If: the then-branch's output types; Loop and Scan: the carried inputs' types, then the body's."""
    graph = _attr(node, "then_branch" if node.op_type == "If" else "body")
    body = [o.type.tensor_type.elem_type for o in getattr(graph, "output", [])]
    if node.op_type == "If":
        return body
    carried = ins[2:] if node.op_type == "Loop" else ins[: len(ins) - (_int_attr(node, "num_scan_inputs", 0) or 0)]
    skip = 1 if node.op_type == "Loop" else 0
    return carried + body[skip + len(carried) :]


def _output_types(node: Any, ins: list[int], tensor: Any, known: Callable[[str], bool]) -> list[int]:
    op, first = node.op_type, ins[0] if ins else 0
    if op in _INT64_OUT:
        return [tensor.INT64]
    if op in _BOOL_OUT:
        return [tensor.BOOL]
    if op == "Cast":
        return [_int_attr(node, "to", 0)]
    if op in ("CastLike", "Where"):
        return [ins[1] if len(ins) > 1 else 0]
    if op in ("ConvInteger", "MatMulInteger"):
        return [tensor.INT32]
    if op == "QLinearConv":
        return [ins[7] if len(ins) > 7 else 0]
    if op in ("Constant", "ConstantOfShape"):
        value = _attr(node, "value")
        if isinstance(value, tensor):
            return [value.data_type]
        if op == "ConstantOfShape":
            return [tensor.FLOAT]
        kinds = {"value_int": tensor.INT64, "value_ints": tensor.INT64}
        kinds |= {"value_float": tensor.FLOAT, "value_floats": tensor.FLOAT}
        return [next((t for name, t in kinds.items() if _attr(node, name) is not None), tensor.STRING)]
    if op in ("If", "Loop", "Scan"):
        return _control_types(node, ins)
    if op in ("MaxPool", "Dropout"):
        return [first, tensor.INT64 if op == "MaxPool" else tensor.BOOL]
    return output_types(node, ins) if known(op) else []  # the types the op's rule gives its outputs
