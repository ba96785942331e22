"""ONNX shape rules of the spatial ops beyond Conv and the pools: transposed convolution, unpooling,
region pooling, grid sampling, image folding and the block rearrangements (DepthToSpace, SpaceToDepth).

Every spatial formula goes through :class:`~exprgraph.dims.arith.DimArith`, so symbolic sizes stay
exact; a size computed at run time (a tensor input that is not a known value) is None.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import ShapeError
from .onnx_dims import Dim, _attr, _axes, _int_attr, _ints_attr
from .onnx_rules_common import has_input, need, nones, sizes_attr

if TYPE_CHECKING:
    from .onnx_shapes import Inference

__all__ = ["CONV_RULES"]


def _kernel(node: Any, w: Any, n: int) -> list[Dim]:
    """``kernel_shape``, else the weights' spatial dims (unknown when neither is known)."""
    kernel = _ints_attr(node, "kernel_shape")
    if kernel:
        if len(kernel) != n or min(kernel) < 1:
            raise ShapeError(f"kernel_shape {kernel} does not fit {n} spatial axes")
        return list(kernel)
    return list(w[2:]) if w is not None and len(w) == n + 2 else [None] * n


def _conv_transpose(inf: Inference, node: Any) -> list:
    # out = stride*(in - 1) + output_padding + dilation*(k - 1) + 1 - pad_begin - pad_end; SAME: out = in*stride
    d = inf.d
    x, w = inf.shape(node, 0), inf.shape(node, 1)
    if x is None:
        return nones(node)
    n = len(need(x, 3)) - 2
    group = _int_attr(node, "group", 1)
    if group < 1:
        raise ShapeError(f"group {group} is not positive")
    channels = d.mul(w[1], group) if w is not None and len(w) >= 2 else None
    given = _ints_attr(node, "output_shape")
    if given:  # the spatial sizes asked for (runtimes differ on a full (N, C, ...) list: left unknown)
        if len(given) not in (n, n + 2) or min(given) < 0:
            raise ShapeError(f"output_shape {given} does not fit {n} spatial axes")
        return [(x[0], channels, *(given if len(given) == n else [None] * n))]
    kernel = _kernel(node, w, n)
    strides = sizes_attr(node, "strides", n, 1, 1)
    dilations = sizes_attr(node, "dilations", n, 1, 1)
    extra = sizes_attr(node, "output_padding", n, 0, 0)
    pads = sizes_attr(node, "pads", 2 * n, 0, 0)
    auto_pad = _attr(node, "auto_pad", "NOTSET")
    if auto_pad not in ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"):
        raise ShapeError(f"unknown auto_pad {auto_pad!r}")
    out: list[Dim] = [x[0], channels]
    for i in range(n):
        size = x[2 + i]
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            out.append(d.mul(size, strides[i]))
            continue
        padding = 0 if auto_pad == "VALID" else pads[i] + pads[i + n]
        window = d.add(d.mul(dilations[i], d.sub(kernel[i], 1)), 1)
        grown = d.add(d.mul(strides[i], d.sub(size, 1)), extra[i] - padding)
        out.append(d.add(grown, window))
    return [tuple(out)]


def _max_unpool(inf: Inference, node: Any) -> list:
    # out = (in - 1)*stride + kernel - pad_begin - pad_end, or the output_shape input's values
    d = inf.d
    x = inf.shape(node, 0)
    if has_input(node, 2):
        target = inf.value(node, 2)
        return [None if target is None else target.entries]
    if x is None:
        return [None]
    n = len(need(x, 3)) - 2
    kernel = _ints_attr(node, "kernel_shape")
    if not kernel or len(kernel) != n or min(kernel) < 1:
        raise ShapeError(f"kernel_shape {kernel} does not fit {n} spatial axes")
    strides = sizes_attr(node, "strides", n, 1, 1)
    pads = sizes_attr(node, "pads", 2 * n, 0, 0)
    spatial = [d.add(d.mul(d.sub(x[2 + i], 1), strides[i]), kernel[i] - pads[i] - pads[i + n]) for i in range(n)]
    return [(x[0], x[1], *spatial)]


def _roi_pool(inf: Inference, node: Any) -> list:
    # MaxRoiPool: (rois, C, *pooled_shape); RoiAlign: (rois, C, output_height, output_width)
    x, rois = inf.shape(node, 0), inf.shape(node, 1)
    if node.op_type == "MaxRoiPool":
        pooled = _ints_attr(node, "pooled_shape")
        if not pooled or len(pooled) != 2:
            raise ShapeError(f"pooled_shape {pooled} is not two sizes")
    else:
        pooled = [_int_attr(node, "output_height", 1), _int_attr(node, "output_width", 1)]
    count = rois[0] if rois else (inf.shape(node, 2) or [None])[0]
    return [(count, x[1] if x is not None and len(x) > 1 else None, *pooled)]


