"""Fuzzing ONNX shape inference with structure-aware mutations of valid models built in code.

Each example starts from a small valid model (reshape, convolution, split/concat/transpose, slice,
shape arithmetic, matmul chains) and applies a few mutations to its protobuf: attributes of any
type and value, declared dims (-1, -2**63, hostile ``dim_param`` text), element types, initializer
values and external-data markers, node order, input names, op types and output counts. The
property: ``infer_onnx_shapes`` and ``annotate_onnx_shapes`` return or raise a ``ShapeError``
(ours), never another exception, within a time bound; every dimension they return is a
non-negative int64, a dimension term or None.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from fuzz_support import FUZZ
from hypothesis import given
from hypothesis import strategies as st

from exprgraph.core import Term
from exprgraph.errors import ShapeError
from exprgraph.interop import annotate_onnx_shapes, infer_onnx_shapes
from time_limit import time_limit

onnx = pytest.importorskip("onnx")
TensorProto, oh, numpy_helper = onnx.TensorProto, onnx.helper, onnx.numpy_helper

#: seconds one example may take before the fuzzer calls it a hang
TIME_LIMIT = 20

INTERESTING = [-(2**63), -(2**62), -(2**31), -5, -2, -1, 0, 1, 2, 3, 4, 7, 2**31, 2**62, 2**63 - 1]
OP_TYPES = [
    *"Reshape Shape Gather Concat Mul Add Sub Div Max Min Transpose Split Conv MaxPool AveragePool".split(),
    *"GlobalAveragePool Slice Squeeze Unsqueeze Expand Tile Pad Flatten Size Cast Identity MatMul Gemm".split(),
    *"ReduceSum ArgMax ConstantOfShape Constant Relu Where Dropout LayerNormalization NonZero".split(),
    *"If Loop Scan Range Equal Mod CumSum ScatterND SequenceConstruct SequenceAt ConcatFromSequence".split(),
    *"SplitToSequence Twice".split(),
]
ATTRIBUTES = [
    *"axis axes perm split num_outputs kernel_shape strides pads dilations auto_pad ceil_mode".split(),
    *"start end to value value_int value_ints allowzero keepdims transA transB group".split(),
]
PARAMS = ["N", "H", "W", "2*N", "N+1", "-5", "(N-3)//2+1", "9223372036854775807+1", "é", "", "a b", "x" * 300]
LOCATIONS = [".env", "../x", "/etc/passwd", "w.bin", "", "sub/../../x"]


def _int64(name: str, values: Any) -> Any:
    return numpy_helper.from_array(np.asarray(values, np.int64), name)


def _model(nodes: list, inputs: list, inits: list) -> Any:
    ins = [oh.make_tensor_value_info(name, elem, dims) for name, elem, dims in inputs]
    outs = [oh.make_tensor_value_info(nodes[-1].output[0], TensorProto.FLOAT, None)]
    graph = oh.make_graph(nodes, "fuzz", ins, outs, initializer=inits)
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", 18)])


F, I64 = TensorProto.FLOAT, TensorProto.INT64


def _reshape_chain() -> Any:
    nodes = [
        oh.make_node("Shape", ["x"], ["s"], start=0),
        oh.make_node("Slice", ["s", "zero", "two"], ["head"]),
        oh.make_node("Gather", ["s", "last"], ["w"], axis=0),
        oh.make_node("Unsqueeze", ["w", "zero"], ["w1"]),
        oh.make_node("Concat", ["head", "minus_one", "w1"], ["target"], axis=0),
        oh.make_node("Reshape", ["x", "target"], ["y"]),
        oh.make_node("Transpose", ["y"], ["t"], perm=[3, 1, 2, 0]),
    ]
    inits = [_int64("zero", [0]), _int64("two", [2]), _int64("last", -1), _int64("minus_one", [-1])]
    return _model(nodes, [("x", F, ["N", 3, "H", "W"])], inits)


def _conv_chain() -> Any:
    nodes = [
        oh.make_node("Conv", ["x", "w"], ["c"], strides=[2, 2], pads=[1, 1, 1, 1], dilations=[1, 1]),
        oh.make_node("Relu", ["c"], ["r"]),
        oh.make_node("MaxPool", ["r"], ["p"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
        oh.make_node("AveragePool", ["p"], ["a"], kernel_shape=[2, 2], auto_pad="SAME_UPPER"),
        oh.make_node("GlobalAveragePool", ["a"], ["g"]),
        oh.make_node("Flatten", ["g"], ["f"], axis=1),
    ]
    inits = [numpy_helper.from_array(np.zeros((4, 3, 3, 3), np.float32), "w")]
    return _model(nodes, [("x", F, ["N", 3, "H", "W"])], inits)


def _split_concat() -> Any:
    nodes = [
        oh.make_node("Split", ["x", "sizes"], ["a", "b"], axis=1),
        oh.make_node("Concat", ["b", "a"], ["c"], axis=1),
        oh.make_node("Split", ["c"], ["d", "e", "f"], axis=1, num_outputs=3),
        oh.make_node("Transpose", ["d"], ["t"], perm=[2, 0, 1]),
        oh.make_node("ReduceSum", ["t", "raxes"], ["r"], keepdims=0),
        oh.make_node("MatMul", ["r", "m"], ["mm"]),
    ]
    inits = [_int64("sizes", [2, 4]), _int64("raxes", [0])]
    return _model(nodes, [("x", F, ["B", 6, "S"]), ("m", F, ["B", 5])], inits)


def _slice_pad() -> Any:
    nodes = [
        oh.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["s"]),
        oh.make_node("Pad", ["s", "pads"], ["p"]),
        oh.make_node("Squeeze", ["p", "sq"], ["q"]),
        oh.make_node("Unsqueeze", ["q", "sq"], ["u"]),
        oh.make_node("Tile", ["u", "reps"], ["t"]),
        oh.make_node("Expand", ["t", "shape"], ["e"]),
    ]
    inits = [
        _int64("starts", [1, -3]),
        _int64("ends", [2**63 - 1, -1]),
        _int64("axes", [1, 2]),
        _int64("steps", [2, 1]),
        _int64("pads", [0, 1, 0, 0, 2, 0]),
        _int64("sq", [0]),
        _int64("reps", [1, 2, 1]),
        _int64("shape", [3, 1, 1]),
    ]
    return _model(nodes, [("x", F, [1, "M", 8])], inits)


def _shape_arithmetic() -> Any:
    nodes = [
        oh.make_node("Shape", ["x"], ["s"]),
        oh.make_node("Mul", ["s", "two"], ["m"]),
        oh.make_node("Add", ["m", "one"], ["a"]),
        oh.make_node("Div", ["a", "two"], ["d"]),
        oh.make_node("Sub", ["d", "one"], ["b"]),
        oh.make_node("Max", ["b", "one"], ["c"]),
        oh.make_node("ConstantOfShape", ["c"], ["k"]),
        oh.make_node("Size", ["k"], ["n"]),
        oh.make_node("Reshape", ["k", "flat"], ["y"]),
    ]
    inits = [_int64("two", [2]), _int64("one", 1), _int64("flat", [-1])]
    return _model(nodes, [("x", F, ["N", 4])], inits)


def _matmul_gather() -> Any:
    nodes = [
        oh.make_node("Gemm", ["a", "b"], ["g"], transB=1),
        oh.make_node("Gather", ["g", "idx"], ["ga"], axis=1),
        oh.make_node("ArgMax", ["ga"], ["am"], axis=0, keepdims=1),
        oh.make_node("Cast", ["am"], ["cf"], to=TensorProto.FLOAT),
        oh.make_node("Where", ["mask", "cf", "ga"], ["w"]),
        oh.make_node("Dropout", ["w"], ["dr", "mask_out"]),
    ]
    inits = [_int64("idx", [[0, 1]])]
    ins = [("a", F, ["M", "K"]), ("b", F, ["N", "K"]), ("mask", TensorProto.BOOL, [1, 1, 2])]
    return _model(nodes, ins, inits)


def _control_flow() -> Any:
    then_g = oh.make_graph([oh.make_node("Relu", ["x"], ["t"])], "then", [], [_vi("t")])
    else_g = oh.make_graph([oh.make_node("Concat", ["x", "x"], ["e"], axis=0)], "else", [], [_vi("e")])
    body = oh.make_graph(
        [oh.make_node("Identity", ["c_in"], ["c_out"]), oh.make_node("Add", ["acc", "x"], ["acc2"]),
         oh.make_node("Relu", ["acc"], ["scan"])],
        "body", [_vi("i", I64, []), _vi("c_in", TensorProto.BOOL, []), _vi("acc")],
        [_vi("c_out", TensorProto.BOOL, []), _vi("acc2"), _vi("scan")],
    )  # fmt: skip
    fn = oh.make_function("local", "Twice", ["a"], ["b"], [oh.make_node("Concat", ["a", "a"], ["b"], axis=0)],
                          [oh.make_opsetid("", 18)])  # fmt: skip
    nodes = [
        oh.make_node("Shape", ["x"], ["s"]),
        oh.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        oh.make_node("Equal", ["n", "minus_one"], ["is_minus"]),
        oh.make_node("If", ["is_minus"], ["picked"], then_branch=then_g, else_branch=else_g),
        oh.make_node("Loop", ["three", "", "x"], ["acc_f", "scans"], body=body),
        oh.make_node("Twice", ["picked"], ["twice"], domain="local"),
        oh.make_node("Mod", ["n", "seven"], ["r"]),
        oh.make_node("Range", ["zero", "n", "one"], ["pos"]),
        oh.make_node("SequenceConstruct", ["x", "twice"], ["seq"]),
        oh.make_node("ConcatFromSequence", ["seq"], ["cat"], axis=0),
        oh.make_node("Where", ["is_minus", "pos", "pos"], ["w"]),
        oh.make_node("Mul", ["cat", "cat"], ["y"]),
    ]
    inits = [_int64("zero", 0), _int64("minus_one", -1), _int64("three", 3), _int64("seven", 7), _int64("one", 1)]
    graph = oh.make_graph(nodes, "fuzz", [_vi("x", F, ["N", 4])], [_vi("y")], initializer=inits)
    opsets = [oh.make_opsetid("", 18), oh.make_opsetid("local", 1)]
    return oh.make_model(graph, opset_imports=opsets, functions=[fn])


def _vi(name: str, elem: int = 1, dims: Any = None) -> Any:
    return oh.make_tensor_value_info(name, elem, dims)


SEEDS: list[Callable[[], Any]] = [
    _control_flow,
    _reshape_chain,
    _conv_chain,
    _split_concat,
    _slice_pad,
    _shape_arithmetic,
    _matmul_gather,
]

# -- mutations: each edits the model's protobuf in place with values drawn by hypothesis ----------------


def _attribute(draw: st.DrawFn, name: str) -> Any:
    """An attribute ``name`` of a random type and value."""
    kind = draw(st.sampled_from(["int", "int", "ints", "ints", "float", "floats", "string", "tensor"]))
    A = onnx.AttributeProto
    if kind == "int":
        return oh.make_attribute(name, draw(st.sampled_from(INTERESTING)))
    if kind == "ints":
        return oh.make_attribute(name, draw(st.lists(st.sampled_from(INTERESTING), max_size=6)), attr_type=A.INTS)
    if kind == "float":
        return oh.make_attribute(name, draw(st.sampled_from([0.5, -1e300, float("nan")])))
    if kind == "floats":
        return oh.make_attribute(name, [1.5, 2.5])
    if kind == "string":
        return oh.make_attribute(name, draw(st.sampled_from([b"SAME_UPPER", b"VALID", b"NOTSET", b"bad", b"\xff"])))
    return oh.make_attribute(name, _int64("", draw(st.lists(st.sampled_from(INTERESTING), max_size=4))))


def _mutate_attribute(draw: st.DrawFn, graph: Any) -> None:
    node = draw(st.sampled_from(graph.node))
    name = draw(st.sampled_from(ATTRIBUTES + [a.name for a in node.attribute]))
    kept = [a for a in node.attribute if a.name != name]
    del node.attribute[:]
    node.attribute.extend(kept)
    if draw(st.booleans()) or not kept:
        node.attribute.append(_attribute(draw, name))


def _mutate_dims(draw: st.DrawFn, graph: Any) -> None:
    info = draw(st.sampled_from(graph.input))
    dims = info.type.tensor_type.shape.dim
    kind = draw(st.sampled_from(["value", "param", "clear", "add", "drop", "no shape"]))
    if kind == "add" or not dims:
        dims.add().dim_value = draw(st.sampled_from(INTERESTING[4:]))
    elif kind == "drop":
        del dims[draw(st.integers(0, len(dims) - 1))]
    elif kind == "no shape":
        info.type.tensor_type.ClearField("shape")
    else:
        dim = dims[draw(st.integers(0, len(dims) - 1))]
        if kind == "value":
            dim.dim_value = draw(st.sampled_from(INTERESTING))
        elif kind == "param":
            dim.dim_param = draw(st.sampled_from(PARAMS))
        else:
            dim.Clear()


def _mutate_dtype(draw: st.DrawFn, graph: Any) -> None:
    elem = draw(st.sampled_from([0, TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32, TensorProto.UINT64,
                                 TensorProto.BOOL, TensorProto.STRING, TensorProto.INT4, 99]))  # fmt: skip
    if graph.initializer and draw(st.booleans()):
        draw(st.sampled_from(graph.initializer)).data_type = elem
    else:
        draw(st.sampled_from(graph.input)).type.tensor_type.elem_type = elem


def _mutate_initializer(draw: st.DrawFn, graph: Any) -> None:
    if not graph.initializer:
        return
    init = draw(st.sampled_from(graph.initializer))
    kind = draw(st.sampled_from(["values", "values", "scalar", "dims", "raw", "external"]))
    if kind == "values":
        init.CopyFrom(_int64(init.name, draw(st.lists(st.sampled_from(INTERESTING), max_size=6))))
    elif kind == "scalar":
        init.CopyFrom(_int64(init.name, draw(st.sampled_from(INTERESTING))))
    elif kind == "dims":
        init.dims.append(draw(st.sampled_from(INTERESTING)))
    elif kind == "raw":
        init.raw_data = draw(st.binary(max_size=20))
    else:
        init.data_location = TensorProto.EXTERNAL
        del init.external_data[:]
        entry = init.external_data.add()
        entry.key, entry.value = "location", draw(st.sampled_from(LOCATIONS))


def _mutate_constant(draw: st.DrawFn, graph: Any) -> None:
    # an initializer becomes a Constant node's value (mutated the same ways), at the start of the graph
    if not graph.initializer:
        return
    init = graph.initializer[draw(st.integers(0, len(graph.initializer) - 1))]
    tensor = type(init)()
    tensor.CopyFrom(init)
    graph.initializer.remove(init)
    constant = oh.make_node("Constant", [], [tensor.name], value=tensor)
    graph.node.insert(0, constant)
    if draw(st.booleans()):
        graph.initializer.add().CopyFrom(tensor)
        _mutate_initializer(draw, graph)
        constant.attribute[0].t.CopyFrom(graph.initializer[-1])
        graph.initializer.remove(graph.initializer[-1])


def _mutate_order(draw: st.DrawFn, graph: Any) -> None:
    nodes = list(graph.node)
    kind = draw(st.sampled_from(["shuffle", "drop", "duplicate"]))
    if kind == "shuffle":
        nodes = draw(st.permutations(nodes))
    elif kind == "drop" and len(nodes) > 1:
        del nodes[draw(st.integers(0, len(nodes) - 1))]
    else:
        nodes.append(draw(st.sampled_from(nodes)))
    copies = [type(n)() for n in nodes]
    for copy, node in zip(copies, nodes, strict=True):
        copy.CopyFrom(node)
    del graph.node[:]
    graph.node.extend(copies)


def _mutate_names(draw: st.DrawFn, graph: Any) -> None:
    node = draw(st.sampled_from(graph.node))
    names = [i.name for i in graph.input] + [i.name for i in graph.initializer] + ["", "missing"]
    names += [o for n in graph.node for o in n.output]
    if node.input and draw(st.booleans()):
        node.input[draw(st.integers(0, len(node.input) - 1))] = draw(st.sampled_from(names))
    else:
        node.input.append(draw(st.sampled_from(names)))


def _mutate_op(draw: st.DrawFn, graph: Any) -> None:
    draw(st.sampled_from(graph.node)).op_type = draw(st.sampled_from(OP_TYPES))


def _mutate_outputs(draw: st.DrawFn, graph: Any) -> None:
    node = draw(st.sampled_from(graph.node))
    if draw(st.booleans()):
        node.output.append(draw(st.sampled_from(["extra", "", node.output[0] if node.output else "x"])))
    elif node.output:
        del node.output[-1]


def _mutate_grow(draw: st.DrawFn, graph: Any) -> None:
    # a chain of up to 70 nodes, each combining the previous output with itself (x*x squares 70 times)
    op = draw(st.sampled_from(["Mul", "Add", "Concat", "Max", "Sub", "Div", "Shape", "Transpose"]))
    name = draw(st.sampled_from([o for n in graph.node for o in n.output] + [i.name for i in graph.input]))
    for i in range(draw(st.integers(1, 70))):
        attrs = {"axis": 0} if op == "Concat" else {}
        graph.node.append(
            oh.make_node(op, [name, name][: 1 if op in ("Shape", "Transpose") else 2], [f"g{i}"], **attrs)
        )
        name = f"g{i}"


MUTATIONS = [
    _mutate_grow,
    _mutate_attribute,
    _mutate_attribute,
    _mutate_dims,
    _mutate_dtype,
    _mutate_initializer,
    _mutate_initializer,
    _mutate_constant,
    _mutate_order,
    _mutate_names,
    _mutate_op,
    _mutate_outputs,
]


@st.composite
def mutated_models(draw: st.DrawFn) -> Any:
    """A seed model with 1..4 mutations of its protobuf."""
    model = draw(st.sampled_from(SEEDS))()
    for _ in range(draw(st.integers(1, 4))):
        draw(st.sampled_from(MUTATIONS))(draw, model.graph)
    return model


def _check_shapes(shapes: dict) -> None:
    for name, shape in shapes.items():
        assert isinstance(name, str)
        if shape is None:
            continue
        assert isinstance(shape, tuple)
        for d in shape:
            assert d is None or (type(d) is int and 0 <= d < 2**63) or (isinstance(d, Term) and d.dtype == "int64")


@FUZZ
@given(mutated_models(), st.booleans())
def test_mutated_models_give_shapes_or_shape_errors(model: Any, annotate: bool) -> None:
    with time_limit(TIME_LIMIT):
        try:
            if annotate:
                out = annotate_onnx_shapes(model)
                assert isinstance(out, onnx.ModelProto)
            else:
                _check_shapes(infer_onnx_shapes(model))
        except ShapeError as exc:
            assert "ONNX" in str(exc)  # names the node, input or initializer at fault


@pytest.mark.parametrize("seed", SEEDS, ids=lambda seed: seed.__name__)
def test_the_seed_models_are_valid(seed: Callable[[], Any]) -> None:
    # onnx's strict inference accepts each seed, and agrees with ours on every dimension it knows as a number
    model = seed()
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    shapes = infer_onnx_shapes(model)
    _check_shapes(shapes)
    compared = 0
    for info in inferred.graph.value_info:
        if not info.type.tensor_type.HasField("shape"):
            continue  # onnx does not know it (a sequence, a loop's output)
        theirs = info.type.tensor_type.shape.dim
        assert len(shapes[info.name]) == len(theirs), info.name
        for mine, dim in zip(shapes[info.name], theirs, strict=True):
            if dim.HasField("dim_value"):
                assert mine == dim.dim_value, info.name
                compared += 1
    assert compared and shapes[model.graph.node[-1].output[0]] is not None
