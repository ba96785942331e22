"""The simplifier's state for one assumption (names >= 0 or names >= 1): caches keyed by term.

Terms are interned, so a term is its own cache key: the polynomial of a term, the range and the
argument polynomials of an atom, and the canonical result of a whole expression are each
computed once; the result of ``simplify_expression`` on a text is cached by the text. Caches are
bounded: past ``CACHE_LIMIT`` entries they are cleared together.
"""

from __future__ import annotations

from ..core.op import Op
from ..core.term import REGISTRY, Term
from .normal import Budget, Poly, defer_key, inner_term, p_atom
from .polyprint import atom_text
from .ranges import INF, UNBOUNDED, Range, r_mul, r_pow, r_scale

__all__ = ["Context", "context", "CACHE_LIMIT"]

CACHE_LIMIT = 200_000

_SYMBOL = REGISTRY["symbol"]


class Context:
    """Caches and settings of the simplifier under one assumption about names."""

    __slots__ = ("positive", "name_range", "vals", "ranges", "atom_args", "tops", "texts", "budget")

    def __init__(self, positive: bool) -> None:
        self.positive = positive
        #: range of every name
        self.name_range: Range = (1 if positive else 0, INF)
        #: term -> its polynomial (never mutated once stored)
        self.vals: dict[Term, Poly] = {}
        #: atom -> its value range
        self.ranges: dict[Term, Range] = {}
        #: atom -> the polynomials of its arguments (max/min: all flattened arguments)
        self.atom_args: dict[Term, tuple[Poly, ...]] = {}
        #: term -> its canonical term
        self.tops: dict[Term, Term] = {}
        #: text -> the result of simplify_expression (an int or a text)
        self.texts: dict[str, int | str] = {}
        self.budget = Budget()

    def clear(self) -> None:
        """Forget everything cached."""
        self.vals.clear()
        self.ranges.clear()
        self.atom_args.clear()
        self.tops.clear()
        self.texts.clear()

    def maybe_trim(self) -> None:
        """Clear the caches when they have grown past the limit (called between simplifications)."""
        if len(self.vals) + len(self.ranges) + len(self.tops) + len(self.texts) > CACHE_LIMIT:
            self.clear()

    # -- atoms and ranges ----------------------------------------------------------------------------

    def atom(self, op: Op, args: tuple[Poly, ...], rng: Range, attr: object = None) -> Poly:
        """The polynomial of the atom ``op(args...)`` with canonical arguments, recording its range."""
        term = Term(op, tuple([inner_term(a) for a in args]), attr)
        defer_key(term, atom_text, op, args)  # its text, printed from the polynomials if needed
        return self.known_atom(term, args, rng)

    def known_atom(self, term: Term, args: tuple[Poly, ...], rng: Range) -> Poly:
        """The polynomial of an atom already built, recording its arguments and range."""
        self.ranges[term] = rng
        self.atom_args[term] = args
        return p_atom(term)

    def atom_range(self, atom: Term) -> Range:
        """Range of an atom (names: the assumption; unknown terms: unbounded)."""
        if atom.op is _SYMBOL:
            return self.name_range
        return self.ranges.get(atom, UNBOUNDED)

    def range_of(self, p: Poly) -> Range:
        """Range of a polynomial's value: the sum of the ranges of its terms."""
        # Lower bounds are ints or -INF, upper bounds ints or INF (see .ranges), so the bounds are
        # summed as ints, and an infinite one makes the bound of the sum infinite.
        lo = hi = 0
        lo_inf = hi_inf = False
        name_lo = self.name_range[0]
        for m, c in p.items():
            if not m:
                lo += c
                hi += c
                continue
            for a, _ in m:
                if a.op is not _SYMBOL:
                    break
            else:
                # a product of names >= n (n = 0 or 1) and powers of them lies in [n, INF): times c
                if c > 0:
                    lo += c * name_lo
                    hi_inf = True
                elif c < 0:
                    lo_inf = True
                    hi += c * name_lo
                continue
            a, e = m[0]
            r = r_pow(self.atom_range(a), e)
            for a, e in m[1:]:
                r = r_mul(r, r_pow(self.atom_range(a), e))
            r_lo, r_hi = r_scale(r, c)
            if r_lo.__class__ is float:
                lo_inf = True
            else:
                lo += r_lo
            if r_hi.__class__ is float:
                hi_inf = True
            else:
                hi += r_hi
        return (-INF if lo_inf else lo, INF if hi_inf else hi)

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


_contexts = {False: Context(False), True: Context(True)}


def context(positive: bool = False) -> Context:
    """The simplifier state for names >= 0 (default) or names >= 1 (``positive=True``)."""
    return _contexts[bool(positive)]
