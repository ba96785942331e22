"""Arithmetic on dimensions computed on dims' own polynomials: ints, int64 terms or None (unknown) at the edges.

Shape inference (ONNX's, a tensor kernel's) does one dimension operation after another, each on
the results of the ones before. :class:`DimArith` keeps, per canonical term it hands out, the
polynomial the term was built from (:mod:`.normal`), so an operation reads its operands'
polynomials from that table, computes on them with the rules of the simplifier (:mod:`.combine`,
:mod:`.factored`, :mod:`.division`, :mod:`.maxmin`) and builds the canonical term of the result
once: no term is built for the operation and none is read back into a polynomial. The answers
are those of ``simplify_dim(a + b)`` (the same canonical terms). Results are memoised per
operation and operands; an int never leaves int64 (:class:`~exprgraph.errors.DimOverflowError`),
and a term past :data:`MAX_TERM_SIZE` nodes, or too costly to simplify, becomes None (unknown).

>>> from exprgraph.dims import dim_name, unparse
>>> from exprgraph.dims.arith import DimArith
>>> d, h = DimArith(positive=True), dim_name("h")
>>> size = d.add(d.floordiv(d.sub(d.add(h, 2), 3), 2), 1)  # a conv: kernel 3, stride 2, pads 1
>>> unparse(size), unparse(d.sub(d.mul(size, 2), h)), d.max(h, 1), d.floordiv(d.mul(2, h), h), d.add(None, 1)
('(1+h)//2', '-((1+h)%2)+1', Symbol('h', 'int64'), 2, None)
>>> d.broadcast([(h, 1, None), (1, 8, 8)])
(Symbol('h', 'int64'), 8, 8)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Final

from ..core.shapes import broadcast_shapes
from ..core.term import Term
from ..errors import DimOverflowError, ShapeError, TermTooLargeError
from .combine import combine_terms
from .context import Context, context
from .division import ceil_poly, floordiv_poly, mod_poly
from .factored import product_poly
from .maxmin import maxmin_poly
from .monomials import ONE
from .normal import top_term
from .regions import to_poly
from .ring import Budget, Poly, p_add, p_atom, p_const, p_is_const, p_scale, p_sub
from .terms import CONST, INT64_MAX, INT64_MIN, dim_name, is_dim_term, memo_table

__all__ = ["DimArith", "Dim", "Shape", "MAX_TERM_SIZE", "int64"]

#: a dimension: an int, an int64 term, or None when unknown
Dim = int | Term | None
#: a shape: a tuple of dimensions, or None when unknown
Shape = tuple[Dim, ...] | None

#: a dimension term with more distinct nodes than this is not followed: it becomes unknown (None)
MAX_TERM_SIZE: Final = 512
#: results remembered per state before its table is emptied
MEMO_LIMIT: Final = 1 << 16


def int64(x: int, what: str = "a dimension value") -> int:
    """``x`` when it fits in int64, else DimOverflowError (shapes are computed in int64)."""
    if not INT64_MIN <= x <= INT64_MAX:
        raise DimOverflowError(f"{what} {x} does not fit in int64")
    return x


# -- the operations on polynomials (each as the simplifier's walk does it for the op's term) ------------


def _add(p: Poly, q: Poly, ctx: Context) -> Poly:
    return combine_terms(p_add(p, q), ctx)  # a sum region: the rules across its terms


def _sub(p: Poly, q: Poly, ctx: Context) -> Poly:
    return combine_terms(p_sub(p, q), ctx)


def _mul(p: Poly, q: Poly, ctx: Context) -> Poly:
    if p_is_const(q):
        p, q = q, p
    if p_is_const(p):
        return combine_terms(p_scale(q, p.get(ONE, 0)), ctx)  # k*x is a sum region (a scaling)
    return product_poly([(q, 1), (p, 1)], ctx)  # a product region: sums stay factors


def _floordiv(p: Poly, q: Poly, ctx: Context) -> Poly:
    return ctx.unwrap(floordiv_poly(p, q, ctx))


def _mod(p: Poly, q: Poly, ctx: Context) -> Poly:
    return ctx.unwrap(mod_poly(p, q, ctx))


def _ceildiv(p: Poly, q: Poly, ctx: Context) -> Poly:
    return ctx.unwrap(ceil_poly(p, q, ctx))


def _max(p: Poly, q: Poly, ctx: Context) -> Poly:
    return ctx.unwrap(maxmin_poly([p, q], True, ctx))


def _min(p: Poly, q: Poly, ctx: Context) -> Poly:
    return ctx.unwrap(maxmin_poly([p, q], False, ctx))


_PolyOp = Callable[[Poly, Poly, Context], Poly]

#: operation name -> (its polynomial rule, its rule on two ints)
_OPS: Final[dict[str, tuple[_PolyOp, Callable[[int, int], int]]]] = {
    "add": (_add, int.__add__),
    "sub": (_sub, int.__sub__),
    "mul": (_mul, int.__mul__),
    "floordiv": (_floordiv, int.__floordiv__),
    "mod": (_mod, int.__mod__),
    "ceildiv": (_ceildiv, lambda x, y: -(-x // y)),
    "max": (_max, max),
    "min": (_min, min),
}


# -- the state of one simplifier context: polynomials of the terms handed out, memoised results --------

#: a name no dimension uses: its polynomial sits in each context's table while that table holds what
#: the states below rely on (the atoms' ranges and arguments), and is gone once the context is cleared
_PROBE: Final[Term] = dim_name("_exprgraph_dim_arith_")


class _State:
    """What DimArith keeps for one context: term -> polynomial, and (op, a, b) -> result."""

    __slots__ = ("ctx", "polys", "memo", "probe")

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.polys: dict[Term, Poly] = {}
        self.memo: dict[tuple[str, Any, Any], Dim] = {}  # (op, a, b), (fold op, first, rest)
        self.probe = p_atom(_PROBE)
        ctx.vals[_PROBE] = self.probe  # what to_poly gives for a name

    def remember(self, key: tuple[str, Any, Any], out: Dim) -> Dim:
        """``out``, remembered as the result under ``key``."""
        if len(self.memo) > MEMO_LIMIT:
            self.memo.clear()
        self.memo[key] = out
        return out

    def valid(self) -> bool:
        """Whether the context still holds what this state was built with (it was not cleared)."""
        return self.ctx.vals.get(_PROBE) is self.probe


#: id(context) -> its state (the context is kept in the state, so the id is not reused meanwhile)
_states: Final[dict[int, _State]] = memo_table()


def _state_of(ctx: Context) -> _State:
    """The state of ``ctx`` (a new one when it has none, or when the context was cleared since)."""
    st = _states.get(id(ctx))
    if st is None or st.ctx is not ctx or not st.valid():
        if len(_states) > 64:
            _states.clear()
        st = _states[id(ctx)] = _State(ctx)
    return st


class DimArith:
    """Dimension arithmetic (int64 ints, int64 terms, None for unknown) on dims' polynomials.

    Names are ``>= 0``, or ``>= 1`` when ``positive``; ``env`` (a :class:`~exprgraph.dims.DimEnv`,
    or anything with its ``context``) gives names ranges of their own instead. An operation with an
    unknown operand is unknown; two ints give their int64 result (DimOverflowError past int64,
    ZeroDivisionError for a division by 0); otherwise the canonical result, an int when constant.
    """

    __slots__ = ("positive", "env", "_st")

    def __init__(self, positive: bool = False, env: Any = None) -> None:
        self.positive = positive
        self.env = env
        self._st: _State | None = None

    def context(self) -> Context:
        """The simplifier's state the arithmetic works in."""
        return context(self.positive) if self.env is None else self.env.context

    def _state(self) -> _State:
        """The state of the current context (an env's context changes with its ranges)."""
        ctx = context(self.positive) if self.env is None else self.env.context
        st = self._st
        if st is None or st.ctx is not ctx or not st.valid():
            st = self._st = _state_of(ctx)
        return st

    # -- the edges: a dimension to its polynomial, a polynomial to its dimension ----------------------

    def _poly(self, d: Any, st: _State) -> Poly:
        """The polynomial of a dimension (an int64 int or an int64 scalar term; ShapeError otherwise)."""
        if d.__class__ is int:
            return p_const(int64(d))
        p = st.polys.get(d)
        if p is None:
            if not is_dim_term(d):
                raise ShapeError(f"{d!r} is not a dimension (an int or an int64 term)")
            p = to_poly(d, st.ctx)
        return p

    def _dim(self, p: Poly, st: _State) -> Dim:
        """The dimension of a polynomial: an int64 int, its canonical term (remembered), or None if too large."""
        p = st.ctx.unwrap(p)
        if p_is_const(p):
            return int64(p.get(ONE, 0))
        try:
            term = top_term(p)
        except OverflowError as exc:  # a coefficient outside int64
            raise DimOverflowError(str(exc)) from exc
        if _size_bound(p) > MAX_TERM_SIZE and term.size > MAX_TERM_SIZE:
            return None
        if term.op is not CONST:
            if len(st.polys) > MEMO_LIMIT:
                st.polys.clear()
            st.polys[term] = p
        return term

    def simplify(self, d: Any) -> Dim:
        """``d`` simplified: an int checked to fit in int64, a term in canonical form (None when too large)."""
        if d is None:
            return None
        if d.__class__ is int:
            return int64(d)
        if d.__class__ is not Term:
            raise ShapeError(f"{d!r} is not a dimension (an int or an int64 term)")
        st = self._state()
        if d in st.polys:
            return d  # a canonical term handed out here
        key = ("simplify", d, None)
        memo = st.memo
        if key in memo:
            return memo[key]
        return self._compute(key, lambda s: self._poly(d, s))

    def _compute(self, key: tuple[str, Any, Any], fn: Callable[[_State], Poly]) -> Dim:
        """The dimension of ``fn(state)``'s polynomial, remembered under ``key``; None when it costs too much."""
        self.context().maybe_trim()  # (before the operands are read: trimming clears what they rely on)
        st = self._state()
        st.ctx.budget = Budget()
        try:
            out = self._dim(fn(st), st)
        except TermTooLargeError:
            out = None  # too complex to follow: unknown
        except OverflowError as exc:  # a constant folded past int64
            raise DimOverflowError(str(exc)) from exc
        return st.remember(key, out)

    # -- operations ------------------------------------------------------------------------------------

    def _binary(self, name: str, a: Dim, b: Dim) -> Dim:
        if a is None or b is None:
            return None
        rule, ints = _OPS[name]
        if a.__class__ is int and b.__class__ is int:
            return int64(ints(a, b))  # both operands are int64, so the exact result is small
        st = self._state()
        key = (name, a, b)
        memo = st.memo
        if key in memo:
            return memo[key]
        return self._compute(key, lambda s: rule(self._poly(a, s), self._poly(b, s), s.ctx))

    def add(self, a: Dim, b: Dim) -> Dim:
        """``a + b``."""
        return self._binary("add", a, b)

    def sub(self, a: Dim, b: Dim) -> Dim:
        """``a - b``."""
        return self._binary("sub", a, b)

    def mul(self, a: Dim, b: Dim) -> Dim:
        """``a * b``."""
        return self._binary("mul", a, b)

    def floordiv(self, a: Dim, b: Dim) -> Dim:
        """``a // b`` (floor division)."""
        return self._binary("floordiv", a, b)

    def mod(self, a: Dim, b: Dim) -> Dim:
        """``a % b`` (the sign of the divisor, as in Python)."""
        return self._binary("mod", a, b)

    def ceildiv(self, a: Dim, b: Dim) -> Dim:
        """The ceiling of ``a / b`` (``CeilToInt(a, b)``)."""
        return self._binary("ceildiv", a, b)

    def max(self, a: Dim, b: Dim) -> Dim:
        """``max(a, b)``."""
        return self._binary("max", a, b)

    def min(self, a: Dim, b: Dim) -> Dim:
        """``min(a, b)``."""
        return self._binary("min", a, b)

    def neg(self, a: Dim) -> Dim:
        """``-a``."""
        return self._binary("sub", 0, a)

    def prod(self, dims: Iterable[Dim]) -> Dim:
        """The product of the dimensions (1 for none)."""
        return self._fold("mul", 1, dims)

    def total(self, dims: Iterable[Dim]) -> Dim:
        """The sum of the dimensions (0 for none)."""
        return self._fold("add", 0, dims)

    def _fold(self, name: str, start: int, dims: Iterable[Dim]) -> Dim:
        """``start`` combined with each dimension in turn, as the binary operation would, one term at the end."""
        out: Dim = start
        items = list(dims)
        for i, d in enumerate(items):
            if out is None or d is None:
                return None
            if out.__class__ is int and d.__class__ is int:
                out = self._binary(name, out, d)
                continue
            return self._fold_polys(name, out, items[i:])
        return out

    def _fold_polys(self, name: str, first: Dim, rest: list[Dim]) -> Dim:
        """The fold from ``first`` (known) over ``rest`` on polynomials, each step checked as a result is."""
        if any(d is None for d in rest):
            return None
        st = self._state()
        key = (name, first, tuple(rest))
        memo = st.memo
        if key in memo:
            return memo[key]
        rule = _OPS[name][0]

        def run(s: _State) -> Poly:
            p = self._poly(first, s)
            for d in rest:
                s.ctx.budget = Budget()  # (each step its own budget, as each operation has)
                p = _checked(rule(p, self._poly(d, s), s.ctx))
            return p

        return self._compute(key, run)

    # -- comparisons and broadcasting ----------------------------------------------------------------

    def compare(self, op: str, a: Dim, b: Dim) -> bool | None:
        """Whether ``a op b`` (op: eq, ne, lt, le, gt, ge) holds for every value (True), for none (False), else None."""
        if a is None or b is None:
            return None
        diff = self.sub(a, b)  # a - b OP 0
        if diff is None:
            return None
        if isinstance(diff, int):
            return _decide(op, diff, diff)
        st = self._state()
        lo, hi = st.ctx.range_of(self._poly(diff, st))
        return _decide(op, lo, hi)

    def broadcast(self, shapes: Iterable[Shape]) -> Shape:
        """numpy broadcasting of shapes whose entries may be None (unknown); None if a shape is unknown.

        The core's rule (:func:`exprgraph.core.shapes.broadcast_shapes`), with two symbolic sizes
        giving their max here: an unknown entry is 1 or the size of the others, so an axis with
        an int other than 1 has that size; an axis with an unknown entry and no such int is unknown.
        """
        given = list(shapes)
        known = [s for s in given if s is not None]
        if len(known) < len(given):
            return None
        return broadcast_shapes(*known, maximum=self.max)


