"""Greatest common divisors of multivariate polynomials (subresultant PRS, recursively in the atoms).

``p_gcd(a, b)`` is the gcd over the rationals, returned as the primitive integer polynomial with a
positive leading coefficient (in the lex order of the atoms sorted by :func:`atom_order`), so it
is the same polynomial whatever the run. Over ``Z[x1..xn]``: the integer contents and the
monomial contents come out first; atoms found in only one operand are removed by taking the gcd
of that operand's coefficients in them; one shared atom goes to the dense univariate gcd;
otherwise the heuristic gcd (:mod:`.heuristic`) is tried, then the gcd is
``gcd(contents) * pp(last subresultant)`` in ``R[x]``, ``R`` the ring of the other atoms, the
contents being gcds in fewer atoms (so the depth is bounded by the number of atoms,
:data:`MAX_ATOMS`). Correct before fast: every step is exact.
"""

from __future__ import annotations

import math
import weakref
from typing import Final

from ..core.term import Term
from ..errors import TermTooLargeError
from .dense import Dense, d_gcd
from .division import from_univariate, p_exact_div, to_univariate
from .heuristic import heu_gcd
from .monomials import ONE, mono_gcd, mono_mul, mono_rank_key
from .ring import Budget, Poly, p_atoms, p_degree, p_div_mono, p_is_const, p_mono_gcd, p_mul, p_pow, p_primitive, p_sub

__all__ = ["MAX_ATOMS", "atom_order", "normal_sign", "p_gcd", "p_gcd_list", "p_cofactors", "p_lcm"]

#: atoms a gcd may involve (the recursion of contents goes one atom deeper per level)
MAX_ATOMS: Final = 150


#: each atom's sort key, worked out once (a term is immutable and interned: its printed text never changes)
_ATOM_KEYS: weakref.WeakKeyDictionary[Term, tuple[int, str]] = weakref.WeakKeyDictionary()


def atom_order(atoms: list[Term]) -> list[Term]:
    """``atoms`` in a deterministic order: symbols by name, then other atoms by their printed text."""
    return sorted(atoms, key=_atom_key)


def _atom_key(a: Term) -> tuple[int, str]:
    """``(0, name)`` for a symbol, ``(1, printed text)`` for another atom (printed once per atom)."""
    key = _ATOM_KEYS.get(a)
    if key is None:
        key = _ATOM_KEYS[a] = (0, a.attr[0]) if a.op.name == "symbol" else (1, str(a))
    return key


def _lead_sign(p: Poly, order: list[Term]) -> int:
    rank = {a: i for i, a in enumerate(order)}

    lead = max(p, key=lambda m: mono_rank_key(m, rank))
    return 1 if p[lead] > 0 else -1


def normal_sign(p: Poly) -> Poly:
    """``p`` or ``-p``, whichever has a positive leading coefficient (lex, atoms in :func:`atom_order`)."""
    if not p:
        return p
    if _lead_sign(p, atom_order(p_atoms(p))) > 0:
        return p
    return {m: -c for m, c in p.items()}


def _exact(p: Poly, d: Poly, budget: Budget) -> Poly:
    q = p_exact_div(p, d, budget)
    if q is None:
        raise ArithmeticError("gcd: an inexact division (a bug)")
    return q


def _content_in(u: dict[int, Poly], depth: int, budget: Budget) -> Poly:
    """gcd of the coefficients of a polynomial in one atom (fewer atoms: one level deeper)."""
    g: Poly = {}
    for c in u.values():
        g = _gcd(g, c, depth + 1, budget)
        if len(g) == 1 and ONE in g:
            break
    return g


def _dense(u: dict[int, Poly]) -> list[Poly]:
    out: list[Poly] = [{} for _ in range(max(u) + 1)]
    for k, c in u.items():
        out[k] = c
    return out


def _prem(a: list[Poly], b: list[Poly], budget: Budget) -> list[Poly]:
    """Pseudo-remainder in ``R[x]``: ``lc(b)**(deg a - deg b + 1) * a mod b``."""
    r = list(a)
    db = len(b) - 1
    lcb = b[-1]
    steps = 0
    while len(r) - 1 >= db:
        shift = len(r) - 1 - db
        lcr = r[-1]
        r = [p_mul(c, lcb, budget) for c in r]
        for j in range(db + 1):
            r[shift + j] = p_sub(r[shift + j], p_mul(lcr, b[j], budget))
        while r and not r[-1]:
            r.pop()
        steps += 1
    extra = len(a) - len(b) + 1 - steps
    if extra > 0 and r:
        k = p_pow(lcb, extra, budget)
        r = [p_mul(c, k, budget) for c in r]
    return r


def _subresultant(a: list[Poly], b: list[Poly], budget: Budget) -> list[Poly]:
    """The last non-zero subresultant of ``a``, ``b`` in ``R[x]`` (``deg a >= deg b >= 1``): a multiple of the gcd."""
    g: Poly = {ONE: 1}
    h: Poly = {ONE: 1}
    while True:
        delta = len(a) - len(b)
        r = _prem(a, b, budget)
        if not r:
            return b
        if len(r) == 1:
            return r
        d = p_mul(g, p_pow(h, delta, budget), budget)
        a, b = b, [_exact(c, d, budget) for c in r]
        g = a[-1]
        if delta == 1:
            h = g
        elif delta > 1:
            h = _exact(p_pow(g, delta, budget), p_pow(h, delta - 1, budget), budget)


