"""torch's own dimension questions, replayed: ours (``exprgraph.interop.torch``) against torch's ShapeEnv path.

The corpus (``bench/data/torch_replay/*.json.gz``, made by ``python -m bench.torch_record``) holds the questions
torch asked while ``torch.compile(dynamic=True)`` compiled small models, with the ranges of their names and
torch's answers. Each question is replayed through both sides, with the same ranges:

- ``static``: torch's ``_maybe_evaluate_static_worker`` (what ``ShapeEnv._maybe_evaluate_static`` decides from
  ranges alone; its cache bypassed), against :meth:`TorchDims.static_value` (with the same size-oblivious
  narrowing of size-like names that torch's worker makes);
- ``bound``: torch's ``bound_sympy`` against :meth:`TorchDims.bound`.

Columns: questions (distinct), the answers torch derives from the ranges that we give too (a decided static
answer, or a bound: ours at least as tight), the answers we give that torch could not (a static answer where
torch's is None, a bound strictly tighter on a side), contradictions (an answer that differs from torch's
decided answer, a bound disjoint from torch's, or an answer refuted by evaluating the expression at points of
the ranges: 0 is the goal) and the speed ratio ours/torch: CPU time of this thread (``time.thread_time``),
best of 5 rounds (3 for torch), interleaved; both sides start each round cold (our caches and sympy's cache
cleared) from prebuilt sympy expressions (our time includes reading them, each node once a round: the
environments of a round share one reading table, as torch's side shares sympy's cache). Two columns of times,
each side treated exactly as the other: *cold*, a full gc right before each timed run (it walks torch's large heap
and evicts the processor's caches: about 0.3 ms of ours on a quiet machine), and *warm*, the same run done once
untimed first and the side's own caches cleared again before the timed run (see
:func:`bench.common.warm_best_of`). Questions over float symbols are outside integer dimension reasoning:
counted in their own column, answered by neither side's count.

The corpus is our own JSON tree format: it is read back by :func:`to_sympy` below (a table of class names,
never text evaluation). Run: ``python -m bench.bench_torch_dims [MODEL ...]``. Without torch the rows are
skipped with a message.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import best_of, print_table, skip, warm_best_of
from bench.torch_record import tree_names
from exprgraph.interop.torch import TorchDims
from exprgraph.interop.torch_read import fold_tree

DATA = Path(__file__).resolve().parent / "data" / "torch_replay"
ORDER = ("gpt2", "bert", "llama", "vit", "resnet", "mobilenet", "swin")
#: points of the ranges each answer is checked at
POINTS = 12


def load(path: Path) -> dict[str, Any]:
    """One model's recorded corpus."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def corpora(names: list[str] | None = None) -> list[tuple[str, dict[str, Any]]]:
    """The recorded corpora (every model's, or those named), in a stable order."""
    found = {p.name.removesuffix(".json.gz"): p for p in sorted(DATA.glob("*.json.gz")) if p.name != "sample.json.gz"}
    keys = sorted(found, key=lambda k: (ORDER.index(k.split("+")[0]) if k.split("+")[0] in ORDER else 99, k))
    return [(k, load(found[k])) for k in keys if not names or k in names]


# -- JSON tree -> sympy (a table of constructors; no text is evaluated) ----------------------------------


