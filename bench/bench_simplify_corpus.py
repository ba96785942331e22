"""simplify against sympy.simplify on the textbook corpus (bench/simplify_corpus.py), issue 30.

For each problem: our variants (the default ``simplify``: the canonical pass then bounded
saturation; the canonical pass alone, ``method="rules"``; ``unsafe=True``, SymPy's generic
semantics; the e-graph alone, safe and unsafe) and ``sympy.simplify`` on SymPy's own reading of
the same text (exact numbers, the problem's assumptions on its symbols, SymPy's cache cleared
before each timed call). Our symbols carry SymPy's reading of the same assumptions (``from_sympy``
of SymPy's symbol: ``positive`` is a finite positive number there); ``--native-assumptions``
declares ours with the bare names instead (``positive`` then allows +inf). Size is distinct DAG
nodes, constants included, of the result as exprgraph terms (SymPy's result converted by
``from_sympy``). A problem is *solved* by a form no larger than its known simple form; every
result is checked equal to the input on random points (positive points for symbols assumed
positive), and the default and unsafe ``simplify`` are checked idempotent. Time: thread CPU,
best of 3 for ours and of 2 for SymPy, interleaved, each side's own caches emptied before each
timed call (SymPy's cache; the facts we keep about terms, ``exprgraph.simplify.clear_caches``),
in two columns treated alike: *cold*, a full gc right before the call (it walks the heap, SymPy
loaded, and evicts the processor's caches), and *warm*, the same call made once untimed first
(:func:`bench.common.warm_best_of`), as in a session of many calls. Goals (issue 30): a form no larger than
SymPy's on >= 90% of the problems SymPy solves; median time <= 0.05x ``sympy.simplify``; 0 value
changes. Both strengths are reported: the default (safe) and ``unsafe=True``.

    .venv/bin/python -m bench.bench_simplify_corpus [--family trig] [--limit N] [--show] [--native-assumptions]
    .venv/bin/python -m bench.bench_simplify_corpus --profile unsafe [--family F] [--limit N]

``--profile VARIANT`` times one variant alone (no SymPy, no checks) the way the cold column does, then
prints where its time goes: thread CPU per stage of ``simplify`` (inclusive, over the middle 40% of the
problems by time and over all of them) and a cProfile of one cold call per problem.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from bench.common import best_of, fmt_seconds, ratio, warm_best_of
from bench.simplify_corpus import Problem, problems
from exprgraph import Symbol, Term, evaluate, parse, postorder, simplify
from exprgraph.errors import ExprgraphError
from exprgraph.simplify import clear_caches

#: our variants: name -> simplify with those options
VARIANTS: dict[str, Callable[[Term], Term]] = {
    "default": lambda t: simplify(t),
    "rules": lambda t: simplify(t, method="rules"),
    "unsafe": lambda t: simplify(t, unsafe=True),
    "egraph": lambda t: simplify(t, method="egraph"),
    "egraph-unsafe": lambda t: simplify(t, method="egraph", unsafe=True),
}
#: random points per check, and the tolerance of an equal value
POINTS, RTOL = 12, 1e-7


def size(term: Term) -> int:
    """Distinct DAG nodes, constants included."""
    return len(postorder((term,)))


def _points(problem: Problem, names: list[str], rng: np.random.Generator) -> list[dict[str, float]]:
    """Random points: in [0.2, 2] for symbols assumed positive or nonnegative, else in [-2, 2]."""
    signed = {name for name, kind in problem.assumptions if kind in ("positive", "nonnegative")}
    low = {n: 0.2 if n in signed else -2.0 for n in names}
    return [{n: float(rng.uniform(low[n], 2.0)) for n in names} for _ in range(POINTS)]


def _value(term: Term, point: dict[str, float]) -> float:
    with np.errstate(all="ignore"):
        symbols = {s: point[s.name] for s in postorder((term,)) if s.is_symbol}
        return float(np.real(evaluate(term, symbols)))


def changes_value(original: Term, result: Term, points: list[dict[str, float]]) -> bool:
    """Whether ``result`` differs from ``original`` at a point where ``original`` is finite."""
    for point in points:
        a = _value(original, point)
        if not np.isfinite(a):
            continue
        b = _value(result, point)
        if not np.isfinite(b) or abs(a - b) > RTOL * (1.0 + abs(a) + abs(b)):
            return True
    return False


def solves(result: Term, known: Term, limit: int) -> bool:
    """A form no larger than the known one; a known constant must come out as exactly its value
    (``sqrt(2)*sqrt(2)`` folded to the float 2.0000000000000004 is not ``2``)."""
    if size(result) > limit:
        return False
    if any(t.is_symbol for t in postorder((known,))):
        return True
    return all(t.op.name == "const" for t in postorder((result,))) and _value(result, {}) == _value(known, {})


@dataclass
class Outcome:
    """One problem's results: sizes and times per contender, value changes, idempotence."""

    problem: Problem
    known: int
    input_size: int
    sizes: dict[str, int] = field(default_factory=dict)
    times: dict[str, float] = field(default_factory=dict)
    #: the same calls timed warm (see bench.common.warm_best_of)
    warm: dict[str, float] = field(default_factory=dict)
    changed: list[str] = field(default_factory=list)
    solved: dict[str, bool] = field(default_factory=dict)
    idempotent: dict[str, bool] = field(default_factory=dict)


