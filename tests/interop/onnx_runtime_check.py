"""Checking inferred ONNX shapes and values against what a runtime computes at concrete input sizes.

The runtime is onnxruntime when it is installed (the bench extra), else onnx's reference evaluator
(the test extra has onnx, not onnxruntime).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from exprgraph.core import Term
from exprgraph.dims import evaluate_expression
from exprgraph.interop.onnx_shapes import Inference
from exprgraph.interop.onnx_values_io import element_types

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnx.reference")
try:
    import onnxruntime as ort
except ImportError:  # the reference evaluator computes the same shapes, more slowly
    ort = None
#: for the cases onnx's reference evaluator cannot run (Loop with a zero trip count, Scan on axis 1)
needs_ort = pytest.mark.skipif(
    ort is None, reason="onnx's reference evaluator cannot run this model; needs onnxruntime"
)
TensorProto, oh, numpy_helper = onnx.TensorProto, onnx.helper, onnx.numpy_helper
F, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def ints(name: str, values: Any) -> Any:
    """An int64 initializer."""
    return numpy_helper.from_array(np.asarray(values, np.int64), name)


def model(nodes: list, inputs: list, inits: list = (), opset: int = 18, **kw: Any) -> Any:
    """A model whose inputs are (name, elem type, dims) and whose output is the last node's first output."""
    ins = [oh.make_tensor_value_info(name, elem, dims) for name, elem, dims in inputs]
    outs = [oh.make_tensor_value_info(nodes[-1].output[0], F, None)]
    graph = oh.make_graph(nodes, "g", ins, outs, initializer=list(inits), value_info=kw.pop("value_info", []))
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", opset), *kw.pop("opsets", [])], **kw)


def infer(m: Any) -> Inference:
    """The finished inference of ``m`` (its shapes, values, sequences and fresh dims)."""
    inference = Inference(m, True, None)
    inference.run()
    return inference


def run(m: Any, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every node output of ``m`` (tensors only) as onnxruntime computes it."""
    out = onnx.ModelProto()
    out.CopyFrom(m)
    types = element_types(out.graph, TensorProto, lambda op: True)
    seqs = {"SequenceConstruct", "SequenceEmpty", "SequenceInsert", "SequenceErase", "SplitToSequence"}
    del out.graph.output[:]
    for node in out.graph.node:
        for name in node.output:
            if name and node.op_type not in seqs and node.op_type != "SequenceMap" and name in types:
                out.graph.output.append(oh.make_tensor_value_info(name, types[name], None))
    names = [o.name for o in out.graph.output]
    if ort is None:
        arrays = onnx.reference.ReferenceEvaluator(out).run(names, feeds)
        return dict(zip(names, (np.asarray(a) for a in arrays), strict=True))
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(out.SerializeToString(), options, providers=["CPUExecutionProvider"])
    arrays = session.run(None, feeds)
    return {o.name: a for o, a in zip(session.get_outputs(), arrays, strict=True)}


def feeds_for(m: Any, sizes: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Random arrays for ``m``'s inputs, their named dims set to ``sizes``."""
    out = {}
    for info in m.graph.input:
        t = info.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else sizes[d.dim_param] for d in t.shape.dim]
        if t.elem_type == I64:
            out[info.name] = rng.integers(0, 5, shape).astype(np.int64)
        elif t.elem_type == BOOL:
            out[info.name] = rng.integers(0, 2, shape).astype(bool)
        else:
            out[info.name] = rng.standard_normal(shape).astype(np.float32)
    return out


def _at(d: Any, sizes: dict[str, int]) -> int | None:
    """A dim (or value entry) at these sizes; None when it names a fresh dim."""
    if d is None:
        return None
    if d.__class__ is not Term:
        return d  # type: ignore[no-any-return]
    if {s.name for s in d.free_symbols} - set(sizes):
        return None
    return evaluate_expression(d, sizes)  # type: ignore[no-any-return]


def check(m: Any, sizes: dict[str, int], seed: int = 0, inference: Inference | None = None) -> tuple[int, int]:
    """Our shapes and values, evaluated at ``sizes``, are what onnxruntime computes; returns (decided, fresh)."""
    inference = inference or infer(m)
    arrays = run(m, feeds_for(m, sizes, np.random.default_rng(seed)))
    decided = fresh = 0
    for name, array in arrays.items():
        shape = inference.shapes[name]
        assert shape is not None and len(shape) == array.ndim, (name, shape, array.shape)
        for axis, d in enumerate(shape):
            got = _at(d, sizes)
            if got is None:
                fresh += 1
                continue
            assert got == array.shape[axis], (name, axis, d, array.shape)
            decided += 1
        value = inference.values.get(name)
        if value is not None:
            assert value.shape == array.shape, (name, value, array.shape)
            for e, n in zip(value.entries, array.reshape(-1).tolist(), strict=True):
                got = _at(e, sizes)
                assert got is None or got == n, (name, value, array)
    return decided, fresh


def means(dims: Any, texts: list[str]) -> bool:
    """Each dim (or value entry) has the value of the expression text at a few sizes (spellings may change)."""
    from exprgraph.dims import parse_expression

    assert dims is not None and len(dims) == len(texts), (dims, texts)
    parsed = [parse_expression(t) for t in texts]
    names = sorted({s.name for p in parsed if p.__class__ is Term for s in p.free_symbols})
    for k in range(3):
        sizes = {name: 2 + (3 * k + 5 * i) % 7 for i, name in enumerate(names)}
        for d, p in zip(dims, parsed, strict=True):
            want = p if p.__class__ is not Term else evaluate_expression(p, sizes)
            assert _at(d, sizes) == want, (dims, texts, sizes)
    return True
