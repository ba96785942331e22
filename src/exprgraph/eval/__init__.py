"""exprgraph.eval: numpy evaluation of terms (vectorised, shared nodes once, IEEE semantics)."""

from __future__ import annotations

from .evaluate import evaluate

__all__ = ["evaluate"]