class SympyBuilder:
    """Builds sympy expressions (torch's classes) from corpus trees; symbols with their recorded assumptions."""

    def __init__(self, symbols: dict[str, dict[str, bool]]) -> None:
        import sympy
        import torch.utils._sympy.functions as tf
        from torch.utils._sympy.numbers import int_oo

        self.sp = sympy
        self.assumptions = symbols
        self.symbols: dict[str, Any] = {}
        self.atoms = {
            "int_oo": int_oo,
            "-int_oo": -int_oo,
            "oo": sympy.oo,
            "-oo": -sympy.oo,
            "true": sympy.true,
            "false": sympy.false,
            "nan": sympy.nan,
        }
        rel = sympy.core.relational
        self.classes: dict[str, Any] = {
            "Add": sympy.Add,
            "Mul": sympy.Mul,
            "Pow": sympy.Pow,
            "Mod": sympy.Mod,
            "Max": sympy.Max,
            "Min": sympy.Min,
            "Abs": sympy.Abs,
            "floor": sympy.floor,
            "ceiling": sympy.ceiling,
            "Equality": rel.Equality,
            "Unequality": rel.Unequality,
            "StrictLessThan": rel.StrictLessThan,
            "LessThan": rel.LessThan,
            "StrictGreaterThan": rel.StrictGreaterThan,
            "GreaterThan": rel.GreaterThan,
            "And": sympy.And,
            "Or": sympy.Or,
            "Not": sympy.Not,
            "Piecewise": sympy.Piecewise,
            "ExprCondPair": sympy.functions.elementary.piecewise.ExprCondPair,
        }
        for name in dir(tf):
            obj = getattr(tf, name)
            if isinstance(obj, type) and issubclass(obj, sympy.Basic) and obj.__module__.startswith("torch"):
                self.classes["torch." + name if name in ("Identity", "Max", "Min", "Mod") else name] = obj

    def symbol(self, name: str) -> Any:
        """The sympy symbol ``name`` with its recorded assumptions."""
        s = self.symbols.get(name)
        if s is None:
            s = self.symbols[name] = self.sp.Symbol(name, **self.assumptions.get(name, {"integer": True}))
        return s

    def build(self, tree: Any) -> Any:
        """The sympy expression of a tree (iterative)."""
        return fold_tree(tree, self.leaf, lambda name, args: self.classes[name](*args))

    def leaf(self, node: Any) -> Any:
        """The sympy atom of a leaf of a tree."""
        sp = self.sp
        if isinstance(node, bool):
            return sp.true if node else sp.false
        if isinstance(node, int):
            return sp.Integer(node)
        if isinstance(node, str):
            return self.symbol(node)
        if len(node) == 1:
            return self.atoms[node[0]]
        if node[0] == "Rational":
            return sp.Rational(node[1], node[2])
        return sp.Float(float(node[1]))

    def bound_value(self, tree: Any) -> Any:
        """A range end as sympy (int_oo, oo, an Integer, true/false)."""
        return self.build(tree)


# -- reference evaluation of a tree with Python integers (the soundness check) ----------------------------


def _py_eval(tree: Any, point: dict[str, int]) -> Any:
    """The value of a corpus tree at ``point`` with Python integer semantics (None where undefined)."""

    def leaf(node: Any) -> Any:
        if isinstance(node, int):
            return node
        if isinstance(node, str):
            return point[node]
        return {"true": True, "false": False}.get(node[0]) if len(node) == 1 else None

    return fold_tree(tree, leaf, lambda name, args: None if None in args else _apply(name, args))


