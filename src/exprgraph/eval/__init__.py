"""exprgraph.eval: numpy evaluation of terms (vectorised, shared nodes once, IEEE semantics).

Layer 2 of docs/architecture.md: imports core and errors; never a higher layer.
"""

from __future__ import annotations

from .evaluate import evaluate

__all__ = ["evaluate"]
