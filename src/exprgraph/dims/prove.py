"""Proving that a dimension expression is >= 0 from facts ``h >= 0`` (for :mod:`.queries` and :mod:`.facts`).

``d >= 0`` holds when ``d`` minus a nonnegative combination of known facts ``h >= 0`` has a range
above ``-1`` (``d`` is an integer). The known facts are the relations an environment was told, and
the identities of the atoms of ``d``: ``max(a, b) >= a``, ``min(a, b) <= a``, ``k*(x//k) <= x <=
k*(x//k) + k - 1``, ``x == k*(x//k) + x%k``. Each atom is first bounded at once by the fact that
cancels it (one pass over a few choices); with declared facts a breadth-first walk then cancels
one term per step (as Fourier-Motzkin does), a few steps deep and a few hundred tries at most, so
it stays cheap. A range is also taken with each atom shifted by its lower bound (``s0*s1 - s0 -
s1`` with ``s0, s1 >= 2`` is ``u*v + u + v`` for ``u, v >= 0``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any, Final

from ..core.term import Term
from .context import Context
from .division import floordiv_const
from .monomials import ONE, Mono
from .ranges import INF, Range, r_add, r_mul, r_pow, r_scale
from .relations import tight_range
from .ring import Poly, p_add, p_add_into, p_content, p_mul, p_product, p_scale, p_sub
from .terms import FLOORDIV, MAX, MIN, MOD, SYMBOL

__all__ = [
    "Hyp",
    "atom_hyps",
    "deduce",
    "has_product",
    "lower_of",
    "open_at_points",
    "may_deduce",
    "prove",
    "settle_maxmin",
    "shifted_range",
    "tighter_range",
]

#: a known fact ``poly >= 0`` and what it says (its source, for explanations)
Hyp = tuple[Poly, str]
#: steps of the search (facts combined into one answer) and residuals tried per question, with
#: declared facts, and with the identities of atoms only (every undecided query tries those: cheaper)
MAX_DEPTH: Final = 3
MAX_TRIES: Final = 240
ATOM_DEPTH: Final = 2
ATOM_TRIES: Final = 24
#: largest polynomial, and largest degree of a term, the shifted range expands
MAX_SHIFTED: Final = 8
MAX_SHIFTED_DEGREE: Final = 3
#: the points a relation is evaluated at before a proof is searched for: every name at its lower end plus each
#: shift (its upper end minus the shift when it has no lower end), kept within its range
SAMPLE_SHIFTS: Final = (0, 1)
#: then each of the first few names met alone at its lower end plus FAR_SHIFT (the others at their lower ends)
MAX_FAR_NAMES: Final = 4
FAR_SHIFT: Final = 1 << 16
#: the switch of the sampled points (a twin of exprgraph.twins): False makes open_at_points say False, so every
#: undecided relation goes to the proof search
SAMPLE_POINTS = True
#: most atoms evaluated at one point (a larger polynomial is not sampled)
MAX_SAMPLED: Final = 64
_RELATION_OPS: Final = ("lt", "le", "gt", "ge", "eq", "ne")


# -- the facts an atom brings --------------------------------------------------------------------------


def _atom_facts(a: Term, args: tuple[Poly, ...], ctx: Context) -> list[Hyp]:
    """The facts ``h >= 0`` that hold for the atom ``a`` whatever the values."""
    atom: Poly = {((a, 1),): 1}
    op = a.op
    if op is MAX:
        return [(p_sub(atom, x), "max(...) >= each argument") for x in args]  # max(a, b) - a >= 0
    if op is MIN:
        return [(p_sub(x, atom), "min(...) <= each argument") for x in args]  # a - min(a, b) >= 0
    if op is FLOORDIV:
        y, q = args
        if not q or ctx.range_of(q)[0] < 1:
            return []
        qa = p_mul(q, atom, ctx.budget)
        # q*(y//q) <= y <= q*(y//q) + q - 1 for q >= 1
        low = p_sub(y, qa)
        high = p_add(qa, q, {ONE: -1})
        p_add_into(high, y, -1)
        out = [(low, "q*(y//q) <= y"), (high, "y <= q*(y//q) + q - 1")]
        if (len(q) > 1 or ONE not in q) and ctx.range_of(y)[0] >= 0:
            out.append((p_sub(y, atom), "y//q <= y for y >= 0, q >= 1"))  # 0 <= y//q <= q*(y//q) <= y
        return out
    if op is MOD:
        y, q = args
        if len(q) != 1 or ONE not in q or q[ONE] <= 0:
            return []
        k = q[ONE]
        # y == k*(y//k) + y%k
        e = p_sub(y, p_add(p_scale(ctx.unwrap(floordiv_const(y, k, ctx)), k), atom))
        return [(e, "y == k*(y//k) + y%k"), (p_scale(e, -1), "y == k*(y//k) + y%k")] if e else []
    return []


def atom_hyps(polys: list[Poly], ctx: Context, cache: dict | None = None) -> list[Hyp]:
    """The facts of the max, min, floor division and modulo atoms of ``polys`` (``cache``: per atom)."""
    out: list[Hyp] = []
    seen: set[Term] = set()
    opaque = ctx.atom_args
    for p in polys:
        for m in p:
            for a, _ in m:
                if a in seen:
                    continue
                seen.add(a)
                args = opaque.get(a)
                if args is not None and (a.op is MAX or a.op is MIN or a.op is FLOORDIV or a.op is MOD):
                    found = None if cache is None else cache.get(a)
                    if found is None:
                        found = _atom_facts(a, args, ctx)
                        if cache is not None:
                            cache[a] = found
                    out.extend(found)
    return out


# -- ranges --------------------------------------------------------------------------------------------


def shifted_range(p: Poly, ctx: Context) -> Range | None:
    """A range of ``p`` with each atom ``a`` written ``lo + a'`` (``a' >= 0``), for products; None if not useful."""
    if len(p) > MAX_SHIFTED:
        return None
    shifts: dict[Term, int] = {}
    useful = False
    for m in p:
        if sum([e for _, e in m]) > MAX_SHIFTED_DEGREE:
            return None
        if len(m) > 1 or (m and m[0][1] > 1):
            for a, _ in m:
                if a.op is not SYMBOL:
                    continue  # (names only: an opaque or sum atom would multiply out its arguments)
                lo = ctx.atom_range(a)[0]
                if type(lo) is int and lo != 0:
                    shifts[a] = lo
                    useful = True
    if not useful:
        return None
    shifted: Poly = {}
    for m, c in p.items():
        factors = [({((a, 1),): 1, ONE: shifts[a]} if a in shifts else {((a, 1),): 1}, e) for a, e in m]
        # a == lo + a': the monomial expanded in the a'
        p_add_into(shifted, p_product([*factors, ({ONE: c}, 1)], ctx.budget))
    r: Range = (0, 0)
    for m, c in shifted.items():
        mr: Range = (1, 1)
        for a, e in m:
            lo, hi = ctx.atom_range(a)
            ar = (0, hi - lo if type(hi) is int else INF) if a in shifts else (lo, hi)
            mr = r_mul(mr, r_pow(ar, e))
        r = r_add(r, r_scale(mr, c))
    return r


def lower_of(p: Poly, ctx: Context) -> int | float:
    """A lower bound of ``p``: the tight range's, or the shifted one's when higher."""
    lo = tight_range(p, ctx)[0]
    s = shifted_range(p, ctx) if has_product(p) else None
    return lo if s is None or s[0] <= lo else s[0]


# -- the search ----------------------------------------------------------------------------------------

#: one step of a proof: the multiplier as (numerator, denominator), and the index of the fact
Step = tuple[int, int, int]


def _search(d: Poly, hyps: list[Hyp], ctx: Context, goal: Callable[[int | float, int], bool], deep: bool = True) -> Any:
    """``(steps, residual, D)`` for the first ``D*d - sum(...)`` whose lower bound meets ``goal(lo, D)``, else
    None; ``deep``: the larger search (declared facts), else the smaller one (identities of atoms only)."""
    if (deep or has_product(d)) and goal(lower_of(d, ctx), 1):
        return [], d, 1  # (the range of d alone was tried before the facts were asked)
    found = _one_pass(d, hyps, ctx, goal)
    if found is not None or not deep:
        return found
    level: list[tuple[Poly, int, list[Step]]] = [(d, 1, [])]
    seen: set[frozenset] = {frozenset(d.items())}
    tries = 0
    limit = MAX_TRIES if deep else ATOM_TRIES
    for _ in range(MAX_DEPTH if deep else ATOM_DEPTH):
        nxt: list[tuple[Poly, int, list[Step]]] = []
        for r, den, used in level:
            for i, (h, _) in enumerate(hyps):
                for m, hc in h.items():
                    rc = r.get(m) if m else None
                    if rc is None or (rc > 0) != (hc > 0):
                        continue
                    # r/den - (rc/(hc*den))*h cancels the monomial m:  |hc|*r - |rc|*h over |hc|*den
                    a, b = abs(rc), abs(hc)
                    nr = p_scale(r, b)
                    p_add_into(nr, h, -a)
                    nd = den * b
                    g = math.gcd(p_content(nr), nd)
                    if g > 1:
                        nr, nd = {mm: c // g for mm, c in nr.items()}, nd // g
                    key = frozenset(nr.items())
                    if key in seen:
                        continue
                    seen.add(key)
                    steps = [*used, (a, b * den, i)]
                    if _meets(goal, nr, nd, ctx):
                        return steps, nr, nd
                    nxt.append((nr, nd, steps))
                    tries += 1
                    if tries >= limit:
                        return None
        level = nxt
    return None


#: combinations of choices the one-pass substitution tries (max with several arguments)
MAX_CHOICES: Final = 8


def _one_pass(d: Poly, hyps: list[Hyp], ctx: Context, goal: Callable[[int | float, int], bool]) -> Any:
    """Like _search, in one step: each lone atom of ``d`` is bounded at once by a fact that cancels it
    (``c*(y//k)`` with ``c < 0`` by ``y/k``, ``max(a, b)`` by one of ``a, b``...), for a few choices."""
    options: list[list[tuple[int, Mono]]] = []
    for m, c in d.items():
        if len(m) != 1 or m[0][1] != 1:
            continue
        op = m[0][0].op
        if op is not MAX and op is not MIN and op is not FLOORDIV and op is not MOD:
            continue
        found: list[tuple[int, Mono]] = []
        for i, (h, _) in enumerate(hyps):
            hc = h.get(m)
            if hc is not None and (hc > 0) == (c > 0):
                found.append((i, m))
        if found:
            options.append(found)
    if not options:
        return None
    if len(options) == 1:
        combos = [[x] for x in options[0]]  # one atom (the commonest): each fact that cancels it
    else:
        combos = [[]]
        for found in options:
            grown = [[*combo, x] for combo in combos for x in found]
            combos = grown if len(grown) <= MAX_CHOICES else [[*combo, found[0]] for combo in combos]
    for combo in combos:
        if len(combo) > 1 and len({i for i, _ in combo}) < len(combo):
            continue  # one fact for two atoms: not a choice per atom
        den = 1
        for i, m in combo:
            hc = abs(hyps[i][0][m])
            den = math.lcm(den, hc // math.gcd(hc, abs(d[m])))
        # den*d - sum (den*|c|/|hc|)*h: each chosen fact cancels its atom (den*|c|/|hc| is an integer)
        r = p_scale(d, den)
        steps: list[Step] = []
        for i, m in combo:
            h = hyps[i][0]
            a, b = abs(d[m]), abs(h[m])
            p_add_into(r, h, -(den * a // b))
            steps.append((a, b, i))
        if _meets(goal, r, den, ctx):
            return steps, r, den
    return None


def _meets(goal: Callable[[int | float, int], bool], r: Poly, den: int, ctx: Context) -> bool:
    """``goal`` of a lower bound of ``r``: the quick range's first, then the tighter ones."""
    return goal(ctx.range_of(r)[0], den) or goal(lower_of(r, ctx), den)


def _nonneg(lo: int | float, den: int) -> bool:
    # d >= lo/den > -1, and d is an integer: d >= 0
    return lo > -den


def prove(d: Poly, hyps: list[Hyp], ctx: Context, deep: bool = True) -> Any:
    """The proof ``(steps, residual, D)`` that ``d >= 0`` for every value, or None (``deep``: see _search)."""
    return _search(d, hyps, ctx, _nonneg, deep)


def has_product(p: Poly) -> bool:
    """Whether a term of ``p`` is a product or a power (where the shifted range may help)."""
    for m in p:
        if len(m) > 1 or (m and m[0][1] > 1):
            return True
    return False


def deduce(
    op: str, d: Poly, hyps: list[Hyp], ctx: Context, trace: list | None = None, cache: dict | None = None
) -> bool | None:
    """``d OP 0`` for every value (op: lt, le, gt, ge, eq, ne) from the facts ``hyps`` and those of
    the atoms of ``d``: True, False (for none) or None. ``trace`` gets the proof found; ``cache``
    keeps the facts of atoms."""
    if hyps:
        d = settle_maxmin(d, hyps, ctx, trace)
    facts = hyps + atom_hyps([d, *[h for h, _ in hyps]], ctx, cache)
    if not facts and not has_product(d):
        return None
    deep = bool(hyps)

    if op in ("le", "lt"):
        d, op = p_scale(d, -1), "ge" if op == "le" else "gt"
    neg = p_scale(d, -1)
    if op in ("ge", "gt"):
        # d > 0 is d - 1 >= 0; it fails everywhere when -d >= 0 (gt) or -d - 1 >= 0 (ge)
        yes = p_add(d, {ONE: -1}) if op == "gt" else d
        no = neg if op == "gt" else p_add(neg, {ONE: -1})
        for goal, answer in ((yes, True), (no, False)):
            proof = prove(goal, facts, ctx, deep)
            if proof is not None:
                _record(trace, goal, proof, facts)
                return answer
        return None
    up, down = prove(d, facts, ctx, deep), None
    if up is not None:
        down = prove(neg, facts, ctx, deep)
        if down is not None:
            _record(trace, d, up, facts)
            _record(trace, neg, down, facts)
            return op == "eq"  # d >= 0 and -d >= 0
    for goal in (p_add(d, {ONE: -1}), p_add(neg, {ONE: -1})):
        proof = prove(goal, facts, ctx, deep)
        if proof is not None:
            _record(trace, goal, proof, facts)
            return op == "ne"  # d >= 1 or d <= -1: never 0
    return None


def settle_maxmin(d: Poly, hyps: list[Hyp], ctx: Context, trace: list | None = None) -> Poly:
    """``d`` with each max (min) replaced by the argument that the facts show is above (below) the others."""
    out = d
    for m in list(d):
        for a, _ in m:
            args = ctx.atom_args.get(a)
            if (a.op is not MAX and a.op is not MIN) or args is None or not 2 <= len(args) <= 4:
                continue
            top = _dominant(a.op is MAX, args, hyps, ctx)
            if top is not None:
                out = _replace_atom(out, a, top, ctx)
                if trace is not None:
                    trace.append(("settle", a, top))
    return out


def _dominant(is_max: bool, args: tuple[Poly, ...], hyps: list[Hyp], ctx: Context) -> Poly | None:
    """The argument that is >= (max) or <= (min) every other by the facts, or None."""
    for x in args:
        # max(x, y...) == x when x - y >= 0 for every other y (min: y - x >= 0)
        gaps = [p_sub(x, y) if is_max else p_sub(y, x) for y in args if y is not x]
        if all(prove(g, hyps + atom_hyps([g], ctx), ctx) is not None for g in gaps):
            return x
    return None


def _replace_atom(p: Poly, a: Term, value: Poly, ctx: Context) -> Poly:
    """``p`` with the atom ``a`` replaced by the polynomial ``value``."""
    out: Poly = {}
    for m, c in p.items():
        e = next((e for b, e in m if b is a), 0)
        if not e:
            p_add_into(out, {m: c})
            continue
        rest = tuple((b, k) for b, k in m if b is not a)
        # c*rest*a**e -> c*rest*value**e
        p_add_into(out, p_product([(value, e), ({rest: c}, 1)], ctx.budget))
    return out


def _record(trace: list | None, goal: Poly, proof: Any, facts: list[Hyp]) -> None:
    if trace is not None:
        steps, residual, den = proof
        trace.append((goal, [(Fraction(a, b), facts[i]) for a, b, i in steps], residual, den))


def tighter_range(d: Poly, r: Range, hyps: list[Hyp], ctx: Context, cache: dict | None = None) -> Range:
    """``r`` narrowed by the shifted range and by the facts: the best bounds a combination of facts gives."""
    if has_product(d):
        s = shifted_range(d, ctx)
        if s is not None:
            r = (max(r[0], s[0]), min(r[1], s[1]))
    facts = hyps + atom_hyps([d, *[h for h, _ in hyps]], ctx, cache)
    if not facts:
        return r
    deep = bool(hyps)
    lo = _best_lower(d, facts, ctx, r[0], deep)
    hi = -_best_lower(p_scale(d, -1), facts, ctx, -r[1], deep)
    return (lo, hi)


def _best_lower(d: Poly, facts: list[Hyp], ctx: Context, known: int | float, deep: bool) -> int | float:
    """The largest lower bound of ``d`` found (``known`` at least)."""
    best = [known]

    def better(lo: int | float, den: int) -> bool:
        if type(lo) is int:
            v = -((-lo) // den)  # ceil(lo/den): d is an integer
            if v > best[0]:
                best[0] = v
        return False  # look on, for a better one

    _search(d, facts, ctx, better, deep)
    return best[0]


def may_deduce(p: Poly) -> bool:
    """Whether ``p`` has a product of names, or an atom whose identities the prover uses (max, min, //, %)."""
    for m in p:
        for a, e in m:
            op = a.op
            if op is MAX or op is MIN or op is FLOORDIV or op is MOD or (op is SYMBOL and (e > 1 or len(m) > 1)):
                return True
    return False


# -- points of the ranges: a relation true at one and false at another is undecided -------------------------


def open_at_points(op: str, d: Poly, ctx: Context) -> bool:
    """Whether the values of ``d`` at a few points of the ranges show that no proof :func:`deduce` searches for
    exists (so it would answer None): ``d OP 0`` (op: lt, le, gt, ge) true at one point and false at another;
    for eq and ne, ``d`` nonzero at one point, ``<= 0`` at one and ``>= 0`` at one (no sign holds everywhere).
    Sound only without facts relating the names (the points must be values the environment allows); False when
    an atom cannot be evaluated. Points: every name at its lower end plus 0, then 1, then one name at a time
    far from its end (see :meth:`.Context.value_at`)."""
    if not SAMPLE_POINTS:
        return False
    names: list[Term] = []
    values: list[int] = []
    points: list[tuple[int, Term | None]] = [(shift, None) for shift in SAMPLE_SHIFTS]
    i = 0
    while i < len(points):
        shift, far = points[i]
        v = ctx.value_at(d, shift, far, FAR_SHIFT, MAX_SAMPLED, names if i == 0 else None)
        if v is None:
            return False
        values.append(v)
        if _shows_open(op, values):
            return True
        if i == 0:
            points.extend((0, name) for name in names[:MAX_FAR_NAMES])
        i += 1
    return False


def _shows_open(op: str, values: list[int]) -> bool:
    """Whether values of ``d`` show that no proof of ``d OP 0``, of its negation or (eq, ne) of a sign exists."""
    if op == "eq" or op == "ne":
        return any(v != 0 for v in values) and any(v <= 0 for v in values) and any(v >= 0 for v in values)
    i = _RELATION_OPS.index(op)
    seen = {(v < 0, v <= 0, v > 0, v >= 0)[i] for v in values}  # v OP 0
    return len(seen) == 2
