"""exprgraph.core: interned terms, the op table, dtypes and shapes, traversal, printing, parsing.

Layer 1 of docs/architecture.md: imports errors only; never a higher layer.
"""

# ruff: noqa: F405 - __all__ names what the star imports bring, as a literal list that type checkers read
from __future__ import annotations

from . import builders
from . import stdops as _stdops  # noqa: F401 - registers the standard op table
from .builders import *  # noqa: F403
from .builders import abs as abs  # noqa: A004 - an attribute only: __all__ has abs_
from .builders import pow as pow  # noqa: A004 - an attribute only: __all__ has pow_
from .builders import sum as sum  # noqa: A004 - an attribute only: __all__ has sum_
from .dtypes import BOOL, DTYPES, FLOAT32, FLOAT64, INT64, as_dtype, promote
from .latex import latex
from .leaves import *  # noqa: F403
from .op import Op, as_term, get_op, ops, register_op
from .ops_einsum import einsum
from .ops_index import stack
from .ops_range import arange
from .ops_sort import take_along, topk, topk_indices, topk_values
from .pack import TermPack
from .parsing import parse, tokenize
from .printing import dformat, dprint, to_dot, to_infix, to_repr
from .shapes import broadcast_shapes
from .term import Term, intern_table_size
from .termbase import intern_table_capacity
from .traversal import Expression, postorder, preorder, substitute, toposort, tree_children, tree_map

# literal lists, and `+=` of a module's list: the forms type checkers read (tests/test_typing.py)
__all__ = [
    "Term",
    "TermPack",
    "stack",
    "topk",
    "topk_values",
    "topk_indices",
    "take_along",
    "einsum",
    "arange",
    "Op",
    "register_op",
    "get_op",
    "ops",
    "as_term",
    "Symbol",
    "symbols",
    "const",
    "rational",
    "exact_constant",
    "ConstArray",
    "as_dim",
    "as_shape",
    "BOOL",
    "INT64",
    "FLOAT64",
    "FLOAT32",
    "DTYPES",
    "as_dtype",
    "promote",
    "broadcast_shapes",
    "postorder",
    "preorder",
    "toposort",
    "substitute",
    "Expression",
    "tree_children",
    "tree_map",
    "parse",
    "tokenize",
    "to_infix",
    "to_repr",
    "dprint",
    "dformat",
    "to_dot",
    "latex",
    "intern_table_size",
    "intern_table_capacity",
]
__all__ += builders.__all__
