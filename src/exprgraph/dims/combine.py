"""Rules across the terms of a sum. Each holds for every integer value (where the sum is defined).

- ``(x//k)*k + x%k -> x`` and ``x - (x//k)*k -> x%k``, from ``x == k*(x//k) + x%k``, also where
  ``x//k`` is known only by its canonical form (``(w//4)%5 + 5*(w//20) -> w//4`` since
  ``(w//4)//5`` is ``w//20``; ``h//4 - 3*(h//12) -> (h//4)%3``);
- ``max(a,b) + min(a,b) -> a + b``;
- identities that make a sum smaller: whenever ``C == 0`` for every value, ``p`` and ``p + t*C``
  are equal, and the sum takes the ``t`` that makes it smallest (see _shrink):

  * ``y == k*(y//k) + y%k`` for any ``y`` and ``k != 0``, with ``y%k`` written in its canonical
    form (``(s0-s1)%4`` is ``(s0+3*s1)%4``), so ``(s0-s1)//4*4 + (s0-s1)%4 -> s0-s1``;
  * Hermite's identity ``x//k + (x+1)//k + ... + (x+k-1)//k == x`` for a constant ``k >= 2``, so
    ``a//2 + (a+1)//2 -> a``, ``CeilToInt(b+c, 2) + (b+c)//2 -> b+c`` and ``x - x//2 -> (x+1)//2``;
  * the two together: ``s0//2 + s0%2 -> s0 - s0//2 -> (s0+1)//2``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from ..core.op import Op
from ..core.term import Term
from .context import Context
from .division import floordiv_const, mod_const, mod_poly
from .factored import fold_sums
from .monomials import ONE, Mono, mono_div, mono_mul
from .ring import Poly, p_add, p_add_into, p_const, p_const_value, p_is_const, p_mul
from .terms import FLOORDIV, MAX, MIN, MOD, live_term

__all__ = ["combine_terms", "may_combine"]

#: a rule across the terms of a sum, for the term ``c*m`` of ``p`` whose monomial ``m`` is the atom
#: ``a`` (to the power 1) times ``rest``: True when it rewrote ``p`` in place
SumRule = Callable[[Poly, Mono, int, Term, Mono, Context], bool]

#: the switch of the check before the rules (a twin of exprgraph.twins): False makes may_combine
#: say True for every sum, so the rules run on each one
COMBINE_CHECK = True

#: largest constant divisor k for which Hermite's identity (k terms) is tried
MAX_HERMITE: Final = 64
#: identities applied to one sum at most (each makes it strictly smaller, so this is a safety net)
MAX_IDENTITIES: Final = 256
#: largest sum searched for a division whose quotient was merged (x - m*(x//m) where x//m is canonicalised)
MAX_MERGED_SCAN: Final = 64


def combine_terms(p: Poly, ctx: Context) -> Poly:
    """Apply the cross-term rules to ``p`` (in place, or to its expansion) until none applies; returns the result.

    ``p`` itself is returned unchanged when :func:`may_combine` says no rule can apply.
    """
    if len(p) < 2 or not may_combine(p, ctx):
        return p
    if ctx.sums:
        # products of sums: cancel through the expansion when it is no larger (a*(b+c) - a*c -> a*b)
        p = fold_sums(p, ctx)
    for _ in range(MAX_IDENTITIES):
        if not _rules(p, ctx) or len(p) < 2 or not _identities(p, ctx):
            break
    if ctx.sums:
        p = ctx.unwrap(p)
    return p


def may_combine(p: Poly, ctx: Context) -> bool:
    """Whether a rule may apply to ``p`` (False: combine_terms gives ``p`` back unchanged).

    Every rule needs an opaque atom or a sum atom in ``p`` (the rules below look only at atoms of
    ``ctx.atom_args``, the expansions only at sum atoms), so a sum of names and their products,
    the commonest, is left as it is at once. So is one opaque atom plus a constant (``x//4 + 1``):
    each rule needs a second term with an atom (``x%q`` beside ``q*(x//q)``, ``x`` beside
    ``x//q``, ``min`` beside ``max``, a second member of a Hermite family), and the atom's own
    arguments never hold the atom.
    """
    if not COMBINE_CHECK:
        return True
    opaque = ctx.atom_args
    sums = ctx.sums
    if not opaque and not sums:
        return False
    found = False
    m: Mono  # (typed, so the compiled build reads its pairs as a tuple's)
    for m in p:
        for a, _ in m:
            if a in sums:
                return True
            if a in opaque:
                found = True
    if not found or len(p) < 2:
        return False
    if len(p) == 2 and ONE in p:
        for m in p:
            if m and len(m) == 1 and m[0][1] == 1:
                return False  # c*atom + constant
    return True


def _rules(p: Poly, ctx: Context) -> bool:
    """The rules of the first two bullets until none applies; True if ``p`` holds a floor division."""
    changed = True
    divisions = False
    while changed:
        changed = False
        divisions = False
        for m, c in list(p.items()):
            if p.get(m) != c:
                continue
            for a, e in m:
                if e != 1 or a.op not in SUM_RULES or a not in ctx.atom_args:
                    continue
                if a.op is FLOORDIV:
                    divisions = True
                rest = mono_div(m, ((a, 1),))
                if rest is None:  # never: a divides m
                    continue
                for rule in SUM_RULES[a.op]:
                    if rule(p, m, c, a, rest, ctx):
                        changed = True
                        break
                if changed:
                    break
            if changed:
                break
    return divisions


def _mono_size(m: Mono, ctx: Context) -> int:
    weights = ctx.weights
    n = 0
    for a, e in m:
        n += e * weights.get(a, 1)
    return n


def _shrink(p: Poly, identity: Poly, ctx: Context) -> bool:
    """``p += t*identity`` (``identity == 0`` for every value) for the ``t`` that makes ``p`` smallest.

    Only a ``t`` that removes a term of ``p`` can make it smaller; ``p`` changes only when it gets
    strictly smaller (by Context.size), so applying identities always ends. True if it changed.
    """
    candidates: set[int] = set()
    for m, c in identity.items():
        v = p.get(m)
        if v and v % c == 0:
            candidates.add(-(v // c))
    best_t = 0
    best = 0
    for t in sorted(candidates, key=lambda x: (abs(x), x)):
        delta = 0
        for m, c in identity.items():
            old = p.get(m, 0)
            new = old + t * c
            if (old != 0) != (new != 0):
                w = _mono_size(m, ctx)
                delta += w if new else -w
        if delta < best:
            best, best_t = delta, t
    if not best_t:
        return False
    p_add_into(p, identity, best_t)
    return True


def _holds(p: Poly, part: Poly, rest: Mono) -> bool:
    """Whether ``p`` holds ``rest`` times a non-constant term of ``part`` (any of them: which term
    a polynomial lists first depends on how it was built, and the answer must not)."""
    for m in part:
        if m and mono_mul(rest, m) in p:
            return True
    return False


def _may_shrink(p: Poly, known: Poly, unknown: int, unknown_size: int, ctx: Context) -> bool:
    """Whether ``p + t*C`` may be smaller than ``p`` for some ``t``, before ``C`` is built.

    ``known`` holds the terms of the identity ``C`` known without building anything; ``unknown``
    more terms of ``C`` (atoms not built yet, not in ``p``) appear for any ``t != 0``, each of size
    at least ``unknown_size``. Only a ``t`` that removes a known term of ``p`` can help.
    """
    for m, c in known.items():
        v = p.get(m)
        if not v or v % c:
            continue
        t = -(v // c)
        delta = unknown * unknown_size
        for mm, cc in known.items():
            old = p.get(mm, 0)
            new = old + t * cc
            if (old != 0) != (new != 0):
                w = _mono_size(mm, ctx)
                delta += w if new else -w
        if delta < 0:
            return True
    return False


def _identities(p: Poly, ctx: Context) -> bool:
    """Apply one identity that makes ``p`` smaller (see the module docstring); True if one did."""
    mod_divisors, divisions = _divisions_and_modulos(p, ctx)
    # Hermite families: (rest, k, x) -> [x, {r: the atom (x + r)//k in p}]
    families: dict[tuple, list] = {}
    for a, rest in divisions:
        y, q = ctx.atom_args[a]
        if not q:
            continue  # y//0 stays as it is
        const_q = p_is_const(q)
        with_mod = bool(mod_divisors) and frozenset(q.items()) in mod_divisors
        if (with_mod or _holds(p, y, rest)) and _division_identity(p, a, rest, with_mod, const_q, ctx):
            return True
        if const_q:
            k = p_const_value(q)
            r = p_const_value(y)
            if 2 <= k <= MAX_HERMITE and 0 <= r < k:
                x = {m: c for m, c in y.items() if m}
                key = (rest, k, frozenset(x.items()))
                entry = families.get(key)
                if entry is None:
                    families[key] = [x, {r: a}]
                else:
                    entry[1][r] = a
    return _hermite_identity(p, families, ctx)


def _divisions_and_modulos(p: Poly, ctx: Context) -> tuple[set[frozenset], list[tuple[Term, Mono]]]:
    """The divisors of the modulos in ``p``, and its floor divisions (each with the rest of its monomial)."""
    mod_divisors: set[frozenset] = set()
    divisions: list[tuple[Term, Mono]] = []
    for m in p:
        for a, e in m:
            if e != 1:
                continue
            if a.op is MOD:
                args = ctx.atom_args.get(a)
                if args is not None:
                    mod_divisors.add(frozenset(args[1].items()))
            elif a.op is FLOORDIV and a in ctx.atom_args:
                rest = mono_div(m, ((a, 1),))
                if rest is not None:
                    divisions.append((a, rest))
    return mod_divisors, divisions


def _division_identity(p: Poly, a: Term, rest: Mono, with_mod: bool, const_q: bool, ctx: Context) -> bool:
    """Shrink ``p`` by the identity of the division ``a = y//q`` (times ``rest``); True if it did."""
    y, q = ctx.atom_args[a]
    if not with_mod and const_q:
        # only y%q is not built yet: rest*(y%q) + q*rest*(y//q) - rest*y, y%q of size >= 2
        known = {mono_mul(rest, m): -c for m, c in y.items()}
        known[mono_mul(rest, ((a, 1),))] = p_const_value(q)
        if not _may_shrink(p, known, 1, 2, ctx):
            return False
    # y == q*(y//q) + y%q:  rest*(y%q) + q*rest*(y//q) - rest*y == 0
    identity = p_mul(ctx.unwrap(mod_poly(y, q, ctx)), {rest: 1}, ctx.budget)
    p_add_into(identity, p_mul(q, {mono_mul(rest, ((a, 1),)): 1}, ctx.budget))
    p_add_into(identity, p_mul(y, {rest: 1}, ctx.budget), -1)
    return _shrink(p, identity, ctx)


def _hermite_identity(p: Poly, families: dict[tuple, list], ctx: Context) -> bool:
    """Shrink ``p`` by Hermite's identity on one family of divisions ``(x + r)//k``; True if it did."""
    for (rest, k, _), (x, members) in families.items():
        if len(members) < 2 and not _holds(p, x, rest):
            continue
        # the residues not in p are atoms not built yet: each of size >= 2, unless the range of x
        # is narrower than k (then a floor division may fold to a constant)
        lo, hi = ctx.range_of(x)
        narrow = type(hi) is int and type(lo) is int and hi - lo < k
        known = {mono_mul(rest, m): c for m, c in x.items()}
        for a in members.values():
            known[mono_mul(rest, ((a, 1),))] = -1
        if not _may_shrink(p, known, k - len(members), 0 if narrow else 2, ctx):
            continue
        # Hermite: x//k + (x+1)//k + ... + (x+k-1)//k == x:  rest*x - sum_r rest*((x+r)//k) == 0
        identity = p_mul(x, {rest: 1}, ctx.budget)
        for r in range(k):
            part = ctx.unwrap(floordiv_const(p_add(x, p_const(r)), k, ctx))
            p_add_into(identity, p_mul(part, {rest: 1}, ctx.budget), -1)
        if _shrink(p, identity, ctx):
            return True
    return False


def _contains(p: Poly, part: Poly) -> bool:
    return all(p.get(m) == c for m, c in part.items())


def _absorb_mod(p: Poly, m: Mono, c: int, mod: Term, rest: Mono, ctx: Context) -> bool:
    # c*u*(x%q) + c*u*q*(x//q) -> c*u*x
    x, q = ctx.atom_args[mod]
    if not q:
        return False  # x % 0 stays as it is
    div = live_term(FLOORDIV, mod.args)
    quotient_part = None if div is None else p_mul(q, {mono_mul(rest, ((div, 1),)): c}, ctx.budget)
    if quotient_part is None or not _contains(p, quotient_part):
        # x//q may be in p only in its canonical form ((w//4)//5 is w//20)
        quotient_part = _merged_quotient_part(p, c, x, q, rest, ctx)
        if quotient_part is None:
            return False
    p_add_into(p, quotient_part, -1)
    p_add_into(p, {m: c}, -1)
    p_add_into(p, p_mul(x, {rest: c}, ctx.budget))
    return True


def _merge_mods(p: Poly, m: Mono, c: int, a: Term, rest: Mono, ctx: Context) -> bool:
    # c*u*(y%j) + c*j*u*((y//j)%k) -> c*u*(y%(j*k)) for constants j, k > 0
    y, q = ctx.atom_args[a]
    if len(q) != 1 or q.get(ONE, 0) <= 0 or len(p) > MAX_MERGED_SCAN:
        return False
    j = q[ONE]
    for m2, c2 in p.items():
        if c2 != c * j or len(m2) != len(rest) + 1:
            continue
        for b, e in m2:
            if e != 1 or b.op is not MOD or mono_div(m2, ((b, 1),)) != rest:
                continue
            inner, k = ctx.atom_args.get(b, ({}, {}))
            if len(k) != 1 or k.get(ONE, 0) <= 0 or len(inner) != 1:
                continue
            ((mf, cf),) = inner.items()
            if cf != 1 or len(mf) != 1 or mf[0][1] != 1 or mf[0][0].op is not FLOORDIV:
                continue
            if ctx.atom_args.get(mf[0][0]) != (y, q):
                continue
            p_add_into(p, {mono_mul(rest, ((a, 1),)): c, m2: c2}, -1)
            p_add_into(p, p_mul(mod_const(y, j * k[ONE], ctx), {rest: c}, ctx.budget))
            return True
    return False


def _round_up(p: Poly, m: Mono, c: int, a: Term, rest: Mono, ctx: Context) -> bool:
    # c*(t + s%k) -> c*k*((t + k - 1)//k) when s == -t modulo k (padding t up to a multiple of k):
    # t + (-t)%k is the least multiple of k at or above t; t's coefficients are k minus s's, not above them
    if rest:
        return False
    s, q = ctx.atom_args[a]
    if len(q) != 1 or q.get(ONE, 0) < 2:
        return False
    k = q[ONE]
    t: Poly = {}
    for mm, sc in s.items():
        if not mm:
            continue
        pv = p.get(mm)
        if pv is None or pv % c or pv // c != k - sc or 2 * (k - sc) > k:
            return False
        t[mm] = k - sc
    if not t:
        return False
    t0 = (-s.get(ONE, 0)) % k
    if t0:
        t[ONE] = t0
    p_add_into(p, {m: c}, -1)
    p_add_into(p, t, -c)
    p_add_into(p, ctx.unwrap(floordiv_const(p_add(t, {ONE: k - 1}), k, ctx)), c * k)
    return True


def _form_mod(p: Poly, m: Mono, a: int, div: Term, rest: Mono, ctx: Context) -> bool:
    # c*u*x - c*u*q*(x//q) -> c*u*(x%q), for a constant q > 0 (a == -c*q)
    x, q = ctx.atom_args[div]
    if not p_is_const(q):
        return False
    qv = p_const_value(q)
    if qv <= 0 or a % qv:
        return _form_mod_merged(p, a, div, rest, ctx)
    c = -a // qv
    x_part = p_mul(x, {rest: c}, ctx.budget)
    if not rest:
        x_part.pop(ONE, None)  # the constant of x may be anything: it only shifts the constant term
    if not x_part or not _contains(p, x_part):
        return _form_mod_merged(p, a, div, rest, ctx)
    p_add_into(p, {m: a}, -1)
    p_add_into(p, p_mul(x, {rest: c}, ctx.budget), -1)
    p_add_into(p, p_mul(mod_const(x, qv, ctx), {rest: c}, ctx.budget))
    return True


def _has_division(x: Poly) -> bool:
    """Whether a term of ``x`` holds a floor division."""
    for m in x:
        for a, _ in m:
            if a.op is FLOORDIV:
                return True
    return False


def _merged_quotient_part(p: Poly, c: int, x: Poly, q: Poly, rest: Mono, ctx: Context) -> Poly | None:
    """``c*q*rest*D`` for ``D`` the canonical form of ``x//q``, when ``p`` holds it (``x`` holds a
    floor division, so ``x//q`` may have merged into one: ``(w//4)//5`` is ``w//20``), else None."""
    # k*(y//k) + y%k -> y with y//k canonicalised: (w//4)%5 + 5*(w//20) -> w//4
    if not p_is_const(q) or not _has_division(x) or len(p) > MAX_MERGED_SCAN:
        return None
    qv = p_const_value(q)
    if qv <= 0:
        return None
    k = c * qv
    for m, v in p.items():  # (a cheap look for a quotient c*q*rest*(y//r) before building x//q)
        if v % k == 0 and any(a.op is FLOORDIV and mono_div(m, ((a, 1),)) == rest for a, _ in m):
            break
    else:
        return None
    part = p_mul(ctx.unwrap(floordiv_const(x, qv, ctx)), {rest: k}, ctx.budget)
    check = dict(part)
    if not rest:
        check.pop(ONE, None)  # the constant of x//q only shifts the constant term
    return part if check and _contains(p, check) else None


def _form_mod_merged(p: Poly, a: int, div: Term, rest: Mono, ctx: Context) -> bool:
    # k*u*x - k*m*u*D -> k*u*(x%m) for an atom x = y//r whose quotient x//m is canonically D
    # (h//4 - 3*(h//12) -> (h//4)%3, 2*w//3 - 2*(w//3) -> (2*w//3)%2); alone in its term, x may
    # take an offset j first: x - m*D -> (x + j)%m - j when (x + j)//m is D plus a constant
    if -2 < a < 2 or len(p) > MAX_MERGED_SCAN:
        return False
    for m2, k in list(p.items()):
        if a % k or -a // k < 2:
            continue
        for x, e in m2:
            if e != 1 or x.op is not FLOORDIV or x is div or x not in ctx.atom_args:
                continue
            if mono_div(m2, ((x, 1),)) != rest:
                continue
            mm = -a // k
            xp: Poly = {((x, 1),): 1}
            j = 0 if rest else _offset(x, div, mm, ctx)
            if j:
                xp[ONE] = j
            quot = ctx.unwrap(floordiv_const(xp, mm, ctx))
            if len(quot) - (ONE in quot) != 1 or quot.get(((div, 1),)) != 1:
                continue
            # x + j == mm*((x + j)//mm) + (x + j)%mm:  k*rest*((x+j)%mm + mm*quot - x - j) == 0
            identity = ctx.unwrap(mod_const(xp, mm, ctx))
            p_add_into(identity, quot, mm)
            p_add_into(identity, xp, -1)
            p_add_into(p, p_mul(identity, {rest: k}, ctx.budget))
            return True
    return False


def _offset(x: Term, d: Term, mm: int, ctx: Context) -> int:
    """The ``j`` in ``[0, mm)`` for which ``(x + j)//mm`` may be ``d``, read off the constants of
    their insides, else 0: for ``x = (y + cx)//r`` that is ``(y + cx + j*r)//(r*mm)``, which with
    ``g`` the common factor is ``d = (y/g + cd)//(r*mm/g)`` when ``(cx + j*r)//g == cd`` modulo ``r*mm/g``."""
    xy, xr = ctx.atom_args[x]
    dy, dq = ctx.atom_args[d]
    if not p_is_const(xr) or not p_is_const(dq) or mm > MAX_HERMITE:
        return 0
    r = p_const_value(xr)
    q = p_const_value(dq)
    if r <= 0 or q <= 0 or (r * mm) % q:
        return 0
    g = r * mm // q
    cx = p_const_value(xy)
    cd = p_const_value(dy) % q
    for j in range(mm):  # (the first that fits: two that fit give the same quotient)
        if ((cx + j * r) // g) % q == cd:
            return j
    return 0


def _max_plus_min(p: Poly, m: Mono, c: int, mx: Term, rest: Mono, ctx: Context) -> bool:
    # c*u*max(a, b) + c*u*min(a, b) -> c*u*(a + b)
    args = ctx.atom_args[mx]
    if len(args) != 2:
        return False
    mn = live_term(MIN, mx.args)
    if mn is None:
        return False  # min(a, b) is in no polynomial, so not in p
    m2 = mono_mul(rest, ((mn, 1),))
    if p.get(m2) != c:
        return False
    del p[m]
    del p[m2]
    p_add_into(p, p_mul(p_add(*args), {rest: c}, ctx.budget))
    return True


#: THE TABLE of the rules across the terms of a sum (see the module docstring), by the op of the atom
#: a term starts from, tried in this order on each term until one rewrites the sum (``u`` is the rest
#: of the term's monomial). A new rule of this kind is one function and one entry here.
SUM_RULES: Final[dict[Op, tuple[SumRule, ...]]] = {
    MOD: (
        _absorb_mod,  # c*u*(x%q) + c*u*q*(x//q) -> c*u*x  (x == q*(x//q) + x%q)
        _merge_mods,  # c*u*(y%j) + c*j*u*((y//j)%k) -> c*u*(y%(j*k))  for constants j, k > 0
        _round_up,  # c*(t + s%k) -> c*k*((t + k - 1)//k)  when s == -t modulo k
    ),
    FLOORDIV: (
        _form_mod,  # c*u*x - c*u*q*(x//q) -> c*u*(x%q)  for a constant q > 0 (also with x//q merged)
    ),
    MAX: (
        _max_plus_min,  # c*u*max(a, b) + c*u*min(a, b) -> c*u*(a + b)
    ),
}
