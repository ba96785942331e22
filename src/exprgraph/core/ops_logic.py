"""The standard table, comparisons, logic and selection: < <= > >= == !=, and/or/not, maximum,
minimum, where and identity.

Each op is declared next to its numpy evaluation and its gradient rule; importing this module
registers them. Imports the lower core modules and the op-building helpers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .declare import _call, _infix, _nary, _prefix
from .dtypes import BOOL, INT64
from .grad_tools import _O, _no_grad, _zero
from .inference import boolean, same, where_rule
from .llvm_ir import _ir_compare, _ir_each, _ir_math2
from .op import PREC_AND, PREC_CMP, PREC_NOT, PREC_OR
from .term import Term


def _grad_extremum(node: Any, g: Any) -> tuple:
    # d max(a, b, ...) flows to the first operand equal to the result (ties: the leftmost one)
    where, eq = _O.where, _O.eq
    zero = _zero(node)
    args = node.args
    out: list[Term | None] = []
    taken: Term | None = None  # "an earlier operand was the extremum"
    for i, a in enumerate(args):
        if i == len(args) - 1 and taken is not None:
            # the last operand takes g wherever no earlier one was the extremum
            out.append(None if a.op is _O.const else Term(where, (taken, zero, g)))
            break
        hit = Term(eq, (a, node))
        if a.op is _O.const:
            out.append(None)
        elif taken is None:
            out.append(Term(where, (hit, g, zero)))
        else:
            out.append(Term(where, (taken, zero, Term(where, (hit, g, zero)))))
        taken = hit if taken is None else Term(_O.logical_or, (taken, hit))
    return tuple(out)


def _grad_where(node: Any, g: Any) -> tuple:
    # where(c, a, b): the gradient goes to a where c holds, to b elsewhere (none to c)
    c, a, b = node.args
    where, zero, k = _O.where, _zero(node), _O.const
    return (None, None if a.op is k else Term(where, (c, g, zero)), None if b.op is k else Term(where, (c, zero, g)))


def _identity(x: Any) -> Any:
    # a copy: evaluation may reuse the result's buffer in place, and the operand's must survive
    return np.array(x, copy=True)


def _grad_identity(node: Any, g: Any) -> tuple:
    # d(identity(a)) = da
    return (g,)


_infix(
    "lt",
    "<",
    PREC_CMP,
    boolean,
    np.less,
    "({0} < {1})",
    assoc=None,
    relational=True,
    grad=_no_grad,
    llvm=_ir_compare("olt", "slt", "ult"),
    doc="a < b.",
)


_infix(
    "le",
    "<=",
    PREC_CMP,
    boolean,
    np.less_equal,
    "({0} <= {1})",
    assoc=None,
    relational=True,
    grad=_no_grad,
    llvm=_ir_compare("ole", "sle", "ule"),
    doc="a <= b.",
)


_infix(
    "gt",
    ">",
    PREC_CMP,
    boolean,
    np.greater,
    "({0} > {1})",
    assoc=None,
    relational=True,
    grad=_no_grad,
    llvm=_ir_compare("ogt", "sgt", "ugt"),
    doc="a > b.",
)


_infix(
    "ge",
    ">=",
    PREC_CMP,
    boolean,
    np.greater_equal,
    "({0} >= {1})",
    assoc=None,
    relational=True,
    grad=_no_grad,
    llvm=_ir_compare("oge", "sge", "uge"),
    doc="a >= b.",
)


_infix(
    "eq",
    "==",
    PREC_CMP,
    boolean,
    np.equal,
    "({0} == {1})",
    assoc=None,
    relational=True,
    commutative=True,
    grad=_no_grad,
    llvm=_ir_compare("oeq", "eq", "eq"),
    doc="a == b as a term (Python == on terms is identity).",
)


_infix(
    "ne",
    "!=",
    PREC_CMP,
    boolean,
    np.not_equal,
    "({0} != {1})",
    assoc=None,
    relational=True,
    commutative=True,
    grad=_no_grad,
    llvm=_ir_compare("une", "ne", "ne"),
    doc="a != b as a term.",
)


_infix(
    "logical_and",
    "and",
    PREC_AND,
    boolean,
    np.logical_and,
    "({0} && {1})",
    commutative=True,
    associative=True,
    idempotent=True,
    identity=True,
    absorbing=False,
    grad=_no_grad,
    llvm={BOOL: "and i1 {0}, {1}"},
    logical=True,
    doc="Logical and.",
)


_infix(
    "logical_or",
    "or",
    PREC_OR,
    boolean,
    np.logical_or,
    "({0} || {1})",
    commutative=True,
    associative=True,
    idempotent=True,
    identity=False,
    absorbing=True,
    grad=_no_grad,
    llvm={BOOL: "or i1 {0}, {1}"},
    logical=True,
    doc="Logical or.",
)


_prefix(
    "logical_not",
    "not",
    PREC_NOT,
    boolean,
    np.logical_not,
    "(!{0})",
    grad=_no_grad,
    llvm={BOOL: "xor i1 {0}, true"},
    logical=True,
    doc="Logical not.",
)


_call(
    "maximum",
    (2, None),
    same,
    "eg_max({0}, {1})",
    np.maximum,
    impl=_nary(np.maximum),
    grad=_grad_extremum,
    commutative=True,
    associative=True,
    idempotent=True,
    aliases=("max",),
    llvm={
        **_ir_math2("eg_max_d"),
        INT64: "call i64 @llvm.smax.i64(i64 {0}, i64 {1})",
        BOOL: "or i1 {0}, {1}",
    },
    mixed_operands=True,
    doc="Elementwise maximum (nan propagates).",
)


_call(
    "minimum",
    (2, None),
    same,
    "eg_min({0}, {1})",
    np.minimum,
    impl=_nary(np.minimum),
    grad=_grad_extremum,
    commutative=True,
    associative=True,
    idempotent=True,
    aliases=("min",),
    llvm={
        **_ir_math2("eg_min_d"),
        INT64: "call i64 @llvm.smin.i64(i64 {0}, i64 {1})",
        BOOL: "and i1 {0}, {1}",
    },
    mixed_operands=True,
    doc="Elementwise minimum (nan propagates).",
)


_call(
    "where",
    3,
    where_rule,
    "({0} ? {1} : {2})",
    impl=np.where,
    grad=_grad_where,
    llvm=_ir_each("select i1 {0}, {t} {1}, {t} {2}"),
    mixed_operands=True,
    doc="where(cond, a, b): a where cond holds, else b.",
)


_call(
    "identity",
    1,
    same,
    "({0})",
    impl=_identity,
    grad=_grad_identity,
    llvm=_ir_each("select i1 true, {t} {0}, {t} {0}"),
    doc="The operand itself (rewrites remove it).",
)
