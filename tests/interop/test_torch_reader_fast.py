"""The torch reader's quick paths (a call whose arguments were read before, a leaf, a float name met inside a
relation, a range given as a pair) give what the full walk gives; the replay bench treats both sides alike."""

from __future__ import annotations

import math
import random
from types import SimpleNamespace
from typing import Any

import pytest

sp = pytest.importorskip("sympy")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from exprgraph.errors import ConversionError  # noqa: E402
from exprgraph.interop.torch import TorchDims, _bound_value, _range_of  # noqa: E402
from exprgraph.interop.torch_read import INT64_RANGE, Reader  # noqa: E402

NAMES = [sp.Symbol(n, integer=True, positive=True) for n in ("s0", "s1")] + [
    sp.Symbol("p0", integer=True, nonnegative=True)
]
ZF = sp.Symbol("zf0", real=True)
FloorDiv = type("FloorDiv", (sp.Function,), {"is_integer": True})
ModularIndexing = type("ModularIndexing", (sp.Function,), {"is_integer": True})
CleanDiv = type("CleanDiv", (sp.Function,), {"is_integer": True})
PythonMod = type("PythonMod", (sp.Function,), {"is_integer": True})
RELATIONS = (sp.Eq, sp.Ne, sp.Lt, sp.Le, sp.Gt, sp.Ge)


def _expr(rng: random.Random, depth: int, floats: bool) -> Any:
    """A random integer sympy expression as torch builds them (its functions carry torch's names)."""
    if depth == 0 or rng.random() < 0.25:
        if floats and rng.random() < 0.1:
            return ZF
        return rng.choice(NAMES) if rng.random() < 0.7 else sp.Integer(rng.randint(-3, 9))
    a, b = _expr(rng, depth - 1, floats), _expr(rng, depth - 1, floats)
    kind = rng.randrange(8)
    if kind in (5, 6) and (a.is_number or b.is_number):  # sympy compares numbers in Max/Min when it builds them
        kind = 0
    if kind == 0:
        return sp.Add(a, b)
    if kind == 1:
        return sp.Mul(a, b)
    if kind == 2:
        return FloorDiv(a, rng.randint(1, 8))
    if kind == 3:
        return ModularIndexing(a, rng.randint(1, 4), rng.randint(1, 8))
    if kind == 4:
        return PythonMod(a, rng.randint(1, 8))
    if kind == 5:
        return sp.Max(a, b)
    if kind == 6:
        return sp.Min(a, b)
    return CleanDiv(a, rng.randint(1, 4))


def _question(rng: random.Random, floats: bool) -> Any:
    e = _expr(rng, 3, floats)
    return rng.choice(RELATIONS)(e, _expr(rng, 2, floats)) if rng.random() < 0.6 else e


def _subexpressions(e: Any) -> list[Any]:
    out, stack = [], [e]
    while stack:
        x = stack.pop()
        out.append(x)
        stack.extend(getattr(x, "args", ()))
    return out


def _outcome(read: Any) -> Any:
    try:
        return read()
    except ConversionError:
        return "error"


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32), st.booleans())
def test_reading_piece_by_piece_gives_the_walks_term(seed: int, floats: bool) -> None:
    rng = random.Random(seed)
    questions = [_question(rng, floats) for _ in range(4)]
    shared = Reader()
    for q in questions:
        parts = _subexpressions(q)
        rng.shuffle(parts)
        for part in parts:  # pieces first (in any order): the root is then read by the quick paths
            fresh = Reader()
            assert shared.try_read(part) is fresh.try_read(part)
        assert shared.try_read(q) is Reader().try_read(q)
        assert _outcome(lambda q=q: shared.read(q)) == _outcome(lambda q=q: Reader().read(q))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32))
def test_answers_do_not_depend_on_what_was_read_before(seed: int) -> None:
    rng = random.Random(seed)
    ranges = {"s0": (2, rng.choice([None, 64])), "s1": (1, rng.randint(1, 9)), "p0": (0, rng.randint(0, 20))}
    shared = TorchDims(ranges)
    for _ in range(6):
        q = _question(rng, True)
        for part in _subexpressions(q)[1:]:
            shared.static_value(part)
        alone = TorchDims(ranges)
        assert shared.static_value(q) == alone.static_value(q)
        assert shared.bound(q) == alone.bound(q)


