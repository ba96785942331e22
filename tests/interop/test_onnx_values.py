"""Values followed through ONNX shape arithmetic, and fresh dims: checked against onnxruntime at random sizes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx_runtime_check import BOOL, I64, F, check, infer, ints, means, model, oh, onnx

from exprgraph.core import Symbol, Term
from exprgraph.dims import evaluate_expression
from exprgraph.interop.onnx_shapes import Inference, dim_text

SIZES = st.integers(1, 12)
FEW = settings(max_examples=12, deadline=None)


def _gpt2_masks():
    """GPT-2's position ids and causal mask, as the TorchScript exporter writes them."""
    nodes = [
        oh.make_node("Shape", ["ids"], ["s"]),
        oh.make_node("Gather", ["s", "one"], ["seq"], axis=0),
        oh.make_node("Gather", ["s", "zero"], ["batch"], axis=0),
        oh.make_node("Range", ["zero", "seq", "one"], ["pos"]),
        oh.make_node("Unsqueeze", ["pos", "axis0"], ["pos_row"]),
        oh.make_node("Unsqueeze", ["batch", "axis0"], ["b1"]),
        oh.make_node("Unsqueeze", ["seq", "axis0"], ["s1"]),
        oh.make_node("Concat", ["b1", "s1"], ["bs"], axis=0),
        oh.make_node("Expand", ["pos_row", "bs"], ["position_ids"]),
        oh.make_node("Unsqueeze", ["pos", "axis1"], ["pos_col"]),
        oh.make_node("LessOrEqual", ["pos_row", "pos_col"], ["causal"]),
        oh.make_node("Where", ["causal", "zero_f", "minus_f"], ["bias"]),
        # Expand(bias, Where(Equal(shape, -1), 1, shape)), the -1 spelled as ConstantOfShape(...) * -1
        oh.make_node("Concat", ["b1", "one1", "s1", "minus1"], ["target"], axis=0),
        oh.make_node("Shape", ["target"], ["target_len"]),
        oh.make_node("ConstantOfShape", ["target_len"], ["ones"], value=ints("", [1])),
        oh.make_node("Mul", ["ones", "minus_one"], ["minus_ones"]),
        oh.make_node("Equal", ["target", "minus_ones"], ["is_minus"]),
        oh.make_node("Where", ["is_minus", "ones", "target"], ["expand_to"]),
        oh.make_node("Expand", ["bias", "expand_to"], ["mask"]),
        oh.make_node("Add", ["mask", "scores"], ["out"]),
    ]
    inits = [ints("zero", 0), ints("one", 1), ints("axis0", [0]), ints("axis1", [1]), ints("one1", [1]),
             ints("minus1", [-1]), ints("minus_one", -1),
             onnx.numpy_helper.from_array(np.array(0, np.float32), "zero_f"),
             onnx.numpy_helper.from_array(np.array(-1e4, np.float32), "minus_f")]  # fmt: skip
    inputs = [("ids", I64, ["batch", "seq"]), ("scores", F, ["batch", 2, "seq", "seq"])]
    return model(nodes, inputs, inits)


def test_gpt2_position_ids_and_causal_mask_are_exact():
    inference = infer(_gpt2_masks())
    shapes = inference.shapes
    assert [dim_text(d) for d in shapes["position_ids"]] == ["batch", "seq"]
    assert [dim_text(d) for d in shapes["bias"]] == ["seq", "seq"]
    assert [dim_text(d) for d in shapes["mask"]] == ["batch", "1", "seq", "seq"]
    assert inference.values["expand_to"].entries == (Symbol("batch", "int64"), 1, Symbol("seq", "int64"), 1)
    assert inference.values["is_minus"].entries == (0, 0, 0, 1)  # batch, seq >= 1 are never -1
    assert not inference.fresh


@FEW
@given(batch=SIZES, seq=SIZES)
def test_gpt2_masks_match_onnxruntime(batch, seq):
    decided, fresh = check(_gpt2_masks(), {"batch": batch, "seq": seq})
    assert fresh == 0 and decided >= 29


