"""Shape rules of every ONNX op: coverage of onnx's schemas, and the arithmetic-heavy rules against onnx's
reference evaluator on random small inputs (with concrete dims, and with symbolic dims evaluated)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from exprgraph.dims import evaluate_expression
from exprgraph.errors import ShapeError
from exprgraph.interop.onnx_control import CONTROL_RULES
from exprgraph.interop.onnx_rules_ml import ML_RULES, ML_WITHOUT_RULES
from exprgraph.interop.onnx_sequences import SEQUENCE_RULES
from exprgraph.interop.onnx_shape_rules import SHAPE_RULES
from exprgraph.interop.onnx_shapes import Inference, infer_shapes

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, numpy_helper  # noqa: E402
from onnx import helper as oh  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

#: ops whose shapes come from subgraphs, sequences or optionals: the engine's own rules
ENGINE_OPS = set(CONTROL_RULES) | set(SEQUENCE_RULES)


def _ops_with_shape_functions(domain):
    return {
        s.name
        for s in onnx.defs.get_all_schemas_with_history()
        if s.domain == domain and s.has_type_and_shape_inference_function
    }


@pytest.mark.parametrize("domain", ["", "ai.onnx.ml"])
def test_every_op_with_a_shape_function_has_a_rule(domain):
    ops = _ops_with_shape_functions(domain)
    missing = sorted(ops - set(SHAPE_RULES) - ENGINE_OPS - set(ML_WITHOUT_RULES))
    assert not missing
    exempt = ops & (ENGINE_OPS | set(ML_WITHOUT_RULES))
    assert len(exempt) <= 16 and len(ops & set(SHAPE_RULES)) == len(ops) - len(exempt)


# -- against the reference evaluator ----------------------------------------------------------------------

F = TensorProto.FLOAT


def _model(node, inputs, inits=(), opset=22):
    """A model of one node: ``inputs`` are (name, dims) float inputs, ``inits`` (name, array) initializers."""
    ins = [oh.make_tensor_value_info(name, F, dims) for name, dims in inputs]
    outs = [oh.make_tensor_value_info(name, TensorProto.UNDEFINED, None) for name in node.output]
    graph = oh.make_graph([node], "g", ins, outs, initializer=[numpy_helper.from_array(a, n) for n, a in inits])
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", opset)])


def _check(node, arrays, inits=(), opset=22):
    """The reference evaluator's output shapes equal ours, with concrete dims and with symbolic ones."""
    feeds = dict(arrays)
    run = ReferenceEvaluator(_model(node, [(n, list(a.shape)) for n, a in arrays], inits, opset))
    expected = [np.shape(y) for y in run.run(None, feeds)]
    concrete = infer_shapes(_model(node, [(n, list(a.shape)) for n, a in arrays], inits, opset))
    names = {f"{n}_{i}": size for n, a in arrays for i, size in enumerate(a.shape)}
    symbolic = infer_shapes(_model(node, [(n, [f"{n}_{i}" for i in range(a.ndim)]) for n, a in arrays], inits, opset))
    for out, shape in zip(node.output, expected, strict=True):
        assert concrete[out] == shape, (out, concrete[out], shape)
        sym = symbolic[out]
        assert sym is not None and len(sym) == len(shape)
        for d, n in zip(sym, shape, strict=True):
            if isinstance(d, int) or all(x.name in names for x in d.free_symbols):  # else a fresh (run-time) size
                assert evaluate_expression(d, names) == n, (out, sym, shape)


