"""exprgraph: symbolic expression graphs on interned, immutable terms."""

from __future__ import annotations

from . import dims, egraph, errors, graph, interop, match, rules
from .core import *  # noqa: F403
from .core import __all__ as _core_all
from .diff import check_grad, grad, hessian, jacobian, numeric_gradient
from .errors import (
    CompileError,
    CompilerNotFoundError,
    DifferentiationError,
    DimExpressionError,
    DTypeError,
    EvaluationError,
    ExprgraphError,
    ParseError,
    ShapeError,
    TermTooLargeError,
)
from .eval import evaluate
from .match import MatchError, V, Var
from .rules import RewriteLimitError, RuleSet, RuleSyntaxError, rewrite, rule

__version__ = "0.1.0"

__all__ = [
    *_core_all,
    "errors",
    "dims",
    "match",
    "rules",
    "graph",
    "egraph",
    "interop",
    "V",
    "Var",
    "rule",
    "RuleSet",
    "rewrite",
    "MatchError",
    "RewriteLimitError",
    "RuleSyntaxError",
    "evaluate",
    "grad",
    "jacobian",
    "hessian",
    "numeric_gradient",
    "check_grad",
    "ExprgraphError",
    "ParseError",
    "ShapeError",
    "DTypeError",
    "EvaluationError",
    "TermTooLargeError",
    "DimExpressionError",
    "DifferentiationError",
    "CompileError",
    "CompilerNotFoundError",
]
