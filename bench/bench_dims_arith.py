"""Dimension arithmetic of shape inference: dims' polynomials all the way (DimArith) against the term road.

The term road is what ONNX inference did before ``exprgraph.dims.arith``: each operation builds its
term over its operands and simplifies it (``simplify_dim``, or a DimEnv's ``simplify``), so every
operation reads its operands back into polynomials and builds a term. ``DimArith`` keeps each
result's polynomial and builds its term once. Both give the same canonical terms (the bench checks).

Rows:

- *replay*: the operations the ONNX conv/pool, reshape, flatten, concat and split rules make, called
  on each class directly (a stack of 64 conv/pool layers over two sizes, the flattened size, halves);
- *infer_shapes*: ``exprgraph.interop.onnx_shapes.infer_shapes`` on a five-node CNN and on a
  ~2,000-node conv + transformer graph built with ``onnx.helper`` (dynamic batch, H, W), with the
  inference's arithmetic swapped for each class in turn.

Every run starts cold (``exprgraph.dims.clear_caches()``); times are the thread's CPU time, best
of 5, interleaved. The last table counts the conversions between terms and polynomials (calls of
``to_poly`` and ``top_term``) in one cold run, counted where the pure modules call them.
Run: ``python -m bench.bench_dims_arith``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from exprgraph.dims import clear_caches, dim_name
from exprgraph.dims.arith import DimArith
from exprgraph.dims.arith_twin import TermRoad

from .common import best_of, fmt_seconds, print_table, ratio, skip


def replay(d: Any) -> list:
    """The arithmetic of a 64-layer conv/pool stack over H and W, its flattened size, halves and a concat."""
    out = []
    for dim in (dim_name("H"), dim_name("W")):
        for layer in range(64):
            k, s, p = (3, 2, 1) if layer % 4 == 0 else (3, 1, 1)
            window = d.add(d.mul(1, d.sub(k, 1)), 1)
            span = d.sub(d.add(dim, d.add(p, p)), window)
            dim = d.add(d.ceildiv(span, s) if layer % 8 == 4 else d.floordiv(span, s), 1)
            out.append(dim)
    flat = d.prod([dim_name("batch"), 64, out[63], out[127]])
    half = d.ceildiv(flat, 2)
    out += [flat, half, d.sub(flat, half), d.total([half, d.floordiv(flat, 2), out[10]]), d.max(out[5], out[6])]
    return out


def _swap(onnx_shapes: Any, cls: type) -> Callable[[], None]:
    """Make ``Inference`` compute with ``cls``; returns the undo."""
    original = onnx_shapes.Inference.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self.d = cls(getattr(self.d, "positive", True), getattr(self, "env", None))

    onnx_shapes.Inference.__init__ = init
    return lambda: setattr(onnx_shapes.Inference, "__init__", original)


def _with(onnx_shapes: Any, cls: type, model: Any) -> Callable[[], Any]:
    def run() -> Any:
        undo = _swap(onnx_shapes, cls)
        try:
            return onnx_shapes.infer_shapes(model)
        finally:
            undo()

    return run


def _counted(fn: Callable[[], Any]) -> tuple[int, int]:
    """Calls of to_poly and top_term made by ``fn`` (where the pure modules of dims call them)."""
    import exprgraph.dims.arith as arith
    import exprgraph.dims.canonicalize as canonical_form
    import exprgraph.dims.queries as queries

    counts = [0, 0]
    saved = [
        (m, n, getattr(m, n))
        for m in (arith, queries, canonical_form)
        for n in ("to_poly", "top_term")
        if hasattr(m, n)
    ]
    for module, name, real in saved:
        slot = 0 if name == "to_poly" else 1

        def counting(*args: Any, _real: Any = real, _slot: int = slot) -> Any:
            counts[_slot] += 1
            return _real(*args)

        setattr(module, name, counting)
    try:
        clear_caches()
        fn()
    finally:
        for module, name, real in saved:
            setattr(module, name, real)
    return counts[0], counts[1]


def main() -> None:
    """Print the tables."""
    contenders: dict[str, Callable[[], Any]] = {
        "replay: DimArith": lambda: replay(DimArith(True)),
        "replay: term road": lambda: replay(TermRoad(True)),
    }
    assert replay(DimArith(True)) == replay(TermRoad(True))
    models: list[tuple[str, Any]] = []
    try:
        import onnx

        from exprgraph.interop import onnx_shapes

        from .dims_arith_models import large_model, small_model

        models = [("five-node CNN", small_model(onnx)), ("conv + transformer", large_model(onnx))]
    except ImportError as exc:
        skip("infer_shapes rows", f"onnx or the ONNX inference is missing ({exc})")
    for label, model in models:
        ours, theirs = _with(onnx_shapes, DimArith, model), _with(onnx_shapes, TermRoad, model)
        assert ours() == theirs(), label
        contenders[f"{label}: DimArith"] = ours
        contenders[f"{label}: term road"] = theirs
    setup = dict.fromkeys(contenders, clear_caches)
    best = best_of(contenders, repeat=5, setup=setup, clock=time.thread_time)
    rows = []
    names = ["replay"] + [f"infer_shapes, {label} ({len(m.graph.node)} nodes)" for label, m in models]
    for name, key in zip(names, ["replay"] + [label for label, _ in models], strict=True):
        ours, theirs = best[f"{key}: DimArith"], best[f"{key}: term road"]
        conv_ours = _counted(contenders[f"{key}: DimArith"])
        conv_theirs = _counted(contenders[f"{key}: term road"])
        rows.append([name, fmt_seconds(ours), fmt_seconds(theirs), ratio(ours, theirs), conv_ours, conv_theirs])
    header = ["work", "DimArith", "term road", "ratio", "to_poly, top_term (ours)", "(term road)"]
    print_table("Dimension arithmetic: polynomials kept (DimArith) vs term -> polynomial -> term", header, rows)


if __name__ == "__main__":
    main()
