"""The compiled reader of torch's expressions, the compiled TorchDims, and their Python twin: the same terms, the
same refusals, the same answers (of the same types: a bool stays a bool).

The build compiles :mod:`exprgraph.interop.torch_read`, :mod:`exprgraph.interop.torch_calls` and
:mod:`exprgraph.interop.torch` with mypyc (``exprgraph.accel.COMPILED_MODULES``). Here their sources are loaded a
second time, as pure Python modules under another name (``exprgraph._torch_twin``), and both read (and answer) the
same random sympy expressions (torch's function names, relations, logic, ratios, float names): in a compiled build
this compares the compiled code with its source; run pure, it compares the source with itself (and still checks
the loader).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

sp = pytest.importorskip("sympy")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from interop_strategies import torch_expr  # noqa: E402

from exprgraph import accel  # noqa: E402
from exprgraph.errors import ConversionError  # noqa: E402
from exprgraph.interop import torch as fast_torch  # noqa: E402
from exprgraph.interop import torch_calls as fast_calls  # noqa: E402
from exprgraph.interop import torch_fast as fast_path  # noqa: E402
from exprgraph.interop import torch_read as fast_read  # noqa: E402

TWIN_PACKAGE = "exprgraph._torch_twin"
INTEROP_DIR = Path(accel.__file__).parent / "interop"


def _load_twin() -> tuple[ModuleType, ModuleType, ModuleType]:
    """The pure Python reader, its calls and TorchDims, loaded from their sources under TWIN_PACKAGE."""
    # torch.py imports its C fast path's loader (not a compiled module: the same one serves both)
    sys.modules.setdefault(f"{TWIN_PACKAGE}.torch_fast", fast_path)
    twins = accel.source_twins("interop", TWIN_PACKAGE)
    return twins["torch_read"], twins["torch_calls"], twins["torch"]


TWIN_READ, TWIN_CALLS, TWIN_TORCH = _load_twin()

S = [sp.Symbol(n, integer=True, positive=True) for n in ("s0", "s1")] + [
    sp.Symbol("p0", integer=True, nonnegative=True)
]
ZF = sp.Symbol("zf0", real=True)
B = sp.Symbol("b0", integer=True)
FUNCTIONS = {
    name: type(name, (sp.Function,), {"is_integer": True})
    for name in ("FloorDiv", "CleanDiv", "PythonMod", "ModularIndexing", "CeilDiv", "Identity", "Unknown")
}
FLOATS = {name: type(name, (sp.Function,), {"is_integer": False}) for name in ("IntTrueDiv", "FloorToInt", "CeilToInt")}
RELATIONS = (sp.Eq, sp.Ne, sp.Lt, sp.Le, sp.Gt, sp.Ge)


def _leaf(rng: random.Random) -> Any:
    pick = rng.random()
    if pick < 0.05:
        return ZF  # a float name: refused
    if pick < 0.1:
        return sp.Rational(rng.randint(-5, 5), rng.randint(2, 4))
    if pick < 0.65:
        return rng.choice([*S, B])
    return sp.Integer(rng.randint(-3, 9))


#: the calls of a random expression (torch_expr: 5 and 6 are Max and Min)
CALLS = [
    lambda rng, a, b: sp.Add(a, b),
    lambda rng, a, b: sp.Mul(a, b),
    lambda rng, a, b: FUNCTIONS["FloorDiv"](a, rng.randint(1, 8)),
    lambda rng, a, b: FUNCTIONS["ModularIndexing"](a, rng.randint(1, 4), rng.randint(1, 8)),
    lambda rng, a, b: FUNCTIONS["PythonMod"](a, b),
    lambda rng, a, b: sp.Max(a, b),
    lambda rng, a, b: sp.Min(a, b),
    lambda rng, a, b: sp.Pow(a, rng.randint(-1, 3)),
    lambda rng, a, b: FLOATS[rng.choice(["FloorToInt", "CeilToInt"])](FLOATS["IntTrueDiv"](a, b)),
    lambda rng, a, b: FUNCTIONS[rng.choice(["CleanDiv", "CeilDiv", "Unknown"])](a, b),
    lambda rng, a, b: FUNCTIONS["Identity"](a),
]


def _expr(rng: random.Random, depth: int) -> Any:
    """A random sympy expression as torch builds them (its functions carry torch's names)."""
    return torch_expr(rng, depth, _leaf, CALLS, 0.2)


def _question(rng: random.Random) -> Any:
    while True:
        try:
            e = _expr(rng, 3)
            pick = rng.random()
            if pick < 0.5:
                return rng.choice(RELATIONS)(e, _expr(rng, 2))
            if pick < 0.6:
                return sp.And(sp.Ge(e, 0), sp.Not(sp.Eq(_expr(rng, 2), 1)))
            return e
        except TypeError:  # sympy refuses to compare what it built (1/0 is zoo): draw again
            continue


def _outcome(read: Any) -> Any:
    try:
        return read()
    except ConversionError as err:
        return ("error", str(err))


def test_the_twin_is_pure_python_from_the_same_files() -> None:
    assert not any(accel.is_compiled(m) for m in (TWIN_READ, TWIN_CALLS, TWIN_TORCH))
    assert Path(TWIN_READ.__file__) == INTEROP_DIR / "torch_read.py"
    assert Path(TWIN_TORCH.__file__) == INTEROP_DIR / "torch.py"
    assert TWIN_READ.MAX_NODES == fast_read.MAX_NODES and TWIN_CALLS.INT64_RANGE == fast_calls.INT64_RANGE
    if accel.compiled_modules("interop"):
        assert all(accel.is_compiled(m) for m in (fast_read, fast_calls, fast_torch))


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32))
def test_the_compiled_reader_reads_what_its_source_reads(seed: int) -> None:
    rng = random.Random(seed)
    questions = [_question(rng) for _ in range(6)]
    fast, twin = fast_read.Reader(), TWIN_READ.Reader()
    for q in questions:  # one reader each for all (what was read before is used), and a fresh one each
        assert fast.try_read(q) is twin.try_read(q)
        assert _outcome(lambda q=q: fast.read(q)) == _outcome(lambda q=q: twin.read(q))
        assert _outcome(lambda q=q: fast_read.Reader().read(q)) == _outcome(lambda q=q: TWIN_READ.Reader().read(q))
    assert fast.symbols == twin.symbols


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32))
def test_replacements_are_followed_alike(seed: int) -> None:
    rng = random.Random(seed)
    s0, s1 = S[0], S[1]
    replacements = {"s0": 2 * s1 + 1, "b0": rng.choice([s1, sp.Integer(4)])}
    for _ in range(4):
        q = _question(rng)
        fast, twin = fast_read.Reader(replacements), TWIN_READ.Reader(replacements)
        assert _outcome(lambda q=q, r=fast: r.read(q)) == _outcome(lambda q=q, r=twin: r.read(q))
    cycle = {"s0": s1 + 1, "s1": s0 - 1}
    expected = _outcome(lambda: TWIN_READ.Reader(cycle).read(s0 + 2))
    assert expected[0] == "error" and _outcome(lambda: fast_read.Reader(cycle).read(s0 + 2)) == expected


