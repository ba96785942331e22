"""Control flow, model-local functions, sequences, declared value_info and unknown ops in ONNX shape inference."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx_runtime_check import BOOL, I64, F, check, infer, ints, means, model, needs_ort, oh, onnx

from exprgraph.errors import ShapeError, ShapeInferenceWarning
from exprgraph.interop import onnx_shapes
from exprgraph.interop.onnx_shapes import dim_text

FEW = settings(max_examples=10, deadline=None)
SIZES = st.integers(1, 9)


def _vi(name, elem=F, dims=None):
    return oh.make_tensor_value_info(name, elem, dims)


def _texts(shape):
    return None if shape is None else [dim_text(d) for d in shape]


def _if_model(cond_input=True):
    then_g = oh.make_graph([oh.make_node("Relu", ["x"], ["t"])], "then", [], [_vi("t")])
    else_g = oh.make_graph([oh.make_node("Concat", ["x", "x"], ["e"], axis=1)], "else", [], [_vi("e")])
    nodes = [
        oh.make_node("ReduceSum", ["x"], ["total"], keepdims=0),
        oh.make_node("Greater", ["total", "zero_f"], ["cond"]),
        oh.make_node("If", ["cond" if cond_input else "yes"], ["picked"], then_branch=then_g, else_branch=else_g),
        oh.make_node("Relu", ["picked"], ["out"]),
    ]
    inits = [onnx.numpy_helper.from_array(np.array(0, np.float32), "zero_f"),
             onnx.numpy_helper.from_array(np.array(True), "yes")]  # fmt: skip
    return model(nodes, [("x", F, ["n", "k"])], inits)


def test_if_keeps_what_both_branches_agree_on():
    inference = infer(_if_model())
    assert (
        _texts(inference.shapes["out"])[0] == "n" and inference.shapes["out"][1] in inference.fresh
    )  # k or 2*k: a fresh dim
    assert _texts(infer(_if_model(cond_input=False)).shapes["out"]) == ["n", "k"]  # a known condition


@FEW
@given(n=SIZES, k=SIZES, seed=st.integers(0, 3))
def test_if_matches_onnxruntime_on_either_branch(n, k, seed):
    decided, fresh = check(_if_model(), {"n": n, "k": k}, seed)
    assert decided >= 2 and fresh <= 2


def _loop_model():
    body = oh.make_graph(
        [
            oh.make_node("Identity", ["cond_in"], ["cond_out"]),
            oh.make_node("Add", ["acc", "x"], ["acc_out"]),
            oh.make_node("Concat", ["rows", "x"], ["rows_out"], axis=0),
            oh.make_node("Relu", ["x"], ["scan_out"]),
        ],
        "body",
        [_vi("i", I64, []), _vi("cond_in", BOOL, []), _vi("acc"), _vi("rows")],
        [_vi("cond_out", BOOL, []), _vi("acc_out"), _vi("rows_out"), _vi("scan_out")],
    )
    nodes = [
        oh.make_node("Loop", ["trips", "", "x", "x"], ["acc_f", "rows_f", "scans"], body=body),
        oh.make_node("Relu", ["scans"], ["out"]),
    ]
    return model(nodes, [("x", F, ["n", "k"])], [ints("trips", 3)])


def test_loop_carried_shapes_and_stacked_scan_outputs():
    inference = infer(_loop_model())
    assert means(inference.shapes["acc_f"], ["n", "k"])  # the same through the body
    assert inference.shapes["rows_f"][0] in inference.fresh  # grows each pass
    assert means(inference.shapes["scans"], ["3", "n", "k"])  # the trip count in front


@needs_ort
@FEW
@given(n=SIZES, k=SIZES)
def test_loop_matches_onnxruntime(n, k):
    decided, fresh = check(_loop_model(), {"n": n, "k": k})
    assert decided >= 7 and fresh == 1


def _scan_model():
    body = oh.make_graph(
        [oh.make_node("Add", ["state", "column"], ["state_out"]), oh.make_node("Identity", ["column"], ["ys"])],
        "scan_body",
        [_vi("state"), _vi("column")],
        [_vi("state_out"), _vi("ys")],
    )
    nodes = [
        oh.make_node(
            "Scan",
            ["s0", "x"],
            ["final", "stacked"],
            body=body,
            num_scan_inputs=1,
            scan_input_axes=[1],
            scan_output_axes=[1],
        ),
        oh.make_node("Relu", ["stacked"], ["out"]),
    ]
    return model(nodes, [("x", F, ["n", "k"]), ("s0", F, ["n"])])


def test_scan_slices_along_its_axes():
    inference = infer(_scan_model())
    assert means(inference.shapes["final"], ["n"]) and means(inference.shapes["stacked"], ["n", "k"])


@needs_ort
@FEW
@given(n=SIZES, k=SIZES)
def test_scan_matches_onnxruntime(n, k):
    assert check(_scan_model(), {"n": n, "k": k}) == (5, 0)


def _concat_by_ref():
    """A Concat node whose axis is the calling node's attribute ``axis``."""
    node = oh.make_node("Concat", ["a", "b"], ["t"])
    node.attribute.append(oh.make_attribute_ref("axis", onnx.AttributeProto.INT))
    return node