#: whether our symbols are declared with the bare assumption names rather than SymPy's reading of them
NATIVE_ASSUMPTIONS = False


def _sympy_reader() -> tuple[Any, Callable[[Problem], Any]]:
    """sympy, and a function reading a problem's text as SymPy would (exact numbers, assumptions)."""
    import sympy
    from sympy.parsing.sympy_parser import parse_expr

    def read(problem: Problem) -> Any:
        kinds = _assumed(problem)
        names = {s.name for s in postorder((parse(problem.text),)) if s.is_symbol}
        local = {n: sympy.Symbol(n, **kinds.get(n, {})) for n in names}
        local.update(max=sympy.Max, min=sympy.Min, abs=sympy.Abs, sign=sympy.sign)
        return parse_expr(problem.text, local_dict=local)

    return sympy, read


def _declared(problem: Problem) -> dict[str, Term]:
    """The problem's symbols with its assumptions: SymPy's reading of them (``from_sympy`` of SymPy's
    symbol, so ``positive`` is finite as in SymPy), or the bare names with ``NATIVE_ASSUMPTIONS``."""
    if NATIVE_ASSUMPTIONS:
        return {name: Symbol(name, **kw) for name, kw in _assumed(problem).items()}
    import sympy

    from exprgraph.interop import from_sympy

    return {name: from_sympy(sympy.Symbol(name, **kw)) for name, kw in _assumed(problem).items()}


def _assumed(problem: Problem) -> dict[str, dict[str, bool]]:
    """The problem's assumptions as keywords per symbol (``{"x": {"positive": True}}``), for both sides."""
    kinds: dict[str, dict[str, bool]] = defaultdict(dict)
    for name, kind in problem.assumptions:
        kinds[name][kind] = True
    return kinds


def run_problem(problem: Problem, sympy: Any, read: Callable[[Problem], Any], rng: np.random.Generator) -> Outcome:
    """Every contender on one problem."""
    from exprgraph.interop import from_sympy

    declared = _declared(problem)
    term, known = parse(problem.text, declared), parse(problem.simplest, declared)
    names = sorted({s.name for s in postorder((term,)) if s.is_symbol})
    points = _points(problem, names, rng)
    out = Outcome(problem, size(known), size(term))
    if changes_value(term, known, points):
        raise AssertionError(f"the corpus's known form of {problem.text!r} is not equal to it: {problem.simplest!r}")
    results: dict[str, Term] = {}

    def ours(name: str) -> Callable[[], Any]:
        def call() -> Any:
            try:
                results[name] = VARIANTS[name](term)
            except ExprgraphError:
                results[name] = term  # a limit: the input stands
            return results[name]

        return call

    expr = read(problem)
    contenders: dict[str, Callable[[], Any]] = {name: ours(name) for name in VARIANTS}
    contenders["sympy"] = lambda: results.__setitem__("sympy-raw", sympy.simplify(expr))
    # each side's own caches cleared before each timed call: SymPy's cache, the facts we keep about terms
    clears = {**dict.fromkeys(VARIANTS, clear_caches), "sympy": sympy.core.cache.clear_cache}
    rounds = {**dict.fromkeys(VARIANTS, 3), "sympy": 2}
    out.times = best_of(contenders, repeat=rounds, setup=clears, clock=time.thread_time)
    out.warm = warm_best_of(contenders, repeat=rounds, clears=clears, clock=time.thread_time)
    try:
        results["sympy"] = from_sympy(results["sympy-raw"])
    except ExprgraphError:
        results["sympy"] = term  # SymPy's form has no exprgraph spelling: count it as unsolved
    for name, result in results.items():
        if name == "sympy-raw":
            continue
        out.sizes[name] = size(result)
        if changes_value(term, result, points):
            out.changed.append(name)
        out.solved[name] = name not in out.changed and solves(result, known, out.known)
    out.idempotent = {
        "default": simplify(results["default"]) is results["default"],
        "unsafe": simplify(results["unsafe"], unsafe=True) is results["unsafe"],
    }
    return out


