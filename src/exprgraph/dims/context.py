"""The simplifier's state for one assumption about names: caches keyed by term.

An assumption gives every name a range: ``[0, inf)`` by default, ``[1, inf)`` with
``positive=True``, or a range per name (a :class:`~exprgraph.dims.queries.DimEnv`). Terms are
interned, so a term is its own cache key: the polynomial of a term, the range and the argument
polynomials of an atom, and the canonical result of a whole expression are each computed once;
the result of ``simplify_expression`` on a text is cached by the text. Caches are bounded: past
``CACHE_LIMIT`` entries they are cleared together.

*Sum atoms* keep products of sums factored (see :mod:`.factored`): the context records, for each,
its polynomial, its expansion (or None when that is too large) and its size.
"""

from __future__ import annotations

from typing import Final

from ..core.op import Op
from ..core.term import Term
from .monomials import Mono
from .normal import atom_text, defer_key, inner_term
from .parse import clear_parse_cache
from .ranges import INF, UNBOUNDED, Range, r_mul, r_pow
from .ring import Budget, Poly, p_add_into, p_atom, times
from .terms import FLOORDIV, MAX, MIN, MOD, SYMBOL, TERM, clear_memos, make_term
from .unparse import clear_unparse_cache

__all__ = ["Context", "context", "range_point", "CACHE_LIMIT", "CLEAR_HOOKS", "clear_caches"]

CACHE_LIMIT: Final = 200_000

#: the printer of atoms, as a module constant (the compiled build keeps it in a C static)
_ATOM_TEXT: Final = atom_text