def _grid_sample(inf: Inference, node: Any) -> list:
    # (N, C, D1..Dr) sampled at a grid (N, D1'..Dr', r) -> (N, C, D1'..Dr')
    x, grid = inf.shape(node, 0), inf.shape(node, 1)
    x = None if x is None else need(x, 3)
    if grid is None:
        return [None] if x is None else [(x[0], x[1], *([None] * (len(x) - 2)))]
    need(grid, 3, "grid")
    if x is not None and len(grid) != len(x):
        raise ShapeError(f"a grid of rank {len(grid)} for an input of rank {len(x)}")
    return [(grid[0] if x is None else x[0], None if x is None else x[1], *grid[1:-1])]


def _affine_grid(inf: Inference, node: Any) -> list:
    # size (N, C, H, W) -> (N, H, W, 2); size (N, C, D, H, W) -> (N, D, H, W, 3)
    size = inf.value(node, 1)
    if size is None:
        sizes = inf.shape(node, 1)
        if sizes is None or len(sizes) != 1 or sizes[0] not in (4, 5):
            return [None]
        return [(None,) * sizes[0]]
    if len(size.entries) not in (4, 5):
        raise ShapeError(f"size of {len(size.entries)} entries (needs 4 or 5)")
    n, _, *spatial = size.entries
    return [(n, *spatial, len(spatial))]


def _col2im(inf: Inference, node: Any) -> list:
    # (N, C*prod(block), L) -> (N, C, *image_shape)
    x, image, block = inf.shape(node, 0), inf.value(node, 1), inf.value(node, 2)
    if x is not None and len(x) != 3:
        raise ShapeError(f"Col2Im of an input of rank {len(x)} (needs 3)")
    n_spatial = len(image.entries) if image is not None else (inf.shape(node, 1) or [None])[0]
    channels = None
    if x is not None and block is not None:
        channels = inf.d.floordiv(x[1], inf.d.prod(block.entries))
    batch = x[0] if x is not None else None
    if image is not None:
        return [(batch, channels, *image.entries)]
    return [None] if n_spatial.__class__ is not int else [(batch, channels, *([None] * n_spatial))]


def _blocks(inf: Inference, node: Any) -> list:
    # DepthToSpace: (N, C, H, W) -> (N, C/b^2, H*b, W*b); SpaceToDepth: (N, C*b^2, H/b, W/b)
    d = inf.d
    x = inf.shape(node, 0)
    b = _int_attr(node, "blocksize")
    if b is None or b < 1:
        raise ShapeError(f"blocksize {b} is not a positive int")
    if x is None:
        return [None]
    n = len(need(x, 3)) - 2
    area = b**n
    if node.op_type == "DepthToSpace":
        if isinstance(x[1], int) and x[1] % area:
            raise ShapeError(f"{x[1]} channels do not split into blocks of {area}")
        return [(x[0], d.floordiv(x[1], area), *(d.mul(s, b) for s in x[2:]))]
    for s in x[2:]:
        if isinstance(s, int) and s % b:
            raise ShapeError(f"spatial size {s} is not a multiple of blocksize {b}")
    return [(x[0], d.mul(x[1], area), *(d.floordiv(s, b) for s in x[2:]))]


def _center_crop_pad(inf: Inference, node: Any) -> list:
    # out[axes[i]] = shape[i]; the other axes are kept
    x, target = inf.shape(node, 0), inf.value(node, 1)
    if x is None:
        return [None]
    axes = _ints_attr(node, "axes") or list(range(len(x)))
    if target is None:
        return [tuple(None if i in _axes(axes, len(x)) else e for i, e in enumerate(x))]
    if len(target.entries) != len(axes):
        raise ShapeError(f"{len(target.entries)} sizes for {len(axes)} axes")
    out = list(x)
    for axis, size in zip(_axes(axes, len(x)), target.entries, strict=True):
        out[axis] = size
    return [tuple(out)]


def _causal_conv(inf: Inference, node: Any) -> list:
    # output: the input's shape; present_state: (batch, channels, k - 1)
    x, w = inf.shape(node, 0), inf.shape(node, 1)
    k = w[2] if w is not None and len(w) == 3 else None
    state = (x[0], x[1], inf.d.sub(k, 1)) if x is not None and len(x) == 3 else None
    return [x, state][: len(node.output)]


#: ONNX op type -> shape rule, for the ops of this family
CONV_RULES: dict[str, Callable[[Inference, Any], list]] = {
    "ConvTranspose": _conv_transpose,
    "MaxUnpool": _max_unpool,
    "MaxRoiPool": _roi_pool,
    "RoiAlign": _roi_pool,
    "GridSample": _grid_sample,
    "AffineGrid": _affine_grid,
    "Col2Im": _col2im,
    "DepthToSpace": _blocks,
    "SpaceToDepth": _blocks,
    "CenterCropPad": _center_crop_pad,
    "CausalConvWithState": _causal_conv,
}
