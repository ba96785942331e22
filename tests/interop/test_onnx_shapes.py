"""Symbolic ONNX shape inference against onnx.shape_inference, on models built with onnx.helper."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from exprgraph.dims import evaluate_expression, parse_expression, simplify_dim
from exprgraph.interop import annotate_onnx_shapes, infer_onnx_shapes
from exprgraph.interop.onnx_shapes import Inference, dim_text

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
TensorProto, oh, numpy_helper = onnx.TensorProto, onnx.helper, onnx.numpy_helper


def _model(nodes, inputs, inits=(), rank=None):
    """A checked model: ``inputs`` are (name, dims) pairs; the last node's output, of ``rank``, is the output."""
    ins = [oh.make_tensor_value_info(name, TensorProto.FLOAT, dims) for name, dims in inputs]
    last = nodes[-1].output[0]
    outs = [oh.make_tensor_value_info(last, TensorProto.FLOAT, [None] * rank)]
    inits = [numpy_helper.from_array(np.asarray(v), name) for name, v in inits]
    graph = oh.make_graph(nodes, "g", ins, outs, initializer=inits)
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 18)])
    onnx.checker.check_model(model)
    return model


def _onnx_dims(model):
    """onnx.shape_inference's shapes: name -> list of ints, dim_param texts or None."""
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    out = {}
    for v in [*inferred.graph.value_info, *inferred.graph.output]:
        t = v.type.tensor_type
        if t.HasField("shape"):
            out[v.name] = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in t.shape.dim]
    return out


def _agree_with_onnx(model, **kw):
    """Every dimension onnx infers as a number or as an input's symbol is ours too; returns our shapes."""
    ours = infer_onnx_shapes(model, **kw)
    compared = 0
    for name, dims in _onnx_dims(model).items():
        if ours.get(name) is None:
            continue
        assert len(ours[name]) == len(dims), name
        for mine, theirs in zip(ours[name], dims, strict=True):
            if isinstance(theirs, int):
                assert mine == theirs, (name, ours[name], dims)
                compared += 1
            elif isinstance(theirs, str) and not theirs.startswith("unk__"):
                assert mine is simplify_dim(parse_expression(theirs)), (name, ours[name], dims)
                compared += 1
    assert compared
    return ours


def _sized(model, sizes):
    """A copy of ``model`` whose inputs' named dimensions are the numbers in ``sizes``."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    for value in out.graph.input:
        for dim in value.type.tensor_type.shape.dim:
            if dim.HasField("dim_param") and dim.dim_param in sizes:
                dim.dim_value = sizes[dim.dim_param]
    return out


def _agree_at_sizes(model, shapes, sizes):
    """At these sizes, onnx's numbers, ours, and our symbolic shapes evaluated are all the same."""
    sized = _agree_with_onnx(_sized(model, sizes))
    bound = infer_onnx_shapes(model, dims=sizes)
    for name, shape in shapes.items():
        if shape is not None and sized.get(name) is not None:
            values = [evaluate_expression(d, sizes) for d in shape]
            assert values == list(sized[name]) == list(bound[name]), name


def _run_shapes(model, feeds):
    """The shape of every graph output when onnxruntime runs ``model`` on ``feeds``; None when it refuses."""
    options = ort.SessionOptions()
    options.log_severity_level = 3
    try:
        session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        arrays = session.run(None, feeds)
    except Exception:
        return None
    return {o.name: a.shape for o, a in zip(session.get_outputs(), arrays, strict=True)}


def _texts(shape):
    return [dim_text(d) for d in shape]


def test_a_convolutional_network():
    w = np.zeros((16, 3, 3, 3), np.float32)
    nodes = [
        oh.make_node("Conv", ["x", "w"], ["c"], strides=[2, 2], pads=[1, 1, 1, 1]),
        oh.make_node("Relu", ["c"], ["r"]),
        oh.make_node("MaxPool", ["r"], ["p"], kernel_shape=[3, 3], strides=[2, 2]),
        oh.make_node("AveragePool", ["p"], ["a"], kernel_shape=[2, 2], strides=[2, 2], auto_pad="SAME_UPPER"),
        oh.make_node("GlobalAveragePool", ["a"], ["g"]),
        oh.make_node("Flatten", ["g"], ["f"]),
        oh.make_node("Transpose", ["p"], ["t"], perm=[0, 2, 3, 1]),
    ]
    model = _model(nodes, [("x", ["N", 3, "H", "W"])], [("w", w)], rank=4)
    shapes = _agree_with_onnx(model)
    assert _texts(shapes["c"]) == ["N", "16", "(1+H)//2", "(1+W)//2"]
    assert _texts(shapes["p"]) == ["N", "16", "(3+H)//4-1", "(3+W)//4-1"]
    assert _texts(shapes["a"]) == ["N", "16", "(3+H)//8", "(3+W)//8"]
    assert _texts(shapes["f"]) == ["N", "16"]
    assert _texts(shapes["t"]) == ["N", "(3+H)//4-1", "(3+W)//4-1", "16"]
    # the same model with sizes: onnx's numbers, ours, and our formulas evaluated all agree
    for h, wd in [(32, 32), (17, 9), (224, 225)]:
        _agree_at_sizes(model, shapes, {"N": 2, "H": h, "W": wd})


