"""The torch bridge's reader: each sympy node read once, shared between environments; unreadable roots remembered."""

from __future__ import annotations

import math

import pytest

sp = pytest.importorskip("sympy")

from exprgraph.errors import ConversionError  # noqa: E402
from exprgraph.interop.torch import TorchDims  # noqa: E402
from exprgraph.interop.torch_read import Reader, _fact  # noqa: E402

s0, s1 = sp.symbols("s0 s1", integer=True, positive=True)
p0 = sp.Symbol("p0", integer=True, nonnegative=True)
zf = sp.Symbol("zf", real=True)
FloorDiv = type("FloorDiv", (sp.Function,), {"is_integer": True})


def test_with_ranges_shares_the_reading_not_the_ranges() -> None:
    td = TorchDims({"s0": (2, None)})
    small = td.with_ranges({"s0": (1, 1), "p0": (0, 7)})
    rel = sp.StrictLessThan(s0, 2)
    assert td.static_value(rel) is False and small.static_value(rel) is True
    assert small._reader is td._reader  # what one read, the other finds
    assert td.bound(s0 * 4 + p0) == (8, math.inf)  # p0 has no range here: >= 0 (nonnegative)
    assert small.bound(s0 * 4 + p0) == (4, 11)
    assert small.static_value(FloorDiv(p0, 8)) == 0 and td.static_value(FloorDiv(p0, 8)) is None


def test_each_node_read_once() -> None:
    r = Reader()
    shared = s0 * s1
    r.read(sp.Eq(shared, 1))
    n = len(r.done)
    r.read(sp.StrictLessThan(shared, s0))  # only the new root is read
    assert len(r.done) == n + 1
    assert r.read(shared) is r.value(shared)


def test_unreadable_roots_are_remembered() -> None:
    td = TorchDims({"s0": (2, None)})
    for _ in range(2):  # the second time from the table of failures
        assert td.static_value(zf) is None and td.bound(zf) == (-math.inf, math.inf)
        assert td.static_value(sp.StrictLessThan(zf, 0)) is None
        with pytest.raises(ConversionError, match="not an integer"):
            td.term(sp.StrictLessThan(zf, 0))
    assert td.static_value(sp.StrictLessThan(s0, 2)) is False  # the reader goes on


def test_a_float_name_with_a_replacement_is_read_through_it() -> None:
    td = TorchDims({"s0": (2, None)}, replacements={zf: s0 + 1})
    assert td.static_value(sp.StrictLessThan(zf, 3)) is False
    assert td.bound(zf) == (3, math.inf)


def test_numbers_answer_at_once() -> None:
    td = TorchDims()
    assert td.bound(sp.Integer(7)) == (7, 7) and td.static_value(sp.Integer(-3)) == -3
    assert td.static_value(7) == 7 and td.bound(0) == (0, 0)
    assert td.static_value(sp.true) is True and td.bound(sp.false) == (False, False)


_OPS = {"eq": sp.Eq, "ne": sp.Ne, "lt": sp.StrictLessThan, "le": sp.LessThan, "gt": sp.StrictGreaterThan}
_OPS["ge"] = sp.GreaterThan
_CHECK = {"eq": int.__eq__, "ne": int.__ne__, "lt": int.__lt__, "le": int.__le__, "gt": int.__gt__, "ge": int.__ge__}


@pytest.mark.parametrize("op", sorted(_OPS))
def test_relations_of_names_and_numbers_are_exact(op: str) -> None:
    """A relation between two names (or a name and a number) is decided exactly when the ranges decide it: brute
    force over small ranges, and the same as (or more decided than) the DimEnv's answer."""
    a, b = sp.symbols("a b", integer=True)
    ends = [(lo, hi) for lo in range(-2, 3) for hi in range(lo, 3)]
    for ra in ends:
        for rb in ends[::3]:
            td = TorchDims({"a": ra, "b": rb})
            for left, right in ((a, b), (a, sp.Integer(1)), (sp.Integer(0), b)):
                got = td.static_value(_OPS[op](left, right, evaluate=False))
                xs = range(ra[0], ra[1] + 1) if left is a else [int(left)]
                ys = range(rb[0], rb[1] + 1) if right is b else [int(right)]
                seen = {_CHECK[op](x, y) for x in xs for y in ys}
                assert got == (seen.pop() if len(seen) == 1 else None), (op, ra, rb, left, right)
                env_answer = td.env.statically_known(td.term(_OPS[op](left, right, evaluate=False)))
                assert env_answer is None or env_answer == got


def test_relations_with_open_ranges() -> None:
    td = TorchDims({"s0": (2, None), "s1": (None, 5)})
    assert td.static_value(sp.StrictLessThan(s0, 2)) is False and td.static_value(sp.Ge(s0, 2)) is True
    assert td.static_value(sp.Eq(s0, 1)) is False and td.static_value(sp.Eq(s0, 7)) is None
    s1_ = sp.Symbol("s1", integer=True)
    assert td.static_value(sp.StrictLessThan(s1_, s0)) is None and td.static_value(sp.Le(s1_, 5)) is True
    assert td.bound(s0) == (2, math.inf) and td.bound(s1_) == (-math.inf, 5)
    td.env.declare("s0 >= s1 + 10")  # facts: the DimEnv answers (they relate the names)
    assert td.static_value(sp.StrictLessThan(s1_, s0)) is True


def test_assumptions_read_from_the_table_agree_with_sympy() -> None:
    facts = ("integer", "positive", "nonnegative")
    for kwargs in ({"integer": True}, {"integer": True, "positive": True}, {"even": True}, {"real": True}, {}):
        fresh = sp.Symbol("q", **kwargs)  # (facts not asked yet are not in its table: the property works them out)
        ours = [_fact(fresh, f) for f in facts]
        assert ours == [getattr(sp.Symbol("q", **kwargs), "is_" + f) for f in facts], kwargs
        assert ours == [_fact(fresh, f) for f in facts]  # asked again (now in its table): the same
    td = TorchDims()
    assert td.bound(sp.Symbol("n", integer=True, negative=False)) == (0, math.inf)  # nonnegative by deduction
    assert td.bound(sp.Symbol("m", integer=True)) == (-math.inf, math.inf)
    assert td.static_value(sp.Symbol("f", real=True)) is None  # a float name: no term
