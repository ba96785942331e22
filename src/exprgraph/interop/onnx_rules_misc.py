"""ONNX shape rules of quantization, losses, random generators, signal processing (DFT, STFT, windows,
mel matrices) and string ops.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import ShapeError
from .onnx_dims import Dim, _attr, _axis, _int_attr, _ints_attr
from .onnx_rules_common import fresh, has_input, need, nones, opset

if TYPE_CHECKING:
    from .onnx_shapes import Inference

__all__ = ["MISC_RULES"]


def _same_first(inf: Inference, node: Any) -> list:
    # out = the first input's shape
    return [inf.shape(node, 0)]


def _scalar_value(inf: Inference, node: Any, i: int) -> Dim:
    """Input ``i``'s single entry when it is known (None otherwise)."""
    v = inf.value(node, i)
    return v.entries[0] if v is not None and len(v.entries) == 1 else None


def _dynamic_quantize(inf: Inference, node: Any) -> list:
    # y: x; scale and zero point: scalars
    return [inf.shape(node, 0), (), ()][: len(node.output)]


def _qlinear_matmul(inf: Inference, node: Any) -> list:
    # out = matmul(a, b) of inputs 0 and 3, numpy broadcasting of the batch axes
    a, b = inf.shape(node, 0), inf.shape(node, 3)
    if a is None or b is None:
        return [None]
    if not a or not b:
        raise ShapeError("QLinearMatMul of a 0-d tensor")
    a2, b2 = ((1, *a) if len(a) == 1 else a), ((*b, 1) if len(b) == 1 else b)
    batch = inf.broadcast([a2[:-2], b2[:-2]])
    return [(*(batch or ()), *(() if len(a) == 1 else (a2[-2],)), *(() if len(b) == 1 else (b2[-1],)))]


def _loss(inf: Inference, node: Any) -> list:
    # loss: the labels' shape when reduction is 'none', else a scalar; log_prob: the scores' shape
    reduction = _attr(node, "reduction", "mean")
    if reduction not in ("none", "sum", "mean"):
        raise ShapeError(f"unknown reduction {reduction!r}")
    loss = inf.shape(node, 1) if reduction == "none" else ()
    return [loss, inf.shape(node, 0)][: len(node.output)]


def _multinomial(inf: Inference, node: Any) -> list:
    # out = (batch, sample_size)
    x = inf.shape(node, 0)
    if x is not None and len(x) != 2:
        raise ShapeError(f"Multinomial of an input of rank {len(x)} (needs 2)")
    return [((x[0] if x is not None else None), _int_attr(node, "sample_size", 1))]


def _window(inf: Inference, node: Any) -> list:
    # out = (size,)
    return [(_scalar_value(inf, node, 0),)]


def _mel_matrix(inf: Inference, node: Any) -> list:
    # out = (dft_length//2 + 1, num_mel_bins)
    bins, length = _scalar_value(inf, node, 0), _scalar_value(inf, node, 1)
    return [(inf.d.add(inf.d.floordiv(length, 2), 1), bins)]


def _dft(inf: Inference, node: Any) -> list:
    # out = x with axis of length n (dft_length or x[axis]), n//2 + 1 when onesided, and a last axis of 2;
    # inverse and onesided: 2*(x[axis] - 1) (or dft_length) real samples, a last axis of 1
    x = inf.shape(node, 0)
    if x is None:
        return [None]
    need(x, 2)
    onesided, inverse = _int_attr(node, "onesided", 0), _int_attr(node, "inverse", 0)
    if opset(inf) >= 20 and _attr(node, "axis") is None:
        axis_value = _scalar_value(inf, node, 2) if has_input(node, 2) else -2
        if axis_value is None or axis_value.__class__ is not int:
            return [(*([None] * (len(x) - 1)), 1 if onesided and inverse else 2)]
        axis = _axis(axis_value, len(x))
    else:
        axis = _axis(_int_attr(node, "axis", 1), len(x))
    if axis == len(x) - 1:
        raise ShapeError("the DFT axis is the last (complex) axis")
    n = _scalar_value(inf, node, 1) if has_input(node, 1) else x[axis]
    out = list(x)
    if onesided and inverse:  # a half spectrum back to a real signal of 2*(n - 1) (or dft_length) samples
        out[axis] = n if has_input(node, 1) else inf.d.mul(inf.d.sub(n, 1), 2)
        out[-1] = 1
        return [tuple(out)]
    if onesided:
        n = inf.d.add(inf.d.floordiv(n, 2), 1)
    out[axis], out[-1] = n, 2
    return [tuple(out)]