class Context:
    """Caches and settings of the simplifier under one assumption about names."""

    __slots__ = (
        "positive",
        "name_range",
        "name_ranges",
        "custom",
        "vals",
        "ranges",
        "atom_args",
        "tops",
        "polys",
        "texts",
        "budget",
        "sums",
        "expansions",
        "weights",
        "mono_ranges",
    )

    def __init__(
        self, positive: bool, name_ranges: dict[Term, Range] | None = None, default: Range | None = None
    ) -> None:
        self.positive = positive
        #: range of every name not in name_ranges
        self.name_range: Range = (1 if positive else 0, INF) if default is None else default
        #: ranges of some names (a DimEnv's), which may have upper bounds or negative values
        self.name_ranges: dict[Term, Range] = dict(name_ranges) if name_ranges else {}
        #: whether some name has a range of its own (the shortcuts for names >= 0 or >= 1 then do not apply)
        self.custom = bool(self.name_ranges) or default is not None
        #: term -> its polynomial (never mutated once stored)
        self.vals: dict[Term, Poly] = {}
        #: atom -> its value range (names too, once asked for: see atom_range)
        self.ranges: dict[Term, Range] = {}
        #: monomial of two atoms or more (or a power) -> the range of its value (see range_of)
        self.mono_ranges: dict[Mono, Range] = {}
        #: atom -> the polynomials of its arguments (max/min: all flattened arguments)
        self.atom_args: dict[Term, tuple[Poly, ...]] = {}
        #: term -> its canonical term
        self.tops: dict[Term, Term] = {}
        #: term -> its polynomial with lone sum atoms written as their sums (what queries work on)
        self.polys: dict[Term, Poly] = {}
        #: text -> the result of simplify_expression (an int or a text)
        self.texts: dict[str, int | str] = {}
        self.budget = Budget()
        #: sum atom -> its polynomial (a primitive sum of two terms or more)
        self.sums: dict[Term, Poly] = {}
        #: sum atom -> its polynomial with every sum atom multiplied out, or None when too large
        self.expansions: dict[Term, Poly | None] = {}
        #: atom -> its size: 1 for a name, 1 + the sizes of its arguments for an opaque atom, the
        #: size of its sum for a sum atom (see size())
        self.weights: dict[Term, int] = {}

    def clear(self) -> None:
        """Forget everything cached."""
        self.vals.clear()
        self.ranges.clear()
        self.atom_args.clear()
        self.tops.clear()
        self.polys.clear()
        self.texts.clear()
        self.sums.clear()
        self.expansions.clear()
        self.weights.clear()
        self.mono_ranges.clear()

    def maybe_trim(self) -> None:
        """Clear the caches when they have grown past the limit (called between simplifications)."""
        if len(self.vals) + len(self.ranges) + len(self.tops) + len(self.polys) + len(self.texts) > CACHE_LIMIT:
            self.clear()

    # -- atoms and ranges ----------------------------------------------------------------------------

    def unwrap(self, p: Poly) -> Poly:
        """``p`` with every lone sum atom (``k*S``, nothing else in its monomial) written as its sum."""
        sums = self.sums
        if not sums:
            return p
        for m in p:
            if len(m) == 1 and m[0][1] == 1 and m[0][0] in sums:
                break
        else:
            return p
        out: Poly = {}
        for m, c in p.items():
            s = sums.get(m[0][0]) if len(m) == 1 and m[0][1] == 1 else None
            if s is None:
                s = {m: 1}
            p_add_into(out, s, c)  # out += c*s
        return out

    def atom(self, op: Op, args: tuple[Poly, ...], rng: Range, attr: object = None) -> Poly:
        """The polynomial of the atom ``op(args...)`` with canonical arguments, recording its range."""
        if self.sums:
            args = tuple([self.unwrap(a) for a in args])
        operands = tuple([inner_term(a) for a in args])
        term = make_term(op, operands) if attr is None else TERM(op, operands, attr)
        defer_key(term, _ATOM_TEXT, op, args)  # its text, printed from the polynomials if needed
        return self.known_atom(term, args, rng)

    def known_atom(self, term: Term, args: tuple[Poly, ...], rng: Range) -> Poly:
        """The polynomial of an atom already built, recording its arguments, range and size."""
        self.ranges[term] = rng
        self.atom_args[term] = args
        n = 1
        for a in args:
            n += self.size(a)
        self.weights[term] = n
        return p_atom(term)

    def size(self, p: Poly) -> int:
        """Size of ``p`` written out: its atoms, each by its size (constants count nothing)."""
        weights = self.weights
        n = 0
        m: Mono  # (typed, so the compiled build reads its pairs as a tuple's)
        for m in p:
            for a, e in m:
                n += e * weights.get(a, 1)
        return n

    def atom_range(self, atom: Term) -> Range:
        """Range of an atom (names: the assumption; unknown terms: unbounded)."""
        r = self.ranges.get(atom)
        if r is not None:
            return r
        if atom.op is not SYMBOL:
            return UNBOUNDED
        r = self.name_ranges.get(atom, self.name_range) if self.custom else self.name_range
        self.ranges[atom] = r  # a name's range never changes in a context: read once
        return r

    def range_of(self, p: Poly) -> Range:
        """Range of a polynomial's value: the sum of the ranges of its terms."""
        # Lower bounds are ints or -INF, upper bounds ints or INF (see .ranges), so the bounds are
        # summed as ints, and an infinite one makes the bound of the sum infinite.
        # (the loop variables are typed, and bounds narrowed to int, for the compiled build)
        lo: int = 0
        hi: int = 0
        lo_inf = hi_inf = False
        atom_ranges = self.ranges
        mono_ranges = self.mono_ranges
        m: Mono
        c: int
        for m, c in p.items():
            if not m:
                lo += c
                hi += c
                continue
            first = m[0]
            if len(m) == 1 and first[1] == 1:
                a = first[0]  # one atom: its range, by identity (quicker than hashing the monomial)
                r = atom_ranges.get(a)
                if r is None:
                    r = self.atom_range(a)
            else:
                r = mono_ranges.get(m)
                if r is None:
                    r = mono_ranges[m] = self._product_range(m)
            if c < 0:
                a_hi, a_lo = r
            else:
                a_lo, a_hi = r
            if isinstance(a_lo, int):
                lo += times(c, a_lo)
            else:
                lo_inf = True
            if isinstance(a_hi, int):
                hi += times(c, a_hi)
            else:
                hi_inf = True
        return (-INF if lo_inf else lo, INF if hi_inf else hi)

    def _product_range(self, m: Mono) -> Range:
        """Range of a monomial that is not one atom to the power 1."""
        if not self.custom:
            for a, _ in m:
                if a.op is not SYMBOL:
                    break
            else:
                # a product of names >= n (n = 0 or 1) and powers of them lies in [n, INF)
                return (self.name_range[0], INF)
        a, e = m[0]
        r = r_pow(self.atom_range(a), e)
        for a, e in m[1:]:
            r = r_mul(r, r_pow(self.atom_range(a), e))
        return r

    def value_at(
        self, p: Poly, shift: int, far: Term | None, far_shift: int, limit: int, names: list[Term] | None
    ) -> int | None:
        """The value of ``p`` with every name at ``range_point(its range, shift)`` (the name ``far`` at
        ``far_shift``): a point of the ranges. None when an atom has no known value (an opaque call, a float
        term), a divisor is 0 or more than ``limit`` atoms are met. Atoms are evaluated from the polynomials of
        their arguments (``atom_args``) or of their sums (``sums``), children first, without recursion; the
        names met are appended to ``names`` when it is given."""
        memo: dict[Term, int] = {}
        stack: list[Term] = [a for m in p for a, _ in m]
        steps = 0
        while stack:
            a = stack[-1]
            if a in memo:
                stack.pop()
                continue
            if a.op is SYMBOL:
                memo[a] = range_point(self.atom_range(a), far_shift if a is far else shift)
                if names is not None:
                    names.append(a)
                stack.pop()
                continue
            steps += 1
            whole = self.sums.get(a)
            parts: tuple[Poly, ...] | None = (whole,) if whole is not None else self.atom_args.get(a)
            if not parts or steps > limit:
                return None  # no arguments to evaluate it from, or too many atoms
            missing = [b for q in parts for m in q for b, _ in m if b not in memo]
            if missing:
                stack.extend(missing)
                continue
            stack.pop()
            values = [_poly_value(q, memo) for q in parts]
            v = values[0] if whole is not None else _atom_value(a, values)
            if v is None:
                return None
            memo[a] = v
        return _poly_value(p, memo)

    def single_atom(self, p: Poly) -> tuple[Term | None, int]:
        """``(atom, constant)`` when ``p`` is ``atom + constant`` with coefficient 1, else ``(None, 0)``."""
        if len(p) > 2:
            return None, 0
        atom = None
        c = 0
        for m, k in p.items():
            if not m:
                c = k
            elif atom is None and len(m) == 1 and m[0][1] == 1 and k == 1:
                atom = m[0][0]
            else:
                return None, 0
        return atom, c