def test_json_trees_fold_alike() -> None:
    tree = ["Add", ["Mul", 2, "s0"], ["FloorDiv", "s1", 4], ["Rational", 1, 2], ["int_oo"]]
    seen: list[list[Any]] = [[], []]
    for i, fold in enumerate((fast_read.fold_tree, TWIN_READ.fold_tree)):
        out = fold(tree, lambda x, i=i: seen[i].append(x) or str(x), lambda name, args: f"{name}({', '.join(args)})")
        seen[i].append(out)
    assert seen[0] == seen[1]


def _typed(value: Any) -> Any:
    """A value with its type spelt out (True and 1 differ), pairs item by item."""
    if isinstance(value, tuple):
        return tuple(_typed(v) for v in value)
    return (type(value).__name__, value)


def _answers(td: Any, q: Any) -> list[Any]:
    """Every answer of a TorchDims to one question, types included (a simplified term, or the error raised)."""
    return [
        _typed(td.static_value(q)),
        _typed(td.bound(q)),
        _typed(td.evaluate(q)),
        _typed(td.statically_known_true(q)),
        _outcome(lambda: td.simplify(q)),
    ]


_ENDS = st.one_of(st.none(), st.integers(-4, 12))


def _road(td: Any, c_path: bool) -> Any:
    """``td``, with its C fast path switched off unless ``c_path`` (the Python road is what the twins compare)."""
    if not c_path:
        td._fast = None
    return td