def _x(*shape):
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(
    size=st.integers(1, 6),
    kernel=st.integers(1, 3),
    stride=st.integers(1, 3),
    dilation=st.integers(1, 2),
    pads=st.tuples(st.integers(0, 2), st.integers(0, 2)),
    extra=st.integers(0, 2),
    auto_pad=st.sampled_from(["NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"]),
)
def test_conv_transpose_matches_the_reference(size, kernel, stride, dilation, pads, extra, auto_pad):
    # out = stride*(in - 1) + output_padding + dilation*(k - 1) + 1 - pads; SAME: in*stride
    window = (kernel - 1) * dilation + 1
    assume(extra < stride and max(pads) < window and stride * (size - 1) + extra + window > sum(pads))
    attrs = {"strides": [stride], "dilations": [dilation], "output_padding": [extra]}
    if auto_pad == "NOTSET":
        attrs["pads"] = list(pads)
    else:
        attrs["auto_pad"] = auto_pad
    assume(auto_pad not in ("SAME_UPPER", "SAME_LOWER") or (stride - 1) + extra + (kernel - 1) * dilation + 1 >= stride)
    node = oh.make_node("ConvTranspose", ["x", "w"], ["y"], **attrs)
    _check(node, [("x", _x(1, 2, size))], [("w", _x(2, 3, kernel))])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(
    size=st.integers(1, 9),
    kernel=st.integers(1, 4),
    stride=st.integers(1, 4),
    pads=st.tuples(st.integers(0, 3), st.integers(0, 3)),
    dilation=st.integers(1, 2),
    op=st.sampled_from(["MaxPool", "AveragePool"]),
)
def test_ceil_mode_pooling_drops_a_window_that_starts_in_the_end_padding(size, kernel, stride, pads, dilation, op):
    # out = min(ceil((in + pads - window)/s), (in + pad_begin - 1)//s) + 1
    window = (kernel - 1) * dilation + 1
    assume(max(pads) < kernel and size + sum(pads) >= window)
    attrs = {"kernel_shape": [kernel], "strides": [stride], "pads": list(pads), "ceil_mode": 1}
    if op == "MaxPool":
        attrs["dilations"] = [dilation]
        assume(stride > 1 or dilation > 1)  # else the reference takes a path that counts one pad only
    else:
        assume(dilation == 1)
    _check(oh.make_node(op, ["x"], ["y"], **attrs), [("x", _x(1, 1, size))])


def test_the_two_ceil_mode_cases_of_the_issue():
    # AveragePool k3 s3 pads 1 on 2x2 gives 1; MaxPool k1 s2 on 2x2 gives 1
    avg = oh.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], strides=[3, 3], pads=[1] * 4, ceil_mode=1)
    top = oh.make_node("MaxPool", ["x"], ["y"], kernel_shape=[1, 1], strides=[2, 2], ceil_mode=1)
    for node in (avg, top):
        assert infer_shapes(_model(node, [("x", [1, 1, 2, 2])]))["y"] == (1, 1, 1, 1)
        _check(node, [("x", _x(1, 1, 2, 2))])


SCALES = [0.5, 0.25, 0.75, 1.0, 1.5, 2.0, 3.0, 0.6, 1.7, 1 / 3]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(
    h=st.integers(1, 7),
    w=st.integers(1, 7),
    scales=st.tuples(st.sampled_from(SCALES), st.sampled_from(SCALES)),
    by_sizes=st.booleans(),
    sizes=st.tuples(st.integers(1, 9), st.integers(1, 9)),
    policy=st.sampled_from(["stretch", "not_larger", "not_smaller"]),
)
def test_resize_matches_the_reference(h, w, scales, by_sizes, sizes, policy):
    # out = floor(in * scale) or sizes (one scale for every axis under keep_aspect_ratio_policy)
    if by_sizes:
        node = oh.make_node("Resize", ["x", "", "", "s"], ["y"], axes=[2, 3], keep_aspect_ratio_policy=policy)
        inits = [("s", np.array(sizes, np.int64))]
    else:
        node = oh.make_node("Resize", ["x", "", "s"], ["y"], axes=[2, 3])
        inits = [("s", np.array(scales, np.float32))]
        assume(all(int(n * np.float32(s)) > 0 for n, s in zip((h, w), scales, strict=True)))
    _check(node, [("x", _x(1, 1, h, w))], inits, opset=19)


