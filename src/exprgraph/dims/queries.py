"""Ranges of names, and the questions a compiler asks about dimension expressions.

A :class:`DimEnv` gives names integer ranges (``s0 in [2, 2**31-1]``; names it does not list are
``>= 0``) and answers, for every value the ranges allow:

- ``bound(e)``: an interval that holds every value of ``e`` (sound, not always the tightest);
- ``statically_known(rel)``, ``equal(e1, e2)``, ``divisible(e, k)``: ``True`` when it holds for
  every value, ``False`` when it holds for none, ``None`` when it depends on the values or could
  not be decided. An answer is never wrong: ``None`` is the price of not knowing;
- ``compare(e1, e2)``: the strongest of ``"=="``, ``"<"``, ``"<="``, ``">"``, ``">="``, ``"!="``
  that always holds, or None;
- ``exact_div(e, d)``: ``e/d`` when ``d`` divides ``e`` for every value, else None;
- ``simplify(e)``: the canonical form under these ranges (``max(s0, 1)`` is ``s0`` when ``s0 >= 2``).

Every answer is worked out from the simplified polynomial of the expression (or of the difference
of two), whose terms carry ranges (see :mod:`.ranges`): a floor division, a modulo, a max knows
its range from its arguments' when it is built. Answers are memoised per environment. The
one-shot functions of :mod:`.ask` (``bound(e, ranges=...)``) ask a shared environment.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from ..core.term import Term
from ..errors import DimContradictionError, DimExpressionError
from .context import CLEAR_HOOKS, Context, context
from .decide import compare, decide_difference, difference, divides, exact_quotient_term
from .explain import Explanation, explain_relation
from .facts import Facts, add_fact, fold_back
from .normal import top_term
from .parse import parse_expression
from .polyparse import read_polynomial
from .prove import Hyp, deduce, may_deduce, open_at_points, settle_maxmin, tighter_range
from .ranges import INF, Range
from .regions import to_poly
from .relations import (
    RANGE_TEXT,
    Relation,
    as_term,
    bound_from_text,
    constant_powers,
    int_term,
    meet,
    narrowings,
    parse_relation,
    query_side,
    range_pair,
    split_comparison,
    tight_range,
)
from .ring import Poly
from .terms import CONST, SUB, TERM, dim_name
from .unparse import unparse

__all__ = ["DimEnv"]

#: memoised answers kept per set of ranges before the table is cleared; sets of ranges whose state is kept
MEMO_LIMIT: Final = 100_000
#: what _recall gives for a question not answered yet
_MISSING: Final = object()
MAX_STATES: Final = 256
#: what _compare asks the facts when the ranges decide nothing, strongest first
_STRICTER: Final = (("gt", ">"), ("lt", "<"), ("eq", "=="), ("ge", ">="), ("le", "<="), ("ne", "!="))


def _checked_name(name: str) -> Term:
    """The name's symbol; DimExpressionError for a name that is not an identifier (or is reserved)."""
    try:
        return dim_name(name)
    except ValueError as err:
        raise DimExpressionError(f"a range for a name that cannot name a dimension: {err}", str(name), 0) from None


def _as_term(expr: int | str | Term) -> Term:
    """A dimension expression as an int64 term (text is parsed)."""
    return expr if type(expr) is TERM else parse_expression(str(expr))