def _function_model():
    fn = oh.make_function(
        "local",
        "JoinTwice",
        ["a", "b"],
        ["c"],
        [
            _concat_by_ref(),
            oh.make_node("Relu", ["t"], ["c"]),
        ],
        [oh.make_opsetid("", 18)],
        ["axis"],
    )
    nodes = [
        oh.make_node("JoinTwice", ["x", "x"], ["joined0"], domain="local", axis=0),
        oh.make_node("JoinTwice", ["joined0", "joined0"], ["joined1"], domain="local", axis=1),
        oh.make_node("Relu", ["joined1"], ["out"]),
    ]
    return model(nodes, [("x", F, ["n", "k"])], opsets=[oh.make_opsetid("local", 1)], functions=[fn])


def test_model_local_functions_are_inlined_with_their_attributes():
    inference = infer(_function_model())
    assert means(inference.shapes["joined1"], ["2*n", "2*k"])
    assert not [name for name in inference.shapes if "#" in name]  # the function's own names do not leak


@FEW
@given(n=SIZES, k=SIZES)
def test_functions_match_onnxruntime(n, k):
    assert check(_function_model(), {"n": n, "k": k}) == (6, 0)


def test_a_function_that_calls_itself_is_an_error():
    fn = oh.make_function("local", "Loopy", ["a"], ["b"], [oh.make_node("Loopy", ["a"], ["b"], domain="local")],
                          [oh.make_opsetid("local", 1)])  # fmt: skip
    m = model([oh.make_node("Loopy", ["x"], ["y"], domain="local")], [("x", F, [2])], functions=[fn],
              opsets=[oh.make_opsetid("local", 1)])  # fmt: skip
    with pytest.raises(ShapeError, match=r"ONNX node 0 '' \('Loopy'\): .*calls itself"):
        infer(m)


def _sequence_model():
    nodes = [
        oh.make_node("SequenceConstruct", ["x", "y"], ["seq"]),
        oh.make_node("SequenceInsert", ["seq", "x"], ["seq3"]),
        oh.make_node("SequenceErase", ["seq3", "zero"], ["seq2"]),
        oh.make_node("SequenceLength", ["seq3"], ["len"]),
        oh.make_node("SequenceAt", ["seq2", "zero"], ["first"]),
        oh.make_node("ConcatFromSequence", ["seq3"], ["cat"], axis=0),
        oh.make_node("SequenceConstruct", ["x", "x"], ["pair"]),
        oh.make_node("ConcatFromSequence", ["pair"], ["stack"], axis=1, new_axis=1),
        oh.make_node("SplitToSequence", ["x", "two"], ["pieces"], axis=1),
        oh.make_node("SequenceAt", ["pieces", "zero"], ["piece"]),
        oh.make_node("SplitToSequence", ["x"], ["rows"], axis=0, keepdims=0),
        oh.make_node("ConcatFromSequence", ["rows"], ["rebuilt"], axis=0, new_axis=1),
        oh.make_node("Relu", ["cat"], ["out"]),
    ]
    return model(nodes, [("x", F, ["n", "k"]), ("y", F, ["m", "k"])], [ints("zero", 0), ints("two", 2)])


def test_sequence_ops_follow_their_elements():
    inference = infer(_sequence_model())
    s = inference.shapes
    assert inference.values["len"].entries == (3,)
    assert means(s["first"], ["m", "k"]) and means(s["cat"], ["2*n+m", "k"])
    assert _texts(s["stack"])[1] == "2" and _texts(s["piece"])[0] == "n"
    assert means(s["rebuilt"], ["n", "k"])
    assert inference.sequences["pieces"].length is not None


@FEW
@given(n=SIZES, m=SIZES, k=SIZES)
def test_sequences_match_onnxruntime(n, m, k):
    decided, fresh = check(_sequence_model(), {"n": n, "m": m, "k": k})
    assert decided >= 10 and fresh <= 2


