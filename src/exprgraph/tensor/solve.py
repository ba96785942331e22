"""Scatter to gather: solve a read's index equations for the loop variables.

A forward read ``X[g(v)]`` over loop variables ``v`` scatters its gradient to ``dX[g(v)]``. To write
``dX[x]`` with plain indices we solve ``g(v) = x`` for some of the ``v``:

1. *Lift* floor division and modulo: each distinct ``u // c`` / ``u % c`` gets a quotient ``q`` and a
   remainder ``r`` with ``u = c*q + r`` and ``0 <= r < c``, so ``i//16, i%16`` become ``i = 16*q + r``
   and the whole system is linear over the integers.
2. *Eliminate* one unknown per equation by Gaussian elimination with exact fractions. Every choice
   of pivots is a valid rewrite; a pivot with coefficient ``a != ±1`` leaves a divisibility guard.
   Equations left without unknowns are consistency guards on ``x`` (``x0 == x1`` for ``X[i, i]``).
3. *Guard* each eliminated variable with its range (``0 <= h - r < 5`` for ``p = h - r``).
4. *Choose* the pivots that give the fewest loop iterations, counting each remaining loop at the
   width its guards allow (``r`` in ``h = p + r``: 3 values, not ``p``'s 32), then the smaller box,
   then fewer divisibility guards. The search is depth first, best candidate first, with a budget.
5. *Pin* a remaining loop that a guard leaves a single value (``lo <= a*v + rest < lo + |a|``) as a
   floor division: ``8*i + j = x`` with ``j`` in ``[0, 8)`` gives ``i = x // 8``, ``j = x % 8``.

:func:`guard_gather` is the fallback: keep every forward loop and test ``x == g(v)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from ..core import INT64, Symbol, Term
from ..core.op import get_op
from .affine import Lin, bounds, is_var, linearize, substitute_var, to_term
from .index_arith import ANY, arith_for, as_term
from .ir import Guard, Loop
from .names import fresh_name

__all__ = ["Read", "Gather", "solve_gather", "guard_gather", "SEARCH_BUDGET", "MAX_EQUATIONS"]

#: most complete pivot choices the search examines
SEARCH_BUDGET = 512
#: larger systems use the equality-guard fallback
MAX_EQUATIONS = 64

_FLOORDIV, _MOD = get_op("floordiv"), get_op("mod")

#: names tried, in order, for the written indices of a gradient
LHS_NAMES = ("h", "w", "u", "v", "x", "y", "z", "a", "b", "e", "f", "g", "m", "o")
#: names tried for quotient/remainder loops that stay
AUX_NAMES = ("t", "t1", "t2", "t3", "t4", "t5")


@dataclass(frozen=True)
class Read:
    """A read ``X[index]`` inside the forward loops: what :func:`solve_gather` turns around."""

    index: Sequence[Term]
    #: the shape of ``X``
    extents: Sequence[int]
    #: the forward loops: variable -> ``(lo, hi)``
    ranges: Mapping[Term, tuple[int, int]]
    #: the forward loop order (it orders the remaining loops and the printed terms)
    order: Sequence[Term] = ()


@dataclass
class Gather:
    """A solved read: the written indices, the loops, what each forward variable becomes, the guards."""

    #: the new written index variables, one per position of the read
    lhs: tuple[Term, ...]
    #: loops: the written indices over the tensor's box, then the loops that stay
    loops: tuple[Loop, ...]
    #: forward loop variable -> its index term in the new loops
    subst: dict[Term, Term]
    guards: list[Guard] = field(default_factory=list)
    #: estimated innermost iterations per written element (the search's cost)
    cost: float = 1.0
    #: "solve" or "guard" (the equality fallback)
    strategy: str = "solve"
    #: False when no forward iteration reaches the read (the contribution is zero)
    feasible: bool = True


def _param(k: int) -> Term:
    return Symbol(f"eg_x{k}", INT64)


def _aux(k: int) -> Term:
    return Symbol(f"eg_a{k}", INT64)


def _lift(
    index: Sequence[Term], ranges: Mapping[Term, tuple[int, int]]
) -> tuple[list[Lin], dict[Term, tuple[int, int]], list[Term]]:
    """Linear equations (each ``= 0``) for ``index == params``, with quotient/remainder unknowns."""
    aux_of: dict[tuple[Term, int], tuple[Term, Term]] = {}
    aux_ranges: dict[Term, tuple[int, int]] = {}
    aux_order: list[Term] = []
    defs: list[Lin] = []

    def replace(lin: Lin) -> Lin:
        # atoms -> their quotient or remainder unknowns (lifting inner atoms first, without recursion)
        work = [a for a in lin.coeffs if not is_var(a)]
        while work:
            atom = work[-1]
            inner, div = atom.args
            key = (inner, int(div.attr))
            if key in aux_of:
                work.pop()
                continue
            inner_lin = linearize(inner)
            todo = [a for a in inner_lin.coeffs if not is_var(a) and (a.args[0], int(a.args[1].attr)) not in aux_of]
            if todo:
                work.extend(todo)
                continue
            work.pop()
            c = key[1]
            q, r = _aux(len(aux_order)), _aux(len(aux_order) + 1)
            aux_order.extend((q, r))
            b = bounds(inner, ranges)
            lo, hi = b if b is not None else (0, c - 1)
            aux_ranges[q] = (lo // c, hi // c + 1)
            aux_ranges[r] = (0, c)
            aux_of[key] = (q, r)
            defs.append(_subst_atoms(inner_lin, aux_of) - Lin({q: c, r: 1}))
        return _subst_atoms(lin, aux_of)

    rows = [replace(linearize(t)) - Lin.atom(_param(k)) for k, t in enumerate(index)]
    return defs + rows, aux_ranges, aux_order


def _subst_atoms(lin: Lin, aux_of: Mapping[tuple[Term, int], tuple[Term, Term]]) -> Lin:
    out = Lin({}, lin.const)
    for a, c in lin.coeffs.items():
        if is_var(a):
            out = out + Lin({a: c})
        else:
            q, r = aux_of[(a.args[0], int(a.args[1].attr))]
            out = out + Lin({q if a.op is _FLOORDIV else r: c})
    return out


@dataclass
class _Leaf:
    sols: dict[Term, Lin]
    conds: list[Lin]
    key: tuple


def _guards_of(sols: Mapping[Term, Lin], ranges: Mapping[Term, tuple[int, int]]) -> tuple[list, list]:
    """Range guards ``(num, lo, hi)`` and divisibility guards ``(num, D)`` of the eliminated unknowns."""
    rng, div = [], []
    for u, sol in sols.items():
        d = sol.denominator()
        num = sol.scale(d)
        lo, hi = ranges[u]
        rng.append((num, d * lo, d * (hi - 1) + 1))
        if d > 1:
            div.append((num, d))
    return rng, div


def _score(
    sols: Mapping[Term, Lin], remaining: Sequence[Term], ranges: Mapping[Term, tuple[int, int]], n_aux: int
) -> tuple:
    rng, div = _guards_of(sols, ranges)
    cost = 1.0
    box = 1
    for v in remaining:
        lo, hi = ranges[v]
        eff = float(hi - lo)
        for num, glo, ghi in rng:
            a = num.coeffs.get(v, 0)
            if a:
                eff = min(eff, max(1.0, (ghi - glo) / abs(a)))
        cost *= eff
        box *= hi - lo
    return (cost, box, len(div), n_aux)


def _search(rows: list[Lin], unknowns: set[Term], ranges: Mapping[Term, tuple[int, int]]) -> _Leaf | None:
    """Depth-first search over pivot choices; the best complete elimination (None: inconsistent)."""
    best: _Leaf | None = None
    leaves = 0
    aux = {u for u in unknowns if u.name.startswith("eg_a")}
    stack: list[tuple[int, list[Lin], dict[Term, Lin], list[Lin]]] = [(0, rows, {}, [])]
    while stack and leaves < SEARCH_BUDGET:
        k, cur, sols, conds = stack.pop()
        if k == len(cur):
            leaves += 1
            remaining = sorted((u for u in unknowns if u not in sols), key=str)
            key = _score(sols, remaining, ranges, sum(1 for u in remaining if u in aux))
            if best is None or key < best.key:
                best = _Leaf(sols, conds, key)
            continue
        row = cur[k]
        cands = [u for u in row.coeffs if u in unknowns and u not in sols]
        if not cands:
            if row.coeffs:
                stack.append((k + 1, cur, sols, [*conds, row]))
            elif row.const == 0:
                stack.append((k + 1, cur, sols, conds))
            continue  # a nonzero constant: this read is never reached
        # greedy order: unit coefficients first, then the widest range; pushed so the best pops first
        cands.sort(key=lambda u: (abs(row.coeffs[u]) != 1, -(ranges[u][1] - ranges[u][0]), str(u)))
        for u in reversed(cands):
            c = row.coeffs[u]
            sol = Lin({a: k2 for a, k2 in row.coeffs.items() if a is not u}, row.const).scale(Fraction(-1) / c)
            new_rows = cur[: k + 1] + [r.substitute(u, sol) for r in cur[k + 1 :]]
            new_sols = {v: s.substitute(u, sol) for v, s in sols.items()}
            new_sols[u] = sol
            stack.append((k + 1, new_rows, new_sols, conds))
    return best


def _pin(
    sols: dict[Term, Lin], remaining: list[Term], ranges: Mapping[Term, tuple[int, int]]
) -> tuple[dict[Term, Lin], set[Term]]:
    """Solve remaining loops that a range guard pins to one value, as floor divisions.

    ``lo <= a*v + rest < lo + |a|`` has exactly one solution ``v`` (``v = ceil((lo - rest)/a)`` for
    ``a > 0``, ``floor((rest - lo)/|a|)`` for ``a < 0``), so ``8*i + j = x`` with ``j`` in ``[0, 8)``
    gives ``i = x // 8`` and ``j = x % 8`` instead of a loop over ``i``. Returns the new solutions
    and the variables whose range guards now hold by construction.
    """
    implied: set[Term] = set()
    progress = True
    while progress:
        progress = False
        for u, sol in list(sols.items()):
            if u in implied:
                continue
            if sol.denominator() != 1:
                continue  # a divisibility test stays: pinning would not keep it
            num = _int_lin(sol)
            glo, ghi = ranges[u]
            for v in remaining:
                a = int(num.coeffs.get(v, 0))
                if a == 0 or abs(a) != ghi - glo or any(v in t.free_symbols for t in num.coeffs if t is not v):
                    continue
                rest = Lin({t: c for t, c in num.coeffs.items() if t is not v}, num.const)
                numer = (Lin({}, glo + a - 1) - rest) if a > 0 else (rest - Lin({}, glo))
                form = ANY.lin(ANY.floordiv(ANY.of_lin(numer), abs(a)))  # dims's quotient of the form
                sols = {t: substitute_var(s, v, form) for t, s in sols.items()}
                sols[v] = form
                remaining.remove(v)
                implied.add(u)
                progress = True
                break
            if progress:
                break
    return sols, implied


def _int_lin(lin: Lin) -> Lin:
    d = lin.denominator()
    out = lin.scale(d)
    return Lin({a: int(c) for a, c in out.coeffs.items()}, int(out.const))


def _rename(lin: Lin, names: Mapping[Term, Term]) -> Lin:
    out = Lin({}, lin.const)
    for a, c in lin.coeffs.items():
        if is_var(a):
            out = out + Lin({names.get(a, a): c})
        else:  # a floor-division or modulo atom: its value with the variables renamed
            out = out + ANY.lin(ANY.value(a, names)).scale(c)
    return out


def _forward_order(order: Sequence[Term], ranges: Mapping[Term, tuple[int, int]]) -> list[Term]:
    """The forward loop variables: those of ``order`` first, then the others by name."""
    return [v for v in order if v in ranges] + sorted((v for v in ranges if v not in order), key=str)


def _gather_names(
    index: Sequence[Term], sols: Mapping[Term, Lin], aux: Sequence[Term], taken: set[str]
) -> dict[Term, Term]:
    """The loop variable of each position of the gather, and of each auxiliary unknown left unsolved.

    A position that reads a plain variable solved as exactly that position keeps its name; the
    others get fresh names (added to ``taken``).
    """
    names: dict[Term, Term] = {}
    used: set[Term] = set()
    for k, t in enumerate(index):
        p = _param(k)
        if is_var(t) and t in sols and t not in used and sols[t].key() == Lin.atom(p).key():
            names[p] = t
            used.add(t)
    for k in range(len(index)):
        p = _param(k)
        if p not in names:
            names[p] = Symbol(fresh_name(taken, LHS_NAMES), INT64)
    for a in aux:
        names[a] = Symbol(fresh_name(taken, AUX_NAMES), INT64)
    return names


def solve_gather(read: Read, taken: set[str]) -> Gather:
    """Rewrite a read ``X[index]`` over its forward loops as a gather over ``X``'s box (see module doc).

    ``taken`` holds names in use (tensors, loop variables); new names are added to it.
    """
    index, extents, ranges, order = read.index, read.extents, read.ranges, read.order
    rows, aux_ranges, aux_order = _lift(index, ranges)
    if len(rows) > MAX_EQUATIONS:
        return guard_gather(read, taken)
    all_ranges = {**ranges, **aux_ranges}
    for k, e in enumerate(extents):
        all_ranges[_param(k)] = (0, e)
    unknowns = set(ranges) | set(aux_order)
    leaf = _search(rows, unknowns, all_ranges)
    if leaf is None:
        return Gather((), (), {}, [], 0.0, "solve", feasible=False)
    # (by name: a set of terms iterates in the order of their addresses, which would make the pick vary)
    sols, implied = _pin(dict(leaf.sols), sorted((u for u in unknowns if u not in leaf.sols), key=str), all_ranges)

    taken |= {v.name for v in ranges}
    remaining_aux = [a for a in aux_order if a not in sols]
    names = _gather_names(index, sols, remaining_aux, taken)
    lhs = tuple(names[_param(k)] for k in range(len(index)))
    fwd_order = _forward_order(order, ranges)
    remaining_fwd = [v for v in fwd_order if v not in sols]
    loops = [Loop(lhs[k], 0, extents[k]) for k in range(len(index))]
    loops += [Loop(v, *ranges[v]) for v in remaining_fwd]
    loops += [Loop(names[a], *aux_ranges[a]) for a in remaining_aux]
    # the solved variables and the guards are values on the new loop box, terms of dims there
    box = arith_for({lp.var: (lp.lo, lp.hi) for lp in loops})

    def value_of(lin: Lin) -> Term:
        return as_term(box.of_lin(_rename(_int_lin(lin), names)))

    subst: dict[Term, Term] = {}
    guards: list[Guard] = []
    for v in fwd_order:
        if v not in sols:
            continue
        sol = sols[v]
        d = sol.denominator()
        value = box.of_lin(_rename(_int_lin(sol.scale(d)), names))
        if d != 1:
            value = box.floordiv(value, d)
        subst[v] = as_term(value)
    rng, div = _guards_of({u: sol for u, sol in sols.items() if u not in implied}, all_ranges)
    for num, lo, hi in rng:
        guards.append(Guard(value_of(num), lo, hi))
    for num, d in div:
        guards.append(Guard(value_of(num), modulus=d))
    for cond in leaf.conds:
        guards.append(Guard(value_of(cond), 0, 1))
    return Gather(lhs, tuple(loops), subst, guards, leaf.key[0], "solve")


def guard_gather(read: Read, taken: set[str]) -> Gather:
    """The fallback: keep every forward loop and guard ``x_k == index_k`` for each position."""
    index, extents, ranges, order = read.index, read.extents, read.ranges, read.order
    taken |= {v.name for v in ranges}
    lhs = tuple(Symbol(fresh_name(taken, LHS_NAMES), INT64) for _ in index)
    fwd_order = _forward_order(order, ranges)
    loops = [Loop(x, 0, e) for x, e in zip(lhs, extents, strict=True)]
    loops += [Loop(v, *ranges[v]) for v in fwd_order]
    term_order = [lp.var for lp in loops]
    guards = [Guard(to_term(linearize(x) - linearize(t), term_order), 0, 1) for x, t in zip(lhs, index, strict=True)]
    cost = 1.0
    for v in fwd_order:
        cost *= ranges[v][1] - ranges[v][0]
    return Gather(lhs, tuple(loops), {v: v for v in fwd_order}, guards, cost, "guard")
