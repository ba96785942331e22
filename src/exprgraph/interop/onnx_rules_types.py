"""Element types of the outputs of the ONNX ops whose outputs do not all keep their first input's type.

:func:`output_types` maps a node and its inputs' element types (``TensorProto`` enums, 0 for unknown) to
its outputs' element types; an op absent from :data:`OUTPUT_TYPES` keeps its first input's type on every
output. Used to write ``value_info`` without running onnx's own inference.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .onnx_dims import _attr

__all__ = ["OUTPUT_TYPES", "output_types"]

FLOAT, UINT8, INT32, INT64, STRING, BOOL = 1, 2, 6, 7, 8, 9

Types = Callable[[Any, list[int]], list[int]]


def _in(ins: list[int], i: int) -> int:
    return ins[i] if i < len(ins) else 0


def _attr_type(node: Any, name: str, default: int) -> int:
    value = _attr(node, name)
    return value if value.__class__ is int and value > 0 else default


def _fixed(*types: int) -> Types:
    """Outputs of fixed types (0 keeps the first input's type)."""
    return lambda node, ins: [t or _in(ins, 0) for t in types]


def _quantize(node: Any, ins: list[int]) -> list[int]:
    # y: the zero point's type, else output_dtype, else uint8
    return [_in(ins, 2) or _attr_type(node, "output_dtype", UINT8)]


def _dequantize(node: Any, ins: list[int]) -> list[int]:
    # y: output_dtype, else the scale's type
    return [_attr_type(node, "output_dtype", _in(ins, 1))]


def _dtype_or_first(node: Any, ins: list[int]) -> list[int]:
    # the dtype attribute, else the first input's type
    return [_attr_type(node, "dtype", _in(ins, 0))]


def _layer_norm(node: Any, ins: list[int]) -> list[int]:
    # Y: X's type; Mean, InvStdDev: stash_type (float by default)
    stash = _attr_type(node, "stash_type", FLOAT)
    return [_in(ins, 0), stash, stash]


def _labels(node: Any, ins: list[int]) -> list[int]:
    # classifier labels: strings when the classes are named by strings, else int64; scores: float
    strings = _attr(node, "classlabels_strings")
    return [STRING if strings else INT64, FLOAT]


def _label_encoder(node: Any, ins: list[int]) -> list[int]:
    # the type of the values the keys map to
    for name, elem in (("values_int64s", INT64), ("values_strings", STRING), ("values_floats", FLOAT)):
        if _attr(node, name):
            return [elem]
    tensor = _attr(node, "values_tensor")
    return [getattr(tensor, "data_type", 0)]


def _category_mapper(node: Any, ins: list[int]) -> list[int]:
    # strings become int64s and int64s strings
    return [{STRING: INT64, INT64: STRING}.get(_in(ins, 0), 0)]


def _attention(node: Any, ins: list[int]) -> list[int]:
    # Y and qk: Q's type; present key and value: K's and V's
    return [_in(ins, 0), _in(ins, 1), _in(ins, 2), _in(ins, 0)]


#: ONNX op type -> (node, input element types) -> output element types, for ops that change types
OUTPUT_TYPES: dict[str, Types] = {
    "QuantizeLinear": _quantize,
    "DequantizeLinear": _dequantize,
    "DynamicQuantizeLinear": _fixed(UINT8, FLOAT, UINT8),
    "QLinearMatMul": lambda node, ins: [_in(ins, 7)],
    "TopK": _fixed(0, INT64),
    "Unique": _fixed(0, INT64, INT64, INT64),
    "NonMaxSuppression": _fixed(INT64),
    "NonZero": _fixed(INT64),
    "OneHot": lambda node, ins: [_in(ins, 2)],
    "RandomNormal": lambda node, ins: [_attr_type(node, "dtype", FLOAT)],
    "RandomUniform": lambda node, ins: [_attr_type(node, "dtype", FLOAT)],
    "RandomNormalLike": _dtype_or_first,
    "RandomUniformLike": _dtype_or_first,
    "Bernoulli": _dtype_or_first,
    "EyeLike": _dtype_or_first,
    "Multinomial": lambda node, ins: [_attr_type(node, "dtype", INT32)],
    "BitCast": lambda node, ins: [_attr_type(node, "to", 0)],
    "ImageDecoder": _fixed(UINT8),
    "StringSplit": _fixed(STRING, INT64),
    "StringConcat": _fixed(STRING),
    "RegexFullMatch": _fixed(BOOL),
    "TfIdfVectorizer": _fixed(FLOAT),
    **dict.fromkeys(
        ["HannWindow", "HammingWindow", "BlackmanWindow", "MelWeightMatrix"],
        lambda node, ins: [_attr_type(node, "output_datatype", FLOAT)],
    ),
    "LayerNormalization": _layer_norm,
    "Attention": _attention,
    "LinearClassifier": _labels,
    "SVMClassifier": _labels,
    "TreeEnsembleClassifier": _labels,
    "TreeEnsembleRegressor": _fixed(FLOAT),
    "LinearRegressor": _fixed(FLOAT),
    "OneHotEncoder": _fixed(FLOAT),
    "Scaler": _fixed(FLOAT),
    "Normalizer": _fixed(FLOAT),
    "FeatureVectorizer": _fixed(FLOAT),
    "LabelEncoder": _label_encoder,
    "CategoryMapper": _category_mapper,
}


def output_types(node: Any, ins: list[int]) -> list[int]:
    """Element types of ``node``'s outputs from its inputs' (0 where unknown)."""
    rule = OUTPUT_TYPES.get(node.op_type)
    n = len(node.output)
    found = [_in(ins, 0)] * n if rule is None else rule(node, ins)
    return (found + [0] * n)[:n]