@settings(max_examples=60, deadline=None)
@given(start=st.integers(-9, 9), limit=st.integers(-9, 9), delta=st.integers(-4, 4).filter(bool))
def test_range_length_from_known_values(start, limit, delta):
    # out = max(ceil((limit - start)/delta), 0)
    node = oh.make_node("Range", ["a", "b", "c"], ["y"])
    inits = [(n, np.array(v, np.int64)) for n, v in zip("abc", (start, limit, delta), strict=True)]
    shapes = infer_shapes(_model(node, [], inits))
    expected = ReferenceEvaluator(_model(node, [], inits)).run(None, {})[0].shape
    assert shapes["y"] == expected


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 12), start=st.integers(-5, 5), delta=st.integers(-3, 3).filter(bool))
def test_range_up_to_a_symbolic_size(n, start, delta):
    # Range(start, Shape(x)[0], delta): a symbolic length that evaluates to the reference's
    nodes = [
        oh.make_node("Shape", ["x"], ["s"]),
        oh.make_node("Gather", ["s", "zero"], ["n"]),
        oh.make_node("Range", ["start", "n", "delta"], ["y"]),
    ]
    inits = [
        numpy_helper.from_array(np.array(v, np.int64), k) for k, v in (("zero", 0), ("start", start), ("delta", delta))
    ]
    ins = [oh.make_tensor_value_info("x", F, ["N"])]
    graph = oh.make_graph(nodes, "g", ins, [oh.make_tensor_value_info("y", TensorProto.INT64, None)], initializer=inits)
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 18)])
    got = infer_shapes(model)["y"][0]
    graph.input[0].type.tensor_type.shape.dim[0].dim_value = n
    expected = ReferenceEvaluator(model).run(None, {"x": _x(n)})[0].shape[0]
    assert got is not None and evaluate_expression(got, {"N": n}) == expected


@st.composite
def _einsum_case(draw):
    letters = "abcde"
    sizes = {c: draw(st.integers(1, 4)) for c in letters}
    terms = [draw(st.lists(st.sampled_from(letters), min_size=1, max_size=3, unique=True)) for _ in range(2)]
    used = sorted(set(terms[0]) | set(terms[1]))
    out = draw(
        st.one_of(st.none(), st.permutations(used).flatmap(lambda p: st.integers(0, len(p)).map(lambda k: p[:k])))
    )
    lhs = ",".join("".join(t) for t in terms)
    equation = lhs if out is None else f"{lhs}->{''.join(out)}"
    return equation, [tuple(sizes[c] for c in t) for t in terms]


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(case=_einsum_case())
def test_einsum_matches_the_reference(case):
    # each letter keeps its size; implicit output: the letters seen once, sorted
    equation, shapes = case
    node = oh.make_node("Einsum", ["p", "q"], ["y"], equation=equation)
    _check(node, [("p", _x(*shapes[0])), ("q", _x(*shapes[1]))], opset=12)


def test_einsum_with_ellipses_and_a_malformed_equation():
    node = oh.make_node("Einsum", ["p", "q"], ["y"], equation="...ij,...jk->...ik")
    _check(node, [("p", _x(2, 1, 3, 4)), ("q", _x(5, 4, 2))], opset=12)
    bad = oh.make_node("Einsum", ["p", "q"], ["y"], equation="ij,jk->iz")
    with pytest.raises(ShapeError, match="'Einsum'"):
        infer_shapes(_model(bad, [("p", [2, 3]), ("q", [3, 4])], opset=12))


# -- malformed nodes: a rule raises ShapeError, never a raw exception -------------------------------------

_FUZZED_OPS = sorted(SHAPE_RULES)
_TEXTS = ["", "NOTSET", "SAME_UPPER", "VALID", "bidirectional", "reverse", "none", "mean", "ij,jk->ik", "...i->i",
          "ab,bc", "a->b", "DCR", "not_larger", "linear", "Grayscale", "bad"]  # fmt: skip
_dims = st.lists(st.one_of(st.integers(0, 5), st.sampled_from(["a", "b"])), max_size=5)


def _schema_attrs(op):
    domain = "ai.onnx.ml" if op in ML_RULES else ""
    try:
        return onnx.defs.get_schema(op, domain).attributes
    except onnx.defs.SchemaError:
        return {}