def range_point(r: Range, shift: int) -> int:
    """A value of a range: its lower end plus ``shift`` (its upper end minus it), kept within the range."""
    lo, hi = r
    if type(lo) is int:
        v = lo + shift
        return v if type(hi) is not int or v <= hi else int(hi)
    if type(hi) is int:
        return hi - shift
    return shift


def _atom_value(a: Term, values: list[int]) -> int | None:
    """The value of the atom ``a`` from the values of its arguments (None for an op not evaluated here)."""
    op = a.op
    if op is FLOORDIV or op is MOD:
        if len(values) != 2 or values[1] == 0:
            return None
        return values[0] // values[1] if op is FLOORDIV else values[0] % values[1]  # floor semantics, as dims'
    if (op is MAX or op is MIN) and values:
        return max(values) if op is MAX else min(values)
    return None


def _poly_value(p: Poly, memo: dict[Term, int]) -> int:
    """The value of ``p`` given the value of each of its atoms."""
    total = 0
    m: Mono
    for m, c in p.items():
        v = c
        for a, e in m:
            v *= memo[a] ** e
        total += v
    return total


_contexts: Final = {False: Context(False), True: Context(True)}


def context(positive: bool = False) -> Context:
    """The simplifier state for names >= 0 (default) or names >= 1 (``positive=True``)."""
    return _contexts[bool(positive)]


#: more caches to clear with clear_caches() (the memoised answers of exprgraph.dims.queries)
CLEAR_HOOKS: list = []


def clear_caches() -> None:
    """Forget every cached parse, simplification, range, printed text and answer (the results do not change)."""
    for positive in (False, True):
        context(positive).clear()
    clear_parse_cache()
    clear_unparse_cache()
    clear_memos()
    for hook in CLEAR_HOOKS:
        hook()