def test_declared_value_info_is_checked_and_fills_what_is_not_known():
    nodes = [oh.make_node("NonZero", ["x"], ["nz"]), oh.make_node("Relu", ["x"], ["r"])]
    filled = model(nodes, [("x", F, ["n", 4])], value_info=[_vi("nz", I64, [2, "count"]), _vi("r", F, [-1, 4])])
    inference = infer(filled)
    assert means(inference.shapes["nz"], ["2", "count"]) and means(inference.shapes["r"], ["n", "4"])
    wrong = model(nodes, [("x", F, ["n", 4])], value_info=[_vi("r", F, ["n", 5])])
    with pytest.raises(ShapeError, match=r"ONNX node 1 .*value 'r': dim 1 is declared 5 but is 4"):
        infer(wrong)
    rank = model(nodes, [("x", F, ["n", 4])], value_info=[_vi("r", F, [1, 2, 3])])
    with pytest.raises(ShapeError, match="value 'r' is declared of rank 3"):
        infer(rank)


def test_unknown_domains_warn_once_and_declared_ranks_get_fresh_dims():
    nodes = [
        oh.make_node("FusedThing", ["x"], ["a"], domain="com.vendor"),
        oh.make_node("FusedThing", ["a"], ["b"], domain="com.vendor"),
        oh.make_node("Other", ["b"], ["c"], domain="org.else"),
        oh.make_node("Relu", ["a"], ["out"]),
    ]
    m = model(nodes, [("x", F, ["n"])], value_info=[_vi("a", F, [None, 3])],
              opsets=[oh.make_opsetid("com.vendor", 1), oh.make_opsetid("org.else", 1)])  # fmt: skip
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        inference = infer(m)
    messages = [str(w.message) for w in caught if issubclass(w.category, ShapeInferenceWarning)]
    assert len(messages) == 1 and "com.vendor: FusedThing" in messages[0] and "org.else: Other" in messages[0]
    a = inference.shapes["a"]
    assert a[0] in inference.fresh and a[1] == 3 and inference.shapes["out"] == a
    assert inference.shapes["b"] is None  # nothing declared: unknown


def _frames() -> int:
    frame, n = sys._getframe(), 0
    while frame is not None:
        frame, n = frame.f_back, n + 1
    return n


def test_nested_subgraphs_do_not_deepen_the_python_stack():
    # protobuf refuses messages nested past ~100 levels (about 30 subgraphs): walk 30 of them with
    # 150 frames to spare, where a recursive walk needs several frames per level
    depth = 30
    trivial = oh.make_graph([oh.make_node("Relu", ["x"], ["e"])], "else", [], [_vi("e")])
    inner = oh.make_graph([oh.make_node("Relu", ["x"], ["y0"])], "b0", [], [_vi("y0")])
    for d in range(1, depth):
        node = oh.make_node("If", ["yes"], [f"y{d}"], then_branch=inner, else_branch=trivial)
        inner = oh.make_graph([node], f"b{d}", [], [_vi(f"y{d}")])
    top = oh.make_node("If", ["c"], ["out"], then_branch=inner, else_branch=trivial)
    inits = [onnx.numpy_helper.from_array(np.array(True), "yes")]
    m = model([top], [("x", F, ["n"]), ("c", BOOL, [])], inits)
    infer(m)  # warm the caches: the limited run below measures the walk
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(_frames() + 150)
    try:
        inference = infer(m)
    finally:
        sys.setrecursionlimit(limit)
    assert means(inference.shapes["out"], ["n"])


def _growing_loops(depth):
    """Loops nested ``depth`` deep, each carrying a value that grows: every body is walked twice."""
    body = None
    for d in range(depth):
        nodes = [
            oh.make_node("Identity", ["cond_in"], ["cond_out"]),
            oh.make_node("Concat", ["v", "v"], ["v2"], axis=0),
        ]
        if body is not None:
            nodes.append(oh.make_node("Loop", ["", "cond_in", "v2"], ["v3"], body=body))
        outs = [_vi("cond_out", BOOL, []), _vi("v3" if body is not None else "v2")]
        body = oh.make_graph(nodes, f"body{d}", [_vi("i", I64, []), _vi("cond_in", BOOL, []), _vi("v")], outs)
    return oh.make_node("Loop", ["", "c", "x"], ["out"], name="top", body=body)