def _univariate_gcd(a: Poly, b: Poly, x: Term, budget: Budget) -> Poly:
    da: Dense = [0] * (p_degree(a, x) + 1)
    db: Dense = [0] * (p_degree(b, x) + 1)
    for m, c in a.items():
        da[m[0][1] if m else 0] = c
    for m, c in b.items():
        db[m[0][1] if m else 0] = c
    budget.spend(len(da) * len(db))  # the dense gcd's work grows as the product of the degrees
    g = d_gcd(da, db)
    return {(((x, k),) if k else ONE): c for k, c in enumerate(g) if c}


def _gcd(a: Poly, b: Poly, depth: int, budget: Budget) -> Poly:
    """gcd of integer polynomials up to sign (primitive times the gcd of the contents)."""
    if not a:
        return p_primitive(b)[1] if b else {}
    if not b:
        return p_primitive(a)[1]
    ca, a = p_primitive(a)
    cb, b = p_primitive(b)
    c = math.gcd(int(ca), int(cb))
    ma, mb = p_mono_gcd(a), p_mono_gcd(b)
    mg = mono_gcd(ma, mb)
    a, b = p_div_mono(a, ma), p_div_mono(b, mb)
    found = _gcd_reduced(a, b, depth, budget)
    return {mono_mul(m, mg): k * c for m, k in found.items()}


def _coefficients(p: Poly, atoms: set[Term]) -> list[Poly]:
    """The coefficients of ``p`` as a polynomial in ``atoms`` (``[p]`` itself when ``atoms`` is empty)."""
    if not atoms:
        return [p]
    groups: dict[tuple[tuple[Term, int], ...], Poly] = {}
    for m, c in p.items():
        key = tuple([ak for ak in m if ak[0] in atoms])
        rest = tuple([ak for ak in m if ak[0] not in atoms])
        groups.setdefault(key, {})[rest] = c
    return list(groups.values())


def _gcd_reduced(a: Poly, b: Poly, depth: int, budget: Budget) -> Poly:
    """gcd of primitive integer polynomials without monomial factors."""
    if depth > MAX_ATOMS:
        raise TermTooLargeError(f"a polynomial gcd over more than {MAX_ATOMS} atoms")
    if p_is_const(a) or p_is_const(b):
        return {ONE: 1}
    sa, sb = set(p_atoms(a)), set(p_atoms(b))
    if sa != sb:
        # atoms of one operand only: the gcd divides each coefficient of that operand as a
        # polynomial in them, all over the shared atoms (one level deeper, over fewer atoms)
        parts = _coefficients(a, sa - sb) + _coefficients(b, sb - sa)
        parts.sort(key=len)
        g: Poly = {}
        for c in parts:
            g = _gcd(g, c, depth + 1, budget)
            if p_is_const(g):
                return {ONE: 1}
        return p_primitive(g)[1]
    shared = atom_order(list(sa))
    if len(shared) == 1:
        return _univariate_gcd(a, b, shared[0], budget)
    heu = heu_gcd(a, b, shared, budget) if len(shared) <= MAX_ATOMS else None
    if heu is not None:
        return heu
    x = min(atom_order(shared), key=lambda v: max(p_degree(a, v), p_degree(b, v)))
    ua, ub = to_univariate(a, x), to_univariate(b, x)
    conta, contb = _content_in(ua, depth, budget), _content_in(ub, depth, budget)
    da = _dense({k: _exact(c, conta, budget) for k, c in ua.items()})
    db = _dense({k: _exact(c, contb, budget) for k, c in ub.items()})
    if len(da) < len(db):
        da, db = db, da
    last = _subresultant(da, db, budget)
    if len(last) == 1:
        h: Poly = {ONE: 1}
    else:
        u = {k: c for k, c in enumerate(last) if c}
        cont = _content_in(u, depth, budget)
        h = from_univariate({k: _exact(c, cont, budget) for k, c in u.items()}, x)
        h = p_primitive(h)[1]
    return p_mul(h, _gcd(conta, contb, depth + 1, budget), budget)


def p_gcd(a: Poly, b: Poly, budget: Budget | None = None) -> Poly:
    """The gcd over Q: primitive, integral, with a positive leading coefficient ({} for two zeros)."""
    budget = budget or Budget()
    g = _gcd(p_primitive(a)[1], p_primitive(b)[1], 0, budget)
    return normal_sign(p_primitive(g)[1])


def p_gcd_list(polys: list[Poly], budget: Budget | None = None) -> Poly:
    """The gcd of several polynomials (as :func:`p_gcd`)."""
    budget = budget or Budget()
    g: Poly = {}
    for p in polys:
        g = p_gcd(g, p, budget)
        if len(g) == 1 and ONE in g:
            break
    return g


def p_cofactors(a: Poly, b: Poly, budget: Budget | None = None) -> tuple[Poly, Poly, Poly]:
    """``(g, a/g, b/g)`` with ``g = p_gcd(a, b)`` (exact over Q)."""
    budget = budget or Budget()
    g = p_gcd(a, b, budget)
    if not g:
        return g, {}, {}
    return g, _exact(a, g, budget), _exact(b, g, budget)


def p_lcm(a: Poly, b: Poly, budget: Budget | None = None) -> Poly:
    """The least common multiple over Q, primitive with a positive leading coefficient."""
    if not a or not b:
        return {}
    budget = budget or Budget()
    g = p_gcd(a, b, budget)
    return normal_sign(p_primitive(p_mul(_exact(a, g, budget), b, budget))[1])
