"""A sample of torch's recorded ShapeEnv questions (bench/data/torch_replay/sample.json.gz), replayed without torch.

The questions were recorded while ``torch.compile(dynamic=True)`` compiled small models (``bench/torch_record.py``):
each holds an expression (our JSON tree format), the ranges of its names and torch's answer. Here the trees are
built as sympy expressions whose torch functions are local classes carrying torch's names (the bridge reads
names), and every answer torch derived from the ranges must be ours too, with no contradiction. Our extra
answers are checked at points of the ranges.
"""

from __future__ import annotations

import gzip
import json
import math
import random
from pathlib import Path
from typing import Any

import pytest

sp = pytest.importorskip("sympy")

from exprgraph.dims import evaluate_expression  # noqa: E402
from exprgraph.errors import EvaluationError  # noqa: E402
from exprgraph.interop.torch import TorchDims  # noqa: E402
from exprgraph.interop.torch_read import fold_tree  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[2] / "bench" / "data" / "torch_replay" / "sample.json.gz"
_TORCH_NAMES = (
    "FloorDiv CleanDiv CeilDiv ModularIndexing PythonMod CeilToInt FloorToInt TruncToInt Identity PowByNatural "
    "IntTrueDiv Where RoundToInt"
)
_RELATIONS = {
    "Equality": sp.Eq,
    "Unequality": sp.Ne,
    "StrictLessThan": sp.Lt,
    "LessThan": sp.Le,
    "StrictGreaterThan": sp.Gt,
    "GreaterThan": sp.Ge,
}


def _classes() -> dict[str, Any]:
    table: dict[str, Any] = {
        n: type(n, (sp.Function,), {"is_integer": n != "IntTrueDiv"}) for n in _TORCH_NAMES.split()
    }
    for shadow in ("Mod", "Max", "Min", "Identity"):  # torch's classes named as sympy's
        table["torch." + shadow] = type(shadow, (sp.Function,), {"is_integer": True})
    table.update({"Add": sp.Add, "Mul": sp.Mul, "Pow": sp.Pow, "Mod": sp.Mod, "Max": sp.Max, "Min": sp.Min})
    table.update({"And": sp.And, "Or": sp.Or, "Not": sp.Not, **_RELATIONS})
    return table


class _Builder:
    def __init__(self, symbols: dict[str, dict[str, bool]]) -> None:
        self.classes = _classes()
        self.symbols = {n: sp.Symbol(n, **a) for n, a in symbols.items()}
        self.atoms = {"true": sp.true, "false": sp.false, "oo": sp.oo, "int_oo": sp.oo}

    def build(self, tree: Any) -> Any:
        return fold_tree(tree, self.leaf, lambda name, args: self.classes[name](*args))

    def leaf(self, node: Any) -> Any:
        if isinstance(node, int):
            return sp.Integer(node)
        if isinstance(node, str):
            return self.symbols.get(node) or sp.Symbol(node, integer=True)
        if len(node) == 1:
            return self.atoms[node[0]]
        return sp.Rational(node[1], node[2])  # (the sample holds no Float)


def _end(tree: Any) -> int | None:
    return tree if isinstance(tree, int) and not isinstance(tree, bool) else None


def _ranges(q: dict[str, Any], symbols: dict[str, dict[str, bool]]) -> dict[str, tuple[int | None, int | None]]:
    """The ranges torch reasoned with (size-oblivious narrowing of size-like names included)."""
    out: dict[str, tuple[int | None, int | None]] = {}
    entries = q["symbols"] if q["kind"] == "static" else q["ranges"]
    for entry in entries:
        name, r = entry[0], entry[1]
        if r is None:
            a = symbols.get(name, {})
            out[name] = (1 if a.get("positive") else 0 if a.get("nonnegative") else None, None)
            continue
        lo, hi = _end(r[0]), _end(r[1])
        if q["kind"] == "static" and q["size_oblivious"] and entry[3]:
            lower = max(2, lo if lo is not None else 2)
            upper = min(2**48, hi if hi is not None else 2**48)
            upper = upper - 1 if upper > lower else upper
            lo, hi = (lower, upper) if lower <= upper else (lo, hi)
        out[name] = (lo, hi)
    return out


def _value(tree: Any) -> Any:
    if isinstance(tree, int):
        return tree
    if isinstance(tree, list) and len(tree) == 1:
        return {"true": True, "false": False, "int_oo": math.inf, "-int_oo": -math.inf}.get(tree[0])
    return None


def _points(ranges: dict[str, tuple[int | None, int | None]], rng: random.Random, n: int = 8) -> list[dict[str, int]]:
    pts = []
    for _ in range(n):
        p = {}
        for name, (lo, hi) in ranges.items():
            a = lo if lo is not None else -(2**16)
            b = hi if hi is not None else max(a, 0) + 2**16
            p[name] = rng.choice([a, b, rng.randint(a, b)])
        pts.append(p)
    return pts


@pytest.fixture(scope="module")
def sample() -> dict[str, Any]:
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as f:
        return json.load(f)


def test_sample_holds_a_few_hundred_questions_of_every_model(sample: dict[str, Any]) -> None:
    models = {q["model"] for q in sample["questions"]}
    assert 100 <= len(sample["questions"]) <= 1000
    assert {"gpt2", "bert", "llama", "vit", "resnet", "mobilenet"} <= {m.split("+")[0] for m in models}


def test_every_range_answer_of_torch_given_and_none_contradicted(sample: dict[str, Any]) -> None:
    b = _Builder(sample["symbols"])
    rng = random.Random(0)
    given = missed = extra = 0
    for rec in sample["questions"]:
        q = rec["q"]
        expr = b.build(q["expr"])
        ranges = _ranges(q, sample["symbols"])
        td = TorchDims(ranges)
        if q["kind"] == "static":
            ours = td.static_value(expr)
            theirs = _value(rec["answer"]) if rec["decided"] else None
            if theirs is not None:
                assert ours == theirs and isinstance(ours, bool) == isinstance(theirs, bool), (q, ours, theirs)
                given += 1
            elif ours is not None:
                extra += 1
                _check_points(td, expr, ranges, rng, lambda v, ours=ours: v == ours)
        else:
            lo, hi = td.bound(expr)
            tlo, thi = (_value(x) for x in rec["answer"])
            if isinstance(tlo, bool):
                if tlo == thi:
                    assert (lo, hi) == (tlo, thi), q
                    given += 1
                continue
            tlo = -math.inf if tlo is None else tlo
            thi = math.inf if thi is None else thi
            if lo < tlo or hi > thi:
                missed += 1
            else:
                given += 1
            _check_points(td, expr, ranges, rng, lambda v, lo=lo, hi=hi: lo <= v <= hi)
    assert missed == 0 and given >= 100
    assert extra >= 0


def _check_points(td: TorchDims, expr: Any, ranges: dict, rng: random.Random, holds: Any) -> None:
    term = td.term(expr)
    for p in _points(ranges, rng):
        try:
            v = evaluate_expression(term, p) if term.dtype != "bool" else None
        except EvaluationError:
            continue
        if v is not None:
            assert holds(v), (expr, p, v)