def test_exponential_subgraph_walks_stop_with_a_named_error(monkeypatch):
    # 30 nested Loops whose carried value grows walk each body twice: 2**30 walks without a limit
    monkeypatch.setattr(onnx_shapes, "MAX_WALKED", 3000)  # (the default, 50000, takes seconds to reach)
    with pytest.raises(ShapeError, match=r"^ONNX node 0 'top' \('Loop'\): .*more than 3000 nodes walked") as info:
        infer(model([_growing_loops(30)], [("x", F, ["n"]), ("c", BOOL, [])]))
    assert len(str(info.value)) < 5000 and info.value.__cause__ is not None
    shallow = infer(model([_growing_loops(3)], [("x", F, ["n"]), ("c", BOOL, [])]))
    assert shallow.shapes["out"][0] in shallow.fresh


def test_malformed_control_flow_names_the_node():
    bad_branch = oh.make_node("If", ["c"], ["y"], name="bad", then_branch=3, else_branch=4)
    with pytest.raises(ShapeError, match="ONNX node 0 'bad' \\('If'\\): attribute 'then_branch' must be a graph"):
        infer(model([bad_branch], [("c", BOOL, [])]))
    body = oh.make_graph([], "empty", [], [])
    short = oh.make_node("Loop", ["", "", "x"], ["y"], name="loop", body=body)
    with pytest.raises(ShapeError, match="ONNX node 0 'loop' \\('Loop'\\): the body has 0 outputs"):
        infer(model([short], [("x", F, [2])]))
    scan = oh.make_node("Scan", ["x"], ["y"], name="scan", body=body, num_scan_inputs=5)
    with pytest.raises(ShapeError, match="ONNX node 0 'scan' \\('Scan'\\): num_scan_inputs 5"):
        infer(model([scan], [("x", F, [2])]))


def test_a_long_chain_runs_at_the_default_recursion_limit():
    n = 100_000
    nodes = [oh.make_node("Relu", ["x" if i == 0 else f"v{i - 1}"], [f"v{i}"]) for i in range(n)]
    nodes.append(oh.make_node("NonZero", [f"v{n - 1}"], ["nz"]))
    inference = infer(model(nodes, [("x", F, ["N", 3])]))
    assert means(inference.shapes[f"v{n - 1}"], ["N", "3"]) and inference.shapes["nz"][1] in inference.fresh


def test_cycles_and_hostile_dim_params_end_cleanly():
    # a cycle: each node reads the other's output; nodes run in order, so the first reads an unknown value
    cycle = [oh.make_node("Add", ["b", "x"], ["a"]), oh.make_node("Add", ["a", "x"], ["b"])]
    shapes = infer(model(cycle, [("x", F, ["n"])])).shapes
    assert shapes["a"] is None and shapes["b"] is None
    params = ["a+b", "__import__('os')", "exec('1')", "n" * 300]
    hostile = model([oh.make_node("Relu", [f"x{i}"], [f"y{i}"]) for i in range(4)],
                    [(f"x{i}", F, [p]) for i, p in enumerate(params)])  # fmt: skip
    shapes = infer(hostile).shapes
    assert means(shapes["y0"], ["a+b"])
    assert [d.name for d in (shapes["y1"][0], shapes["y2"][0])] == ["__import____os__", "exec__1__"]


def test_sequence_map_and_optionals():
    body = oh.make_graph([oh.make_node("Concat", ["e", "e"], ["f"], axis=0)], "map", [_vi("e")], [_vi("f")])
    nodes = [
        oh.make_node("SequenceConstruct", ["x", "x", "x"], ["seq"]),
        oh.make_node("SequenceMap", ["seq"], ["doubled"], body=body),
        oh.make_node("SequenceAt", ["doubled", "zero"], ["first"]),
        oh.make_node("SequenceLength", ["doubled"], ["len"]),
        oh.make_node("Optional", ["x"], ["some"]),
        oh.make_node("OptionalHasElement", ["some"], ["has"]),
        oh.make_node("OptionalGetElement", ["some"], ["got"]),
        oh.make_node("Optional", [], ["none"], type=oh.make_tensor_type_proto(F, None)),
        oh.make_node("OptionalHasElement", ["none"], ["has_none"]),
    ]
    inference = infer(model(nodes, [("x", F, ["n", 4])], [ints("zero", 0)]))
    assert means(inference.shapes["first"], ["2*n", "4"]) and inference.values["len"].entries == (3,)
    assert means(inference.shapes["got"], ["n", "4"])
    assert inference.values["has"].entries == (1,) and inference.values["has_none"].entries == (0,)
