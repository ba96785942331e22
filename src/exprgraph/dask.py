"""exprgraph.dask: lazy blockwise evaluation of terms on dask arrays (see docs/interop.md)."""

from __future__ import annotations

from .interop.dask import evaluate, evaluate_block

__all__ = ["evaluate", "evaluate_block"]