#: the strengths reported side by side: the default (safe) and unsafe=True
STRENGTHS = ("default", "unsafe")
#: the columns of the per-family table
HEADER = (
    "family",
    "problems",
    "SymPy solves",
    "solved: default / unsafe / best variant",
    "no larger than SymPy where it solves: default / unsafe / best",
    "value changes",
    "median ours / SymPy, cold: default / unsafe",
)


def _line(cells: list[str] | tuple[str, ...]) -> None:
    print("| " + " | ".join(cells) + " |")


def _median_ratio(group: list[Outcome], name: str, warm: bool = False) -> tuple[float, float]:
    """The median time of ``name`` and of SymPy over ``group`` (cold, or ``warm``)."""
    times = [o.warm if warm else o.times for o in group]
    return statistics.median(t[name] for t in times), statistics.median(t["sympy"] for t in times)


def report(outcomes: list[Outcome]) -> None:
    """The per-family table and the goals, for each strength."""
    fams = sorted({o.problem.family for o in outcomes})
    _line(HEADER)
    _line(["---"] * len(HEADER))
    for fam in [*fams, "all"]:
        _line(_row(fam, [o for o in outcomes if fam in ("all", o.problem.family)]))
    sympy_solved = [o for o in outcomes if o.solved["sympy"]]
    changes = sum(len([c for c in o.changed if c != "sympy"]) for o in outcomes)
    pass_only, sympy_median = _median_ratio(outcomes, "rules")
    print()
    _line(["goal (issue 30)", "strength", "now", ""])
    _line(["---"] * 4)
    for name in STRENGTHS:
        beat = sum(o.sizes[name] <= o.sizes["sympy"] for o in sympy_solved)
        share = beat / max(len(sympy_solved), 1)
        _goal(
            "no larger than SymPy's form on >= 90% of what SymPy solves",
            name,
            f"{beat}/{len(sympy_solved)} ({share:.0%})",
            share >= 0.9,
        )
        for warm in (False, True):
            ours, theirs = _median_ratio(outcomes, name, warm)
            _goal(
                f"median time <= 0.05x sympy.simplify ({'warm' if warm else 'cold'})",
                name,
                f"{fmt_seconds(ours)} vs {fmt_seconds(theirs)} ({ratio(ours, theirs)})",
                ours <= 0.05 * theirs,
            )
        idem = sum(o.idempotent[name] for o in outcomes)
        _goal("simplify idempotent", name, f"{idem}/{len(outcomes)}", idem == len(outcomes))
    _goal("0 value changes", "every variant", str(changes), changes == 0)
    alone = f"{fmt_seconds(pass_only)}, {ratio(pass_only, sympy_median)}"
    warm_pass, warm_sympy = _median_ratio(outcomes, "rules", warm=True)
    print(f"\n(the canonical pass alone, method='rules': median {alone} cold, {ratio(warm_pass, warm_sympy)} warm)")


def _goal(text: str, strength: str, now: str, met: bool) -> None:
    _line([text, strength, now, "met" if met else "missed"])


def _row(fam: str, group: list[Outcome]) -> list[str]:
    solved = {k: sum(o.solved[k] for o in group) for k in [*VARIANTS, "sympy"]}
    best = sum(any(o.solved[k] for k in VARIANTS) for o in group)
    where = [o for o in group if o.solved["sympy"]]
    beat = {k: sum(o.sizes[k] <= o.sizes["sympy"] for o in where) for k in STRENGTHS}
    beat_best = sum(min(o.sizes[k] for k in VARIANTS if k not in o.changed) <= o.sizes["sympy"] for o in where)
    changed = sum(len([c for c in o.changed if c != "sympy"]) for o in group)
    meds = " / ".join(ratio(*_median_ratio(group, k)) for k in STRENGTHS)
    return [
        fam,
        str(len(group)),
        str(solved["sympy"]),
        f"{solved['default']} / {solved['unsafe']} / {best}",
        f"{beat['default']} / {beat['unsafe']} / {beat_best} of {len(where)}",
        str(changed),
        meds,
    ]


