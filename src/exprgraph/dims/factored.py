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
from .normal import (
    ONE,
    Budget,
    Mono,
    Poly,
    _check_degree,
    defer_key,
    inner_term,
    int_power,
    mono_div,
    mono_key,
    mono_mul,
    mono_of_powers,
    p_content,
    p_div_mono,
    p_exact_div,
    p_mono_gcd,
    p_mul,
    p_scale,
    split_factors,
)
from .polyprint import inner_text

__all__ = ["EXPAND_LIMIT", "sum_atom", "has_sums", "poly_size", "expand", "product_poly", "fold_sums", "exact_quotient"]

#: monomial operations one expansion may spend (beyond, the factored form stands)
EXPAND_LIMIT: Final = 4096


def _key_text(q: Poly) -> str:
    return inner_text(q)[0]


def _lead_sign(q: Poly) -> int:
    """Sign of the first non-constant term of ``q`` in print order."""
    lead: Mono | None = None
    lead_key: tuple = ()
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


def fold_sums(p: Poly, ctx: Context) -> Poly:
    """``p``, or its expansion when that is no larger (``a*(b+c) - a*c -> a*b``); never larger."""
    if len(p) < 2 or not has_sums(p, ctx):
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
