"""The standard op table: every built-in op, declared once with all it means to each layer.

The ops live in one module per family (:mod:`.ops_arithmetic`, :mod:`.ops_elementary`,
:mod:`.ops_logic`, :mod:`.ops_rounding`, :mod:`.ops_tensor`, :mod:`.ops_trigonometric`); importing
this module registers them all, in that order (ops are ordered by name wherever order matters).
The names other layers import from here (dtype rules, gradient helpers, the bool casts of
evaluation) are re-exported.
"""

from __future__ import annotations

from . import ops_arithmetic as _ops_arithmetic  # noqa: F401 - registers the family
from . import ops_einsum as _ops_einsum  # noqa: F401 - registers the family
from . import ops_elementary as _ops_elementary  # noqa: F401 - registers the family
from . import ops_index as _ops_index  # noqa: F401 - registers the family
from . import ops_logic as _ops_logic  # noqa: F401 - registers the family
from . import ops_range as _ops_range  # noqa: F401 - registers the family
from . import ops_rounding as _ops_rounding  # noqa: F401 - registers the family
from . import ops_sort as _ops_sort  # noqa: F401 - registers the family
from . import ops_tensor as _ops_tensor  # noqa: F401 - registers the family
from . import ops_trigonometric as _ops_trigonometric  # noqa: F401 - registers the family
from .dtypes import BOOL, FLOAT32, INT64
from .grad_tools import broadcast_like as broadcast_like
from .grad_tools import insert_axes as insert_axes
from .grad_tools import negate as negate
from .grad_tools import no_grad as no_grad
from .grad_tools import product as product
from .grad_tools import sum_to as sum_to
from .inference import _ARITH2
from .inference import arith as arith
from .inference import boolean as boolean
from .inference import real as real
from .inference import same as same
from .inference import transpose_rule as transpose_rule
from .inference import where_rule as where_rule
from .op import ops
from .ops_tensor import _grad_transpose as _grad_transpose
from .term import Term

__all__ = ["ARITHMETIC", "FLOAT_FUNCS"]


#: names of the standard ops whose bool operands count as integers (``Op.counts_bools``; read the
#: field, this set is kept for the modules that still read it)
ARITHMETIC = frozenset(op.name for op in ops() if op.counts_bools)
#: names of the standard ops with a float result whatever their operands (``Op.float_result``)
FLOAT_FUNCS = frozenset(op.name for op in ops() if op.float_result)


def bool_casts(node: Term) -> tuple[str | None, ...]:
    """The dtype each bool operand of ``node`` is evaluated as (None for other operands).

    Arithmetic counts a bool as an int64, or as a float32 where it meets a float32 (numpy's
    ``float32 + bool`` is a float32); a variadic op is a left fold, so each bool is counted as the
    step that meets it computes (``add(x32, b, i)`` adds ``b`` to ``x32`` in float32). Float
    functions read a bool as their result's float dtype (numpy would compute them in float16).
    """
    args = node.args
    op = node.op
    if op.float_result:
        return tuple(node.dtype if a.dtype == BOOL else None for a in args)
    if not op.counts_bools:
        return (None,) * len(args)
    if len(args) <= 2 or node.dtype == FLOAT32:  # a float32 result: no int64 operand, every step is float32
        cast = FLOAT32 if node.dtype == FLOAT32 else INT64
        return tuple(cast if a.dtype == BOOL else None for a in args)
    out: list[str | None] = [None] * len(args)
    have = args[0].dtype
    for k in range(1, len(args)):
        step = _ARITH2[have, args[k].dtype]
        cast = FLOAT32 if step == FLOAT32 else INT64
        if args[k].dtype == BOOL:
            out[k] = cast
        if k == 1 and have == BOOL:
            out[0] = cast
        have = step
    return tuple(out)