def _swin_pads():
    """Swin pads a feature map of width W//4 up to a multiple of 7: (7 - W//4 % 7) % 7."""
    nodes = [
        oh.make_node("Shape", ["x"], ["s"]),
        oh.make_node("Gather", ["s", "three"], ["w"], axis=0),
        oh.make_node("Div", ["w", "four"], ["w4"]),
        oh.make_node("Mod", ["w4", "seven"], ["r"]),
        oh.make_node("Sub", ["seven", "r"], ["gap"]),
        oh.make_node("Mod", ["gap", "seven"], ["pad"]),
        oh.make_node("Add", ["w4", "pad"], ["padded"]),
        oh.make_node("Div", ["padded", "seven"], ["windows"]),
        oh.make_node("Unsqueeze", ["pad", "axis0"], ["pad1"]),
        oh.make_node("Unsqueeze", ["windows", "axis0"], ["win1"]),
        oh.make_node("Concat", ["pad1", "win1", "seven1"], ["shape"], axis=0),
        oh.make_node("ConstantOfShape", ["shape"], ["out"]),
    ]
    inits = [ints("three", 3), ints("four", 4), ints("seven", 7), ints("axis0", [0]), ints("seven1", [7])]
    return model(nodes, [("x", F, ["B", 3, "H", "W"])], inits)