def _apply(name: str, a: list[Any]) -> Any:
    try:
        if name == "Add":
            return sum(a)
        if name == "Mul":
            return math.prod(a)
        if name in ("Pow", "PowByNatural"):
            return a[0] ** a[1] if a[1] >= 0 else None
        if name in ("FloorDiv", "CleanDiv"):
            return a[0] // a[1]
        if name in ("PythonMod", "Mod", "torch.Mod"):
            return a[0] % a[1]
        if name == "ModularIndexing":
            return (a[0] // a[1]) % a[2]
        if name == "CeilDiv":
            return -((-a[0]) // a[1])
        if name in ("Max", "torch.Max"):
            return max(a)
        if name in ("Min", "torch.Min"):
            return min(a)
        if name in ("Identity", "torch.Identity"):
            return a[0]
        rel = {"Equality": "==", "Unequality": "!=", "StrictLessThan": "<", "LessThan": "<="}
        if name in rel or name in ("StrictGreaterThan", "GreaterThan"):
            x, y = a
            return {
                "Equality": x == y,
                "Unequality": x != y,
                "StrictLessThan": x < y,
                "LessThan": x <= y,
                "StrictGreaterThan": x > y,
                "GreaterThan": x >= y,
            }[name]
        if name == "And":
            return all(a)
        if name == "Or":
            return any(a)
        if name == "Not":
            return not a[0]
    except (ZeroDivisionError, TypeError, OverflowError):
        return None
    return None  # a function the check does not evaluate


def _sample(lo: float, hi: float, rng: random.Random) -> int:
    lo_i = int(lo) if math.isfinite(lo) else -(2**20)
    hi_i = int(hi) if math.isfinite(hi) else max(lo_i, 0) + 2**20
    picks = [lo_i, hi_i, lo_i + 1, hi_i - 1]
    v = rng.choice(picks) if rng.random() < 0.4 else rng.randint(lo_i, hi_i)
    return min(max(v, lo_i), hi_i)


# -- the questions ------------------------------------------------------------------------------------


def _end(tree: Any) -> float | None:
    """A recorded range end as a number (None: not an integer end, e.g. a float or a bool)."""
    if isinstance(tree, bool):
        return None
    if isinstance(tree, int):
        return tree
    if isinstance(tree, list) and tree[0] in ("int_oo", "oo"):
        return math.inf
    if isinstance(tree, list) and tree[0] in ("-int_oo", "-oo"):
        return -math.inf
    return None


def _oblivious(lo: float, hi: float) -> tuple[float, float]:
    """The range torch's worker gives a size-like name when asked size-obliviously."""
    lower, upper = max(2, lo), min(2**48, hi)
    if upper > lower:
        upper -= 1
    return (lower, upper) if lower <= upper else (lo, hi)


class Question:
    """One recorded question, prepared for both sides (sympy objects built once, outside the clocks)."""

    def __init__(self, rec: dict[str, Any], builder: SympyBuilder | None, symbols: dict[str, dict[str, bool]]) -> None:
        q = rec["q"]
        self.kind: str = q["kind"]
        self.tree = q["expr"]
        self.answer = rec["answer"]
        self.torch_decided = bool(rec["decided"])
        self.ranges: dict[str, tuple[float, float]] = {}  # the ranges both sides reason with
        self.floats = _has_float(self.tree)
        entries = q["symbols"] if self.kind == "static" else q["ranges"]
        for entry in entries:
            name, r = entry[0], entry[1]
            if r is None:  # torch's default range of a name: from its assumptions
                a = symbols.get(name, {})
                self.ranges[name] = (1 if a.get("positive") else 0 if a.get("nonnegative") else -math.inf, math.inf)
                continue
            lo, hi = _end(r[0]), _end(r[1])
            if lo is None or hi is None:
                self.floats = True
                continue
            if self.kind == "static" and q["size_oblivious"] and entry[3]:
                lo, hi = _oblivious(lo, hi)
            self.ranges[name] = (lo, hi)
        self.ours_ranges = {
            k: (None if v[0] == -math.inf else int(v[0]), None if v[1] == math.inf else int(v[1]))
            for k, v in self.ranges.items()
        }
        self.group = -1  # the environment (a set of ranges agreeing with this question's) it is answered in
        self.expr: Any = None
        self.torch_args: Any = None
        if builder is not None:
            self.prepare(builder, q)

    def prepare(self, b: SympyBuilder, q: dict[str, Any]) -> None:
        """The sympy expression and the arguments of torch's call."""
        from torch.fx.experimental.symbolic_shapes import _SymbolInfo
        from torch.utils._sympy.value_ranges import ValueRanges

        self.expr = b.build(self.tree)
        if self.kind == "static":
            infos = []
            for name, r, hint, size_like in q["symbols"]:
                vr = None if r is None else ValueRanges(b.bound_value(r[0]), b.bound_value(r[1]))
                infos.append(_SymbolInfo(b.symbol(name), vr, hint, size_like))
            self.torch_args = (self.expr, tuple(infos), q["unbacked_only"], q["size_oblivious"])
        else:
            ranges = {}
            for name, r in q["ranges"]:
                ranges[b.symbol(name)] = None if r is None else ValueRanges(b.bound_value(r[0]), b.bound_value(r[1]))
            self.torch_args = (self.expr, ranges)


def _has_float(tree: Any) -> bool:
    stack = [tree]
    while stack:
        t = stack.pop()
        if isinstance(t, list):
            if t[0] in ("Float", "FloatTrueDiv", "ToFloat", "FloatPow", "TruncToFloat") or t[0].startswith("Opaque"):
                return True
            stack.extend(t[1:])
    return False


def group(qs: list[Question]) -> list[dict[str, Any]]:
    """Sets of ranges, each agreeing with the ranges of every question given it (``q.group``): a client keeps one
    TorchDims per ShapeEnv, whose ``var_to_range`` holds every name (the ranges of names an expression does not
    use change none of its answers). Within one model, only size-oblivious questions and inductor's loop
    variables (re-ranged per kernel) give a name another range."""
    groups: list[dict[str, Any]] = []
    for q in qs:
        for i, g in enumerate(groups):
            if all(g.get(n, r) == r for n, r in q.ours_ranges.items()):
                g.update(q.ours_ranges)
                q.group = i
                break
        else:
            q.group = len(groups)
            groups.append(dict(q.ours_ranges))
    return groups


def ours(q: Question, envs: list[Any], groups: list[dict[str, Any]]) -> Any:
    """Our answer to one question (reading its sympy expression included); ``envs`` keeps the TorchDims of each
    group of ranges, made when first needed, and last the first one made: the others share what it read (as
    torch's side shares sympy's cache between all the questions of a round)."""
    td = envs[q.group]
    if td is None:
        first = envs[-1]
        td = envs[q.group] = TorchDims(groups[q.group]) if first is None else first.with_ranges(groups[q.group])
        if first is None:
            envs[-1] = td
    return td.static_value(q.expr) if q.kind == "static" else td.bound(q.expr)


def torch_side(q: Question) -> Any:
    """torch's answer to one question, by the function it was recorded from (its cache bypassed)."""
    import torch.fx.experimental.symbolic_shapes as ss
    from torch.utils._sympy.value_ranges import bound_sympy

    if q.kind == "static":
        return ss._maybe_evaluate_static_worker.__wrapped__(*q.torch_args)
    return bound_sympy(*q.torch_args)


def _torch_value(tree: Any) -> Any:
    """A recorded torch answer (a static value or a range end) as int / bool / inf, else None."""
    if isinstance(tree, bool) or isinstance(tree, int):
        return tree
    if isinstance(tree, list) and len(tree) == 1:
        return {"true": True, "false": False, "int_oo": math.inf, "oo": math.inf}.get(
            tree[0], -math.inf if tree[0] in ("-int_oo", "-oo") else None
        )
    return None


def judge(q: Question, answer: Any, rng: random.Random) -> str:
    """``matched`` / ``missed`` (torch decided, we did not) / ``extra`` / ``both-none`` / ``wrong``."""
    if q.kind == "static":
        t = _torch_value(q.answer) if q.torch_decided else None
        if answer is not None and not _holds(q, lambda v: v == answer, rng):
            return "wrong"
        if t is None:
            return "extra" if answer is not None else "both-none"
        if answer is None:
            return "missed"
        return "matched" if answer == t and isinstance(answer, bool) == isinstance(t, bool) else "wrong"
    tlo, thi = (_torch_value(x) for x in q.answer)
    lo, hi = answer
    if isinstance(lo, bool) or isinstance(tlo, bool):  # a relation: (False, True) when undecided
        tl, th = (False, True) if tlo is None else (tlo, thi)
        if (lo, hi) == (tl, th):
            return "matched" if tl == th else "both-none"
        if tl == th and lo == hi:
            return "wrong"
        if lo == hi and not _holds(q, lambda v: v == lo, rng):
            return "wrong"
        return "extra" if lo == hi else "missed"
    if tlo is None or thi is None:
        tlo, thi = -math.inf, math.inf
    if hi < tlo or lo > thi or not _holds(q, lambda v: lo <= v <= hi, rng):
        return "wrong"
    if lo < tlo or hi > thi:
        return "missed"
    return "extra" if (lo > tlo or hi < thi) else "matched"


def _holds(q: Question, test: Any, rng: random.Random) -> bool:
    """Whether ``test(value)`` holds at sampled points of the ranges (where the expression evaluates)."""
    names = tree_names(q.tree)
    for _ in range(POINTS):
        point = {}
        for n in names:
            lo, hi = q.ranges.get(n, (-math.inf, math.inf))
            point[n] = _sample(lo, hi, rng)
        v = _py_eval(q.tree, point)
        if v is not None and not test(v):
            return False
    return True


def replay(name: str, corpus: dict[str, Any], have_torch: bool) -> list[Any]:
    """One table row: the questions of one model replayed through both sides."""
    from exprgraph.dims import clear_caches

    builder = SympyBuilder(corpus["symbols"]) if have_torch else None
    qs = [Question(r, builder, corpus["symbols"]) for r in corpus["questions"]]
    ints = [q for q in qs if not q.floats]
    groups = group(ints)
    rng = random.Random(0)
    shared: list[Any] = [None] * (len(groups) + 1)
    answers = [ours(q, shared, groups) for q in ints]  # as timed: one environment per group
    alone = [ours(q, [None] * (len(groups) + 1), groups) for q in ints]  # each in an environment of its own
    if answers != alone:  # pragma: no cover - the ranges of unused names never change an answer
        print(f"({name}: {sum(a != b for a, b in zip(answers, alone, strict=True))} answers differ when shared)")
    verdicts = [judge(q, a, rng) for q, a in zip(ints, answers, strict=True)]
    torch_ranges = sum(1 for v in verdicts if v in ("matched", "missed"))
    matched = verdicts.count("matched")
    extra = verdicts.count("extra")
    wrong = verdicts.count("wrong")

    import sympy.core.cache as sc

    def run_ours() -> None:
        envs: list[Any] = [None] * (len(groups) + 1)
        for q in ints:
            ours(q, envs, groups)

    def run_torch() -> None:
        for q in ints:
            torch_side(q)

    sides = {"ours": run_ours, "torch": run_torch}
    clears = {"ours": clear_caches, "torch": sc.clear_cache}
    rounds = {"ours": 5, "torch": 3}
    times = best_of(sides, repeat=rounds, setup=clears, clock=time.thread_time)
    warm = warm_best_of(sides, repeat=rounds, clears=clears, clock=time.thread_time)
    return _row(
        f"{name} ({corpus['backend']})",
        [len(qs), matched, torch_ranges, extra, wrong, len(qs) - len(ints)],
        (times["ours"], warm["ours"]),
        (times["torch"], warm["torch"]),
    )


def _row(label: str, counts: list[int], ours_s: tuple[float, float], torch_s: tuple[float, float]) -> list[Any]:
    """A table row: counts (questions, matched, torch's range answers, extra, wrong, float) and the two times of
    each side (cold, warm: see :func:`warm_best_of`)."""
    n, matched, torch_ranges, extra, wrong, floats = counts
    cells = []
    for o, t in zip(ours_s, torch_s, strict=True):
        ratio = o / t if t > 0 else math.nan
        cells.append(f"{o * 1e3:.2f} ms / {t * 1e3:.0f} ms")
        cells.append(f"{ratio:.4f}x ({1 / ratio:.0f}x faster)" if ratio > 0 else "n/a")
    return [label, n, f"{matched} / {torch_ranges}", extra, wrong, floats, *cells, counts, (ours_s, torch_s)]


def main() -> None:
    """Replay every recorded model and print the table."""
    try:
        import torch  # noqa: F401
    except ImportError:
        skip("torch replay rows", "torch is not installed (pip install 'exprgraph[models]', or make bench-models)")
        return
    names = [a for a in sys.argv[1:] if not a.startswith("-")]
    found = corpora(names or None)
    if not found:
        skip("torch replay rows", f"no corpus in {DATA} (python -m bench.torch_record)")
        return
    rows = []
    for name, corpus in found:
        rows.append(replay(name, corpus, True))
    totals = [sum(r[-2][i] for r in rows) for i in range(6)]
    ours_all = tuple(sum(r[-1][0][k] for r in rows) for k in range(2))
    torch_all = tuple(sum(r[-1][1][k] for r in rows) for k in range(2))
    rows.append(_row("**all**", totals, (ours_all[0], ours_all[1]), (torch_all[0], torch_all[1])))
    rows = [r[:-2] for r in rows]
    load = os.getloadavg()
    print_table(
        f"torch ShapeEnv questions replayed (torch {found[0][1]['torch']}, load {load[0]:.1f})",
        [
            "model (backend)",
            "questions",
            "torch's range answers we give",
            "extra answers",
            "contradictions",
            "float questions (skipped)",
            "CPU ours / torch (cold)",
            "ours/torch (cold)",
            "CPU ours / torch (warm)",
            "ours/torch (warm)",
        ],
        rows,
    )


if __name__ == "__main__":
    main()