def test_reshape_to_a_computed_shape():
    # x.reshape(x.shape[0], -1), written with Shape, Gather, Unsqueeze and Concat
    nodes = [
        oh.make_node("Shape", ["x"], ["s"]),
        oh.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        oh.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
        oh.make_node("Concat", ["n1", "minus_one"], ["target"], axis=0),
        oh.make_node("Reshape", ["x", "target"], ["y"]),
        oh.make_node("Reshape", ["x", "keep"], ["z"]),  # 0 copies a dimension
    ]
    inits = [("zero", np.array(0, np.int64)), ("axes", np.array([0], np.int64)),
             ("minus_one", np.array([-1], np.int64)), ("keep", np.array([0, 0, -1], np.int64))]  # fmt: skip
    model = _model(nodes, [("x", ["batch", "seq", 64])], inits, rank=3)
    shapes = _agree_with_onnx(model)
    assert _texts(shapes["y"]) == ["batch", "64*seq"]
    assert _texts(shapes["z"]) == ["batch", "seq", "64"]
    assert _onnx_dims(model)["y"][1] is None or _onnx_dims(model)["y"][1].startswith("unk__")  # onnx loses it


def test_the_dims_seed_examples():
    # 2*batch//batch -> 2: a row count computed from two inputs' shapes
    nodes = [
        oh.make_node("Shape", ["a"], ["sa"]),
        oh.make_node("Shape", ["b"], ["sb"]),
        oh.make_node("Slice", ["sa", "zero", "one"], ["ra"]),
        oh.make_node("Slice", ["sb", "zero", "one"], ["rb"]),
        oh.make_node("Div", ["ra", "rb"], ["ratio"]),
        oh.make_node("Concat", ["ratio", "minus_one"], ["target"], axis=0),
        oh.make_node("Reshape", ["a", "target"], ["y"]),
        # CeilToInt(seq, 8): a stride-8 pooling with SAME padding
        oh.make_node("MaxPool", ["c"], ["p"], kernel_shape=[8], strides=[8], auto_pad="SAME_UPPER"),
    ]
    inits = [("zero", np.array([0], np.int64)), ("one", np.array([1], np.int64)),
             ("minus_one", np.array([-1], np.int64))]  # fmt: skip
    model = _model(nodes, [("a", ["2*batch", 4]), ("b", ["batch", 4]), ("c", [1, 8, "seq"])], inits, rank=3)
    shapes = infer_onnx_shapes(model)
    assert _texts(shapes["ratio"]) == ["1"] and shapes["y"] == (2, simplify_dim(parse_expression("4*batch")))
    assert _texts(shapes["p"]) == ["1", "8", "(7+seq)//8"]


def test_concat_split_matmul_gather_slice_and_broadcasting():
    nodes = [
        oh.make_node("Concat", ["a", "b"], ["cat"], axis=1),
        oh.make_node("Split", ["cat"], ["s0", "s1", "s2"], axis=1, num_outputs=3),
        oh.make_node("Split", ["a", "sizes"], ["t0", "t1"], axis=2),
        oh.make_node("MatMul", ["q", "k"], ["qk"]),
        oh.make_node("MatMul", ["a", "vec"], ["av"]),
        oh.make_node("Gather", ["a", "idx"], ["ga"], axis=1),
        oh.make_node("Slice", ["a", "starts", "ends", "axes", "steps"], ["sl"]),
        oh.make_node("Add", ["a", "row"], ["bc"]),
        oh.make_node("Where", ["mask", "a", "row"], ["wh"]),
        oh.make_node("ReduceSum", ["a", "raxes"], ["rs"], keepdims=0),
    ]
    inits = [("sizes", np.array([2, 4], np.int64)), ("idx", np.zeros((2, 5), np.int64)),
             ("starts", np.array([1, -3], np.int64)), ("ends", np.array([2**63 - 1, -1], np.int64)),
             ("axes", np.array([1, 2], np.int64)), ("steps", np.array([2, 1], np.int64)),
             ("raxes", np.array([1], np.int64))]  # fmt: skip
    inputs = [("a", ["B", "M", 6]), ("b", ["B", "N", 6]), ("q", ["B", 1, "S", 8]), ("k", ["H", 8, "T"]),
              ("vec", [6]), ("row", ["M", 1]), ("mask", [1, 6])]  # fmt: skip
    model = _model(nodes, inputs, inits, rank=2)
    shapes = _agree_with_onnx(model)
    assert _texts(shapes["cat"]) == ["B", "M+N", "6"]
    assert _texts(shapes["s0"]) == ["B", "(2+M+N)//3", "6"]
    assert _texts(shapes["s2"]) == ["B", "-2*((2+M+N)//3)+M+N", "6"]
    assert _texts(shapes["t1"]) == ["B", "M", "4"]
    assert _texts(shapes["qk"]) == ["B", "H", "S", "T"]
    assert _texts(shapes["av"]) == ["B", "M"]
    assert _texts(shapes["ga"]) == ["B", "2", "5", "6"]
    assert _texts(shapes["sl"]) == ["B", "M//2", "2"]
    assert _texts(shapes["bc"]) == ["B", "M", "6"]
    assert _texts(shapes["wh"]) == ["B", "M", "6"]
    assert _texts(shapes["rs"]) == ["B", "6"]
    # evaluated at sizes, they are onnx's numbers
    _agree_at_sizes(model, shapes, {"B": 3, "M": 7, "N": 4, "S": 5, "H": 2, "T": 9})