#: the stages ``--profile`` times, by module and function name (each wrapped where its callers look it up)
STAGES = (
    ("exprgraph.simplify.simplify", "_two_passes"),
    ("exprgraph.simplify.simplify", "_algebraic"),
    ("exprgraph.simplify.simplify", "formed"),
    ("exprgraph.simplify.simplify", "forms_for"),
    ("exprgraph.simplify.simplify", "simplify_integers"),
    ("exprgraph.simplify.simplify", "_kept_sums"),
    ("exprgraph.egraph.strategy", "rule_stage"),
    ("exprgraph.egraph.strategy", "_rules_for"),
    ("exprgraph.egraph.strategy", "_saturated"),
)


def _cold(call: Callable[[], Any]) -> float:
    """One call timed as the cold column times it: our caches cleared, a full gc, thread CPU."""
    clear_caches()
    gc.collect()
    gc.disable()
    try:
        start = time.thread_time()
        call()
        return time.thread_time() - start
    finally:
        gc.enable()


def profile_variant(name: str, chosen: list[Problem], top: int = 30) -> None:
    """Where ``name``'s cold time goes over ``chosen``: per-stage thread CPU, then a cProfile."""
    fn = VARIANTS[name]
    try:
        _sympy_reader()  # SymPy loaded, as in a full run: the gc before each cold call walks its heap too
    except ImportError:
        pass
    terms = [parse(p.text, _declared(p)) for p in chosen]
    spent: dict[str, float] = defaultdict(float)
    saved = [(sys.modules[m], f, getattr(sys.modules[m], f)) for m, f in STAGES]

    def timed(label: str, inner: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            start = time.thread_time()
            try:
                return inner(*args, **kwargs)
            finally:
                spent[label] += time.thread_time() - start  # inclusive (a stage within itself counts twice)

        return call

    rows: list[tuple[float, dict[str, float]]] = []
    try:
        for module, f, inner in saved:
            setattr(module, f, timed(f, inner))
        for t in terms:
            runs = []
            for _ in range(3):
                spent.clear()
                runs.append((_cold(partial(fn, t)), dict(spent)))
            rows.append(min(runs, key=lambda r: r[0]))
    finally:
        for module, f, inner in saved:
            setattr(module, f, inner)
    rows.sort(key=lambda r: r[0])
    middle = rows[int(len(rows) * 0.3) : max(int(len(rows) * 0.7), 1)]
    print(f"{name}: {len(rows)} problems, cold median {fmt_seconds(statistics.median(r[0] for r in rows))}")
    print("| stage (inclusive) | mean over the middle 40% | mean over all |\n|---|---:|---:|")
    for label in ["(the call)", *sorted({k for _, d in rows for k in d})]:
        mid = statistics.mean(r[0] if label == "(the call)" else r[1].get(label, 0.0) for r in middle)
        every = statistics.mean(r[0] if label == "(the call)" else r[1].get(label, 0.0) for r in rows)
        print(f"| {label} | {fmt_seconds(mid)} | {fmt_seconds(every)} |")
    profiler = cProfile.Profile()
    for t in terms:
        clear_caches()
        gc.collect()
        profiler.runcall(fn, t)
    print()
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(top)


def main(argv: list[str] | None = None) -> None:
    """Run the corpus (or one family of it) and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", help="only this family (trig, trig2, hyperbolic, polynomial, ...)")
    parser.add_argument("--limit", type=int, help="only the first N problems")
    parser.add_argument("--show", action="store_true", help="print each problem's results")
    parser.add_argument(
        "--native-assumptions", action="store_true", help="declare our symbols with the bare assumption names"
    )
    parser.add_argument("--profile", choices=sorted(VARIANTS), help="where one variant's cold time goes (no SymPy)")
    args = parser.parse_args(argv if argv is not None else [])
    global NATIVE_ASSUMPTIONS
    NATIVE_ASSUMPTIONS = args.native_assumptions
    if args.profile:
        profile_variant(args.profile, [p for p in problems() if args.family in (None, p.family)][: args.limit])
        return
    try:
        sympy, read = _sympy_reader()
    except ImportError:
        print("(skipped: sympy is not installed)")
        return
    chosen = [p for p in problems() if args.family in (None, p.family)][: args.limit]
    rng = np.random.default_rng(30)
    outcomes = []
    for p in chosen:
        o = run_problem(p, sympy, read, rng)
        outcomes.append(o)
        if args.show:
            times = {k: round(v * 1e6) for k, v in o.times.items()}
            head = f"{p.family:10} {p.text:45} known {o.known:2} in {o.input_size:2}"
            print(f"{head} {o.sizes} us={times} changed={o.changed}")
    report(outcomes)


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