@st.composite
def _malformed_node(draw):
    op = draw(st.sampled_from(_FUZZED_OPS))
    n_in, n_out = draw(st.integers(0, 6)), draw(st.integers(1, 4))
    inputs = [draw(st.one_of(st.none(), _dims)) for _ in range(n_in)]
    values = [draw(st.one_of(st.none(), st.lists(st.integers(-3, 6), max_size=4))) for _ in range(n_in)]
    attrs = {}
    kinds = onnx.defs.OpSchema.AttrType
    for name, attr in _schema_attrs(op).items():
        if not draw(st.booleans()):
            continue
        if attr.type == kinds.INT:
            attrs[name] = draw(st.integers(-3, 6))
        elif attr.type == kinds.INTS:
            attrs[name] = draw(st.lists(st.integers(-3, 6), min_size=1, max_size=5))
        elif attr.type == kinds.FLOAT:
            attrs[name] = draw(st.floats(-2, 3))
        elif attr.type == kinds.FLOATS:
            attrs[name] = draw(st.lists(st.floats(-2, 3), min_size=1, max_size=4))
        elif attr.type == kinds.STRING:
            attrs[name] = draw(st.sampled_from(_TEXTS))
    return op, inputs, values, n_out, attrs


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(case=_malformed_node())
def test_malformed_nodes_raise_shape_errors_only(case):
    op, inputs, values, n_out, attrs = case
    names = [
        f"i{k}" if dims is not None or v is not None else ""
        for k, (dims, v) in enumerate(zip(inputs, values, strict=True))
    ]
    ins = [
        oh.make_tensor_value_info(n, F, dims)
        for n, dims, v in zip(names, inputs, values, strict=True)
        if n and v is None
    ]
    inits = [
        numpy_helper.from_array(np.array(v, np.int64), n)
        for n, v in zip(names, values, strict=True)
        if n and v is not None
    ]
    graph = oh.make_graph([], "g", ins, [], initializer=inits)
    inf = Inference(oh.make_model(graph, opset_imports=[oh.make_opsetid("", 22)]), True, None)
    inf.run()
    node = oh.make_node(op, names, [f"y{k}" for k in range(n_out)], **attrs)
    try:
        out = SHAPE_RULES[op](inf, node)
    except ShapeError:
        return
    assert isinstance(out, list)
    for shape in out:
        assert shape is None or isinstance(shape, tuple)


# -- ops the node test cases do not cover: against the reference evaluator -----------------------------------