def test_swin_pad_arithmetic_is_exact():
    inference = infer(_swin_pads())
    (pad,) = inference.values["pad"].entries
    for w in range(4, 120):
        assert evaluate_expression(pad, {"W": w}) == (7 - w // 4 % 7) % 7
    assert [dim_text(d) for d in inference.shapes["out"]][2] == "7"
    assert not inference.fresh


@FEW
@given(width=st.integers(1, 80))
def test_swin_pads_match_onnxruntime(width):
    decided, fresh = check(_swin_pads(), {"B": 1, "H": 2, "W": width})
    assert fresh == 0 and decided >= 3


def _value_ops():
    """One graph through every op the values follow: each output small and known entry by entry."""
    n = [
        oh.make_node("Shape", ["x"], ["s"]),  # [a, b, 3]
        oh.make_node("Shape", ["x"], ["tail"], start=-2),
        oh.make_node("Size", ["x"], ["size"]),
        oh.make_node("ReduceProd", ["s"], ["numel"], keepdims=0),
        oh.make_node("ReduceSum", ["s", "axis0"], ["total"], keepdims=1),
        oh.make_node("ReduceMax", ["s"], ["biggest"], keepdims=0),
        oh.make_node("ReduceMin", ["s"], ["smallest"], keepdims=0),
        oh.make_node("Tile", ["s", "two1"], ["tiled"]),
        oh.make_node("ScatterND", ["s", "idx2", "upd"], ["scattered"]),
        oh.make_node("ScatterElements", ["s", "idx1", "upd"], ["scattered_e"], axis=0),
        oh.make_node("CumSum", ["s", "zero"], ["cum"]),
        oh.make_node("CumSum", ["s", "zero"], ["cum_rx"], exclusive=1, reverse=1),
        oh.make_node("Split", ["s", "split"], ["s01", "s2"], axis=0),
        oh.make_node("Transpose", ["s"], ["st"]),
        oh.make_node("GatherND", ["s", "idx2"], ["gnd"]),
        oh.make_node("GatherElements", ["s", "idx1"], ["ge"], axis=0),
        oh.make_node("Cast", ["s"], ["sf"], to=onnx.TensorProto.FLOAT),
        oh.make_node("Mul", ["sf", "half"], ["sh"]),
        oh.make_node("Floor", ["sh"], ["sfl"]),
        oh.make_node("Cast", ["sf"], ["si"], to=onnx.TensorProto.INT64),
        oh.make_node("Neg", ["s"], ["neg"]),
        oh.make_node("Abs", ["neg"], ["abs"]),
        oh.make_node("Sign", ["neg"], ["sign"]),
        oh.make_node("Pow", ["s", "two"], ["sq"]),
        oh.make_node("Max", ["s", "four", "tail3"], ["mx"]),
        oh.make_node("Min", ["s", "four"], ["mn"]),
        oh.make_node("Greater", ["s", "zero"], ["pos"]),
        oh.make_node("Equal", ["s", "three"], ["is3"]),
        oh.make_node("Not", ["pos"], ["notpos"]),
        oh.make_node("And", ["pos", "is3"], ["and"]),
        oh.make_node("Or", ["pos", "is3"], ["or"]),
        oh.make_node("Xor", ["pos", "notpos"], ["xor"]),
        oh.make_node("Cast", ["is3"], ["is3i"], to=onnx.TensorProto.INT64),
        oh.make_node("Range", ["three", "fourteen", "four"], ["rng"]),
        oh.make_node("Slice", ["s", "minus1", "big_neg", "zero1", "minus1"], ["rev"]),
        oh.make_node("Unsqueeze", ["s", "axis0"], ["s2d"]),
        oh.make_node("Expand", ["s2d", "two_by_3"], ["grid"]),
        oh.make_node("Transpose", ["grid"], ["grid_t"]),
        oh.make_node("Reshape", ["grid_t", "minus1"], ["flat"]),
        oh.make_node("Flatten", ["s"], ["flat2"], axis=0),
        oh.make_node("Squeeze", ["flat2", "axis0"], ["back"]),
        oh.make_node("Mod", ["numel", "four"], ["rem"]),
        oh.make_node("Div", ["neg", "two"], ["trunc"]),  # -a/2 truncates toward zero
        oh.make_node("ConstantOfShape", ["two_by_3"], ["out"], value=ints("", [7])),
    ]
    inits = [ints("axis0", [0]), ints("two1", [2]), ints("idx2", [[0], [2]]), ints("idx1", [2, 0]),
             ints("upd", [5, 6]), ints("zero", 0), ints("split", [2, 1]), ints("two", 2), ints("four", 4),
             ints("tail3", [1, 1, 9]), ints("three", 3), ints("minus1", [-1]), ints("big_neg", [-(2**63)]),
             ints("zero1", [0]), ints("two_by_3", [2, 3]), ints("fourteen", 14),
             onnx.numpy_helper.from_array(np.array(0.5, np.float32), "half")]  # fmt: skip
    return model(n, [("x", F, ["a", "b", 3])], inits)


def test_every_value_op_is_followed():
    inference = infer(_value_ops())
    unknown = [name for name in inference.shapes if name not in inference.values and name != "x"]
    assert unknown == [], unknown
    v = {name: value.entries for name, value in inference.values.items()}
    assert means(v["numel"], ["3*a*b"]) and means(v["total"], ["3+a+b"]) and means(v["tail"], ["b", "3"])
    assert means(v["scattered"], ["5", "b", "6"]) and means(v["cum"], ["a", "a+b", "3+a+b"])
    assert means(v["cum_rx"], ["3+b", "3", "0"]) and means(v["abs"], ["a", "b", "3"])
    assert v["sign"] == (-1, -1, -1) and means(v["sq"], ["a*a", "b*b", "9"])
    assert v["pos"] == (1, 1, 1) and v["is3"][2] == 1 and v["xor"] == (1, 1, 1)
    assert means(v["rev"], ["3", "b", "a"]) and len(v["flat"]) == 6 and means(v["back"], ["a", "b", "3"])
    assert v["rng"] == (3, 7, 11) and v["out"] == (7,) * 6
    assert v["sh"][2] == 1.5 and v["sfl"][2] == 1  # a float value holds 1.5; Floor makes it 1


@FEW
@given(a=SIZES, b=SIZES)
def test_value_ops_match_onnxruntime(a, b):
    decided, fresh = check(_value_ops(), {"a": a, "b": b})
    assert fresh == 0 and decided >= 44


def test_comparisons_are_decided_through_the_dim_env():
    nodes = [
        oh.make_node("Shape", ["x"], ["s"]),
        oh.make_node("Greater", ["s", "zero"], ["positive"]),  # every dim >= 1
        oh.make_node("Equal", ["s", "one"], ["is_one"]),  # n == 1 depends on n
        oh.make_node("Where", ["is_one", "s", "s"], ["same"]),  # undecided condition, equal branches
        oh.make_node("NonZero", ["x"], ["nz"]),
        oh.make_node("Shape", ["nz"], ["nzs"]),
        oh.make_node("Greater", ["nzs", "zero"], ["nz_positive"]),  # a count may be 0
        oh.make_node("GreaterOrEqual", ["nzs", "zero"], ["nz_nonneg"]),
    ]
    inference = infer(model(nodes, [("x", F, ["n", 4])], [ints("zero", 0), ints("one", 1)]))
    n = Symbol("n", "int64")
    assert inference.values["positive"].entries == (1, 1)
    assert inference.values["is_one"].entries == (None, 0)
    assert inference.values["same"].entries == (n, 4)
    assert inference.values["nz_positive"].entries == (1, None)
    assert inference.values["nz_nonneg"].entries == (1, 1)


def test_fresh_dims_are_named_unique_and_carry_their_ranges():
    node = oh.make_node("NonZero", ["x"], ["y"], name="nonzero_3")
    m = model([node, oh.make_node("Relu", ["x"], ["z"])], [("x", F, ["n", 4])], opsets=[oh.make_opsetid("com.x", 2)])
    inference = Inference(m, True, None)
    first = inference.fresh_dim(node, "n", 0, 64)
    second = inference.fresh_dim(node, "n", 2)
    inference.env.set_range("m", (1, 3))
    third = inference.fresh_dim(oh.make_node("TopK", ["x", "k"], ["v", "i"]), "k?", 1, 2 * Symbol("m", "int64"))
    assert [first.name, second.name, third.name] == ["nonzero_3_n", "nonzero_3_n_2", "topk_0_k_"]
    assert inference.env.bound(first) == (0, 64) and inference.env.bound(second)[0] == 2
    assert inference.env.bound(third) == (1, 6)  # k <= 2*m with m in [1, 3]
    assert {first, second, third} <= inference.fresh
    assert inference.opset() == inference.opset("ai.onnx") == 18 and inference.opset("com.x") == 2
    assert inference.opset("com.other") == 0
    assert Inference(m.graph, True, None).opset() == onnx.defs.onnx_opset_version()


def test_a_fresh_dim_never_takes_a_declared_name():
    node = oh.make_node("NonZero", ["x"], ["y"])
    inference = Inference(model([node], [("x", F, ["nonzero_0_d1", 4])]), True, None)
    shapes = inference.run()
    assert shapes["y"][1].name != "nonzero_0_d1" and shapes["y"][1] in inference.fresh


def test_min_of_a_fresh_dim_and_one_is_not_folded():
    # graph inputs' dims are >= 1 (min(1, n) is 1); a data-dependent count may be 0 (min stays)
    nodes = [
        oh.make_node("NonZero", ["x"], ["nz"]),
        oh.make_node("Shape", ["nz"], ["s"]),
        oh.make_node("Shape", ["x"], ["sx"]),
        oh.make_node("Min", ["s", "one"], ["m"]),
        oh.make_node("Min", ["sx", "one"], ["mx"]),
    ]
    inference = infer(model(nodes, [("x", F, ["n"])], [ints("one", 1)]))
    count = inference.values["s"].entries[1]
    assert count in inference.fresh and isinstance(inference.values["m"].entries[1], Term)
    assert inference.values["mx"].entries == (1,)


@pytest.mark.parametrize("to", [onnx.TensorProto.FLOAT16, onnx.TensorProto.BOOL, onnx.TensorProto.UINT8])
def test_casts_keep_only_what_the_type_holds(to):
    nodes = [oh.make_node("Cast", ["big"], ["c"], to=to), oh.make_node("Relu", ["c"], ["out"])]
    inference = infer(model(nodes, [], [ints("big", [0, 3, 300, 5000, -1])]))
    expected = {
        onnx.TensorProto.FLOAT16: (0, 3, 300, None, -1),  # float16 holds ints up to 2048 exactly
        onnx.TensorProto.BOOL: (0, 1, 1, 1, 1),
        onnx.TensorProto.UINT8: (0, 3, None, None, None),
    }[to]
    assert inference.values["c"].entries == expected


def test_where_on_a_condition_known_only_at_run_time():
    nodes = [oh.make_node("Where", ["c", "a", "b"], ["w"]), oh.make_node("Where", ["c", "a", "a2"], ["same"])]
    inits = [ints("a", [1, 2]), ints("b", [3, 2]), ints("a2", [1, 2])]
    inference = infer(model(nodes, [("c", BOOL, [2])], inits))
    assert inference.values["w"].entries == (None, 2) and inference.values["same"].entries == (1, 2)