def _stft(inf: Inference, node: Any) -> list:
    # out = (batch, (length - frame)//step + 1, frame//2 + 1 if onesided else frame, 2)
    d = inf.d
    x = inf.shape(node, 0)
    step = _scalar_value(inf, node, 1)
    frame = _scalar_value(inf, node, 3) if has_input(node, 3) else None
    if frame is None and has_input(node, 2):
        window = inf.shape(node, 2)
        frame = window[0] if window is not None and len(window) == 1 else None
    if x is None:
        return [None]
    frames = d.add(d.floordiv(d.sub(need(x, 2)[1], frame), step), 1)
    bins = d.add(d.floordiv(frame, 2), 1) if _int_attr(node, "onesided", 1) else frame
    return [(x[0], frames, bins, 2)]


def _image_decoder(inf: Inference, node: Any) -> list:
    # out = (height, width, channels): the image's size is in its bytes
    channels = 1 if _attr(node, "pixel_format", "RGB") == "Grayscale" else 3
    return [(fresh(inf, node, "image height", 1), fresh(inf, node, "image width", 1), channels)]


def _string_split(inf: Inference, node: Any) -> list:
    # Y: x + (most substrings,); Z: x
    x = inf.shape(node, 0)
    if x is None:
        return nones(node)
    return [(*x, fresh(inf, node, "most substrings")), x][: len(node.output)]


def _string_normalizer(inf: Inference, node: Any) -> list:
    # out = x when no stopword is removed, else x with its last axis of a fresh size
    x = inf.shape(node, 0)
    if x is None or not _attr(node, "stopwords"):
        return [x]
    return [(*x[:-1], fresh(inf, node, "strings kept"))]


def _tfidf(inf: Inference, node: Any) -> list:
    # out = (max(ngram_indexes) + 1,), with the batch axis of a 2-d input first
    x = inf.shape(node, 0)
    indexes = _ints_attr(node, "ngram_indexes")
    if not indexes:
        raise ShapeError("TfIdfVectorizer needs ngram_indexes")
    width = max(indexes) + 1
    if x is None:
        return [None]
    if len(x) not in (1, 2):
        raise ShapeError(f"TfIdfVectorizer of an input of rank {len(x)} (needs 1 or 2)")
    return [(width,) if len(x) == 1 else (x[0], width)]


def _broadcast_all(inf: Inference, node: Any) -> list:
    # out = the inputs broadcast together
    return [inf.broadcast([inf.shape(node, i) for i in range(len(node.input)) if node.input[i]])]


#: ONNX op type -> shape rule, for the ops of this family
MISC_RULES: dict[str, Callable[[Inference, Any], list]] = {
    **dict.fromkeys(
        (
            "QuantizeLinear DequantizeLinear RandomNormalLike RandomUniformLike Bernoulli BitCast BitwiseNot "
            "Swish SwiGLU RMSNormalization RotaryEmbedding LpNormalization RegexFullMatch GroupNormalization "
            "MeanVarianceNormalization"
        ).split(),
        _same_first,
    ),
    "DynamicQuantizeLinear": _dynamic_quantize,
    "QLinearMatMul": _qlinear_matmul,
    "SoftmaxCrossEntropyLoss": _loss,
    "NegativeLogLikelihoodLoss": _loss,
    "Multinomial": _multinomial,
    "HannWindow": _window,
    "HammingWindow": _window,
    "BlackmanWindow": _window,
    "MelWeightMatrix": _mel_matrix,
    "DFT": _dft,
    "STFT": _stft,
    "ImageDecoder": _image_decoder,
    "StringSplit": _string_split,
    "StringNormalizer": _string_normalizer,
    "StringConcat": _broadcast_all,
    "TfIdfVectorizer": _tfidf,
}