ML = "ai.onnx.ml"
_TREE = {
    "nodes_treeids": [0, 0, 0], "nodes_nodeids": [0, 1, 2], "nodes_featureids": [0, 0, 0],
    "nodes_values": [0.5, 0.0, 0.0], "nodes_modes": ["BRANCH_LEQ", "LEAF", "LEAF"],
    "nodes_truenodeids": [1, 0, 0], "nodes_falsenodeids": [2, 0, 0],
}  # fmt: skip
UNCOVERED = {
    "MaxRoiPool": (oh.make_node("MaxRoiPool", ["x", "r"], ["y"], pooled_shape=[2, 3]),
                   {"x": _x(1, 3, 6, 6), "r": np.array([[0, 0, 0, 3, 3], [0, 1, 1, 4, 5]], np.float32)}),
    "RandomNormal": (oh.make_node("RandomNormal", [], ["y"], shape=[3, 4]), {}),
    "RandomUniform": (oh.make_node("RandomUniform", [], ["y"], shape=[2, 5, 1]), {}),
    "RandomNormalLike": (oh.make_node("RandomNormalLike", ["x"], ["y"]), {"x": _x(2, 3)}),
    "RandomUniformLike": (oh.make_node("RandomUniformLike", ["x"], ["y"]), {"x": _x(4, 1)}),
    "Multinomial": (oh.make_node("Multinomial", ["x"], ["y"], sample_size=5), {"x": _x(3, 4)}),
    "GlobalLpPool": (oh.make_node("GlobalLpPool", ["x"], ["y"]), {"x": _x(2, 3, 5, 4)}),
    "LinearClassifier": (
        oh.make_node("LinearClassifier", ["x"], ["l", "s"], domain=ML, coefficients=[1.0] * 6,
                     classlabels_ints=[0, 1, 2]),
        {"x": _x(4, 2)}),
    "SVMClassifier": (
        oh.make_node("SVMClassifier", ["x"], ["l", "s"], domain=ML, classlabels_ints=[0, 1, 2], coefficients=[1.0] * 6,
                     rho=[0.0, 0.0, 0.0], vectors_per_class=[1, 1, 1], support_vectors=[0.0, 1.0, 1.0, 0.0, 1.0, 1.0],
                     kernel_type="LINEAR"),
        {"x": _x(3, 2)}),
    "OneHotEncoder": (oh.make_node("OneHotEncoder", ["x"], ["y"], domain=ML, cats_int64s=[1, 2, 3]),
                      {"x": np.array([[1, 2], [3, 1]], np.int64)}),
    "TreeEnsembleRegressor": (
        oh.make_node("TreeEnsembleRegressor", ["x"], ["y"], domain=ML, n_targets=2, **_TREE, target_treeids=[0, 0],
                     target_nodeids=[1, 2], target_ids=[0, 1], target_weights=[1.0, 2.0]),
        {"x": _x(5, 3)}),
    "TreeEnsembleClassifier": (
        oh.make_node("TreeEnsembleClassifier", ["x"], ["l", "s"], domain=ML, **_TREE, class_treeids=[0, 0],
                     class_nodeids=[1, 2], class_ids=[0, 1], class_weights=[1.0, 1.0], classlabels_int64s=[0, 1]),
        {"x": _x(5, 3)}),
    "ArrayFeatureExtractor": (oh.make_node("ArrayFeatureExtractor", ["x", "i"], ["y"], domain=ML),
                              {"x": _x(6), "i": np.array([0, 2, 3], np.int64)}),
    "CategoryMapper": (oh.make_node("CategoryMapper", ["x"], ["y"], domain=ML, cats_int64s=[1, 2],
                                    cats_strings=["a", "b"]), {"x": np.array([[1, 2, 5]], np.int64)}),
    "LinearRegressor": (oh.make_node("LinearRegressor", ["x"], ["y"], domain=ML, coefficients=[1.0] * 6, targets=2),
                        {"x": _x(4, 3)}),
    "FeatureVectorizer": (oh.make_node("FeatureVectorizer", ["x", "z"], ["y"], domain=ML, inputdimensions=[2, 4]),
                          {"x": _x(3, 2), "z": _x(3, 1)}),
    "Scaler": (oh.make_node("Scaler", ["x"], ["y"], domain=ML, scale=[2.0], offset=[1.0]), {"x": _x(3, 2)}),
    "Normalizer": (oh.make_node("Normalizer", ["x"], ["y"], domain=ML, norm="L2"), {"x": _x(3, 2)}),
}  # fmt: skip


@pytest.mark.parametrize("op", sorted(UNCOVERED))
def test_ops_without_node_cases_agree_with_the_reference(op):
    node, feeds = UNCOVERED[op]
    types = {np.dtype(np.int64): TensorProto.INT64, np.dtype(np.float32): F}
    ins = [oh.make_tensor_value_info(n, types[a.dtype], list(a.shape)) for n, a in feeds.items()]
    outs = [oh.make_tensor_value_info(n, TensorProto.UNDEFINED, None) for n in node.output]
    graph = oh.make_graph([node], "g", ins, outs)
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 22), oh.make_opsetid(ML, 3)])
    try:
        expected = [np.shape(r) for r in ReferenceEvaluator(model).run(None, feeds)]
    except NotImplementedError:  # no reference kernel (MaxRoiPool, GlobalLpPool, ...): onnx's own inference
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True).graph.output
        expected = [tuple(d.dim_value for d in v.type.tensor_type.shape.dim) for v in inferred]
    shapes = infer_shapes(model)
    decided = 0
    for name, shape in zip(node.output, expected, strict=True):
        got = shapes[name]
        assert got is not None and len(got) == len(shape), (name, got, shape)
        for d, n in zip(got, shape, strict=True):
            if isinstance(d, int):
                assert d == n, (name, got, shape)
                decided += 1
    assert decided


# -- attributes that became inputs: older opsets against onnx's own inference -----------------------------------


def _int64(name, values):
    return (name, np.array(values, np.int64))


