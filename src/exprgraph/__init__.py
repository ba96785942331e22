"""exprgraph: symbolic expression graphs on interned, immutable terms."""

from __future__ import annotations

from . import errors
from .core import *  # noqa: F403
from .core import __all__ as _core_all
from .errors import (
    DTypeError,
    EvaluationError,
    ExprgraphError,
    ParseError,
    ShapeError,
    TermTooLargeError,
)
from .eval import evaluate

__version__ = "0.1.0"

__all__ = [
    *_core_all,
    "errors",
    "evaluate",
    "ExprgraphError",
    "ParseError",
    "ShapeError",
    "DTypeError",
    "EvaluationError",
    "TermTooLargeError",
]
