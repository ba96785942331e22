"""ONNX shape rules of the ``ai.onnx.ml`` domain (classical machine learning: encoders, linear models,
tree ensembles, support vector machines).

Classifiers give their labels as ``(N,)``; the width of their score matrix depends on how a runtime
treats two classes (one column or two), so it is left unknown unless the model fixes it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import ShapeError
from .onnx_dims import _attr, _int_attr, _ints_attr

if TYPE_CHECKING:
    from .onnx_shapes import Inference

__all__ = ["ML_RULES", "ML_WITHOUT_RULES"]


def _same(inf: Inference, node: Any) -> list:
    # out = x
    return [inf.shape(node, 0)]


def _rows(inf: Inference, node: Any) -> Any:
    """The number of rows of a model's input: N of (N, F), 1 for a single row (F,)."""
    x = inf.shape(node, 0)
    if x is None:
        return None
    return x[0] if len(x) >= 2 else 1


def _array_feature_extractor(inf: Inference, node: Any) -> list:
    # out = x[:-1] + (number of indices,); a 1-d x gives (1, number of indices)
    x, idx = inf.shape(node, 0), inf.shape(node, 1)
    if x is None or idx is None:
        return [None]
    count = inf.d.prod(idx)
    return [(1, count) if len(x) == 1 else (*x[:-1], count)]


def _one_hot_encoder(inf: Inference, node: Any) -> list:
    # out = x + (number of categories,)
    x = inf.shape(node, 0)
    cats = _attr(node, "cats_int64s") or _attr(node, "cats_strings")
    if not cats:
        raise ShapeError("OneHotEncoder needs cats_int64s or cats_strings")
    return [None if x is None else (*x, len(cats))]


def _classifier(inf: Inference, node: Any) -> list:
    # labels: (N,); scores: (N, ?) (one or two columns for two classes, by runtime)
    n = _rows(inf, node)
    return [(n,), (n, None)][: len(node.output)]


def _targets(inf: Inference, node: Any) -> list:
    # out = (N, n_targets)
    return [(_rows(inf, node), _int_attr(node, "n_targets", 1))]


def _linear_regressor(inf: Inference, node: Any) -> list:
    # out = (N, targets)
    return [(_rows(inf, node), _int_attr(node, "targets", 1))]


def _feature_vectorizer(inf: Inference, node: Any) -> list:
    # out = (N, sum(inputdimensions)): each input cut or padded to its width, side by side
    widths = _ints_attr(node, "inputdimensions")
    if not widths or len(widths) != len(node.input) or min(widths) < 0:
        raise ShapeError(f"inputdimensions {widths} for {len(node.input)} inputs")
    return [(_rows(inf, node), sum(widths))]


#: ONNX op type -> shape rule, for the ops of this family
ML_RULES: dict[str, Callable[[Inference, Any], list]] = {
    **dict.fromkeys("Binarizer LabelEncoder CategoryMapper Scaler Normalizer Imputer".split(), _same),
    "LinearRegressor": _linear_regressor,
    "FeatureVectorizer": _feature_vectorizer,
    "ArrayFeatureExtractor": _array_feature_extractor,
    "OneHotEncoder": _one_hot_encoder,
    "LinearClassifier": _classifier,
    "SVMClassifier": _classifier,
    "TreeEnsembleClassifier": _classifier,
    "TreeEnsembleRegressor": _targets,
    "TreeEnsemble": _targets,
}

#: ai.onnx.ml ops with a shape function in onnx but no rule here, and why
ML_WITHOUT_RULES = {
    "CastMap": "its input is a map, not a tensor; the output length is the map's size",
    "DictVectorizer": "its input is a map; runtimes differ on the output's rank ((V,) or (1, V))",
    "ZipMap": "its output is a sequence of maps (sequences belong to the sequence rules)",
}