def test_a_float_name_inside_a_relation_is_refused_quietly_then_loudly() -> None:
    r = Reader()
    r.try_read(NAMES[0])
    rel = sp.Lt(ZF, NAMES[0])
    assert r.try_read(rel) is None  # the quick path: no exception raised
    with pytest.raises(ConversionError, match=f"{ZF.name!r} is not an integer"):
        r.read(rel)  # the remembered failure, as an error made now (it names the float symbol)
    assert r.try_read(ZF) is None
    with pytest.raises(ConversionError, match=f"{ZF.name!r} is not an integer"):
        r.read(ZF)
    assert r.try_read(sp.Integer(7)) is not None and r.try_read(sp.Rational(1, 2)) is None


_END = st.one_of(
    st.none(), st.integers(-(2**70), 2**70), st.sampled_from([INT64_RANGE[0], INT64_RANGE[1], 0, math.inf])
)


@given(_END, _END)
def test_a_pair_of_ends_reads_as_the_general_way(lo: object, hi: object) -> None:
    assert _range_of((lo, hi)) == (_bound_value(lo, True), _bound_value(hi, False))


def test_the_replay_bench_warms_and_clears_both_sides_alike() -> None:
    bench = pytest.importorskip("bench.bench_torch_dims")
    log: list[str] = []
    sides = {"ours": lambda: log.append("run ours"), "torch": lambda: log.append("run torch")}
    clears = {"ours": lambda: log.append("clear ours"), "torch": lambda: log.append("clear torch")}
    times = bench.warm_best_of(sides, {"ours": 2, "torch": 1}, clears)
    assert set(times) == {"ours", "torch"} and all(t >= 0 for t in times.values())
    one = ["clear {}", "run {}", "clear {}", "run {}"]
    expected = [s.format("ours") for s in one] + [s.format("torch") for s in one] + [s.format("ours") for s in one]
    assert log == expected


_PAIR_END = st.one_of(
    st.none(),
    st.integers(-5, 5),
    st.integers(-(2**70), 2**70),
    st.sampled_from([INT64_RANGE[0], INT64_RANGE[1], True, False, math.inf, -math.inf, 2.5]),
)


@given(_PAIR_END, _PAIR_END)
def test_a_range_given_as_a_pair_answers_as_a_value_range(lo: object, hi: object) -> None:
    # a pair takes the quick way of _range_of when its ends are ints in int64 (or None); a ValueRanges the general one
    def make(r: object) -> Any:
        try:
            return TorchDims({"s0": r})
        except ConversionError:
            return "error"

    pair, read = make((lo, hi)), make(SimpleNamespace(lower=lo, upper=hi))
    if pair == "error" or read == "error":
        assert pair == read == "error"
        return
    s0 = NAMES[0]
    r = _range_of((lo, hi))
    assert r is not None
    expected = (-math.inf if r[0] is None else r[0], math.inf if r[1] is None else r[1])
    assert pair.bound(s0) == read.bound(s0) == expected
    for rel in RELATIONS:
        assert pair.static_value(rel(s0, 3)) == read.static_value(rel(s0, 3))


_LEAVES = [*NAMES, *(sp.Integer(k) for k in (-1, 0, 1, 3))]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(-3, 4), st.integers(0, 5)), min_size=3, max_size=3),
    st.sampled_from(_LEAVES),
    st.sampled_from(_LEAVES),
    st.sampled_from(RELATIONS),
)
def test_a_relation_of_two_leaves_is_decided_exactly(spans: list[tuple[int, int]], a: Any, b: Any, rel: Any) -> None:
    # two different names or numbers: decided by their ranges exactly (the commonest question), whether the leaves
    # were read before (a question over known expressions) or not
    ranges = {s.name: (lo, lo + w) for s, (lo, w) in zip(NAMES, spans, strict=True)}
    q = rel(a, b, evaluate=False)
    if q in (sp.true, sp.false):
        return
    shared = TorchDims(ranges)
    shared.bound(a), shared.bound(b)  # the leaves read first
    answers = (shared.static_value(q), shared.evaluate(q), shared.bound(q))
    alone = TorchDims(ranges)  # the relation read first
    assert answers == (alone.static_value(q), alone.evaluate(q), alone.bound(q))
    # brute force: True / False when it holds at every point of the ranges / at none, else None
    values = {s: range(lo, hi + 1) for s, (lo, hi) in ((s, ranges[s.name]) for s in NAMES)}

    def points(x: Any) -> Any:
        return values[x] if x in values else [int(x)]

    truths = {bool(rel(u, v)) for u in points(a) for v in points(b)} if a is not b else None
    if truths is not None:
        expected = truths.pop() if len(truths) == 1 else None
        assert answers[0] == expected and answers[1] == expected
        assert answers[2] == ((False, True) if expected is None else (expected, expected))
