"""Factorisation of multivariate polynomials over the integers: contents, square-free parts, irreducibles.

``p_factor(p)`` gives ``(c, [(f, e), ...])`` with ``p == c * prod f**e``: ``c`` rational, each ``f``
primitive and integral with a positive leading coefficient (:func:`~.gcd.normal_sign`). The work
goes through a worklist (no recursion): the monomial content comes out atom by atom; a polynomial
is split into its content and primitive part in one atom, the primitive part into square-free
parts (Yun's algorithm in that atom, with multivariate gcds); a square-free part in one atom is
factored by Zassenhaus (:mod:`.factor_univariate`); one in several atoms by Kronecker's
substitution ``x_i -> t**(D**i)`` (``D`` beyond every degree), the univariate factors of the image
recombined and each candidate mapped back and checked by exact division. A part whose image
would pass degree :data:`MAX_KRONECKER_DEGREE` (or whose recombination passes
:data:`MAX_SUBSETS`) is kept whole: every factor returned divides ``p``, none is ever wrong, but
such a part may be reducible.

``p_root_factors(p, roots)`` is the cheap, bounded step: the linear factors ``x - r`` for candidate roots the
caller names (found by substitution, taken out by exact division), without the work of a full factorisation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from itertools import combinations
from typing import Final

from ..core.term import Term
from .dense import Dense, d_mul, d_trim
from .division import p_exact_div, to_univariate
from .factor_univariate import d_factor
from .gcd import atom_order, normal_sign, p_gcd, p_gcd_list
from .monomials import ONE, Mono, mono_mul, mono_rank_key
from .ring import (
    Budget,
    Coeff,
    Poly,
    norm,
    p_atoms,
    p_degree,
    p_diff,
    p_div_mono,
    p_eval,
    p_is_const,
    p_mono_gcd,
    p_mul,
    p_pow,
    p_primitive,
    p_sub,
)

__all__ = ["MAX_KRONECKER_DEGREE", "MAX_SUBSETS", "p_factor", "p_sqf", "p_root_factors", "factor_key"]

#: largest degree of the univariate image of a multivariate square-free part
MAX_KRONECKER_DEGREE: Final = 200
#: subsets of univariate factors tried when recombining a multivariate part
MAX_SUBSETS: Final = 20_000


def _exact(p: Poly, d: Poly, budget: Budget) -> Poly:
    q = p_exact_div(p, d, budget)
    if q is None:
        raise ArithmeticError("factor: an inexact division (a bug)")
    return q


def _yun(f: Poly, x: Term, budget: Budget) -> list[tuple[Poly, int]]:
    """Square-free parts of ``f`` (primitive in ``x``) that involve ``x``: ``[(g, i), ...]``."""
    out: list[tuple[Poly, int]] = []
    df = p_diff(f, x)
    g = p_gcd(f, df, budget)
    b = _exact(f, g, budget)
    c = _exact(df, g, budget)
    i = 1
    while p_degree(b, x) > 0:
        d = p_sub(c, p_diff(b, x))
        h = p_gcd(b, d, budget)
        if p_degree(h, x) > 0:
            out.append((h, i))
        b = _exact(b, h, budget)
        c = _exact(d, h, budget)
        i += 1
    return out


def _split(p: Poly, budget: Budget) -> tuple[Coeff, list[tuple[Poly, int]]]:
    """``(c, parts)``: ``p == c * prod g**i`` with each ``g`` square-free, primitive, ``x**k`` parts as atoms."""
    c, prim = p_primitive(p)
    parts: list[tuple[Poly, int]] = []
    mono = p_mono_gcd(prim)
    for a, k in mono:
        parts.append(({((a, 1),): 1}, k))
    todo: list[tuple[Poly, int]] = [(p_div_mono(prim, mono), 1)]
    while todo:
        f, e = todo.pop()
        atoms = p_atoms(f)
        if not atoms:
            continue
        x = atom_order(atoms)[0]
        cont = p_gcd_list(list(to_univariate(f, x).values()), budget)
        if p_atoms(cont):
            todo.append((cont, e))
            todo.append((_exact(f, cont, budget), e))
            continue
        for g, i in _yun(f, x, budget):
            parts.append((g, i * e))
    return c, parts


def _kronecker(f: Poly, atoms: list[Term]) -> tuple[Dense, int] | None:
    base = max(p_degree(f, a) for a in atoms) + 1
    top = sum(p_degree(f, a) * base**i for i, a in enumerate(atoms))
    if top > MAX_KRONECKER_DEGREE:
        return None
    rank = {a: i for i, a in enumerate(atoms)}
    image: Dense = [0] * (top + 1)
    for m, c in f.items():
        image[sum(k * base ** rank[a] for a, k in m)] = c
    return d_trim(image), base


def _decode(g: Dense, atoms: list[Term], base: int) -> Poly:
    out: Poly = {}
    for k, c in enumerate(g):
        if not c:
            continue
        mono: list[tuple[Term, int]] = []
        for a in atoms:
            if k % base:
                mono.append((a, k % base))
            k //= base
        if k:
            return {}  # beyond the last atom: not the image of a factor
        out[tuple(sorted(mono, key=lambda ak: id(ak[0])))] = c
    return out


def _factor_multivariate(f: Poly, budget: Budget) -> list[Poly]:
    """Irreducible factors of a square-free primitive ``f`` in several atoms (kept whole past the limits).

    The image is ``t**k`` times the product of the other univariate factors (the pieces); a true
    factor of ``f`` (no monomial divides it) maps to ``t**j`` times a product of pieces, so each
    subset of pieces is tried with each shift ``j <= k``, smallest subsets first.
    """
    atoms = atom_order(p_atoms(f))
    kron = _kronecker(f, atoms)
    if kron is None:
        return [f]
    image, base = kron
    shift = 0
    pieces: list[Dense] = []
    for g, e in d_factor(image)[1]:
        if g == [0, 1]:
            shift = e
        else:
            pieces.extend([g] * e)
    found: list[Poly] = []
    size, tried = 1, 0
    while 2 * size <= len(pieces):
        hit = None
        for idx in combinations(range(len(pieces)), size):
            tried += 1
            if tried > MAX_SUBSETS:
                return [*found, f]
            cand: Dense = [1]
            for i in idx:
                cand = d_mul(cand, pieces[i])
            hit = _shifted_factor(f, cand, shift, atoms, base, budget)
            if hit is not None:
                found.append(hit[0])
                f, shift = hit[1], shift - hit[2]
                pieces = [pc for i, pc in enumerate(pieces) if i not in idx]
                break
        if hit is None:
            size += 1
    return [*found, f]


def _shifted_factor(
    f: Poly, cand: Dense, shift: int, atoms: list[Term], base: int, budget: Budget
) -> tuple[Poly, Poly, int] | None:
    """``(g, f/g, j)`` for the first ``j <= shift`` whose ``t**j * cand`` maps back to a factor ``g`` of ``f``."""
    for j in range(shift + 1):
        shifted: Dense = [0] * j
        g = _decode(shifted + cand, atoms, base)
        if len(g) < 2 or p_mono_gcd(g):
            continue
        q = p_exact_div(f, g, budget)
        if q is not None:
            return g, q, j
    return None


def _irreducibles(g: Poly, budget: Budget) -> list[Poly]:
    """The irreducible factors of a square-free ``g`` (up to integer content, which the caller takes out)."""
    out: list[Poly] = []
    todo = [g]
    while todo:  # a loop, not recursion: each gcd split leaves fewer atoms to its first part
        f = todo.pop()
        split = _linear_split(f, budget)
        if split is None:
            out.extend(_irreducibles_of(f, budget))
        elif len(split) == 1:
            out.append(f)
        else:
            out.append(split[1])
            todo.append(split[0])
    return out


def _linear_split(f: Poly, budget: Budget) -> list[Poly] | None:
    """For ``f`` of degree 1 in some atom ``a``, ``f == A*a + B``: ``[f]`` when ``gcd(A, B)`` is a constant (then
    ``f`` is irreducible: a factor free of ``a`` divides both ``A`` and ``B``), else ``[d, f/d]`` with
    ``d = gcd(A, B)`` (``f/d`` is irreducible, ``d`` free of ``a``); None when ``f`` has no such atom (or is a
    constant). The Kronecker route costs milliseconds on what this decides with one gcd."""
    for a in atom_order(p_atoms(f)):
        if p_degree(f, a) != 1:
            continue
        by_power = to_univariate(f, a)
        d = p_gcd(by_power.get(1, {}), by_power.get(0, {}), budget)
        if p_is_const(d):
            return [f]
        q = p_exact_div(f, d, budget)
        return None if q is None else [d, q]  # (q is never None: d divides both coefficients)
    return None


def _irreducibles_of(g: Poly, budget: Budget) -> list[Poly]:
    """:func:`_irreducibles` of a ``g`` of degree at least 2 in each of its atoms."""
    if all(len(m) <= 1 and (not m or m[0][1] == 1) for m in g):
        return [g]  # of total degree 1: irreducible up to its content (which the caller takes out)
    atoms = p_atoms(g)
    if len(atoms) == 1:
        x = atoms[0]
        dense: Dense = [0] * (p_degree(g, x) + 1)
        for m, c in g.items():
            dense[m[0][1] if m else 0] = c
        return [{(((x, k),) if k else ONE): c for k, c in enumerate(f) if c} for f, _ in d_factor(dense)[1]]
    found = _dehomogenised(g)
    if found is not None:  # (h has one atom less and is not homogeneous: this happens once)
        y, h = found
        return [_homogenised(q, y) for q in _irreducibles(h, budget)]
    return _factor_multivariate(g, budget)


def _dehomogenised(g: Poly) -> tuple[Term, Poly] | None:
    """``(y, g at y = 1)`` for a homogeneous ``g`` of several atoms that its last atom ``y`` does not divide.

    The factors of a homogeneous polynomial are homogeneous, and ``g = prod q_i`` exactly when
    ``g(y=1) = prod q_i(y=1)``: so ``g`` factors as ``g(y=1)`` does, in one atom less, each factor
    made homogeneous again (:func:`_homogenised`); ``x**2 - y**2`` as ``x**2 - 1``. Monomials stay
    distinct (in a homogeneous ``g`` the other exponents give ``y``'s)."""
    degrees = {sum(k for _, k in m) for m in g}
    atoms = atom_order(p_atoms(g))
    if len(degrees) != 1 or len(atoms) < 2:
        return None
    y = atoms[-1]
    if all(any(a is y for a, _ in m) for m in g):
        return None  # y divides g: the factor y would be lost
    return y, {tuple(ak for ak in m if ak[0] is not y): c for m, c in g.items()}


def _homogenised(q: Poly, y: Term) -> Poly:
    """``q`` made homogeneous with powers of ``y``: each monomial raised to ``q``'s total degree."""
    top = max(sum(k for _, k in m) for m in q)
    out: Poly = {}
    for m, c in q.items():
        e = top - sum(k for _, k in m)
        out[mono_mul(m, ((y, e),)) if e else m] = c
    return out


def factor_key(p: Poly) -> tuple[int, int, list[tuple[list[tuple[int, int]], str]]]:
    """A deterministic sort key of factors: total degree, number of terms, then the terms."""
    order = atom_order(p_atoms(p))
    rank = {a: i for i, a in enumerate(order)}

    total = max((sum(k for _, k in m) for m in p), default=0)
    return (total, len(p), sorted([(mono_rank_key(m, rank)[1], str(c)) for m, c in p.items()], reverse=True))


def p_sqf(p: Poly, budget: Budget | None = None) -> tuple[Coeff, list[tuple[Poly, int]]]:
    """Square-free decomposition: ``(c, [(g, i), ...])`` with ``p == c * prod g**i``, each ``g`` square-free."""
    budget = budget or Budget()
    if not p:
        return 0, []
    c, parts = _split(p, budget)
    return _fix_constant(p, c, [(normal_sign(g), i) for g, i in parts], budget)


def _fix_constant(
    p: Poly, c: Coeff, parts: list[tuple[Poly, int]], budget: Budget
) -> tuple[Coeff, list[tuple[Poly, int]]]:
    """The constant that makes ``c' * prod g**i`` equal to ``p`` (signs of the parts normalised)."""
    prod: Poly = {ONE: 1}
    for g, i in parts:
        prod = p_mul(prod, p_pow(g, i, budget), budget)
    m, k = next(iter(prod.items()))
    parts.sort(key=lambda gi: (factor_key(gi[0]), gi[1]))
    return norm(Fraction(p[m]) / k), parts


def p_factor(p: Poly, budget: Budget | None = None) -> tuple[Coeff, list[tuple[Poly, int]]]:
    """``(c, [(f, e), ...])`` with ``p == c * prod f**e``, the ``f`` irreducible over Z (but past the limits)."""
    budget = budget or Budget()
    if not p:
        return 0, []
    c, parts = _split(p, budget)
    merged: dict[frozenset[tuple[Mono, Coeff]], tuple[Poly, int]] = {}
    for g, i in parts:
        for f in _irreducibles(g, budget):
            f = normal_sign(p_primitive(f)[1])
            key = frozenset(f.items())
            old = merged.get(key)
            merged[key] = (f, i + (old[1] if old else 0))
    return _fix_constant(p, c, list(merged.values()), budget)


def p_root_factors(
    p: Poly, roots: Mapping[Term, Sequence[int]], budget: Budget | None = None
) -> tuple[list[tuple[Term, int, int]], Poly]:
    """The linear factors ``atom - r`` of ``p`` for the candidate roots given: ``([(atom, r, e), ...], q)`` with
    ``p == q * prod (atom - r)**e``. A candidate is a root when substituting it for its atom gives zero; its factor
    is then divided out exactly (as often as it divides). Cheap: one substitution per candidate and exponent."""
    budget = budget or Budget()
    found: list[tuple[Term, int, int]] = []
    q = p
    for atom, candidates in roots.items():
        for r in candidates:
            e = 0
            # (atom - r) divides q exactly when q vanishes at atom == r (the factor theorem, in atom)
            while p_degree(q, atom) > 0 and not p_eval(q, {atom: r}):
                factor: Poly = {((atom, 1),): 1, ONE: -r} if r else {((atom, 1),): 1}
                quotient = p_exact_div(q, factor, budget)
                if quotient is None:
                    break  # (not reached: a root's factor divides)
                q, e = quotient, e + 1
            if e:
                found.append((atom, r, e))
    return found, q