def _size_bound(p: Poly) -> int:
    """At least the distinct nodes of ``top_term(p)``: per monomial its factors, its coefficient, a
    sign and the ``+`` before it; the constant; each atom's own nodes once (cached per atom)."""
    n = 2
    atoms: set[Term] = set()
    for m in p:
        n += 3
        for a, e in m:
            n += e
            atoms.add(a)
    for a in atoms:
        n += a.size
    return n


def _checked(p: Poly) -> Poly:
    """``p``, or DimOverflowError when a coefficient (or its constant value) leaves int64."""
    for c in p.values():
        if not INT64_MIN <= c <= INT64_MAX:
            raise DimOverflowError(f"a dimension coefficient {c} does not fit in int64")
    return p


def _decide(op: str, lo: int | float, hi: int | float) -> bool | None:
    """Whether ``x op 0`` holds for every ``x`` in ``[lo, hi]`` (True), for none (False), or depends (None)."""
    if op == "eq":
        return True if lo == hi == 0 else (False if lo > 0 or hi < 0 else None)
    if op == "ne":
        decided = _decide("eq", lo, hi)
        return None if decided is None else not decided
    if op == "lt":
        return True if hi < 0 else (False if lo >= 0 else None)
    if op == "le":
        return True if hi <= 0 else (False if lo > 0 else None)
    if op == "gt":
        return _decide("lt", -hi, -lo)
    if op == "ge":
        return _decide("le", -hi, -lo)
    raise ValueError(f"op must be one of eq, ne, lt, le, gt, ge, not {op!r}")
