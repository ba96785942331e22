"""Dimension queries a dynamic-shape compiler makes: ours against torch's own sympy path.

A replay corpus (fixed seed) of the expressions and questions that shape propagation and guard
checking produce, grouped in scenarios that share the ranges of their names (one ShapeEnv each):

- conv and pool output sizes through stacks of layers (``(H + 2p - d*(k-1) - 1)//s + 1``, the
  ceil-mode ``CeilDiv`` form), asked for their bounds, whether they stay ``>= 1``, and equalities
  ("same" padding gives back ``H``);
- reshape / view / flatten: products of dims and of sums of dims (flattening 2 to 6 axes whose
  sizes are sums), numel equalities, divisibility;
- split and chunk: ``CeilDiv(s0, n)`` chunks adding up to ``s0``, halves ``s0//2`` and ``(s0+1)//2``;
- attention index arithmetic: ``ModularIndexing``, nested ``FloorDiv``, flat index bounds;
- guards with 2 to 256 names: sums, products, orderings, a Max of sums (broadcasting many
  inputs), a view dividing a numel of many names by one of them.

Queries: ``simplify`` (torch: ``sympy.expand``, what ``sizevars.simplify`` does), ``bound``
(torch: ``bound_sympy`` on the value ranges), ``ge``/``gt`` (``statically_known``; torch: sympy's
relational, then ``bound_sympy`` of the expanded difference, as ``_maybe_evaluate_static``),
``eq`` (torch: the expanded difference is 0, or its bound excludes 0) and ``divisible`` (torch:
``Mod`` of the expanded expression, then its bound). Both sides start cold (our caches and
sympy's cache cleared before each round) and are timed two ways. Within a round, each side keeps
what it caches: sympy's cache serves every scenario, and our environments with equal ranges share
one state (as a DimEnv does by design), so scenarios with the same ranges reuse what earlier ones
worked out on both sides:

- *build + answer* (the target): each side builds its own expressions, then answers. Ours parses
  the corpus text; torch's builds its sympy objects from our parsed terms with
  ``torch.utils._sympy.functions`` (no text parsing on its side). sympy evaluates as it builds
  (``FloorDiv``, ``Mod``, ``Max`` simplify on construction), so building is part of its answer;
- *answer only*: the expressions prebuilt on both sides.

Times are the CPU time of the benchmark's thread (``time.thread_time``), best of 5 rounds for ours
and of 3 for torch's (2 before 2026-11-27, when wall-clock time was read): the machines are shared,
and other processes stretch wall-clock time, not the thread's CPU time. Both sides run single
threaded Python; nothing else changed in what either side does or caches within a round.

Checks: every answer of ours is checked on points of the names' ranges (all of them when the box
is small, else a sample): a bound must hold each value, True/False must hold at each point. The
same queries are also answered with every range cut to a small box, and checked exhaustively
there. "At least as decisive": where torch answers (True/False, or a bound), ours answers too
(for bounds: an interval inside torch's).

A second table times the cliffs of the issue: flattening n axes of sizes ``a_i+b_i`` (ours keeps
the product factored; sympy's ``expand``, which torch's ``simplify`` calls, multiplies it out) and
queries over 64 and 256 names and sums of 10,000 terms.

Run: ``python -m bench.bench_dims_queries`` (``--dump FILE`` writes the corpus as text). Without
torch the anchor column is skipped.
"""

from __future__ import annotations

import math
import operator
import random
import sys
import time
from collections.abc import Callable
from typing import Any

from bench.common import best_of, print_table, skip
from bench.dims_convert import convert
from exprgraph.dims import (
    DimEnv,
    clear_caches,
    compiled_modules,
    dim_multi_mul,
    evaluate_expression,
    parse_expression,
    simplify_expression,
)
from exprgraph.errors import EvaluationError

KINDS = ("simplify", "bound", "ge", "gt", "eq", "divisible")
INF = math.inf