class DimEnv:
    """Integer ranges of names, and the queries answered under them (memoised).

    ``ranges`` maps names to ``(lo, hi)`` (None or ``inf`` for an open end) or to text such as
    ``"[2, 2**31-1]"``; ``constraints`` are ranges (``"s2 in [1, 64]"``) and relations that narrow
    them (``"s0 >= 2"``, ``"s1 == 2*s0"``); names given no range are in ``default`` (``[0, inf)``).

    >>> env = DimEnv(constraints=["s0 in [2, 2**31-1]", "s1 >= 1"])
    >>> env.bound("s0//2 + 1"), env.statically_known("s0 - 2 >= 0"), env.equal("s0*s1", "s1*s0")
    ((2, 1073741824), True, True)
    """

    def __init__(
        self,
        ranges: Mapping[str, Any] | None = None,
        constraints: Iterable[str | Term] = (),
        *,
        default: Sequence[int | float | None] = (0, None),
    ) -> None:
        self.default: Range = range_pair(default)
        self._ranges: dict[str, Range] = {}
        self._ctx: Context | None = None
        self._memo: dict[tuple, Any] = {}
        self._facts: Facts | None = None
        for name, r in (ranges or {}).items():
            if type(r) is tuple and len(r) == 2 and type(r[0]) is int and (type(r[1]) is int or r[1] is None):
                self._set_bounds(name, (r[0], INF if r[1] is None else r[1]))  # the common cases, quickly
            else:
                self.set_range(name, r)
        if constraints:
            self.declare(*constraints)

    # -- ranges ----------------------------------------------------------------------------------

    @property
    def ranges(self) -> dict[str, Range]:
        """The range of every name given a range of its own."""
        return dict(self._ranges)

    def range_of(self, name: str) -> Range:
        """The range of a name (its own, or the default)."""
        return self._ranges.get(name, self.default)

    def set_range(self, name: str, r: Any) -> DimEnv:
        """Give ``name`` the range ``r``: ``(lo, hi)`` or text ``"[lo, hi]"`` (it replaces the default,
        and narrows a range given before); returns self."""
        if isinstance(r, str):
            m = RANGE_TEXT.match(f"{name} in {r}")
            if m is None:
                raise DimExpressionError("expected a range such as [2, 2**31-1]", r, 0)
            lo, hi = bound_from_text(m.group(2), "lower"), bound_from_text(m.group(3), "upper")
        else:
            lo, hi = range_pair(r)
        self._set_bounds(name, (lo, hi))
        return self

    def _set_bounds(self, name: str, r: Range) -> None:
        if name in self._ranges or not r[0] <= r[1]:
            self._narrow(name, r)
        else:
            _checked_name(name)
            self._ranges[name] = r
            self._ctx = None  # answers change: the state of the new ranges

    def _narrow(self, name: str, r: Range) -> DimEnv:
        """Narrow the range of ``name`` (its own, or the default) to ``r``."""
        _checked_name(name)
        old = self.range_of(name)
        new = meet(old, r)
        if new[0] > new[1]:
            raise DimContradictionError(f"the ranges of {name!r} contradict: {old} and {r} have no integer in common")
        if new != old:
            self._ranges[name] = new
            self._ctx = None  # answers change: the state of the new ranges
        return self

    def declare(self, *constraints: str | Term) -> DimEnv:
        """Narrow ranges by relations (``"s0 >= 2"``, ``"s0 in [2, 64]"``, ``"s1 == 2*s0"``) and keep them
        as facts that every query uses; returns self. DimContradictionError when no value satisfies them.

        A relation narrows each name that appears in it once, as ``c*name`` alone in its term
        (``2*s0 + s1 <= 10`` narrows both, given the range of the other); the relations are
        gone through again until no range changes (at most 8 times). Then each is kept (see
        :mod:`.facts`): an equality solved for a name replaces that name everywhere (``batch ==
        seq1 + seq2``, ``d == 5``, ``a == b``; ``b % 4 == 0`` makes ``b`` ``4*(b//4)``), any other
        relation is a fact the queries combine with the ranges.
        """
        relations: list[Relation] = []
        texts: list[str] = []
        first = dict(self._ranges)  # (to tell the names whose range this call narrows)
        for c in constraints:
            if isinstance(c, str):
                m = RANGE_TEXT.match(constant_powers(c)) if " in " in c else None
                if m is not None:
                    lo, hi = bound_from_text(m.group(2), "lower"), bound_from_text(m.group(3), "upper")
                    self._set_bounds(m.group(1), (lo, hi))
                    continue
            relations.append(parse_relation(c))
            texts.append(c if isinstance(c, str) else str(c))
        for _ in range(8):
            before = dict(self._ranges)
            for rel in relations:
                self._apply(rel)
            if self._ranges == before:
                break
        replaced = set() if self._facts is None else set(self._facts.subst)
        for rel, text in zip(relations, texts, strict=True):
            add_fact(self, rel, text)
        facts = self._facts
        if facts is not None and facts.relations:
            changed = {dim_name(n) for n, r in self._ranges.items() if first.get(n) != r}
            self._recheck(facts.relations, changed | (set(facts.subst) - replaced))
        return self

    def _recheck(self, relations: list[tuple[str, Term, Term, str]], changed: set[Term]) -> None:
        """DimContradictionError when a kept relation fails everywhere under the ranges now: a later fact may narrow
        the ranges (or replace a name) so that it holds at once and is not kept, while a relation kept before no
        longer can (``a < b + 1`` then ``a > b``, with ``a`` in ``[0, 1]``; ``a >= b + 1`` then ``a == b``). Only
        the relations over a name in ``changed`` (its range narrowed, or replaced), and only by the ranges (cheap:
        no proof search)."""
        for op, left, right, note in relations:
            if changed.isdisjoint(left.free_symbols) and changed.isdisjoint(right.free_symbols):
                continue
            if decide_difference(op, self._poly_of(left), self._poly_of(right), self.context)[0] is False:
                raise DimContradictionError(f"{note} no longer holds under the ranges and facts declared after it")

    def _apply(self, rel: Relation) -> None:
        op, left, right = rel
        if op == "ne":
            return
        d = self._raw_poly(Term(SUB, (left, right)))  # left - right OP 0
        narrowed = narrowings(op, d, self.context)
        for name, r in narrowed:
            self._narrow(name, r)

    # -- the simplifier's state under these ranges -----------------------------------------------

    @property
    def context(self) -> Context:
        """The simplifier's state (caches and ranges) for this environment."""
        ctx = self._ctx
        return self._bind() if ctx is None else ctx

    def _bind(self) -> Context:
        """Take the state (context and memo) of these ranges: environments with equal ranges share
        one, so what one of them worked out the others do not work out again."""
        facts = self._facts
        key = (self.default, frozenset(self._ranges.items()), () if facts is None else facts.key())
        state = _states.get(key)
        if state is None:
            if not self._ranges and self.default == (0, INF) and facts is None:
                ctx = context(False)  # the default assumption: share its caches
            else:
                named = {dim_name(n): r for n, r in self._ranges.items()}
                ctx = Context(False, named, self.default)
            if len(_states) >= MAX_STATES:
                _states.clear()
            state = _states[key] = (ctx, {})
        self._ctx, self._memo = state
        return state[0]

    def _poly(self, term: Term) -> Poly:
        facts = self._facts
        if facts is not None:
            term = facts.substituted(term)  # the names replaced by facts
        return self._raw_poly(term)

    def _raw_poly(self, term: Term) -> Poly:
        ctx = self.context
        ctx.maybe_trim()
        return ctx.unwrap(to_poly(term, ctx))

    # -- facts (see .facts) -----------------------------------------------------------------------------

    def _set_facts(self, facts: Facts) -> None:
        """Take ``facts`` as this environment's facts (its answers change: the state of the new facts)."""
        self._facts = facts
        self._ctx = None

    def _hyps(self) -> list[Hyp]:
        """The facts kept as relations, as polynomials ``h >= 0`` with their notes (memoised)."""
        facts = self._facts
        if facts is None or not facts.relations:
            return []
        found = self._recall(("hyps",))
        return found if found is not _MISSING else self._remember(("hyps",), facts.hyps(self._poly))

    def _atom_facts(self) -> dict:
        """The facts of atoms worked out so far (memoised per state)."""
        found = self._recall(("atom facts",))
        return found if found is not _MISSING else self._remember(("atom facts",), {})

    def _deduce(self, op: str, d: Poly, trace: list | None = None) -> bool | None:
        """``d OP 0`` (``d`` the difference of the sides) from the facts and the identities of atoms,
        where the ranges leave it open."""
        facts = self._facts
        if facts is not None and (op == "eq" or op == "ne") and self._never_zero(d, facts):
            return op == "ne"  # a fact says the sides differ
        hyps = self._hyps()
        if not hyps and not may_deduce(d):
            return None  # no fact, no atom with identities, no product: nothing to add to the ranges
        if facts is None and trace is None and open_at_points(op, d, self.context):
            return None  # true at one point of the ranges and false at another: no proof to search for
        return deduce(op, d, hyps, self.context, trace, self._atom_facts())

    def _never_zero(self, d: Poly, facts: Facts) -> bool:
        """Whether a fact ``left != right`` has ``d`` or ``-d`` as its difference."""
        found = self._recall(("unequal",))
        if found is _MISSING:
            found = self._remember(("unequal",), facts.unequal(self._poly))
        return any(u == d or (all(d.get(m) == -c for m, c in u.items()) and len(u) == len(d)) for u in found)

    def _poly_of(self, expr: int | str | Term) -> Poly:
        """The polynomial of an expression, cached per term and per text (text is read straight into
        it, see polyparse)."""
        ctx = self.context  # binds the memo too
        if type(expr) is TERM:
            p = ctx.polys.get(expr)
            if p is None:
                p = self._poly(int_term(expr))
                ctx.polys[expr] = p
            return p
        if not isinstance(expr, str):
            return self._poly(as_term(expr))
        key = ("poly", expr)
        p = self._memo.get(key)
        if p is None:
            ctx.maybe_trim()
            text = constant_powers(expr) if "**" in expr else expr
            read = None if self._facts is not None else read_polynomial(text, ctx)  # None: the general way
            p = self._poly(parse_expression(text)) if read is None else ctx.unwrap(read)
            if len(self._memo) > MEMO_LIMIT:
                self._memo.clear()
            self._memo[key] = p
        return p

    def _sides(self, rel: str | Term) -> tuple[str, Any, Any]:
        """A relation's op and sides: text sides stay text (read straight into polynomials)."""
        if isinstance(rel, str):
            text = constant_powers(rel) if "**" in rel else rel
            split = split_comparison(text)
            if split is not None:
                left, op, right = split
                return op, left.strip(), right.strip()
        return parse_relation(rel)

    def _ctx_range(self, p: Poly, known: Range | None = None) -> Range:
        return tight_range(p, self.context, known)

    def _recall(self, key: tuple) -> Any:
        """The memoised answer under ``key``, or _MISSING."""
        if self._ctx is None:
            self._bind()
        return self._memo.get(key, _MISSING)

    def _remember(self, key: tuple, value: Any) -> Any:
        """Memoise ``value`` under ``key``; returns it."""
        memo = self._memo
        if len(memo) > MEMO_LIMIT:
            memo.clear()
        memo[key] = value
        return value

    # -- queries ------------------------------------------------------------------------------------

    def poly(self, expr: int | str | Term) -> Poly:
        """The canonical polynomial under these ranges, ``{monomial: int}`` (read-only, cached); a
        monomial is a tuple of ``(atom, power)`` pairs, ``()`` for the constant term."""
        return self._poly_of(expr)

    def simplify(self, expr: int | str | Term) -> int | str | Term:
        """Canonical form under these ranges: an int when constant, text for text, a term for a term."""
        if type(expr) is int:
            return expr
        term = expr if type(expr) is TERM else as_term(expr)
        key = ("simplify", term)
        top = self._recall(key)
        if top is _MISSING:  # (a term is checked only when it is worked out: int_term)
            p = self._poly(int_term(term))
            facts = self._facts
            if facts is not None and facts.folds:
                p = fold_back(p, facts.folds, self.context)  # 2*(H//2) -> H when H is even
            hyps = self._hyps()
            if hyps:
                p = settle_maxmin(p, hyps, self.context)  # max(a, b) -> b when b >= a is known
            top = self._remember(key, top_term(p))
        if top.op is CONST:
            return int(top.attr)
        return unparse(top) if isinstance(expr, str) else top

    def bound(self, expr: int | str | Term) -> tuple[int | float, int | float]:
        """``(lo, hi)`` with ``lo <= expr <= hi`` for every value (``-inf``/``inf`` for an open end)."""
        source = expr if type(expr) is TERM or isinstance(expr, str) else as_term(expr)  # (_poly_of checks terms)
        key = ("bound", source)
        found = self._recall(key)
        if found is not _MISSING:
            return found
        p = self._poly_of(source)
        r = self._ctx_range(p)
        hyps = self._hyps()
        if hyps or r[0] < 0:
            r = tighter_range(p, r, hyps, self.context, self._atom_facts())  # facts and identities of atoms
        return self._remember(key, r)

    def statically_known(self, rel: str | Term) -> bool | None:
        """True when the relation holds for every value, False when for none, None otherwise."""
        op, left, right = self._sides(rel)
        return self._known(op, left, right)

    def _known(self, op: str, left: Any, right: Any) -> bool | None:
        """``left OP right`` for every value (memoised): the sides are text or terms, op a relation's name."""
        key = ("rel", op, left, right)
        found = self._recall(key)
        if found is not _MISSING:
            return found
        return self._remember(key, self._decide(op, left, right))

    def equal(self, e1: int | str | Term, e2: int | str | Term) -> bool | None:
        """True when ``e1 == e2`` for every value, False when for none, None otherwise."""
        left, right = query_side(e1), query_side(e2)
        key = ("rel", "eq", left, right)
        found = self._recall(key)
        if found is not _MISSING:
            return found
        return self._remember(key, self._decide("eq", left, right))

    def compare(self, e1: int | str | Term, e2: int | str | Term) -> str | None:
        """The strongest of ``== < <= > >= !=`` that holds between ``e1`` and ``e2`` for every value, or None."""
        left, right = query_side(e1), query_side(e2)
        key = ("compare", left, right)
        found = self._recall(key)
        if found is not _MISSING:
            return found
        return self._remember(key, self._compare(left, right))

    def divisible(self, expr: int | str | Term, k: int | str | Term) -> bool | None:
        """True when ``k`` divides ``expr`` for every value, False when for none, None otherwise."""
        term, divisor = query_side(expr), query_side(k)
        key = ("divisible", term, divisor)
        found = self._recall(key)
        if found is not _MISSING:
            return found
        return self._remember(key, self._divisible(term, divisor))

    def exact_div(self, expr: int | str | Term, d: int | str | Term) -> int | str | Term | None:
        """``expr / d`` when ``d`` divides ``expr`` for every value (an int, text or a term as ``expr``), else None."""
        term, divisor = as_term(expr), as_term(d)
        key = ("exact_div", term, divisor)
        q = self._recall(key)
        if q is _MISSING:
            q = self._remember(key, self._exact_div(term, divisor))
        if q is None:
            return None
        if q.op is CONST:
            return int(q.attr)
        return unparse(q) if isinstance(expr, str) else q

    # -- how they are answered (see .decide) -------------------------------------------------------

    def ask(self, kind: str, *args: Any) -> Any:
        """One query named by ``kind`` (a log of a compiler's questions replays through this): ``"simplify"``,
        ``"bound"``, ``"ge"`` / ``"gt"`` (is ``args[0] >=`` / ``> args[1]`` known), ``"eq"`` or ``"divisible"``."""
        if kind == "simplify":
            return self.simplify(args[0])
        if kind == "bound":
            return self.bound(args[0])
        if kind == "ge" or kind == "gt":
            # statically_known(a >= b) without building the relation only to take it apart again
            # (_poly_of checks the sides when it works them out)
            return self._known(kind, _as_term(args[0]), _as_term(args[1]))
        if kind == "eq":
            return self.equal(args[0], args[1])
        if kind == "divisible":
            return self.divisible(args[0], args[1])
        raise ValueError(f"unknown query kind {kind!r}: simplify, bound, ge, gt, eq or divisible")

    def _decide(self, op: str, left: Any, right: Any) -> bool | None:
        answer, d = decide_difference(op, self._poly_of(left), self._poly_of(right), self.context)
        return self._deduce(op, d) if answer is None else answer

    def _compare(self, left: Any, right: Any) -> str | None:
        lp, rp = self._poly_of(left), self._poly_of(right)
        found = compare(lp, rp, self.context)
        if found in ("==", "<", ">"):
            return found
        # what the facts add: the strongest relation they prove first
        tries = {None: _STRICTER, ">=": (("gt", ">"), ("eq", "==")), "<=": (("lt", "<"), ("eq", "=="))}
        d = difference(lp, rp, self.context)
        for op, name in tries.get(found, (("gt", ">"), ("lt", "<"))):
            if self._deduce(op, d) is True:
                return name
        return found

    def explain(self, rel: str | Term) -> Explanation:
        """Why ``rel`` holds for every value, for none, or is undecided: the facts, ranges and identities used."""
        return explain_relation(self, rel)

    def _divisible(self, term: Any, divisor: Any) -> bool | None:
        return divides(self._poly_of(term), self._poly_of(divisor), self.context)

    def _exact_div(self, term: Term, divisor: Term) -> Term | None:
        return exact_quotient_term(self._poly(term), self._poly(divisor), self.context)


_states: Final[dict[tuple, tuple[Context, dict[tuple, Any]]]] = {}


def _clear() -> None:
    _states.clear()


CLEAR_HOOKS.append(_clear)
