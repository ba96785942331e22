"""ONNX's own node test cases: shapes inferred with concrete and with symbolic input dims, checked.

Each case of ``onnx.backend.test.case.node.collect_testcases()`` holds a model and the arrays its outputs
hold. Shapes are inferred three ways: (a) ``concrete``, every input dim a number; (b) ``symbolic``, every
input dim a ``dim_param`` of its own; (c) ``values``, as (b) but the small integer inputs (shapes, axes,
pads, k, ...), float scalars and float vectors after the first (scales) become initializers, so their
values are known, as in a real model. Declared output shapes are removed. Every dimension of every graph output is then
decided (an int, or a term of the input dims that evaluates to the array's size at the concrete input
sizes) or undecided (None, or a term holding a fresh name: a size known at run time, whose range must
hold the array's size); a decided dimension that differs is wrong, and so is an error on a valid case.
Run ``python tests/interop/test_onnx_ops_cases.py`` for the figures per mode and the undecided ops.
"""

from __future__ import annotations

import collections
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from exprgraph.dims import evaluate_expression
from exprgraph.interop.onnx_rules_attention import ATTENTION_RULES
from exprgraph.interop.onnx_rules_conv import CONV_RULES
from exprgraph.interop.onnx_rules_index import INDEX_RULES
from exprgraph.interop.onnx_rules_misc import MISC_RULES
from exprgraph.interop.onnx_rules_ml import ML_RULES
from exprgraph.interop.onnx_rules_resize import RESIZE_RULES
from exprgraph.interop.onnx_rules_types import OUTPUT_TYPES, output_types
from exprgraph.interop.onnx_shapes import MAX_VALUE_SIZE, Inference

onnx = pytest.importorskip("onnx")

MODES = ("concrete", "symbolic", "values")

#: the share of output dims decided must stay at or above these (measured 2026-11-29 with onnx 1.23.2:
#: concrete 0.847, symbolic 0.826, values 0.948; run this module for the figures)
FLOORS = {"concrete": 0.83, "symbolic": 0.81, "values": 0.93}


@dataclass
class Tally:
    """Counts of one run over cases: dims decided, undecided, wrong (with why) and undecided dims per op."""

    decided: int = 0
    undecided: int = 0
    fresh: int = 0
    wrong: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    undecided_ops: collections.Counter = field(default_factory=collections.Counter)

    @property
    def share(self) -> float:
        """Decided dims over all dims checked."""
        return self.decided / max(1, self.decided + self.undecided)


def _cases() -> list[Any]:
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return [c for c in collect_testcases() if c.model is not None and c.data_sets]


def _is_small_constant(array: Any, position: int) -> bool:
    """An int vector or scalar (a shape, axes, k), a float scalar, or after the first input a float vector (scales)."""
    kinds = "iu" if position == 0 and np.ndim(array) else "iuf"
    return (
        isinstance(array, np.ndarray) and array.dtype.kind in kinds and array.ndim <= 1 and array.size <= MAX_VALUE_SIZE
    )


def _shape_of(array: Any) -> tuple[int, ...] | None:
    """The shape of a test array (a numpy array or scalar, or a TensorProto of a narrow type); None for others."""
    if isinstance(array, (np.ndarray, np.generic)):
        return np.shape(array)
    if isinstance(array, onnx.TensorProto):
        return tuple(array.dims)
    return None


def prepared(case: Any, mode: str) -> tuple[Any, dict[str, int]] | None:
    """The case's model with its inputs' dims set for ``mode``, and the sizes of the named dims; None to skip."""
    model = onnx.ModelProto()
    model.CopyFrom(case.model)
    inputs, _ = case.data_sets[0]
    sizes: dict[str, int] = {}
    keep = []
    for position, (value, array) in enumerate(zip(list(model.graph.input), inputs, strict=False)):
        if value.type.WhichOneof("value") != "tensor_type":
            keep.append(value)  # a sequence or an optional: as the model declares it
            continue
        if _shape_of(array) is None:
            return None
        if mode == "values" and _is_small_constant(array, position):
            model.graph.initializer.append(onnx.numpy_helper.from_array(array, value.name))
            continue
        keep.append(value)
        shape = value.type.tensor_type.shape
        shape.Clear()
        for n in _shape_of(array):  # type: ignore[union-attr]
            dim = shape.dim.add()
            if mode == "concrete" or n == 0:  # 0 stays a number: symbolic dims are taken to be >= 1
                dim.dim_value = n
            else:
                name = f"n{len(sizes)}"
                dim.dim_param = name
                sizes[name] = n
    if len(model.graph.input) > len(inputs):
        return None
    del model.graph.input[:]
    model.graph.input.extend(keep)
    for value in model.graph.output:  # the answers: inference must not read them
        if value.type.WhichOneof("value") == "tensor_type":
            value.type.tensor_type.ClearField("shape")
    del model.graph.value_info[:]
    return model, sizes


