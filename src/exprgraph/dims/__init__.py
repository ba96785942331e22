"""exprgraph.dims: symbolic dimension expressions on the core's int64 terms.

Parse (``2*batch//batch``, torch's ``FloorDiv(s0, 2)``, any ``f(x)``), simplify to a canonical
polynomial form that never changes the value under floor division (products of sums stay
factored), print, evaluate, rename, and do arithmetic on dimensions. ``^`` is max and ``&`` is
min, as in the reference libraries. Names may carry ranges, and the queries a compiler asks
(bounds, relations known for every value, equality, divisibility) are answered, never wrongly.

>>> from exprgraph.dims import simplify_expression
>>> simplify_expression("CeilToInt(seq, 8)*8 - (seq+7)//8*8")
0

The integer stack of docs/architecture.md: imports core, console and errors; never a higher layer.
Inside, the modules are cut by stage (read, normalise, divide, decide, print: :mod:`.stages`).
"""

from __future__ import annotations

from typing import Any

from ..core import shapes as _shapes
from ..errors import DimContradictionError, DimExpressionError
from .accel import compiled_modules  # imported first: picks the compiled or the pure fast path
from .arith import DimArith
from .ask import *  # noqa: F403  (the one-shot queries)
from .ask import __all__ as _ask_all
from .canonicalize import (
    simplify_dim,
    simplify_expression,
    simplify_term,
    simplify_two_expressions,
    to_poly,
)
from .context import clear_caches
from .dimops import *  # noqa: F403  (DimType and the dim_* arithmetic)
from .dimops import __all__ as _dimops_all
from .dimops import dim_equal
from .evaluate import evaluate_expression
from .explain import Explanation
from .parse import parse_expression, parse_expression_tokens, tokenize_expression
from .queries import DimEnv
from .relations import parse_relation
from .rename import rename_dynamic_dimensions, rename_dynamic_expression, rename_expression, tidy
from .terms import BROADCAST, CEIL_DIV, FN, dim_const, dim_fn, dim_name
from .unparse import unparse

__all__ = ["DimExpressionError", "CEIL_DIV", "BROADCAST", "FN", "dim_fn"]
__all__ += ["parse_expression", "parse_expression_tokens", "tokenize_expression", "unparse"]
__all__ += ["simplify_expression", "simplify_term", "simplify_dim", "simplify_two_expressions", "to_poly"]
__all__ += ["evaluate_expression", "tidy"]
__all__ += ["rename_expression", "rename_dynamic_expression", "rename_dynamic_dimensions"]
__all__ += _dimops_all
__all__ += ["dim_name", "dim_const", "clear_caches", "compiled_modules"]
__all__ += ["DimEnv", "DimArith", "Explanation", "DimContradictionError"]
__all__ += _ask_all
__all__ += ["parse_relation"]


def _parse_dim(text: str) -> Any:
    """A dimension written as text, simplified (what a shape entry ``"seq+1"`` becomes)."""
    return simplify_dim(parse_expression(text))


# Importing this package gives the core shape rules (exprgraph.core.shapes) the dimension algebra:
# broadcasting then simplifies the max(a, b) it builds, and
# contraction checks compare dimensions by their difference.
_shapes.register_dim_algebra(simplify_dim, dim_equal, _parse_dim)
