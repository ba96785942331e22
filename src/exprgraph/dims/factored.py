"""Factored products: a product of sums stays a product, and expands only under a budget.

Multiplying sums out can grow without bound: flattening n dimensions ``a_i+b_i`` gives ``2**n``
terms. So a product region (see :mod:`.simplify`) keeps each sum it multiplies as a *sum atom*:
the canonical term of the sum's primitive part (``(a+b)*c`` is the monomial ``S*c`` with
``S = a+b``). A sum atom is written once, whatever the sign, content or common monomial of the
sum it came from: ``(2*b-2*a)*c`` is ``-2*(a-b)*c``, and the same ``S`` appears wherever ``a-b``
is a factor. Only a constant multiplies a sum out (``2*(a+b)`` is ``2*a+2*b``, as the reference
prints it).

Sums are compared and cancelled through their *expansion*, computed under a budget
(``EXPAND_LIMIT`` monomial operations): a sum region whose terms hold sum atoms takes its
expansion when that is no larger (``a*(b+c) - a*c`` is ``a*b``), and a division by a sum divides
the sum atom out, else the expansions. Beyond the budget the factored form stands: sound,
perhaps not the simplest. Nothing here ever multiplies out more than the budget allows.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Final

from ..core.term import Term
from ..errors import TermTooLargeError
from .context import Context
from .monomials import ONE, Mono, _check_degree, mono_div, mono_mul, mono_of_powers
from .normal import defer_key, inner_term, inner_text, mono_key
from .ring import Budget, Poly, int_power, p_content, p_div_mono, p_exact_div, p_mono_gcd, p_mul, p_scale, split_factors

__all__ = [
    "EXPAND_LIMIT",
    "sum_atom",
    "has_sums",
    "poly_size",
    "expand",
    "expansion_grows",
    "product_poly",
    "fold_sums",
    "exact_quotient",
]

#: monomial operations one expansion may spend (beyond, the factored form stands)
EXPAND_LIMIT: Final = 4096


def _key_text(q: Poly) -> str:
    return inner_text(q)[0]


def _lead_sign(q: Poly) -> int:
    """Sign of the first non-constant term of ``q`` in print order."""
    lead: Mono | None = None
    lead_key = ""
    for m in q:
        if m:
            k = mono_key(m)
            if lead is None or k < lead_key:
                lead, lead_key = m, k
    return 1 if lead is None or q[lead] > 0 else -1


def sum_atom(p: Poly, ctx: Context) -> tuple[int, Mono, Term | None]:
    """``p`` (two terms or more) as ``k * m * S``: an integer, a monomial and a sum atom.

    ``S`` is primitive (its coefficients have no common factor, its terms no common monomial) and
    its first term in print order is positive, so equal sums up to those give the same atom.
    ``S`` is None when ``p`` is ``k*m`` itself (a sum atom divided out of every term, then written
    as its sum, can leave one term).
    """
    k = 1
    m: Mono = ONE
    q = p
    while True:
        g = p_content(q)
        if not g:
            return 0, ONE, None  # p == 0
        mm = p_mono_gcd(q)
        if g != 1 or mm:
            q = p_div_mono(q, mm, g)  # p == g*mm*q
            k *= g
            m = mono_mul(m, mm)
        if len(q) < 2:
            ((mq, cq),) = q.items()
            return k * cq, mono_mul(m, mq), None
        unwrapped = ctx.unwrap(q)  # a lone sum atom inside a sum is written as its sum
        if unwrapped is q:
            break
        q = unwrapped
    if q is p:
        q = dict(p)  # the atom's polynomial is kept: never the caller's dict
    if _lead_sign(q) < 0:
        q = p_scale(q, -1)  # (b-a) -> -(a-b)
        k = -k
    term = inner_term(q)
    if term not in ctx.sums:
        ctx.sums[term] = q
        ctx.ranges[term] = ctx.range_of(q)
        ctx.weights[term] = poly_size(q, ctx)
        ctx.expansions[term] = expand(q, ctx)  # its own sum atoms are known already: no recursion
        defer_key(term, _key_text, q)
    return k, m, term


def has_sums(p: Poly, ctx: Context) -> bool:
    """Whether a monomial of ``p`` holds a sum atom."""
    sums = ctx.sums
    if not sums:
        return False
    for m in p:
        for a, _ in m:
            if a in sums:
                return True
    return False


def poly_size(p: Poly, ctx: Context) -> int:
    """Size of ``p`` written out (see Context.size): a sum atom counts the size of its sum."""
    return ctx.size(p)


def expand(p: Poly, ctx: Context, limit: int = EXPAND_LIMIT) -> Poly | None:
    """``p`` with every sum atom multiplied out, or None when that takes more than ``limit`` operations."""
    sums = ctx.sums
    expansions = ctx.expansions
    budget = Budget(limit)
    out: Poly = {}
    try:
        for m, c in p.items():
            plain: list = []
            factors: list = []
            for a, e in m:
                if a in sums:
                    factors.append((a, e))
                else:
                    plain.append((a, e))
            if factors:
                term: Poly = {tuple(plain): c}  # m without its sum atoms: still in id order
                for a, e in factors:
                    x = expansions.get(a)
                    if x is None:
                        return None  # too large to multiply out
                    for _ in range(e):
                        term = p_mul(term, x, budget)
            else:
                term = {m: c}
            budget.spend(len(term))
            for mm, cc in term.items():  # out += term
                v = out.get(mm, 0) + cc
                if v:
                    out[mm] = v
                elif mm in out:
                    del out[mm]
    except TermTooLargeError:
        return None
    return out


def product_poly(factors: list[tuple[Poly, int]], ctx: Context) -> Poly:
    """Product of ``p**e`` over the ``(p, e)`` pairs, with every sum kept as a sum atom.

    Single-term factors multiply at once (coefficients, powers of atoms). A sum becomes a sum
    atom, unless it is the only factor besides a constant: ``k*(a+b) -> k*a + k*b``.
    """
    split = split_factors(factors)
    if split is None:
        return {}  # a zero factor
    coef, powers, sums = split
    if sums and not powers and len(sums) == 1 and sums[0][1] == 1:
        return p_scale(sums[0][0], coef)  # k*(a+b) -> k*a + k*b
    for p, e in sums:
        # (k*m*S)**e -> k**e * m**e * S**e
        k, m, s = sum_atom(p, ctx)
        coef *= int_power(k, e)
        for a, q in m:
            powers[a] = _check_degree(powers.get(a, 0) + _check_degree(q * e))
        if s is not None:
            powers[s] = _check_degree(powers.get(s, 0) + e)
    if not coef:
        return {}
    return {mono_of_powers(powers): coef}


def _degrees(m: Mono, ctx: Context) -> tuple[int, int, int] | None:
    """The least and greatest size of the monomials of ``m``'s expansion, and its number of sum
    factors (powers counted); None when a sum atom of ``m`` is not a plain one (see expansion_grows)."""
    weights = ctx.weights
    sums = ctx.sums
    lo = hi = 0
    factors = 0
    for a, e in m:
        q = sums.get(a)
        if q is None:
            w = e * weights.get(a, 1)
            lo += w
            hi += w
            continue
        q_lo = q_hi = -1
        sign = 0
        for mm, c in q.items():
            if (c > 0) != (sign > 0) and sign:
                return None  # coefficients of both signs: the product may cancel
            sign = 1 if c > 0 else -1
            d = 0
            for b, k in mm:
                if b in sums:
                    return None  # a sum inside a sum
                d += k * weights.get(b, 1)
            q_lo = d if q_lo < 0 or d < q_lo else q_lo
            q_hi = d if d > q_hi else q_hi
        lo += e * q_lo
        hi += e * q_hi
        factors += e
    return lo, hi, factors


def expansion_grows(p: Poly, ctx: Context) -> bool:
    """True when multiplying out the sum atoms of ``p`` surely gives a larger polynomial (so
    fold_sums keeps ``p``), found without multiplying out.

    It holds when (1) each sum atom's sum holds no sum atom and has coefficients of one sign (its
    products then never cancel, only merge), (2) the sizes of the monomials each term expands to
    lie in intervals that do not meet (no monomial of one term's expansion is one of another's: a
    monomial's size is a sum over its atoms), and (3) no term is a lone sum times a constant.
    Then each term expands on its own, and a term ``c*m*S1*...*Sk`` (k >= 1, ``m`` not 1 if k == 1)
    grows: the distinct monomials of a product of sums A*B contain the chain a1*b1 < ... < a1*bq <
    a2*bq < ... < ap*bq (sorted by size first), whose sizes add up to more than A's and B's.
    """
    spans: list[tuple[int, int]] = []
    grows = False
    for m in p:
        span = _degrees(m, ctx)
        if span is None:
            return False
        lo, hi, factors = span
        if factors:
            if factors == 1 and all(a in ctx.sums for a, _ in m):
                return False  # c*S: its expansion is as large as it is
            grows = True
        spans.append((lo, hi))
    if not grows:
        return False
    spans.sort()
    for k in range(1, len(spans)):
        if spans[k][0] <= spans[k - 1][1]:
            return False  # two terms may meet in the expansion
    return True


def fold_sums(p: Poly, ctx: Context) -> Poly:
    """``p``, or its expansion when that is no larger (``a*(b+c) - a*c -> a*b``); never larger."""
    if len(p) < 2 or not has_sums(p, ctx) or expansion_grows(p, ctx):
        return p
    e = expand(p, ctx)
    if e is None:
        return p
    if poly_size(e, ctx) <= poly_size(p, ctx):
        return e
    return p


def exact_quotient(p: Poly, q: Poly, ctx: Context) -> Poly | None:
    """``p / q`` when ``q`` (two terms or more) divides ``p`` exactly, else None.

    Coefficients of the quotient may be fractions (``(2*x+2)/(x+1)``... ``(x+1)/(2*x+2) = 1/2``).
    With sum atoms about, the sum atom of ``q`` is divided out of every term of ``p`` if it can
    be, else the expansions of both are divided.
    """
    if ctx.sums and (has_sums(p, ctx) or has_sums(q, ctx)):
        k, m, s = sum_atom(q, ctx)  # q == k*m*S
        if not k:
            return None  # q == 0
        d = m if s is None else mono_mul(m, ((s, 1),))
        out: dict = {}
        for mm, c in p.items():
            x = mono_div(mm, d)
            if x is None:
                break
            f = Fraction(c, k)
            out[x] = f.numerator if f.denominator == 1 else f  # (c*x*m*S)/(k*m*S) -> (c/k)*x
        else:
            return ctx.unwrap(out)
        ep, eq = expand(p, ctx), expand(q, ctx)
        if ep is None or eq is None or len(eq) < 2:
            return None  # too large, or no longer a sum
        p, q = ep, eq
    return p_exact_div(p, q, ctx.budget)
