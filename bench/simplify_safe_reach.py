"""What the safe default ``simplify`` can reach on the textbook corpus (issue 30), beside what SymPy solves.

The default keeps every value, infinities, nans and overflow included ("a rule exact only for finite or non-zero
values is unsafe"). A known simple form that differs from the input at an edge point of the problem's domain
(``x/x -> 1`` at 0; ``exp(x)*exp(y) -> exp(x + y)`` where a factor overflows; ``2*sin(x)*cos(x) -> sin(2*x)`` at
1e308, where ``2*x`` overflows) is out of its reach by design. This splits the problems ``sympy.simplify`` solves
into those whose known form and SymPy's form both change a value at an edge point, and the others, and counts where
the default reaches a form no larger than SymPy's in each part; it lists the reachable ones it misses.

    .venv/bin/python -m bench.simplify_safe_reach [--show N]
"""

from __future__ import annotations

import argparse
import itertools
from collections import Counter

import numpy as np

from bench.bench_simplify_corpus import _declared, _points, _sympy_reader, _value, changes_value, size, solves
from bench.simplify_corpus import Problem, problems
from exprgraph import Term, parse, postorder, simplify
from exprgraph.errors import ExprgraphError

#: values where denominators, logs and overflow break an identity that holds for moderate finite values: 5e307
#: is finite with 2*x finite and 4*x not (sin(2*(2*x)) is nan where 2*sin(2*x)*cos(2*x) is not), and nan shows
#: a form that loses a nan (min(x, max(x, y)) is nan at y = nan, x is not)
EDGES = (0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, 710.0, -710.0, 1e200, 5e307, 1e308, -1e308, np.inf, -np.inf, np.nan)
#: at most this many edge points a problem (every combination of its symbols' edge values, in order)
MAX_POINTS = 5000


def _edge_values(kinds: set[str]) -> list[float]:
    """The edge values a symbol with these assumptions takes (SymPy's positive, nonnegative, integer are finite)."""
    values = list(EDGES)
    if kinds & {"positive", "nonnegative", "integer", "real"}:
        values = [v for v in values if np.isfinite(v)]
    if "positive" in kinds:
        values = [v for v in values if v > 0]
    if "nonnegative" in kinds:
        values = [v for v in values if v > 0 or (v == 0 and not np.signbit(v))]
    if "integer" in kinds:
        values = [v for v in values if float(v).is_integer() and not (v == 0 and np.signbit(v))]
    return values or [1.0]


def edge_points(problem: Problem, names: list[str]) -> list[dict[str, float]]:
    """Every combination of the symbols' edge values (the first MAX_POINTS)."""
    kinds: dict[str, set[str]] = {}
    for name, kind in problem.assumptions:
        kinds.setdefault(name, set()).add(kind)
    columns = [_edge_values(kinds.get(name, set())) for name in names]
    return [dict(zip(names, combo, strict=True)) for combo in itertools.islice(itertools.product(*columns), MAX_POINTS)]


def differs_at(original: Term, form: Term, points: list[dict[str, float]]) -> bool:
    """Whether ``form`` has another value than ``original`` at one of ``points`` (two nans are equal)."""
    for point in points:
        a, b = _value(original, point), _value(form, point)
        if a == b or (np.isnan(a) and np.isnan(b)):
            continue
        if not (np.isfinite(a) and np.isfinite(b) and abs(a - b) <= 1e-9 * (1.0 + abs(a) + abs(b))):
            return True
    return False


def main(argv: list[str] | None = None) -> None:
    """Split the problems SymPy solves by reachability and count the default's reach in each part."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--show", type=int, default=40, help="list this many reachable problems the default misses")
    args = ap.parse_args(argv)
    from exprgraph.interop import from_sympy

    sympy, read = _sympy_reader()
    rng = np.random.default_rng(0)
    rows: list[tuple[Problem, bool, bool]] = []
    for problem in problems():
        declared = _declared(problem)
        term, known = parse(problem.text, declared), parse(problem.simplest, declared)
        names = sorted({s.name for s in postorder((term,)) if s.is_symbol})
        points = _points(problem, names, rng)
        try:
            theirs = from_sympy(sympy.simplify(read(problem)))
        except ExprgraphError:
            continue  # SymPy's form has no exprgraph spelling: unsolved, as the bench counts it
        if changes_value(term, theirs, points) or not solves(theirs, known, size(known)):
            continue
        ours = simplify(term)
        reached = size(ours) <= size(theirs) and not changes_value(term, ours, points)
        edges = edge_points(problem, names)
        unreachable = differs_at(term, known, edges) and differs_at(term, theirs, edges)
        rows.append((problem, reached, unreachable))
    reachable = [r for r in rows if not r[2]]
    print(f"SymPy solves {len(rows)}; the default is no larger than SymPy's form on {sum(r[1] for r in rows)}")
    print(
        f"reachable by a rewrite that keeps every value: {len(reachable)}; the default on those: "
        f"{sum(r[1] for r in reachable)} ({sum(r[1] for r in reachable) / max(1, len(reachable)):.0%})"
    )
    print(
        f"out of its reach (a value changes at an edge point): {len(rows) - len(reachable)}; "
        f"the default no larger there anyway: {sum(r[1] for r in rows if r[2])}"
    )
    missed = [r[0] for r in reachable if not r[1]]
    print("reachable and missed, by family:", dict(Counter(p.family for p in missed)))
    for problem in missed[: args.show]:
        print(f"  {problem.family}: {problem.text}  ->  {problem.simplest}")


if __name__ == "__main__":
    main()
