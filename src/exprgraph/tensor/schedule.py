"""Loop schedules: the loop order of a statement, guards turned into loop bounds, the local accumulator.

The order puts innermost a long loop whose variable walks memory contiguously (stride 1 in the
written tensor and in most reads), then the others by decreasing stride, so the innermost loop
vectorises. When the innermost variable is summed, every summed variable goes inside the written
ones and the sum runs in a local accumulator (``eg_acc``) stored once per written element.

A range guard ``lo <= c*v + rest < hi`` whose innermost variable ``v`` (in that order) appears
with a nonzero coefficient becomes bounds of ``v``'s loop, computed from the outer variables;
other guards become ``if`` tests just inside the loop of their innermost variable.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..core import Term, const
from ..core.op import get_op
from .affine import Lin, NonAffineError, bounds, is_var, linearize, to_term
from .ir import Guard, Loop, Statement, Tensor, statement_guards
from .terms import index_of, tensor_name

__all__ = ["Level", "Schedule", "schedule_statement", "choose_order", "strides"]

_FLOORDIV = get_op("floordiv")

#: stride class costs for choosing the innermost loop
_IRREGULAR = None
_MIN_INNER_EXTENT = 8


@dataclass
class Level:
    """One loop of a schedule: the variable, its static range, extra bounds and ``if`` tests inside it."""

    loop: Loop
    #: the loop starts at the max of ``loop.lo`` and these (terms over outer variables)
    lower: list[Term] = field(default_factory=list)
    #: the loop stops before the min of ``loop.hi`` and these
    upper: list[Term] = field(default_factory=list)
    #: guards tested just inside this loop
    tests: list[Guard] = field(default_factory=list)

    @property
    def var(self) -> Term:
        """The loop variable."""
        return self.loop.var


@dataclass
class Schedule:
    """How one statement runs: its loops in order, the accumulator split, whether to zero first."""

    statement: Statement
    levels: list[Level]
    #: number of trailing (summed) levels accumulated in a local variable
    suffix: int
    #: an assigning statement that must zero its target box before accumulating
    zero_first: bool
    #: an assigning statement without sums whose guards select between the value and zero
    select: bool
    #: all guards (explicit and in-range accesses) the iterations must meet
    guards: tuple[Guard, ...]
    #: the statement can never run (a guard fails everywhere)
    empty: bool = False
    #: unroll-and-jam: ``(level index, factor)`` of up to two loops whose copies share the innermost loop
    jam: list[tuple[int, int]] = field(default_factory=list)
    #: when > 0, the local accumulator keeps one partial sum per value of the innermost (summed)
    #: loop, ``eg_lane[copy][value]``, added up once after all the summed loops: a short innermost
    #: loop inside other summed loops then pays no horizontal sum per pass
    lanes: int = 0


def strides(st: Statement, tensors: Mapping[str, Tensor]) -> dict[Term, list[tuple[bool, int | None]]]:
    """For each loop variable: per access ``(is_target, stride in elements or None if irregular)``."""
    out: dict[Term, list[tuple[bool, int | None]]] = {lp.var: [] for lp in st.loops}
    accs = [(True, st.target)] + [(False, a) for a, _ in st.reads()]
    for is_target, acc in accs:
        tensor = tensors[tensor_name(acc)]
        per: dict[Term, int | None] = dict.fromkeys(out, 0)
        for t, stride in zip(index_of(acc), tensor.strides, strict=False):
            try:
                lin = linearize(t)
            except NonAffineError:
                for v in t.free_symbols:
                    per[v] = _IRREGULAR
                continue
            for atom, c in lin.coeffs.items():
                if is_var(atom):
                    known = per.get(atom, 0)
                    if known is not _IRREGULAR:
                        per[atom] = known + int(c) * stride
                else:
                    for v in atom.free_symbols:
                        per[v] = _IRREGULAR
        for v in out:
            out[v].append((is_target, per[v]))
    return out


def _class(stride: int | None) -> int:
    if stride is None:
        return 8
    s = abs(stride)
    return 0 if s == 0 else 1 if s == 1 else 4


def choose_order(st: Statement, tensors: Mapping[str, Tensor]) -> list[Loop]:
    """The loop order: contiguous long loop innermost, the rest by decreasing stride (see module doc)."""
    loops = list(st.loops)
    if len(loops) <= 1:
        return loops
    info = strides(st, tensors)
    written = set(st.out_vars)
    pos = {lp.var: k for k, lp in enumerate(loops)}

    def cost(lp: Loop) -> float:
        c = 0.0
        for is_target, s in info[lp.var]:
            c += (2 if is_target else 1) * _class(s)
        if lp.var not in written:
            c += 1  # a sum innermost costs a horizontal add per written element
        return c

    long_loops = [lp for lp in loops if lp.extent >= _MIN_INNER_EXTENT] or loops
    inner = min(long_loops, key=lambda lp: (cost(lp), -lp.extent, -pos[lp.var]))

    def weight(lp: Loop) -> float:
        total = 0.0
        for _, s in info[lp.var]:
            total += float("inf") if s is None else abs(s)
        return total

    rest = [lp for lp in loops if lp is not inner]
    if inner.var not in written:
        # a sum innermost: every summed loop inside the written ones, one local accumulator
        outer = [lp for lp in rest if lp.var in written]
        summed = [lp for lp in rest if lp.var not in written]
        outer.sort(key=lambda lp: (-weight(lp), pos[lp.var]))
        summed.sort(key=lambda lp: (-weight(lp), pos[lp.var]))
        return [*outer, *summed, inner]
    rest.sort(key=lambda lp: (-weight(lp), pos[lp.var]))
    return [*rest, inner]


def _bound_terms(guard: Guard, var: Term, lin: Lin) -> tuple[Term | None, Term | None]:
    """Lower and upper loop bounds for ``var`` from ``guard.lo <= lin < guard.hi`` (None: no bound)."""
    c = int(lin.coeffs[var])
    rest = Lin({a: k for a, k in lin.coeffs.items() if a is not var}, lin.const)
    a = abs(c)

    def ceil_over(num: Lin) -> Term:
        # ceil(num / a) = (num + a - 1) // a: the numerator is dims's canonical form (to_term); the
        # quotient stays as written, since dims's would take the constant out ((x + 64)//16 is
        # x//16 + 4) and its dividend, no longer nonnegative, would need eg_floordiv instead of C's /
        if a == 1:
            return to_term(num)
        return Term(_FLOORDIV, (to_term(num + Lin({}, a - 1)), const(a)))

    lower = upper = None
    if c > 0:
        # lo <= c*v + rest  <=>  v >= ceil((lo - rest)/c);  c*v + rest < hi  <=>  v < ceil((hi - rest)/c)
        if guard.lo is not None:
            lower = ceil_over(Lin({}, guard.lo) - rest)
        if guard.hi is not None:
            upper = ceil_over(Lin({}, guard.hi) - rest)
    else:
        # lo <= rest - a*v  <=>  v < floor((rest - lo)/a) + 1 = ceil((rest - lo + 1)/a)
        # rest - a*v < hi   <=>  v >= ceil((rest - hi + 1)/a)
        if guard.hi is not None:
            lower = ceil_over(rest - Lin({}, guard.hi - 1))
        if guard.lo is not None:
            upper = ceil_over(rest - Lin({}, guard.lo - 1))
    return lower, upper


def _place_guard(g: Guard, levels: list[Level], rank: Mapping[Term, int], order: list[Loop], select: bool) -> None:
    """Place ``g`` at the innermost level it depends on: as loop bounds when it is affine there, else as a test."""
    vars_in = [v for v in g.expr.free_symbols if v in rank]
    if not vars_in:
        return  # constant: decided statically (merge_guards dropped the true ones; ``empty`` the false)
    k = max(rank[v] for v in vars_in)
    level = levels[k]
    lin = None
    if g.modulus is None and not select:
        try:
            lin = linearize(g.expr)
        except NonAffineError:
            lin = None
    if lin is None or lin.coeffs.get(level.var, 0) == 0 or not _var_only_direct(lin, level.var):
        level.tests.append(g)
        return
    lower, upper = _bound_terms(g, level.var, lin)
    outer = {lp.var: (lp.lo, lp.hi) for lp in order[:k]}
    for term, side in ((lower, level.lower), (upper, level.upper)):
        if term is not None:
            _add_bound(level, term, side, outer)


def _add_bound(level: Level, term: Term, side: list[Term], outer: Mapping[Term, tuple[int, int]]) -> None:
    """Bound the loop of ``level`` by ``term`` on ``side`` (its lower or upper list), unless it never binds."""
    if term.is_const:
        # a constant bound narrows the static range
        lp = level.loop
        c = int(term.attr)
        if side is level.lower:
            level.loop = Loop(lp.var, max(lp.lo, c), lp.hi)
        else:
            level.loop = Loop(lp.var, lp.lo, min(lp.hi, c))
        return
    b = bounds(term, outer)
    if side is level.lower and b is not None and b[1] <= level.loop.lo:
        return  # never above the static start
    if side is level.upper and b is not None and b[0] >= level.loop.hi:
        return  # never below the static end
    if term not in side:
        side.append(term)


def schedule_statement(
    st: Statement, tensors: Mapping[str, Tensor], *, unroll: bool = False, parallel: bool = False
) -> Schedule:
    """Order the loops of ``st``, place its guards as bounds or tests, and decide the accumulator.

    ``unroll=True`` also picks loops to unroll and jam (:func:`choose_jam`); ``parallel=True`` moves
    a written index outermost (its iterations write distinct elements, so threads can share them).
    """
    guards = statement_guards(st, tensors)
    order = choose_order(st, tensors)
    if parallel and len(order) > 1 and order[0].var not in set(st.out_vars):
        first = next((lp for lp in order[:-1] if lp.var in set(st.out_vars)), None)
        if first is not None:
            order.remove(first)
            order.insert(0, first)
    levels = [Level(lp) for lp in order]
    rank = {lp.var: k for k, lp in enumerate(order)}
    ranges = st.ranges
    written = set(st.out_vars)
    has_sum = any(lp.var not in written for lp in order)
    empty = any(g.never_holds_for(ranges) for g in guards)
    # an assignment without sums keeps its guards as one test (value or zero): no bounds
    select = not st.accumulate and not has_sum and bool(guards)
    for g in guards:
        _place_guard(g, levels, rank, order, select)
    if select:
        # every test at the innermost level, so the else branch covers the whole box
        tests = [g for lv in levels for g in lv.tests]
        for lv in levels:
            lv.tests = []
        if levels:
            levels[-1].tests = tests
    suffix = 0
    for lv in reversed(levels):
        if lv.var in written:
            break
        suffix += 1
    outer_levels = levels[: len(levels) - suffix]
    restricted = any(lv.lower or lv.upper or lv.tests for lv in outer_levels)
    if st.accumulate:
        zero_first = False
    elif empty:
        zero_first = True  # nothing runs: the assignment leaves zeros
    elif not has_sum:
        zero_first = False  # one store per element (a select when guarded)
    else:
        zero_first = suffix == 0 or restricted or any(lv.var not in written for lv in outer_levels)
    sched = Schedule(st, levels, suffix, zero_first, select, guards, empty)
    if unroll:
        sched.jam = choose_jam(sched)
        inner = levels[-1] if levels else None
        if suffix >= 2 and inner is not None and inner.loop.extent <= MAX_LANES and not sched.empty:
            sched.lanes = inner.loop.extent
    return sched


#: longest innermost loop given lane accumulators
MAX_LANES = 64


#: copies of the innermost loop body per jammed loop
JAM_FACTOR = 4


def choose_jam(sched: Schedule) -> list[tuple[int, int]]:
    """Loops to unroll and jam into the innermost loop (register blocking): up to two, factor 4.

    A loop qualifies when it is not innermost, its range is static and no guard mentions its
    variable (so no inner bound depends on it), and some access does not depend on it (the copies
    then share that access). With a local accumulator only written indices outside the summed
    loops qualify (each copy gets its own accumulator). Copies of a written index write distinct
    elements and copies of a summed index add to the same one, so the jam keeps the meaning.
    """
    st = sched.statement
    levels = sched.levels
    n = len(levels)
    if n < 2 or sched.select or sched.empty:
        return []
    written = set(st.out_vars)
    guarded: set[Term] = set()
    for g in sched.guards:
        guarded |= g.expr.free_symbols
    index_terms = [st.out_vars] + [index_of(acc) for acc, _ in st.reads()]
    cands: list[tuple[int, int, int]] = []
    for k, lv in enumerate(levels[:-1]):
        if sched.suffix and (k >= n - sched.suffix or lv.var not in written):
            continue
        if lv.var in guarded or lv.lower or lv.upper or lv.tests or lv.loop.extent < 2:
            continue
        reuse = sum(1 for idx in index_terms if not any(lv.var in t.free_symbols for t in idx))
        if reuse == 0:
            continue
        cands.append((reuse, lv.loop.extent, k))
    cands.sort(reverse=True)
    chosen = sorted(k for _, _, k in cands[:2])
    return [(k, min(JAM_FACTOR, levels[k].loop.extent)) for k in chosen]


def _var_only_direct(lin: Lin, var: Term) -> bool:
    """True when ``var`` does not also occur inside a floor-division or modulo atom of ``lin``."""
    return all(a is var or var not in a.free_symbols for a in lin.coeffs)