@pytest.mark.parametrize("c_path", [False, True])
@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32), st.lists(st.tuples(_ENDS, _ENDS), min_size=4, max_size=4))
def test_the_compiled_torchdims_answers_what_its_source_answers(c_path: bool, seed: int, ends: list[Any]) -> None:
    rng = random.Random(seed)
    ranges = {}
    for name, (lo, hi) in zip(("s0", "s1", "p0", "b0"), ends, strict=True):
        if lo is not None and hi is not None and lo > hi:
            lo, hi = hi, lo
        ranges[name] = (lo, hi)
    questions = [_question(rng) for _ in range(6)] + [sp.true, sp.false, sp.Integer(3), S[0], sp.Eq(S[0], S[0])]
    fast, twin = _road(fast_torch.TorchDims(ranges), c_path), _road(TWIN_TORCH.TorchDims(ranges), c_path)
    for q in questions:  # one TorchDims each for all (the intervals and the reading kept), and a fresh one each
        assert _answers(fast, q) == _answers(twin, q)
        fresh = _road(fast_torch.TorchDims(ranges), c_path), _road(TWIN_TORCH.TorchDims(ranges), c_path)
        assert _answers(fresh[0], q) == _answers(fresh[1], q)
    shared = _road(fast.with_ranges({"s0": (3, 3)}), c_path)
    twin_shared = _road(twin.with_ranges({"s0": (3, 3)}), c_path)
    for q in questions:
        assert _answers(shared, q) == _answers(twin_shared, q)


def test_a_bool_answer_stays_a_bool_and_a_number_an_int() -> None:
    for module in (fast_torch, TWIN_TORCH):
        td = module.TorchDims({"s0": (2, 2), "s1": (1, 8)})
        s0, s1 = S[0], S[1]
        assert td.static_value(sp.true) is True and td.static_value(sp.false) is False
        assert td.static_value(sp.Ge(s1, 1)) is True and td.static_value(sp.Gt(s1, 8)) is False
        assert td.bound(sp.Ge(s1, 1)) == (True, True) and type(td.bound(sp.Ge(s1, 1))[0]) is bool
        assert td.bound(sp.Lt(s1, 4)) == (False, True) and type(td.bound(sp.Lt(s1, 4))[1]) is bool
        for value in (td.static_value(s0), td.static_value(sp.Integer(1)), td.static_value(2 * s0 - 3)):
            assert type(value) is int and value in (1, 2)
        assert td.static_value(s1) is None and td.bound(s1 + 1) == (2, 9)
        assert td.statically_known_true(True) is True and td.statically_known_true(sp.Lt(s1, 4)) is False


def test_shared_readers_take_no_replacements_of_their_own() -> None:
    td = fast_torch.TorchDims({"s0": (1, 4)})
    other = fast_torch.TorchDims({"s1": (2, 2)}, reader=td._reader)
    assert other._reader is td._reader and other.static_value(S[1]) == 2
    with pytest.raises(ConversionError):
        fast_torch.TorchDims({}, {"s0": S[1]}, reader=td._reader)
