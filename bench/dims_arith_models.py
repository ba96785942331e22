"""ONNX models for bench_dims_arith: a five-node CNN and a ~2,000-node conv + transformer graph, dynamic dims."""

from __future__ import annotations

from typing import Any

__all__ = ["small_model", "large_model"]


class _Builder:
    """Nodes, initializers and fresh value names for one graph."""

    def __init__(self, onnx: Any) -> None:
        self.onnx = onnx
        self.nodes: list = []
        self.inits: list = []
        self.count = 0

    def fresh(self, stem: str) -> str:
        self.count += 1
        return f"{stem}{self.count}"

    def node(self, op: str, inputs: list[str], **attrs: Any) -> str:
        out = self.fresh(op.lower())
        self.nodes.append(self.onnx.helper.make_node(op, inputs, [out], **attrs))
        return out

    def weight(self, shape: tuple[int, ...]) -> str:
        name = self.fresh("w")
        self.inits.append(self.onnx.helper.make_tensor(name, self.onnx.TensorProto.FLOAT, shape, [0.0] * _numel(shape)))
        return name

    def ints(self, values: list[int]) -> str:
        name = self.fresh("c")
        self.inits.append(self.onnx.helper.make_tensor(name, self.onnx.TensorProto.INT64, (len(values),), values))
        return name

    def scalar(self, value: int) -> str:
        name = self.fresh("k")
        self.inits.append(self.onnx.helper.make_tensor(name, self.onnx.TensorProto.INT64, (), [value]))
        return name

    def model(self, inputs: list, output: str) -> Any:
        helper, tp = self.onnx.helper, self.onnx.TensorProto
        outs = [helper.make_tensor_value_info(output, tp.FLOAT, None)]
        graph = helper.make_graph(self.nodes, "bench", inputs, outs, initializer=self.inits)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def small_model(onnx: Any) -> Any:
    """Conv, Relu, MaxPool, GlobalAveragePool, Flatten on ``(batch, 3, H, W)``."""
    b = _Builder(onnx)
    x = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["batch", 3, "H", "W"])
    y = b.node("Conv", ["x", b.weight((8, 3, 3, 3))], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    y = b.node("Relu", [y])
    y = b.node("MaxPool", [y], kernel_shape=[2, 2], strides=[2, 2])
    y = b.node("GlobalAveragePool", [y])
    return b.model([x], b.node("Flatten", [y]))


def _conv_stage(b: _Builder, x: str, channels: int, blocks: int) -> str:
    """A downsampling conv, then residual blocks (conv, relu, conv, add, relu)."""
    x = b.node(
        "Conv", [x, b.weight((channels, channels, 3, 3))], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]
    )
    for _ in range(blocks):
        y = b.node("Conv", [x, b.weight((channels, channels, 3, 3))], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
        y = b.node("Relu", [y])
        y = b.node("Conv", [y, b.weight((channels, channels, 3, 3))], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
        x = b.node("Relu", [b.node("Add", [x, y])])
    return x


def _attention(b: _Builder, x: str, heads: int, width: int) -> str:
    """One transformer block whose reshapes compute their shapes from ``Shape(x)``, as exporters write them."""
    shape = b.node("Shape", [x])
    batch = b.node("Unsqueeze", [b.node("Gather", [shape, b.scalar(0)]), b.ints([0])])
    seq = b.node("Unsqueeze", [b.node("Gather", [shape, b.scalar(1)]), b.ints([0])])
    split = b.node("Concat", [batch, seq, b.ints([heads, width // heads])], axis=0)
    qkv = []
    for _ in range(3):
        p = b.node("MatMul", [x, b.weight((width, width))])
        p = b.node("Reshape", [p, split])
        qkv.append(b.node("Transpose", [p], perm=[0, 2, 1, 3]))
    scores = b.node("MatMul", [qkv[0], b.node("Transpose", [qkv[1]], perm=[0, 1, 3, 2])])
    probs = b.node("Softmax", [b.node("Div", [scores, b.weight(())])], axis=-1)
    ctx = b.node("Transpose", [b.node("MatMul", [probs, qkv[2]])], perm=[0, 2, 1, 3])
    merged = b.node("Reshape", [ctx, b.node("Concat", [batch, seq, b.ints([width])], axis=0)])
    x = b.node("Add", [x, b.node("MatMul", [merged, b.weight((width, width))])])
    h = b.node("Relu", [b.node("MatMul", [x, b.weight((width, 4 * width))])])
    return b.node("Add", [x, b.node("MatMul", [h, b.weight((4 * width, width))])])


def large_model(onnx: Any, stages: int = 6, blocks: int = 60, layers: int = 60) -> Any:
    """A conv net on ``(batch, 8, H, W)`` (stride-2 stages of residual blocks) feeding transformer blocks.

    The conv features are flattened to ``(batch, tokens, 8)`` by a reshape computed from their
    shape, padded up to the model width, then run through ``layers`` attention blocks.
    """
    b = _Builder(onnx)
    x = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["batch", 8, "H", "W"])
    y = "x"
    for _ in range(stages):
        y = _conv_stage(b, y, 8, blocks // stages)
    shape = b.node("Shape", [y])
    tokens = b.node("Mul", [b.node("Gather", [shape, b.ints([2])]), b.node("Gather", [shape, b.ints([3])])])
    batch = b.node("Gather", [shape, b.ints([0])])
    target = b.node("Concat", [batch, tokens, b.ints([8])], axis=0)
    y = b.node("Reshape", [b.node("Transpose", [y], perm=[0, 2, 3, 1]), target])
    y = b.node("MatMul", [y, b.weight((8, 64))])
    for _ in range(layers):
        y = _attention(b, y, 4, 64)
    return b.model([x], y)
