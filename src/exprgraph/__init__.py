"""exprgraph: symbolic expression graphs on interned, immutable terms.

The everyday functions are here: ``parse``, ``evaluate``, ``simplify``, ``grad``, ``compile``...
``exprgraph.simplify`` and ``exprgraph.compile`` are the functions; their subpackages keep their
module paths for ``from exprgraph.simplify import rules`` (``import exprgraph.simplify as m``
gives the function: use ``importlib.import_module`` for the module object).

``from exprgraph import *`` never shadows a Python builtin: the ops named like one come with a
trailing underscore (``sum_``, ``abs_``, ``pow_``), and ``compile`` is left out; ``exprgraph.sum``,
``exprgraph.abs``, ``exprgraph.pow`` and ``exprgraph.compile`` keep their plain names.
"""

from __future__ import annotations

from . import core, dims, egraph, errors, graph, interop, match, rules
from .compile import compile as compile  # noqa: A004 - the function shadows its subpackage on purpose (see above)
from .core import *  # noqa: F403
from .core.builders import *  # noqa: F403 - again: type checkers pass on only core's literal names through a star
from .core.builders import abs as abs  # noqa: A004 - an attribute only: __all__ has abs_
from .core.builders import pow as pow  # noqa: A004 - an attribute only: __all__ has pow_
from .core.builders import sum as sum  # noqa: A004 - an attribute only: __all__ has sum_
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
from .progress import Progress
from .rules import RewriteLimitError, RuleSet, RuleSyntaxError, rewrite, rule
from .simplify import SimplifyInfo, apart, cancel, collect, expand, factor, simplify, together

__version__ = "0.1.0"

# a literal list and `+=` of core's: the forms type checkers read (tests/test_typing.py checks them)
__all__ = [
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
    "simplify",
    "SimplifyInfo",
    "expand",
    "collect",
    "factor",
    "cancel",
    "together",
    "apart",
    "grad",
    "jacobian",
    "hessian",
    "numeric_gradient",
    "check_grad",
    "Progress",
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
__all__ += core.__all__
