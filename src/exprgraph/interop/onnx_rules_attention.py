"""ONNX shape rules of the transformer and recurrent ops: Attention, LinearAttention, the normalizations with
statistics outputs (LayerNormalization, BatchNormalization in training), and RNN, GRU, LSTM.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import ShapeError
from .onnx_dims import Dim, _attr, _axis, _int_attr
from .onnx_rules_common import has_input, nones

if TYPE_CHECKING:
    from .onnx_shapes import Inference

__all__ = ["ATTENTION_RULES"]


def _heads(inf: Inference, x: Any, heads: int | None, what: str) -> tuple[Dim, Dim, Dim, Dim]:
    """(batch, heads, sequence, head size) of a 4-d input, or of a 3-d one packed as (batch, sequence, heads*size)."""
    if x is None:
        return (None, heads, None, None)
    if len(x) == 4:
        return x[0], x[1], x[2], x[3]
    if len(x) != 3:
        raise ShapeError(f"{what} of rank {len(x)} (needs 3 or 4)")
    if heads is None:
        raise ShapeError(f"a 3-d {what} needs its number of heads")
    if x[2].__class__ is int and x[2] % heads:
        raise ShapeError(f"{what} width {x[2]} does not split into {heads} heads")
    return x[0], heads, x[1], inf.d.floordiv(x[2], heads)


def _attention(inf: Inference, node: Any) -> list:
    # Y: (B, Hq, Sq, Dv) or (B, Sq, Hq*Dv); present K/V: (B, Hkv, past + Skv, D); qk: (B, Hq, Sq, past + Skv)
    d = inf.d
    q_x = inf.shape(node, 0)
    q_heads, kv_heads = _int_attr(node, "q_num_heads"), _int_attr(node, "kv_num_heads")
    b, hq, sq, _ = _heads(inf, q_x, q_heads, "Q")
    _, hk, skv, dk = _heads(inf, inf.shape(node, 1), kv_heads, "K")
    _, _, _, dv = _heads(inf, inf.shape(node, 2), kv_heads, "V")
    past = inf.shape(node, 4) if has_input(node, 4) else None
    total = skv if not has_input(node, 4) else (d.add(past[2], skv) if past is not None and len(past) == 4 else None)
    y: Any = None
    if q_x is not None:
        y = (b, hq, sq, dv) if len(q_x) == 4 else (b, sq, d.mul(hq, dv))
    outs = [y, (b, hk, total, dk), (b, hk, total, dv), (b, hq, sq, total)]
    return outs[: len(node.output)]


def _linear_attention(inf: Inference, node: Any) -> list:
    # output: (B, T, Hq * Dv); present_state: (B, Hkv, Dk, Dv), with Dk = K/Hkv and Dv = V/Hkv
    d = inf.d
    q, k, v = (inf.shape(node, i) for i in range(3))
    q_heads, kv_heads = _int_attr(node, "q_num_heads"), _int_attr(node, "kv_num_heads")
    if q_heads is None or kv_heads is None or kv_heads < 1:
        raise ShapeError("LinearAttention needs q_num_heads and kv_num_heads")
    dk = d.floordiv(k[2], kv_heads) if k is not None and len(k) == 3 else None
    dv = d.floordiv(v[2], kv_heads) if v is not None and len(v) == 3 else None
    b = q[0] if q is not None else None
    out = (b, q[1], d.mul(q_heads, dv)) if q is not None and len(q) == 3 else None
    return [out, (b, kv_heads, dk, dv)][: len(node.output)]


def _layer_norm(inf: Inference, node: Any) -> list:
    # Y: X; Mean, InvStdDev: X[:axis] + [1]*(rank - axis)
    x = inf.shape(node, 0)
    if x is None:
        return nones(node)
    axis = _axis(_int_attr(node, "axis", -1), len(x))
    stats = (*x[:axis], *([1] * (len(x) - axis)))
    return [x, stats, stats][: len(node.output)]


def _batch_norm(inf: Inference, node: Any) -> list:
    # Y: X; in training, running mean and var (and, before opset 14, saved mean and var): (C,)
    x = inf.shape(node, 0)
    channels = (x[1] if len(x) > 1 else None) if x is not None else None
    return [x, *[(channels,)] * (len(node.output) - 1)]


_GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def _recurrent(inf: Inference, node: Any) -> list:
    # Y: (S, D, B, H) or with layout 1 (B, S, D, H); Y_h, Y_c: (D, B, H) or (B, D, H)
    x, w, r = (inf.shape(node, i) for i in range(3))
    direction = _attr(node, "direction", "forward")
    if direction not in ("forward", "reverse", "bidirectional"):
        raise ShapeError(f"unknown direction {direction!r}")
    dirs = 2 if direction == "bidirectional" else 1
    hidden: Dim = _int_attr(node, "hidden_size")
    if hidden is None and r is not None and len(r) == 3:
        hidden = r[2]
    elif hidden is None and w is not None and len(w) == 3:
        hidden = inf.d.floordiv(w[1], _GATES[node.op_type])
    layout = _int_attr(node, "layout", 0)
    if x is not None and len(x) != 3:
        raise ShapeError(f"X of rank {len(x)} (needs 3)")
    seq, batch = (None, None) if x is None else ((x[1], x[0]) if layout else (x[0], x[1]))
    y = (batch, seq, dirs, hidden) if layout else (seq, dirs, batch, hidden)
    state = (batch, dirs, hidden) if layout else (dirs, batch, hidden)
    return [y, state, state][: len(node.output)]


#: ONNX op type -> shape rule, for the ops of this family
ATTENTION_RULES: dict[str, Callable[[Inference, Any], list]] = {
    "Attention": _attention,
    "LinearAttention": _linear_attention,
    "LayerNormalization": _layer_norm,
    "BatchNormalization": _batch_norm,
    "RNN": _recurrent,
    "GRU": _recurrent,
    "LSTM": _recurrent,
}