@settings(max_examples=60, deadline=None)
@given(
    size=st.integers(5, 40),
    kernel=st.integers(1, 5),
    stride=st.integers(1, 4),
    pad=st.tuples(st.integers(0, 2), st.integers(0, 2)),
    dilation=st.integers(1, 2),
    ceil_mode=st.integers(0, 1),
    auto_pad=st.sampled_from(["NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"]),
    op=st.sampled_from(["Conv", "MaxPool", "AveragePool"]),
)
def test_conv_and_pool_formulas_match_the_runtime_at_every_size(
    size, kernel, stride, pad, dilation, ceil_mode, auto_pad, op
):
    padding = sum(pad) if auto_pad == "NOTSET" else 0
    assume((kernel - 1) * dilation + 1 <= size + padding and max(pad) < kernel)  # a window that fits
    attrs = {"strides": [stride], "auto_pad": auto_pad}
    if auto_pad == "NOTSET":
        attrs["pads"] = list(pad)
    if op != "AveragePool":
        attrs["dilations"] = [dilation]
    if op != "Conv":
        attrs["kernel_shape"] = [kernel]
        attrs["ceil_mode"] = ceil_mode
    inits = [("w", np.zeros((2, 3, kernel), np.float32))] if op == "Conv" else []
    node = oh.make_node(op, ["x", "w"] if op == "Conv" else ["x"], ["y"], **attrs)
    symbolic = infer_onnx_shapes(_model([node], [("x", [1, 3, "L"])], inits, rank=3))["y"][2]
    sized = infer_onnx_shapes(_model([node], [("x", [1, 3, size])], inits, rank=3))["y"][2]
    # onnxruntime is the truth (onnx.shape_inference keeps a ceil_mode window that starts past the end)
    truth = _run_shapes(_model([node], [("x", [1, 3, size])], inits, rank=3), {"x": np.zeros((1, 3, size), np.float32)})
    assume(truth is not None)  # a combination the runtime refuses
    # onnxruntime 1.2x ignores the dilation of SAME-padded pools (the spec: ceil(in / stride))
    assume(not (auto_pad.startswith("SAME") and dilation > 1 and op == "MaxPool"))
    truth = truth["y"][2]
    assert evaluate_expression(symbolic, {"L": size}) == sized == truth


def test_annotate_writes_dim_params_back():
    w = np.zeros((4, 3, 3, 3), np.float32)
    model = _model([oh.make_node("Conv", ["x", "w"], ["c"], strides=[2, 2]),
                    oh.make_node("Relu", ["c"], ["r"])], [("x", ["N", 3, "H", "W"])], [("w", w)], rank=4)  # fmt: skip
    annotated = annotate_onnx_shapes(model)
    onnx.checker.check_model(annotated)
    info = {
        v.name: [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim] for v in annotated.graph.value_info
    }
    assert info["c"] == ["N", 4, "(-3+H)//2+1", "(-3+W)//2+1"] or info["c"][2] == dim_text(
        infer_onnx_shapes(model)["c"][2]
    )
    assert annotated.graph.value_info[0].type.tensor_type.elem_type == TensorProto.FLOAT


def test_sizes_known_only_at_run_time_are_fresh_dims():
    # NonMaxSuppression's count and a Reshape to a run-time shape of 3 entries: fresh names, not unknowns
    nodes = [oh.make_node("NonMaxSuppression", ["x", "x"], ["nms"]), oh.make_node("Reshape", ["x", "x2"], ["r"])]
    ins = [oh.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 4]),
           oh.make_tensor_value_info("x2", TensorProto.INT64, [3])]  # fmt: skip
    graph = oh.make_graph(nodes, "g", ins, [oh.make_tensor_value_info("r", TensorProto.FLOAT, None)])
    inference = Inference(oh.make_model(graph), True, None)
    shapes = inference.run()
    assert shapes["nms"][1] == 3 and shapes["nms"][0] in inference.fresh
    assert len(shapes["r"]) == 3 and all(d in inference.fresh for d in shapes["r"])
    names = [d.name for d in shapes["r"]]
    assert len(set(names)) == 3 and all(n.isidentifier() for n in names)