Scenario = tuple[str, dict[str, tuple[int, int | None]], list[tuple[str, tuple[Any, ...]]]]


# -- the corpus ----------------------------------------------------------------------------------------


def _conv(rng: random.Random) -> Scenario:
    """A stack of conv / pool layers on an image: output sizes, their bounds, positivity, equalities."""
    ranges: dict[str, tuple[int, int | None]] = {"B": (1, 512), "H": (32, 4096), "W": (32, 4096)}
    qs: list[tuple[str, tuple[Any, ...]]] = []
    h, w = "H", "W"
    for _ in range(rng.randint(2, 5)):
        k = rng.choice([1, 3, 3, 5, 7])
        s = rng.choice([1, 1, 2, 2, 4])
        d = rng.choice([1, 1, 1, 2])
        p = rng.choice([0, (k - 1) * d // 2])
        if rng.random() < 0.25:  # a pool in ceil mode
            h = f"CeilDiv({h} + {2 * p} - {d * (k - 1) + 1}, {s}) + 1"
        else:
            h = f"FloorDiv({h} + {2 * p} - {d * (k - 1)} - 1, {s}) + 1"
        w = f"FloorDiv({w} + {2 * p} - {d * (k - 1)} - 1, {s}) + 1"
        qs += [("simplify", (h,)), ("bound", (h,)), ("ge", (h, "1")), ("gt", (w, "0"))]
        if s == 1 and 2 * p == d * (k - 1):
            qs.append(("eq", (f"FloorDiv(H + {2 * p} - {d * (k - 1)} - 1, 1) + 1", "H")))  # "same" padding
        qs.append(("ge", ("H", h)))
    qs.append(("bound", (f"B*({h})*({w})",)))
    qs.append(("divisible", (f"64*B*({h})", "8")))
    return "conv/pool", ranges, qs


def _reshape(rng: random.Random) -> Scenario:
    """view / reshape / flatten: numel equalities, products of sums, divisibility."""
    n = rng.randint(2, 6)
    names = [f"s{i}" for i in range(n)]
    ranges: dict[str, tuple[int, int | None]] = {x: (2, None) for x in names}
    qs: list[tuple[str, tuple[Any, ...]]] = []
    numel = "*".join(names)
    shuffled = names[:]
    rng.shuffle(shuffled)
    qs.append(("eq", (numel, "*".join(shuffled))))
    j = rng.randrange(n)
    qs.append(("eq", (f"FloorDiv({numel}, {names[j]})", "*".join(x for i, x in enumerate(names) if i != j))))
    qs.append(("divisible", (numel, names[j])))
    qs.append(("divisible", (f"{numel}*{rng.choice([2, 4, 8])}", "2")))
    qs.append(("divisible", (f"2*{names[0]} + 1", "2")))
    qs.append(("eq", (numel, f"{numel} + 1")))
    # flattening axes whose sizes are sums (a concat before each)
    sums = [f"({names[i]} + {names[(i + 1) % n]})" for i in range(n)]
    flat = "*".join(sums)
    qs += [("simplify", (flat,)), ("bound", (flat,)), ("eq", (flat, "*".join(reversed(sums))))]
    qs.append(("ge", (flat, names[0])))
    qs.append(("simplify", (f"FloorDiv({flat}, {sums[0]})",)))
    qs.append(("gt", (f"{names[0]}*{names[1]}", names[0])))
    return "reshape/flatten", ranges, qs


def _split(rng: random.Random) -> Scenario:
    """split / chunk sizes."""
    ranges: dict[str, tuple[int, int | None]] = {"s0": (2, None), "s1": (1, None)}
    n = rng.randint(2, 8)
    chunk = f"CeilDiv(s0, {n})"
    last = f"s0 - {n - 1}*{chunk}"
    qs: list[tuple[str, tuple[Any, ...]]] = [
        ("simplify", (chunk,)),
        ("bound", (chunk,)),
        ("eq", (" + ".join([chunk] * (n - 1) + [f"({last})"]), "s0")),
        ("ge", (last, "0")),
        ("eq", ("FloorDiv(s0, 2) + FloorDiv(s0 + 1, 2)", "s0")),
        ("eq", ("FloorDiv(s0, 2) + PythonMod(s0, 2)", "FloorDiv(s0 + 1, 2)")),
        (
            "eq",
            (
                f"FloorDiv(s0 + s1, {n}) + FloorDiv(s0 + s1 + {n - 1}, {n})",
                f"CeilDiv(s0 + s1, {n}) + FloorDiv(s0 + s1, {n})",
            ),
        ),
        ("ge", ("s0", chunk)),
        ("divisible", (f"{n}*{chunk}", str(n))),
        ("bound", (f"PythonMod(s0, {n})",)),
    ]
    return "split", ranges, qs


def _attention(rng: random.Random) -> Scenario:
    """Index arithmetic of an attention kernel: flat index -> (batch, head, position, channel)."""
    D = rng.choice([32, 64, 128])
    ranges: dict[str, tuple[int, int | None]] = {"x": (0, 2**20 - 1), "S": (1, 8192), "Hd": (1, 64)}
    qs: list[tuple[str, tuple[Any, ...]]] = [
        ("bound", (f"ModularIndexing(x, {D}, S)",)),
        ("bound", (f"ModularIndexing(x, 1, {D})",)),
        ("eq", (f"FloorDiv(FloorDiv(x, {D}), S)", f"FloorDiv(x, {D}*S)")),
        ("eq", (f"ModularIndexing(x, 1, {D})", f"PythonMod(x, {D})")),
        ("simplify", (f"{D}*FloorDiv(x, {D}) + ModularIndexing(x, 1, {D})",)),
        ("ge", (f"S*{D}", f"ModularIndexing(x, 1, S*{D})")),
        ("gt", (f"S*{D}", f"ModularIndexing(x, 1, S*{D})")),
        ("bound", (f"ModularIndexing(x, 1, {D}) + {D}*ModularIndexing(x, {D}, S)",)),
        ("divisible", (f"{D}*FloorDiv(x, {D})", str(D))),
        ("bound", (f"FloorDiv(x, {D}*S*Hd)",)),
        ("eq", ("FloorDiv(x*Hd, Hd)", "x")),
    ]
    return "attention index", ranges, qs


def _guards(rng: random.Random, n: int) -> Scenario:
    """Guards over n names (2 to 256)."""
    names = [f"s{i}" for i in range(n)]
    ranges: dict[str, tuple[int, int | None]] = {x: (2, 2**31 - 1) for x in names}
    total = " + ".join(names)
    shuffled = names[:]
    rng.shuffle(shuffled)
    i, j = rng.randrange(n), rng.randrange(n)
    qs: list[tuple[str, tuple[Any, ...]]] = [
        ("ge", (total, str(2 * n))),
        ("gt", (total, str(2 * n))),
        ("eq", (total, " + ".join(shuffled))),
        ("eq", (names[i], "1")),
        ("ge", (total, names[j])),
        ("eq", (names[i], names[j])),
        ("bound", (total,)),
        ("simplify", (f"{total} - {' - '.join(shuffled[: n // 2])}",)),
        ("ge", (f"{names[i]}*{names[j]}", names[i])),
        ("divisible", (f"2*({total})", "2")),
        ("eq", ("*".join(names[:8]), "*".join(reversed(names[:8])))),
        # broadcasting many inputs whose sizes are sums (a Max of sums)
        ("ge", ("Max(" + ", ".join(f"{names[k]} + {names[(k + 1) % n]}" for k in range(min(n, 16))) + ")", names[0])),
    ]
    if n <= 64:
        # a view on a numel made of many dims, divided by one of them
        pairs = " + ".join(f"{names[k]}*{names[(k + 1) % n]}" for k in range(n))
        qs.append(("bound", (f"FloorDiv({pairs}, {names[0]})",)))
    return f"guards, {n} names", ranges, qs


def make_corpus(seed: int = 5) -> list[Scenario]:
    """The replay corpus: scenarios of every kind, in a fixed pseudo-random order."""
    rng = random.Random(seed)
    out: list[Scenario] = []
    for _ in range(12):
        out.append(_conv(rng))
        out.append(_reshape(rng))
        out.append(_split(rng))
        out.append(_attention(rng))
    for n in (2, 4, 8, 16, 32, 64, 128, 256):
        out.append(_guards(rng, n))
    return out


# -- our side ------------------------------------------------------------------------------------------


def _prepare_ours(corpus: list[Scenario]) -> list[tuple[dict, list[tuple[str, tuple]]]]:
    """Parse every expression beforehand (a compiler has them as terms already)."""
    out = []
    for _, ranges, qs in corpus:
        out.append((ranges, [(kind, tuple(parse_expression(a) for a in args)) for kind, args in qs]))
    return out


def build_and_answer_ours(corpus: list[Scenario]) -> list[Any]:
    """Parse the corpus text, then answer it."""
    return answer_ours(_prepare_ours(corpus))


def answer_ours(prepared: list[tuple[dict, list[tuple[str, tuple]]]]) -> list[Any]:
    """Our answers to the whole corpus, one DimEnv per scenario."""
    answers = []
    for ranges, qs in prepared:
        env = DimEnv(ranges)
        for kind, args in qs:
            answers.append(env.ask(kind, *args))
    return answers


# -- torch's side ----------------------------------------------------------------------------------------


def _torch() -> Any:
    import sympy
    from torch.utils._sympy import functions as fns
    from torch.utils._sympy.numbers import int_oo
    from torch.utils._sympy.value_ranges import ValueRanges, bound_sympy

    return sympy, fns, int_oo, ValueRanges, bound_sympy


def _constructors(sympy: Any, fns: Any) -> dict[str, Callable[..., Any]]:
    """torch's sympy constructor for each of our ops (ModularIndexing where ours is (x//d)%m)."""
    return {
        "const": sympy.Integer,
        "add": sympy.Add,
        "sub": operator.sub,
        "mul": sympy.Mul,
        "neg": operator.neg,
        "floordiv": fns.FloorDiv,
        "mod": fns.PythonMod,
        "modular_indexing": fns.ModularIndexing,
        "ceil_div": fns.CeilDiv,
        "maximum": fns.Max,
        "minimum": fns.Min,
    }


def prepare_torch(ours: list[tuple[dict, list[tuple[str, tuple]]]]) -> list[tuple[dict, list[tuple[str, tuple]]]]:
    """torch's sympy expressions and value ranges for every scenario, built from our parsed terms."""
    sympy, fns, int_oo, ValueRanges, _ = _torch()
    constructors = _constructors(sympy, fns)
    out = []
    for ranges, qs in ours:
        sym = {n: sympy.Symbol(n, integer=True, nonnegative=True) for n in ranges}
        vr = {sym[n]: ValueRanges(lo, int_oo if hi is None else hi) for n, (lo, hi) in ranges.items()}
        built = [(kind, tuple(convert(a, constructors, sym.__getitem__) for a in args)) for kind, args in qs]
        out.append((vr, built))
    return out


def answer_torch(prepared: list[tuple[dict, list[tuple[str, tuple]]]]) -> list[Any]:
    """torch's answers (its sympy path) to the whole corpus."""
    sympy, _, _, _, bound_sympy = _torch()

    def bound(e: Any, vr: dict) -> tuple[Any, Any]:
        b = bound_sympy(e, vr)
        return b.lower, b.upper

    def sign(d: Any, vr: dict, strict: bool) -> bool | None:
        lo, hi = bound(sympy.expand(d), vr)
        if (lo > 0) if strict else (lo >= 0):
            return True
        if (hi <= 0) if strict else (hi < 0):
            return False
        return None

    answers: list[Any] = []
    for vr, qs in prepared:
        for kind, args in qs:
            if kind == "simplify":
                answers.append(sympy.expand(args[0]))
            elif kind == "bound":
                answers.append(bound(args[0], vr))
            elif kind in ("ge", "gt"):
                rel = (sympy.Ge if kind == "ge" else sympy.Gt)(args[0], args[1])
                if rel is sympy.true or rel is sympy.false:
                    answers.append(bool(rel))
                else:
                    answers.append(sign(args[0] - args[1], vr, kind == "gt"))
            elif kind == "eq":
                d = sympy.expand(args[0] - args[1])
                if d == 0:
                    answers.append(True)
                else:
                    lo, hi = bound(d, vr)
                    answers.append(False if lo > 0 or hi < 0 else None)
            else:
                m = sympy.Mod(sympy.expand(args[0]), args[1])
                if m == 0:
                    answers.append(True)
                elif m.is_Integer:
                    answers.append(False)
                else:
                    lo, hi = bound(m, vr)
                    answers.append(False if lo > 0 or hi < 0 else None)
    return answers


# -- checks ------------------------------------------------------------------------------------------


def _points(
    ranges: dict[str, tuple[int, int | None]], names: list[str], rng: random.Random, cap: int = 256
) -> list[dict]:
    """Points of the box the ranges give: every point when few, else a sample (corners included)."""
    sizes = {n: (ranges[n][1] if ranges[n][1] is not None else 2**40) - ranges[n][0] + 1 for n in names}
    total = 1
    for n in names:
        total *= sizes[n]
        if total > cap:
            break
    if total <= cap:
        pts: list[dict] = [{}]
        for n in names:
            lo = ranges[n][0]
            pts = [{**p, n: lo + i} for p in pts for i in range(sizes[n])]
        return pts
    out = [{n: ranges[n][0] for n in names}]
    for _ in range(cap - 1):
        p = {}
        for n in names:
            lo, hi = ranges[n][0], ranges[n][1] if ranges[n][1] is not None else ranges[n][0] + 10**6
            p[n] = rng.choice([lo, lo + 1, hi, rng.randint(lo, min(hi, lo + 20)), rng.randint(lo, hi)])
        out.append(p)
    return out


def _value(term: Any, point: dict) -> int | None:
    try:
        return evaluate_expression(term, point)
    except EvaluationError:
        return None


def _holds(kind: str, args: tuple, answer: Any, point: dict) -> bool:
    """Whether our answer is right at one point (where the expressions are defined)."""
    vals = [_value(a, point) for a in args]
    if any(v is None for v in vals):
        return True
    if kind == "simplify":
        got = answer if isinstance(answer, int) else _value(answer, point)
        return got == vals[0]
    if kind == "bound":
        lo, hi = answer
        return lo <= vals[0] <= hi
    if answer is None:
        return True
    if kind == "ge":
        return (vals[0] >= vals[1]) == answer
    if kind == "gt":
        return (vals[0] > vals[1]) == answer
    if kind == "eq":
        return (vals[0] == vals[1]) == answer
    return (vals[1] != 0 and vals[0] % vals[1] == 0) == answer


def _small(ranges: dict[str, tuple[int, int | None]]) -> dict[str, tuple[int, int | None]]:
    n = len(ranges)
    width = max(1, int(3000 ** (1 / n)) - 1) if n <= 8 else 2
    return {k: (lo, lo + width if hi is None else min(hi, lo + width)) for k, (lo, hi) in ranges.items()}


def check_ours(prepared: list[tuple[dict, list[tuple[str, tuple]]]], answers: list[Any]) -> tuple[int, int, int]:
    """(wrong answers on the realistic ranges, wrong answers on the small boxes, points checked)."""
    rng = random.Random(1)
    wrong = wrong_small = checked = 0
    i = 0
    for ranges, qs in prepared:
        small = _small(ranges)
        env_small = DimEnv(small)
        for kind, args in qs:
            names = sorted({s.name for a in args for s in a.free_symbols})
            answer = answers[i]
            i += 1
            small_answer = env_small.ask(kind, *args)
            for point in _points(ranges, names, rng, 64):
                checked += 1
                wrong += not _holds(kind, args, answer, point)
            for point in _points(small, names, rng):
                checked += 1
                wrong += not _holds(kind, args, answer, point)
                wrong_small += not _holds(kind, args, small_answer, point)
    return wrong, wrong_small, checked


def _decisive(kind: str, ours: Any, theirs: Any) -> bool:
    """Whether our answer is at least as decisive as torch's."""
    if kind == "simplify":
        return True
    if kind == "bound":
        lo = int(theirs[0]) if theirs[0].is_Integer else -INF  # int_oo and oo are not Integers
        hi = int(theirs[1]) if theirs[1].is_Integer else INF
        return ours[0] >= lo and ours[1] <= hi
    return theirs is None or ours is not None


# -- cliffs ------------------------------------------------------------------------------------------------


def _timed(fn: Callable[[], Any], repeat: int = 3) -> tuple[float, Any]:
    best = math.inf
    result = None
    for _ in range(repeat):
        clear_caches()
        result = None
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def cliffs(have_torch: bool) -> None:
    """Flattening n sums, and queries over many names and long sums: ours, and sympy where it finishes."""
    rows = []
    for n in (12, 16, 21, 64):
        dims = [f"a{i}+b{i}" for i in range(n)]
        t, out = _timed(lambda dims=dims: dim_multi_mul(*dims))
        anchor = ""
        if have_torch and n <= 12:
            import sympy

            syms = [(sympy.Symbol(f"a{i}"), sympy.Symbol(f"b{i}")) for i in range(n)]
            start = time.perf_counter()
            expanded = sympy.expand(sympy.Mul(*[a + b for a, b in syms]))
            anchor = f"{(time.perf_counter() - start) * 1e3:.0f} ms, {len(str(expanded)):,} chars"
        elif have_torch:
            anchor = f"not run ({2**n:,} terms)"
        rows.append([f"flatten {n} axes a_i+b_i (dim_multi_mul)", f"{t * 1e3:.2f} ms", f"{len(out)} chars", anchor])
    names = [f"s{i}" for i in range(256)]
    env_ranges = {x: (2, 2**31 - 1) for x in names}
    total = " + ".join(names)
    t, _ = _timed(lambda: DimEnv(env_ranges).statically_known(f"{total} >= 512"))
    rows.append(["statically_known(sum of 256 names >= 512), 256 ranges", f"{t * 1e3:.2f} ms", "", ""])
    t, _ = _timed(lambda: DimEnv(env_ranges).bound("Max(" + ", ".join(names) + ")"))
    rows.append(["bound(Max of 256 names)", f"{t * 1e3:.2f} ms", "", ""])
    products = " + ".join(f"{names[i]}*{names[(i + 1) % 64]}" for i in range(64))
    t, _ = _timed(lambda: DimEnv(env_ranges).simplify(f"FloorDiv({products}, s0)"))
    rows.append(["FloorDiv(sum of 64 products of names, s0)", f"{t * 1e3:.2f} ms", "", ""])
    big = " + ".join(f"{i % 7 + 1}*x{i}" for i in range(10_000))
    shuffled = " + ".join(f"{i % 7 + 1}*x{i}" for i in reversed(range(10_000)))
    t, _ = _timed(lambda: DimEnv().equal(big, shuffled))
    rows.append(["equal(two sums of 10,000 terms), from text", f"{t * 1e3:.2f} ms", "", ""])
    negated = " - ".join(f"{i % 7 + 1}*x{i}" for i in reversed(range(10_000)))
    t, _ = _timed(lambda: simplify_expression(f"{big} - {negated}"))
    rows.append(["simplify(difference of two sums of 10,000 terms)", f"{t * 1e3:.2f} ms", "", ""])
    print_table("cliffs: ours (cold, best of 3) and sympy", ["case", "ours", "size", "sympy.expand"], rows)


# -- main ----------------------------------------------------------------------------------------------


def main() -> None:
    """Run the corpus on both sides, check ours, print the tables."""
    corpus = make_corpus()
    if "--dump" in sys.argv:
        with open(sys.argv[sys.argv.index("--dump") + 1], "w") as f:
            for name, ranges, qs in corpus:
                f.write(f"# {name}: {ranges}\n")
                for kind, args in qs:
                    f.write(f"{kind}\t" + "\t".join(args) + "\n")
    n_queries = sum(len(qs) for _, _, qs in corpus)
    prepared = _prepare_ours(corpus)
    ours_built = "ours: parse + answer"
    ours_only = "ours: answer (prebuilt terms)"
    torch_built = "torch: build + answer"
    torch_only = "torch: answer (prebuilt sympy)"

    def cold() -> None:
        clear_caches()

    contenders: dict[str, Callable[[], Any]] = {
        ours_built: lambda: build_and_answer_ours(corpus),
        ours_only: lambda: answer_ours(prepared),
    }
    setup: dict[str, Callable[[], Any]] = {ours_built: cold, ours_only: cold}
    repeat = {ours_built: 5, ours_only: 5}
    have_torch = True
    try:
        import sympy

        _torch()
        prepared_torch = prepare_torch(prepared)
        contenders[torch_built] = lambda: answer_torch(prepare_torch(prepared))
        contenders[torch_only] = lambda: answer_torch(prepared_torch)
        for name in (torch_built, torch_only):
            setup[name] = sympy.core.cache.clear_cache
            repeat[name] = 3
    except ImportError:
        have_torch = False
        skip("torch rows", "torch is not installed (pip install torch, the CPU wheel)")
    best = best_of(contenders, repeat=repeat, setup=setup, clock=time.thread_time)
    clear_caches()
    ours = answer_ours(prepared)
    build = "fast path compiled by mypyc" if compiled_modules() else "pure Python"
    print_table(
        f"{n_queries} queries in {len(corpus)} scenarios, cold, {build}",
        ["contender", "total", "per query"],
        [[name, f"{best[name] * 1e3:.1f} ms", f"{best[name] / n_queries * 1e6:.1f} µs"] for name in contenders],
    )
    wrong, wrong_small, checked = check_ours(prepared, ours)
    rows = [
        ["wrong answers of ours (realistic ranges)", wrong, "0"],
        ["wrong answers of ours (small boxes)", wrong_small, "0"],
    ]
    rows.append(["points checked", checked, ""])
    if have_torch:
        theirs = answer_torch(prepared_torch)
        kinds = [kind for _, _, qs in corpus for kind, _ in qs]
        decisive = sum(_decisive(k, o, t) for k, o, t in zip(kinds, ours, theirs, strict=True))
        for a, b, goal in ((ours_built, torch_built, "<= 0.01x (100x faster)"), (ours_only, torch_only, "")):
            r = best[a] / best[b]
            rows.append([f"time {a} / {b}", f"{r:.4f}x ({1 / r:.0f}x faster)", goal])
        rows.append(
            ["ours at least as decisive as torch", f"{decisive}/{n_queries} ({decisive / n_queries:.1%})", ">= 95%"]
        )
        more = sum(
            (o is not None and t is None) if k not in ("simplify", "bound") else False
            for k, o, t in zip(kinds, ours, theirs, strict=True)
        )
        rows.append(["decided by ours, not by torch", more, ""])
        per_kind = []
        for kind in KINDS:
            idx = [i for i, k in enumerate(kinds) if k == kind]
            per_kind.append(f"{kind} {sum(_decisive(kind, ours[i], theirs[i]) for i in idx)}/{len(idx)}")
        rows.append(["as decisive, per kind", ", ".join(per_kind), ""])
    print_table("checks", ["what", "value", "goal"], rows)
    cliffs(have_torch)


if __name__ == "__main__":
    main()
