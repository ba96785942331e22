"""Hostile and malformed ONNX models: shape inference reads no file it was not given, keeps every
dimension in int64, names the node (input, initializer) at fault, and never takes the process down."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from exprgraph.core import Term
from exprgraph.errors import DimOverflowError, ExternalDataError, ShapeError
from exprgraph.interop import annotate_onnx_shapes, infer_onnx_shapes
from exprgraph.interop.onnx_shapes import Inference, dim_text

onnx = pytest.importorskip("onnx")
TensorProto, oh, numpy_helper = onnx.TensorProto, onnx.helper, onnx.numpy_helper
F, I64 = TensorProto.FLOAT, TensorProto.INT64


def _model(nodes, inputs, inits=(), value_info=()):
    """A model (not checked: most are malformed on purpose); ``inputs`` are (name, elem type, dims)."""
    ins = [oh.make_tensor_value_info(name, elem, dims) for name, elem, dims in inputs]
    outs = [oh.make_tensor_value_info(nodes[-1].output[0], F, None)]
    graph = oh.make_graph(nodes, "g", ins, outs, initializer=list(inits), value_info=list(value_info))
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", 18)])


def _ints(name, values):
    return numpy_helper.from_array(np.asarray(values, np.int64), name)


def _run_python(code: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter (what may abort or hang cannot take the test run with it)."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=timeout, check=False
    )


# -- 1. external data: read only from inside a base directory the caller names ---------------------------


def _external(name, location, n=2, offset=None, length=None):
    """An int64 initializer of ``n`` entries whose data lives in the file ``location``."""
    tensor = TensorProto(name=name, data_type=I64, dims=[n])
    tensor.data_location = TensorProto.EXTERNAL
    for key, value in [("location", location), ("offset", offset), ("length", length)]:
        if value is not None:
            entry = tensor.external_data.add()
            entry.key, entry.value = key, str(value)
    return tensor


def _reshape_to(target):
    nodes = [oh.make_node("Reshape", ["x", "target"], ["y"]), oh.make_node("Relu", ["y"], ["out"])]
    return _model(nodes, [("x", F, [16])], [target])


def _all_fresh(shape, n):
    """``shape`` has ``n`` dims, each a fresh symbol (a size known only at run time) of its own."""
    return (
        len(shape) == n
        and all(isinstance(d, Term) and d.is_symbol for d in shape)
        and len({d.name for d in shape}) == n
    )


def _annotated_dims(model, **kwargs):
    """The dims ``annotate_onnx_shapes`` records for the value ``y``."""
    info = {v.name: v for v in annotate_onnx_shapes(model, **kwargs).graph.value_info}["y"]
    return [d.dim_value if d.HasField("dim_value") else None for d in info.type.tensor_type.shape.dim]


FOUR_BY_FOUR = np.array([4, 4], np.int64).tobytes()


def test_external_data_is_not_read_without_a_base_dir(tmp_path, monkeypatch):
    (tmp_path / ".env").write_bytes(FOUR_BY_FOUR)  # a file whose bytes would read as the dims [4, 4]
    monkeypatch.chdir(tmp_path)
    for location in [".env", str(tmp_path / ".env"), "../" + tmp_path.name + "/.env"]:
        model = _reshape_to(_external("target", location))
        shapes = infer_onnx_shapes(model)
        assert shapes["target"] == (2,)  # the shape comes from the model's dims
        assert _all_fresh(shapes["y"], 2)  # the values are unknown (nothing was read): fresh dims
        assert _annotated_dims(model) == [None, None]


def test_external_data_inside_the_base_dir_is_read(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "w.bin").write_bytes(b"\x00" * 8 + FOUR_BY_FOUR)
    model = _reshape_to(_external("target", "data/w.bin", offset=8, length=16))
    for base in (tmp_path, str(tmp_path)):
        assert infer_onnx_shapes(model, base_dir=base)["y"] == (4, 4)
    assert _annotated_dims(model, base_dir=tmp_path) == [4, 4]
    # the same data with no offset or length given: the whole file is the tensor
    (tmp_path / "plain.bin").write_bytes(FOUR_BY_FOUR)
    assert infer_onnx_shapes(_reshape_to(_external("target", "plain.bin")), base_dir=tmp_path)["y"] == (4, 4)


def _hostile_locations(tmp_path):
    base = tmp_path / "model"
    base.mkdir()
    (tmp_path / ".env").write_bytes(FOUR_BY_FOUR)
    (tmp_path / "x").write_bytes(FOUR_BY_FOUR)
    (base / "link").symlink_to(tmp_path / ".env")
    (base / "sub").mkdir()
    (base / "sub" / "uplink").symlink_to(tmp_path)
    (base / "dir").mkdir()
    os.mkfifo(base / "fifo")
    return base


HOSTILE = {
    "a dotfile above the base": "../.env",
    "a parent path": "../x",
    "the password file": "/etc/passwd",
    "an escape through a subdirectory": "sub/../../x",
    "a symlink out of the base": "link",
    "a symlinked directory out of the base": "sub/uplink/x",
    "a directory": "dir",
    "a FIFO": "fifo",
    "a missing file": "missing.bin",
    "an empty location": "",
    "a NUL byte": "w\0.bin",
}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs symlinks and FIFOs")
@pytest.mark.parametrize("location", HOSTILE.values(), ids=HOSTILE.keys())
def test_external_data_outside_the_base_dir_is_refused(tmp_path, location):
    base = _hostile_locations(tmp_path)
    model = _reshape_to(_external("target", location))
    with pytest.raises(ExternalDataError, match="ONNX initializer 'target': external data"):
        infer_onnx_shapes(model, base_dir=base)


@pytest.mark.parametrize(
    ("offset", "length"),
    [(0, 8), (0, 24), (-8, 16), (8, 16), (2**62, 16), ("x", 16)],
    ids=["short", "long", "negative offset", "past the end", "huge offset", "not a number"],
)
def test_external_data_must_lie_within_its_file(tmp_path, offset, length):
    (tmp_path / "w.bin").write_bytes(FOUR_BY_FOUR)
    with pytest.raises(ExternalDataError, match="ONNX initializer 'target'"):
        infer_onnx_shapes(_reshape_to(_external("target", "w.bin", offset=offset, length=length)), base_dir=tmp_path)


def test_large_external_tensors_are_never_read(tmp_path):
    # weights (not shape tensors) keep their declared shape and are not opened, even with a base directory
    weights = TensorProto(name="w", data_type=F, dims=[4, 3, 3, 3])
    weights.data_location = TensorProto.EXTERNAL
    entry = weights.external_data.add()
    entry.key, entry.value = "location", "/etc/passwd"
    model = _model([oh.make_node("Conv", ["x", "w"], ["c"])], [("x", F, [1, 3, 8, 8])], [weights])
    assert infer_onnx_shapes(model, base_dir=tmp_path)["c"] == (1, 4, 6, 6)


# -- 2. every dimension and value is an int64 ----------------------------------------------------------------


def test_squaring_a_shape_forty_times_stays_in_int64():
    # before: 2**(2**40) as a Python int, i.e. a hang; now each entry past int64 is unknown
    result = _run_python(
        """
        from onnx import TensorProto, helper as oh
        from exprgraph.interop import infer_onnx_shapes
        nodes = [oh.make_node("Shape", ["x"], ["m0"])]
        nodes += [oh.make_node("Mul", [f"m{i}", f"m{i}"], [f"m{i + 1}"]) for i in range(40)]
        nodes += [oh.make_node("ConstantOfShape", ["m5"], ["small"]), oh.make_node("ConstantOfShape", ["m40"], ["y"])]
        x = oh.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
        graph = oh.make_graph(nodes, "g", [x], [oh.make_tensor_value_info("y", TensorProto.FLOAT, None)])
        shapes = infer_onnx_shapes(oh.make_model(graph))
        print(shapes["small"], shapes["y"])
        """,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    fresh = "(Symbol('constantofshape_42_d0', 'int64'), Symbol('constantofshape_42_d1', 'int64'))"
    assert result.stdout.split("\n")[0] == f"({2**32}, {3**32}) {fresh}"  # past int64: sizes known at run time


def _values(model, name):
    inference = Inference(model, True, None)
    inference.run()
    return inference.values[name].entries


def test_value_arithmetic_past_int64_is_unknown_and_division_truncates():
    inits = [_ints("big", [2**62, -(2**63), -7, 7]), _ints("k", [4, -1, 2, -2]), _ints("max", 2**63 - 1)]
    nodes = [
        oh.make_node("Mul", ["big", "k"], ["mul"]),
        oh.make_node("Div", ["big", "k"], ["div"]),
        oh.make_node("Add", ["big", "max"], ["add"]),
        oh.make_node("Sub", ["k", "max"], ["sub"]),
        oh.make_node("Cast", ["big"], ["i32"], to=TensorProto.INT32),
        oh.make_node("Cast", ["k"], ["f"], to=TensorProto.FLOAT),
        oh.make_node("Size", ["x"], ["size"]),
    ]
    model = _model(nodes, [("x", F, [2**62, 4])], inits)
    assert _values(model, "mul") == (None, None, -14, -14)
    assert _values(model, "div") == (2**60, None, -3, -3)  # ONNX truncates toward zero; INT64_MIN / -1 wraps
    assert _values(model, "add") == (None, -1, 2**63 - 8, None)
    assert _values(model, "sub") == (-(2**63) + 5, -(2**63), -(2**63) + 3, None)
    assert _values(model, "i32") == (None, None, -7, 7)
    assert _values(model, "size") == (None,)
    assert _values(model, "f") == (4, -1, 2, -2)  # float32 holds these ints exactly


@pytest.mark.parametrize(
    ("nodes", "inputs", "inits"),
    [
        ([oh.make_node("Flatten", ["x"], ["y"], name="flat", axis=0)], [("x", F, [2**62, 4])], []),
        ([oh.make_node("Concat", ["x", "x", "x"], ["y"], name="cat", axis=0)], [("x", F, [2**62])], []),
        ([oh.make_node("Tile", ["x", "r"], ["y"], name="tile")], [("x", F, ["N"])], [_ints("r", [2**62])]),
        ([oh.make_node("Pad", ["x", "p"], ["y"], name="pad")], [("x", F, [1])], [_ints("p", [2**62, 2**62])]),
        ([oh.make_node("Expand", ["x", "s"], ["y"], name="expand")], [("x", F, [1])], [_ints("s", [-3])]),
    ],
    ids=["Flatten", "Concat", "symbolic Tile", "Pad", "Expand to -3"],
)
def test_a_dimension_outside_int64_raises_naming_the_node(nodes, inputs, inits):
    model = _model(nodes, inputs, inits)
    if nodes[0].name == "tile":  # N * 2**62, tiled again by 4: a coefficient past int64
        model.graph.node.append(oh.make_node("Tile", ["y", "four"], ["z"], name="tile2"))
        model.graph.initializer.append(_ints("four", [4]))
    name = model.graph.node[-1].name
    with pytest.raises(DimOverflowError, match=rf"ONNX node \d '{name}' \('(Flatten|Concat|Tile|Pad|Expand)'\)"):
        infer_onnx_shapes(model)


@pytest.mark.parametrize(
    ("dims", "error"),
    [
        ([-1], DimOverflowError),
        ([-(2**63)], DimOverflowError),
        (["-5"], DimOverflowError),
        (["9223372036854775807+1"], DimOverflowError),
        ([1] * 1000, DimOverflowError),
        (["n" * 2000], ShapeError),
    ],
    ids=["-1", "-2**63", "dim_param -5", "dim_param past int64", "rank 1000", "a 2000-character dim_param"],
)
def test_declared_dims_are_non_negative_int64s(dims, error):
    model = _model([oh.make_node("Relu", ["x"], ["y"])], [("x", F, dims)])
    with pytest.raises(error, match="ONNX graph input 'x'"):
        infer_onnx_shapes(model)


def test_initializer_dims_and_bindings_are_checked():
    negative = TensorProto(name="w", data_type=F, dims=[-4])
    with pytest.raises(DimOverflowError, match="ONNX initializer 'w'"):
        infer_onnx_shapes(_model([oh.make_node("Relu", ["w"], ["y"])], [], [negative]))
    model = _model([oh.make_node("Relu", ["x"], ["y"])], [("x", F, ["N", "M"])])
    for value in (2**70, -3):
        with pytest.raises(DimOverflowError, match=r"dims\['N'\]"):
            infer_onnx_shapes(model, dims={"N": value})
    with pytest.raises(ShapeError, match=r"dims\['N'\] must be an int or dimension text"):
        infer_onnx_shapes(model, dims={"N": 1.5})
    shapes = infer_onnx_shapes(model, dims={"N": 3, "M": "2*K"})
    assert shapes["y"][0] == 3 and dim_text(shapes["y"][1]) == "2*K"


def test_value_tensors_are_bounded():
    # 100000 shape entries from a Constant are not followed; reshaping to them exceeds the rank limit
    nodes = [
        oh.make_node("Constant", [], ["c"], value_ints=[1] * 100_000),
        oh.make_node("Reshape", ["x", "c"], ["y"], name="r"),
    ]
    model = _model(nodes, [("x", F, [1])])
    with pytest.raises(DimOverflowError, match=r"ONNX node 1 'r'.*rank 100000 is more than the limit"):
        infer_onnx_shapes(model)
    inference = Inference(_model(nodes[:1], []), True, None)
    assert inference.run()["c"] == (100_000,) and "c" not in inference.values


def test_dimension_terms_past_the_size_limit_become_unknown():
    # max(s0, ..., s599) over 600 inputs' shapes: each step would re-simplify a longer term (quadratic time);
    # past MAX_TERM_SIZE nodes the value is unknown instead
    n = 600
    inputs = [(f"x{i}", F, [f"s{i}"]) for i in range(n)]
    nodes = [oh.make_node("Shape", [f"x{i}"], [f"m{i}" if i == 0 else f"h{i}"]) for i in range(n)]
    nodes += [oh.make_node("Max", [f"m{i - 1}", f"h{i}"], [f"m{i}"]) for i in range(1, n)]
    nodes.append(oh.make_node("ConstantOfShape", [f"m{n - 1}"], ["y"]))
    inference = Inference(_model(nodes, inputs), True, None)
    shapes = inference.run()
    assert dim_text(inference.values["m9"].entries[0]) == "^".join(f"s{i}" for i in range(10))  # ^ is max
    assert inference.values[f"m{n - 1}"].entries == (None,) and shapes["y"][0] in inference.fresh


# -- 3. every failure is a ShapeError naming the node, chained from the original ---------------------------


def _unsqueeze_repeated():
    node = oh.make_node("Unsqueeze", ["x", "axes"], ["y"], name="bad")
    return _model([oh.make_node("Relu", ["x"], ["r"]), node], [("x", F, [3])], [_ints("axes", [0, 0])])


def _gather_out_of_range():
    nodes = [oh.make_node("Shape", ["x"], ["s"]), oh.make_node("Gather", ["s", "i"], ["y"], name="bad")]
    return _model(nodes, [("x", F, [3, 4])], [_ints("i", [5])])


def _attribute_of_the_wrong_type():
    return _model([oh.make_node("Concat", ["x", "x"], ["y"], name="bad", axis=[0])], [("x", F, [3])])


def _unknown_attribute_type():
    node = oh.make_node("Transpose", ["x"], ["y"], name="bad")
    node.attribute.add(name="perm", type=onnx.AttributeProto.TENSOR)
    return _model([node], [("x", F, [3, 4])])


@pytest.mark.parametrize(
    ("build", "where"),
    [
        (_unsqueeze_repeated, "ONNX node 1 'bad' ('Unsqueeze')"),
        (_gather_out_of_range, "ONNX node 1 'bad' ('Gather')"),
        (_attribute_of_the_wrong_type, "ONNX node 0 'bad' ('Concat')"),
        (_unknown_attribute_type, "ONNX node 0 'bad' ('Transpose')"),
    ],
    ids=["repeated axes", "index out of range", "a list for an int", "a tensor for ints"],
)
def test_every_failure_names_its_node(build, where):
    with pytest.raises(ShapeError) as info:
        infer_onnx_shapes(build())
    assert str(info.value).startswith(where + ": ")
    assert info.value.__cause__ is not None  # chained from the original


@pytest.mark.parametrize(
    ("tensor", "cause"),
    [
        (TensorProto(name="t", data_type=99, dims=[1], raw_data=b"\x01"), None),
        (TensorProto(name="t", data_type=I64, dims=[2], raw_data=b"\x01\x02\x03"), ValueError),
        (TensorProto(name="t", data_type=I64, dims=[2], int64_data=[1]), ValueError),
    ],
    ids=["an unknown element type", "raw bytes of the wrong size", "too few entries"],
)
def test_malformed_initializers_raise_naming_the_tensor(tensor, cause):
    model = _model([oh.make_node("Reshape", ["x", "t"], ["y"])], [("x", F, [2])], [tensor])
    if cause is None:
        assert infer_onnx_shapes(model)["t"] == (1,)  # not an integer tensor: its data is never decoded
        return
    with pytest.raises(ShapeError, match="ONNX initializer 't': ") as info:
        infer_onnx_shapes(model)
    assert isinstance(info.value.__cause__, cause)


# -- 4. onnx's own (C++) inference is never run, so a model that aborts it cannot take the process down -----


def test_annotate_survives_a_model_that_aborts_onnx_inference():
    # onnx 1.23's Slice inference asserts (SIGABRT) on a value_info dim of -1; ours never runs it
    result = _run_python(
        """
        import numpy as np
        from onnx import TensorProto, helper as oh, numpy_helper
        from exprgraph.interop import annotate_onnx_shapes
        nodes = [oh.make_node("Identity", ["x"], ["h"]), oh.make_node("Slice", ["h", "t", "t"], ["z"])]
        graph = oh.make_graph(
            nodes, "g", [oh.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])],
            [oh.make_tensor_value_info("z", TensorProto.FLOAT, None)],
            initializer=[numpy_helper.from_array(np.array([0], np.int64), "t")],
            value_info=[oh.make_tensor_value_info("h", TensorProto.FLOAT, [-1])])
        out = annotate_onnx_shapes(oh.make_model(graph, opset_imports=[oh.make_opsetid("", 18)]))
        print("survived", [(v.name, v.type.tensor_type.shape.dim[0].dim_param) for v in out.graph.value_info])
        """
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "survived [('h', 'N')]"


def _typed_model():
    nodes = [
        oh.make_node("Shape", ["x"], ["s"]),
        oh.make_node("Equal", ["x", "x"], ["eq"]),
        oh.make_node("Cast", ["s"], ["sf"], to=TensorProto.DOUBLE),
        oh.make_node("MaxPool", ["x"], ["pool", "indices"], kernel_shape=[2, 2]),
        oh.make_node("Conv", ["x", "w"], ["conv"]),
        oh.make_node("Where", ["eq", "bx", "bx"], ["wh"]),
        oh.make_node("Constant", [], ["c"], value_ints=[1, 2]),
        oh.make_node("ConstantOfShape", ["s"], ["zeros"]),
        oh.make_node("ArgMax", ["x"], ["am"], axis=1),
        oh.make_node("Gather", ["bx", "c"], ["g"], axis=1),
        oh.make_node("Dropout", ["x"], ["dr", "mask"]),
    ]
    inputs = [("x", F, ["N", 3, 8, 8]), ("bx", TensorProto.INT32, [1, 3, 8, 8])]
    inits = [numpy_helper.from_array(np.zeros((4, 3, 3, 3), np.float32), "w")]
    return _model(nodes, inputs, inits)


def test_annotate_never_runs_onnx_inference_and_its_element_types_match_onnx(monkeypatch):
    model = _typed_model()
    theirs = onnx.shape_inference.infer_shapes(model, strict_mode=True)  # this model is valid: safe here
    expected = {v.name: v.type.tensor_type.elem_type for v in theirs.graph.value_info}

    def refuse(*args, **kwargs):
        raise AssertionError("onnx.shape_inference must not run")

    monkeypatch.setattr(onnx.shape_inference, "infer_shapes", refuse)
    annotated = annotate_onnx_shapes(model)
    ours = {v.name: v.type.tensor_type.elem_type for v in annotated.graph.value_info}
    assert set(ours) == set(expected) - {model.graph.output[0].name}
    assert ours == {name: expected[name] for name in ours}
    assert ours["indices"] == TensorProto.INT64 and ours["mask"] == TensorProto.BOOL


# -- 5. malformed nodes raise ShapeError naming the node ----------------------------------------------------

MALFORMED = {
    "repeated perm entries": ("Transpose", [("x", F, [2, 3])], {"perm": [0, 0]}),
    "perm past the rank": ("Transpose", [("x", F, [2, 3])], {"perm": [0, 2]}),
    "negative split sizes": ("Split", [("x", F, [4]), ("s", None, [-1, 5])], {"axis": 0}),
    "split sizes that do not add up": ("Split", [("x", F, [4]), ("s", None, [1, 1])], {"axis": 0}),
    "Concat axis out of range": ("Concat", [("x", F, [2, 3]), ("x", F, [2, 3])], {"axis": 5}),
    "Concat of different widths": ("Concat", [("x", F, [2, 3]), ("z", F, [2, 4])], {"axis": 0}),
    "Gather axis out of range": ("Gather", [("x", F, [2, 3]), ("i", None, [0])], {"axis": -3}),
    "squeezing an axis of size 3": ("Squeeze", [("x", F, [3, 1]), ("a", None, [0])], {}),
    "a slice step of 0": (
        "Slice",
        [("x", F, [5]), *[(n, None, [v]) for n, v in zip("abcd", [0, 3, 0, 0], strict=True)]],
        {},
    ),
    "two -1 in a reshape": ("Reshape", [("x", F, [4, 4]), ("s", None, [-1, -1])], {}),
    "a -5 in a reshape": ("Reshape", [("x", F, [4, 4]), ("s", None, [-5, 4])], {}),
    "a reshape that changes the size": ("Reshape", [("x", F, [4, 4]), ("s", None, [5, 3])], {}),
    "a stride of 0": ("Conv", [("x", F, [1, 1, 5, 5]), ("w", F, [1, 1, 3, 3])], {"strides": [0, 1]}),
    "a kernel of the wrong length": ("MaxPool", [("x", F, [1, 1, 5, 5])], {"kernel_shape": [2, 2, 2]}),
    "MatMul inner dims that differ": ("MatMul", [("x", F, [2, 3]), ("z", F, [4, 5])], {}),
    "Flatten axis out of range": ("Flatten", [("x", F, [2, 3])], {"axis": 5}),
    "repeated reduce axes": ("ReduceSum", [("x", F, [2, 3]), ("a", None, [1, -1])], {}),
    "an odd number of pads": ("Pad", [("x", F, [2, 3]), ("p", None, [1, 1, 1])], {}),
    "a 1-d input to a convolution": ("Conv", [("x", F, [5]), ("w", F, [1, 1, 3])], {}),
}


@pytest.mark.parametrize("case", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_nodes_raise_naming_the_node(case):
    op, args, attrs = case
    inputs = [(name, elem, dims) for name, elem, dims in args if elem is not None]
    inits = [_ints(name, dims) for name, elem, dims in args if elem is None]
    n_out = 2 if op == "Split" else 1
    node = oh.make_node(op, [name for name, _, _ in args], [f"y{i}" for i in range(n_out)], name="culprit", **attrs)
    unique = list({name: (name, elem, dims) for name, elem, dims in inputs}.values())
    with pytest.raises(ShapeError, match=rf"^ONNX node 0 'culprit' \('{op}'\): "):
        infer_onnx_shapes(_model([node], unique, inits))


def test_sizes_computed_at_run_time_are_fresh_dims():
    # Split by sizes known only at run time, Squeeze of run-time axes, a -1 next to a zero-size dim,
    # and LayerNormalization's statistics: fresh dims where the rank is known, neither guessed nor an error
    nodes = [
        oh.make_node("Split", ["x", "sizes"], ["a", "b"], axis=1),
        oh.make_node("Squeeze", ["x", "axes"], ["sq"]),
        oh.make_node("Reshape", ["e", "target"], ["r"]),
        oh.make_node("LayerNormalization", ["x", "scale"], ["ln", "mean", "inv"]),
    ]
    inputs = [("x", F, [2, 4, 1]), ("sizes", I64, [2]), ("axes", I64, [1]), ("e", F, [0, 3]), ("scale", F, [1])]
    inference = Inference(_model(nodes, inputs, [_ints("target", [0, -1])]), True, None)
    shapes = inference.run()
    assert shapes["a"][::2] == shapes["b"][::2] == (2, 1)
    assert {shapes["a"][1], shapes["b"][1]} <= inference.fresh and shapes["a"][1] is not shapes["b"][1]
    assert shapes["sq"] is None or len(shapes["sq"]) == 2  # the rank is not known without the axes
    assert shapes["r"][0] == 0 and shapes["r"][1] in inference.fresh
    assert shapes["ln"] == (2, 4, 1)