OLD_FORMS = {
    "Upsample-7 scales attribute": (7, oh.make_node("Upsample", ["x"], ["y"], scales=[1.0, 1.0, 2.0, 1.5]),
                                    [("x", [1, 2, 3, 4])], []),
    "Upsample-9 scales input": (9, oh.make_node("Upsample", ["x", "s"], ["y"]), [("x", [1, 2, 3, 4])],
                                [("s", np.array([1, 1, 2, 0.5], np.float32))]),
    "Resize-10 (X, scales)": (10, oh.make_node("Resize", ["x", "s"], ["y"]), [("x", [1, 2, 4, 4])],
                              [("s", np.array([1, 1, 0.5, 2], np.float32))]),
    "Slice-1 attributes": (9, oh.make_node("Slice", ["x"], ["y"], starts=[1, 0], ends=[3, -1], axes=[0, 2]),
                           [("x", [5, 6, 7])], []),
    "TopK-1 k attribute": (9, oh.make_node("TopK", ["x"], ["v", "i"], k=2, axis=1), [("x", [3, 5])], []),
    "TopK-10 k input": (10, oh.make_node("TopK", ["x", "k"], ["v", "i"]), [("x", [3, 5])], [_int64("k", [4])]),
    "Pad-2 pads attribute": (9, oh.make_node("Pad", ["x"], ["y"], pads=[1, 0, 2, 3]), [("x", [3, 5])], []),
    "Split-2 split attribute": (9, oh.make_node("Split", ["x"], ["a", "b"], axis=1, split=[2, 3]),
                                [("x", [3, 5])], []),
    "ReduceSum-11 axes attribute": (11, oh.make_node("ReduceSum", ["x"], ["y"], axes=[1], keepdims=0),
                                    [("x", [3, 5, 2])], []),
    "Unsqueeze-11 axes attribute": (11, oh.make_node("Unsqueeze", ["x"], ["y"], axes=[0, 3]), [("x", [3, 5])], []),
    "BatchNormalization-7 training outputs": (
        7, oh.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv", "sm", "sv"]),
        [("x", [2, 3, 4]), *[(n, [3]) for n in "sbmv"]], []),
    "LayerNormalization statistics": (17, oh.make_node("LayerNormalization", ["x", "s"], ["y", "m", "r"], axis=1),
                                      [("x", [2, 3, 4]), ("s", [3, 4])], []),
    "ConvTranspose group and pads": (
        11, oh.make_node("ConvTranspose", ["x", "w"], ["y"], group=2, strides=[2, 1], pads=[1, 0, 0, 1],
                         output_padding=[1, 0], dilations=[1, 2]),
        [("x", [1, 4, 5, 6]), ("w", [4, 3, 3, 2])], []),
    "ConvTranspose output_shape": (11, oh.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[3], output_shape=[10]),
                                   [("x", [1, 2, 3]), ("w", [2, 5, 2])], []),
    "DFT-17 axis attribute": (17, oh.make_node("DFT", ["x"], ["y"], axis=1, onesided=1), [("x", [2, 8, 1])], []),
    "RNN bidirectional, layout 1": (
        14, oh.make_node("RNN", ["x", "w", "r"], ["y", "h"], hidden_size=4, direction="bidirectional", layout=1),
        [("x", [2, 7, 3]), ("w", [2, 4, 3]), ("r", [2, 4, 4])], []),
}  # fmt: skip


@pytest.mark.parametrize("case", OLD_FORMS.values(), ids=OLD_FORMS.keys())
def test_older_forms_agree_with_onnx_inference(case):
    opset, node, inputs, inits = case
    model = _model(node, inputs, inits, opset)
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    theirs = {v.name: v.type.tensor_type for v in [*inferred.graph.output, *inferred.graph.value_info]}
    ours = infer_shapes(model)
    compared = 0
    for name in node.output:
        if not theirs[name].HasField("shape"):
            continue  # onnx gives no shape (BatchNormalization-7's statistics)
        expected = tuple(d.dim_value for d in theirs[name].shape.dim)
        assert ours[name] == expected, (name, ours[name], expected)
        compared += 1
    assert compared
