"""Ground truth of the ONNX corpus: random feeds at three sizes, and every value's shape from onnxruntime runs.

onnxruntime runs the model with graph optimisations off and every node output added as a graph
output; each value's shape (and dtype) is recorded at each size, with the sizes each input
``dim_param`` takes (its bindings), in ``bench/data/onnx_models/<key>.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

CACHE = Path(__file__).parent / "data" / "onnx_models"
VOCAB = 100

#: one input: name, kind ('ids' int64 tokens, 'mask' int64 ones, 'float' float32 normal), axes (int or size name)
Input = tuple[str, str, tuple[int | str, ...]]


def input_axes(model: Any) -> dict[str, list[int | str | None]]:
    """Each graph input (not an initializer) -> its declared dims: int, dim_param text, or None."""
    inits = {t.name for t in model.graph.initializer}
    out = {}
    for info in model.graph.input:
        if info.name in inits:
            continue
        dims = info.type.tensor_type.shape.dim
        out[info.name] = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in dims]
    return out


def bindings_for(
    model: Any, inputs: list[Input], sizes: list[dict[str, int]]
) -> tuple[list[dict[str, int]], list[str]]:
    """Per truth size, each input ``dim_param`` of the exported model -> its int; and notes on specialised sizes."""
    declared = input_axes(model)
    spec = {name: axes for name, _, axes in inputs}
    fixed: dict[str, int] = {}
    params: dict[str, str] = {}  # dim_param -> size name
    notes = []
    for name, axes in declared.items():
        for i, d in enumerate(axes):
            want = spec.get(name, ())[i] if i < len(spec.get(name, ())) else None
            if isinstance(want, str) and isinstance(d, int):
                fixed[want] = d
                notes.append(f"{name}[{i}] ({want}) exported static = {d}")
            elif isinstance(want, str) and isinstance(d, str):
                params[d] = want
    binds = [{p: ({**s, **fixed})[v] for p, v in params.items()} for s in sizes]
    return binds, notes


def make_feed(model: Any, inputs: list[Input], size: dict[str, int], seed: int) -> dict[str, np.ndarray]:
    """Random inputs of ``size`` (sizes the export fixed are taken from the model)."""
    rng = np.random.default_rng(seed)
    declared = input_axes(model)
    feed = {}
    for name, kind, axes in inputs:
        if name not in declared:
            continue
        shape = tuple(
            d if isinstance(d, int) else size[w] if isinstance(w, str) else w
            for w, d in zip(axes, declared[name], strict=True)
        )
        if kind == "ids":
            feed[name] = rng.integers(2, VOCAB, size=shape, dtype=np.int64)
        elif kind == "mask":
            feed[name] = np.ones(shape, dtype=np.int64)
        else:
            feed[name] = rng.standard_normal(shape).astype(np.float32)
    return feed


def all_outputs(model: Any) -> Any:
    """A copy of ``model`` whose graph outputs are every node output (its own outputs first)."""
    import onnx

    out = onnx.ModelProto()
    out.CopyFrom(model)
    have = {o.name for o in out.graph.output}
    for node in out.graph.node:
        for name in node.output:
            if name and name not in have:
                have.add(name)
                out.graph.output.append(onnx.ValueInfoProto(name=name))
    return out


def true_shapes(model: Any, feeds: list[dict[str, np.ndarray]]) -> tuple[dict[str, list], dict[str, str]]:
    """onnxruntime's shape of every node output at each feed (None for a non-tensor), and each value's dtype."""
    import onnxruntime as ort

    full = all_outputs(model)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 4
    ort.set_default_logger_severity(4)
    session = ort.InferenceSession(full.SerializeToString(), options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    truth: dict[str, list] = {n: [] for n in names}
    dtypes: dict[str, str] = {}
    for feed in feeds:
        for name, value in zip(names, session.run(None, feed), strict=True):
            if isinstance(value, np.ndarray):
                truth[name].append(list(value.shape))
                dtypes[name] = str(value.dtype)
            else:
                truth[name].append(None)
    return truth, dtypes


def record(key: str, model: Any, inputs: list[Input], sizes: list[dict[str, int]], meta: dict[str, Any]) -> dict:
    """Run the truth at the three sizes and write ``<key>.json``; returns the entry."""
    binds, notes = bindings_for(model, inputs, sizes)
    feeds = [make_feed(model, inputs, s, seed=i) for i, s in enumerate(sizes)]
    truth, dtypes = true_shapes(model, feeds)
    entry = {"key": key, **meta, "inputs": [list(i) for i in inputs], "sizes": sizes, "bindings": binds,
             "notes": notes, "truth": truth, "dtypes": dtypes}  # fmt: skip
    (CACHE / f"{key}.json").write_text(json.dumps(entry))
    return entry
