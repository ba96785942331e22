"""Index arithmetic computed with dims's values (:class:`~exprgraph.dims.DimArith`), terms made at the edge.

The gradient solver, the rewriting of reads in solved variables and the canonical forms of index
terms compute index values one operation after another: a solved variable ``(x - 7)//8``, a read
``p + r`` with ``p`` replaced by ``h - r``, a form ``8*(h//8) + h%8``. :class:`IndexArith` does each operation with
:class:`~exprgraph.dims.DimArith` in the dims environment of a loop box (:func:`~.index_values.dims_env`,
variables outside the box any integer): the operands' polynomials are read from DimArith's table,
the result is dims's canonical value (an int, or a canonical int64 term whose polynomial DimArith
keeps), and no term is built and read back per operation. Loop ranges make dims drop what is
constant on the box (``h // 8`` for ``h`` in ``[0, 8)``).

A value becomes a kernel's term once, at the edge: :meth:`IndexArith.term` spells it the tensor
way (:mod:`.spelling`) with its atoms in loop order; :meth:`IndexArith.lin` gives the affine form
the solver eliminates with. :meth:`IndexArith.bounds` is the range dims proves for a value.

>>> from exprgraph.tensor.affine import index_var
>>> h, r = index_var("h"), index_var("r")
>>> box = arith_for({h: (0, 7), r: (0, 3)})
>>> print(box.term(box.value(index_var("p") + r, {index_var("p"): box.sub(h, r)}), (h, r)))
h
>>> box.bounds(box.sub(h, r)), str(box.term(box.floordiv(h, 8), (h,))), str(ANY.floordiv(ANY.add(h, 2), 2))
((-2, 6), '0', 'h//2 + 1')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final

from ..core import Term, const, postorder
from ..core.op import Op, get_op
from ..dims import DimArith
from .index_values import ANY_INTEGER, NonAffineError, dims_env
from .lin import Lin
from .spelling import as_term, has_division, lin_of_poly, or_term, print_lin, value_of_lin

__all__ = ["IndexArith", "IndexValue", "arith_for", "as_term", "canonical_term", "ANY"]

_ADD, _SUB, _MUL, _NEG = get_op("add"), get_op("sub"), get_op("mul"), get_op("neg")
_FLOORDIV, _MOD = get_op("floordiv"), get_op("mod")
_CONST, _SYMBOL = get_op("const"), get_op("symbol")

#: an index value: an int, or an int64 term (dims's canonical one when DimArith computed it)
IndexValue = int | Term

#: rounds of reading a spelled term back under the loop ranges (see IndexArith.term)
SPELLING_ROUNDS: Final = 8


#: op -> its DimArith operation on the operands' values
_RULES: Final[dict[Op, Callable[[DimArith, list[IndexValue]], int | Term | None]]] = {
    _ADD: lambda d, xs: d.total(xs),
    _MUL: lambda d, xs: d.prod(xs),
    _SUB: lambda d, xs: d.sub(xs[0], xs[1]),
    _NEG: lambda d, xs: d.neg(xs[0]),
    _FLOORDIV: lambda d, xs: d.floordiv(xs[0], xs[1]),
    _MOD: lambda d, xs: d.mod(xs[0], xs[1]),
}


class IndexArith:
    """Index arithmetic under the loop ranges ``ranges`` (``v -> [lo, hi)``), on dims's values."""

    __slots__ = ("env", "dims", "ranged")

    def __init__(self, ranges: Mapping[Term, tuple[int, int]] | None = None) -> None:
        self.ranged = bool(ranges)
        self.env = dims_env(ranges) if ranges else ANY_INTEGER
        self.dims = DimArith(env=self.env)

    # -- operations (each dims's, on polynomials) ----------------------------------------------------

    def add(self, a: IndexValue, b: IndexValue) -> IndexValue:
        """``a + b``."""
        return or_term(self.dims.add(a, b), _ADD, (a, b))

    def sub(self, a: IndexValue, b: IndexValue) -> IndexValue:
        """``a - b``."""
        return or_term(self.dims.sub(a, b), _SUB, (a, b))

    def floordiv(self, a: IndexValue, c: int) -> IndexValue:
        """``a // c`` (floor division by a positive constant)."""
        return or_term(self.dims.floordiv(a, c), _FLOORDIV, (a, c))

    def value(self, term: Term, subst: Mapping[Term, IndexValue] | None = None) -> IndexValue:
        """The value of the index term ``term`` with each variable ``v`` of ``subst`` replaced by ``subst[v]``.

        Walks ``term`` once (iteratively), each node one DimArith operation on its operands' values;
        without ``subst``, dims reads the term at once (a value it handed out is its own value).
        """
        d = self.dims
        if not subst:
            value = d.simplify(term)
            return term if value is None else value  # (None: too large for DimArith, read whole at the edge)
        vals: dict[Term, IndexValue] = {}
        for node in postorder(term):
            op = node.op
            args = [vals[a] for a in node.args]
            if op is _SYMBOL:
                vals[node] = subst.get(node, node)
                continue
            if op is _CONST:
                vals[node] = int(node.attr)
                continue
            rule = _RULES.get(op)
            if rule is None:
                raise NonAffineError(f"an index cannot use {op.name}")
            vals[node] = or_term(rule(d, args), op, args)
        return vals[term]

    def of_lin(self, lin: Lin) -> IndexValue:
        """The value of an integer affine form (its atoms: variables and spelled quotients / remainders)."""
        return value_of_lin(self.dims, lin)

    # -- the edge: values as affine forms, bounds and terms ----------------------------------------------

    def lin(self, value: IndexValue) -> Lin:
        """The affine form of a value, atoms spelled the tensor way (what the solver eliminates with)."""
        if value.__class__ is int:
            return Lin({}, value)
        return lin_of_poly(self.env.poly(value))

    def bounds(self, value: IndexValue) -> tuple[int, int] | None:
        """Inclusive ``(min, max)`` dims proves for a value on the loop box, None when unbounded."""
        if value.__class__ is int:
            return (value, value)
        lo, hi = self.env.bound(value)
        if lo.__class__ is not int or hi.__class__ is not int:
            return None
        return (int(lo), int(hi))

    def term(self, value: IndexValue, order: Sequence[Term] = ()) -> Term:
        """The kernel's term of a value: spelled the tensor way, atoms in ``order`` (the edge).

        Under loop ranges the spelled term is read back by dims until it stays the same (a few
        rounds): a remainder spelled with coefficients nearest 0 may be one dims sees constant.
        """
        if value.__class__ is int:
            return const(value)
        cur: Term = value  # type: ignore[assignment]
        for _ in range(SPELLING_ROUNDS):
            nxt = canonical_term(lin_of_poly(self.env.poly(cur)), order)
            if nxt is cur or not self.ranged:
                return nxt
            if not has_division(ANY.lin(nxt)):
                return nxt
            cur = nxt
        return cur


def canonical_term(lin: Lin, order: Sequence[Term] = ()) -> Term:
    """The canonical term of an integer affine form; atoms follow ``order``, then their text.

    A sum of variables is its own canonical form; one with quotients or remainders is computed by
    dims (``8*(h//8) + h%8`` is ``h``) and spelled again.
    """
    if not has_division(lin):
        return print_lin(lin, order)
    return print_lin(ANY.lin(ANY.of_lin(lin)), order)


#: index arithmetic where every loop variable is any integer (solved indices can run below 0)
ANY: Final = IndexArith()

#: the index arithmetic of a loop box (keyed by its ranges' items)
_boxes: dict[tuple, IndexArith] = {}


def arith_for(ranges: Mapping[Term, tuple[int, int]]) -> IndexArith:
    """The index arithmetic under ``ranges`` (shared per box)."""
    if not ranges:
        return ANY
    key = tuple(ranges.items())
    box = _boxes.get(key)
    if box is None:
        if len(_boxes) > 256:
            _boxes.clear()
        box = _boxes[key] = IndexArith(ranges)
    return box
