"""Index arithmetic: affine forms over loop variables and canonical index terms, on exprgraph.dims.

An index expression is a core int64 term built from loop variables (int64 symbols), integer
constants, ``+ - *`` (by constants), and ``//`` / ``%`` by positive constants. The integer algebra
is exprgraph.dims's: index values are computed with :class:`~exprgraph.dims.DimArith`
(:mod:`.index_arith`) and spelled the kernel's way at the edge (:mod:`.spelling`).
:func:`linearize` reads a term as dims does into an affine form ``sum(c_k * atom_k) + c0``
(:class:`~.lin.Lin`, whose Fraction coefficients the index solver uses) whose atoms are loop
variables and floor-division / modulo terms; :func:`to_term` writes a form back as a canonical
term (so equal forms give the very same interned term), its atoms in loop order;
:func:`reduce_atoms` is a term's value under loop ranges and :func:`bounds` (from
:mod:`.index_values`) the range dims proves. All walks are iterative (the core's postorder).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache

from ..core import INT64, Symbol, Term, postorder
from ..core.op import get_op
from ..dims.ranges import ceil_div, floor_div
from .index_arith import ANY, IndexValue, arith_for, canonical_term
from .index_values import NonAffineError, bounds, evaluate_index, index_constant
from .lin import Lin

__all__ = [
    "Lin",
    "NonAffineError",
    "linearize",
    "to_term",
    "bounds",
    "index_var",
    "is_var",
    "variables",
    "floordiv_int",
    "ceildiv_int",
    "evaluate_index",
    "reduce_atoms",
    "substitute_var",
]

_ADD, _SUB, _MUL, _NEG = get_op("add"), get_op("sub"), get_op("mul"), get_op("neg")
_FLOORDIV, _MOD = get_op("floordiv"), get_op("mod")
_CONST, _SYMBOL = get_op("const"), get_op("symbol")


def index_var(name: str) -> Term:
    """The loop variable ``name`` (an int64 scalar symbol)."""
    return Symbol(name, INT64)


def is_var(term: Term) -> bool:
    """True for a loop variable (an int64 symbol)."""
    return term.op is _SYMBOL


def variables(term: Term) -> frozenset[Term]:
    """The loop variables an index term uses."""
    return term.free_symbols


#: floor and ceiling division of integers: the integer algebra's own (see exprgraph.dims.ranges)
floordiv_int = floor_div
ceildiv_int = ceil_div


def _check_fragment(term: Term) -> None:
    """NonAffineError unless ``term`` is in the index fragment."""
    problem = _fragment_problem(term)
    if problem is not None:
        raise NonAffineError(problem)


@lru_cache(maxsize=1 << 16)
def _fragment_problem(term: Term) -> str | None:
    """Why ``term`` is not an index term, or None when it is (iterative, cached)."""
    for node in postorder(term):
        op = node.op
        if op is _SYMBOL or op is _ADD or op is _SUB or op is _NEG:
            continue
        if op is _CONST:
            if node.attr.__class__ not in (int, bool):
                return f"index constant {node.attr!r} is not an integer"
        elif op is _MUL:
            varying = [a for a in node.args if a.free_symbols]
            if len(varying) > 1 and sum(1 for a in varying if index_constant(a) is None) > 1:
                return "an index may multiply a variable only by a constant"
        elif op is _FLOORDIV or op is _MOD:
            div = index_constant(node.args[1])
            if div is None:
                return "the divisor of an index must be a constant"
            if div <= 0:
                return "an index may divide only by a positive constant"
        else:
            return f"an index cannot use {op.name}"
    return None


@lru_cache(maxsize=1 << 16)
def linearize(term: Term) -> Lin:
    """The affine form of an index term, read by dims (iterative, cached: treat the result as immutable).

    Raises NonAffineError outside the fragment.
    """
    _check_fragment(term)
    return ANY.lin(term)


def to_term(lin: Lin, order: Sequence[Term] = ()) -> Term:
    """The canonical term of an integer affine form; atoms follow ``order``, then their text."""
    return canonical_term(lin, order)


def substitute_var(lin: Lin, var: Term, form: Lin) -> Lin:
    """``lin`` with the variable ``var`` replaced by the integer form ``form``, inside division atoms too.

    Computed with dims's values: the form's value replaces ``var`` in each atom that uses it.
    """
    out = Lin({}, lin.const)
    value: IndexValue | None = None
    for a, c in lin.coeffs.items():
        if a is var:
            out = out + form.scale(c)
        elif var in a.free_symbols:
            if value is None:
                value = ANY.of_lin(form)
            out = out + ANY.lin(ANY.value(a, {var: value})).scale(c)
        else:
            out = out + Lin({a: c})
    return out


def reduce_atoms(term: Term, ranges: Mapping[Term, tuple[int, int]]) -> Term:
    """``term`` with floor divisions and modulos that stay in one period on ``ranges`` removed, canonical.

    If ``k*c <= u < (k+1)*c`` everywhere then ``u // c = k`` and ``u % c = u - k*c``: dims's value
    of the term under the ranges drops those, and its spelling is the kernel's (atoms in the
    order of ``ranges``; see :meth:`.index_arith.IndexArith.term`).
    """
    _check_fragment(term)
    box = arith_for(ranges)
    return box.term(box.value(term), tuple(ranges))