def check(case: Any, mode: str, tally: Tally) -> None:
    """Infer the case's shapes in ``mode`` and count its output dims into ``tally``."""
    ready = prepared(case, mode)
    if ready is None:
        tally.skipped.append(case.name)
        return
    model, sizes = ready
    try:
        inf = Inference(model, True, None)
        shapes = inf.run()
    except Exception as exc:
        tally.wrong.append(f"{case.name} [{mode}]: raised {type(exc).__name__}: {str(exc)[:300]}")
        return
    outputs = case.data_sets[0][1]
    ops = "/".join(sorted({n.op_type for n in model.graph.node}))
    for value, array in zip(model.graph.output, outputs, strict=False):
        expected = _shape_of(array)
        if expected is None or value.type.WhichOneof("value") != "tensor_type":
            continue  # a sequence or optional output
        got = shapes.get(value.name)
        if got is None:
            tally.undecided += len(expected)
            tally.undecided_ops[ops] += len(expected)
            continue
        if len(got) != len(expected):
            tally.wrong.append(f"{case.name} [{mode}] {value.name}: rank {len(got)} for {expected}")
            continue
        for i, (dim, n) in enumerate(zip(got, expected, strict=True)):
            if dim is None:
                tally.undecided += 1
                tally.undecided_ops[ops] += 1
                continue
            if not isinstance(dim, int) and any(x.name not in sizes for x in dim.free_symbols):
                _fresh(inf, dim, n, f"{case.name} [{mode}] {value.name} dim {i}", tally)
                tally.undecided_ops[ops] += 1
                continue
            try:
                size = dim if isinstance(dim, int) else evaluate_expression(dim, sizes)
            except Exception as exc:
                size = f"{type(exc).__name__}: {exc}"
            if size == n:
                tally.decided += 1
            else:
                tally.wrong.append(f"{case.name} [{mode}] {value.name} dim {i}: {dim} = {size}, expected {n}")


def _fresh(inf: Any, dim: Any, n: int, where: str, tally: Tally) -> None:
    """A dim holding fresh names (sizes known at run time): undecided; a bare fresh name's range must hold ``n``."""
    tally.undecided += 1
    tally.fresh += 1
    if dim.is_symbol:
        low, high = inf.env.range_of(dim.name)
        if not (low is None or low <= n) or not (high is None or n <= high):
            tally.wrong.append(f"{where}: fresh {dim} in [{low}, {high}] but the size is {n}")


def run(mode: str, cases: list[Any] | None = None) -> Tally:
    """The tally of ``mode`` over every node test case."""
    tally = Tally()
    for case in _cases() if cases is None else cases:
        check(case, mode, tally)
    return tally


_CASES = _cases() if onnx is not None else []


@pytest.mark.parametrize("mode", MODES)
def test_node_cases_have_no_wrong_dim_and_most_are_decided(mode):
    tally = run(mode, _CASES)
    assert not tally.wrong, "\n".join(tally.wrong[:40])
    assert tally.share >= FLOORS[mode], (tally.decided, tally.undecided, tally.undecided_ops.most_common(20))


#: the ops whose element types onnx_rules_types gives (the others are the engine's: Cast, Shape, comparisons...)
_TYPED_OPS = {*CONV_RULES, *INDEX_RULES, *RESIZE_RULES, *ATTENTION_RULES, *MISC_RULES, *ML_RULES, *OUTPUT_TYPES} - {
    "BatchNormalization"
}


def test_output_element_types_agree_with_the_node_cases():
    # each single-node case declares its outputs' element types: ours agree wherever we give one
    compared = 0
    for case in _CASES:
        graph = case.model.graph
        if len(graph.node) != 1 or graph.node[0].op_type not in _TYPED_OPS:
            continue
        node = graph.node[0]
        declared = {v.name: v.type.tensor_type.elem_type for v in graph.input if v.type.HasField("tensor_type")}
        ins = [declared.get(name, 0) for name in node.input]
        outs = {v.name: v.type.tensor_type.elem_type for v in graph.output if v.type.HasField("tensor_type")}
        for name, elem in zip(node.output, output_types(node, ins), strict=True):
            if elem and outs.get(name):
                assert elem == outs[name], (case.name, name, elem, outs[name])
                compared += 1
    assert compared > 300


if __name__ == "__main__":  # pragma: no cover - the figures for the report
    import sys

    cases = _CASES
    if len(sys.argv) > 1:
        cases = [c for c in cases if any(word in c.name for word in sys.argv[1:])]
    for mode in MODES:
        tally = run(mode, cases)
        print(
            f"{mode}: cases {len(cases)}, skipped {len(tally.skipped)}, decided {tally.decided},"
            f" undecided {tally.undecided} (fresh {tally.fresh}), share {tally.share:.4f}, wrong {len(tally.wrong)}"
        )
        for line in tally.wrong[:60]:
            print("   WRONG", line)
        print("   undecided:", tally.undecided_ops.most_common(40))
