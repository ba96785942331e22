"""exprgraph.eval: numpy evaluation of terms (vectorised, shared nodes once, IEEE semantics).

Layer 2 of docs/architecture.md: imports core and errors; never a higher layer.
"""

from __future__ import annotations

from ..errors import MissingValueError, UnusedInputError, UnusedInputWarning
from .evaluate import evaluate, evaluate_nodes
from .inputs import OnUnusedInput

__all__ = ["evaluate", "evaluate_nodes", "OnUnusedInput", "MissingValueError", "UnusedInputError", "UnusedInputWarning"]
