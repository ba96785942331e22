"""Fuzz the term constructor: random ops, operands, attrs and classes give a Term or one of the
expected errors, never a crash, a hang or a term of another class in the intern table."""

from __future__ import annotations

import math
from typing import Any

from fuzz_support import FUZZ
from hypothesis import given
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.core import Op, get_op, ops, termbase
from exprgraph.core.inference import same
from exprgraph.diff import sweep
from exprgraph.errors import ExprgraphError

x, y = eg.symbols("x y")
B = eg.Symbol("b", "bool")
I = eg.Symbol("i", "int64")  # noqa: E741
V = eg.Symbol("v", "float64", (3,))
TERMS = [x, y, B, I, V, eg.const(1.0), eg.const(2), eg.const(True), x + y, eg.sin(x)]


class _Eq:
    """An attr whose hash and comparison do odd things."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def __hash__(self) -> int:
        if self.mode == "hash raises":
            raise ValueError("hash")
        return 1

    def __eq__(self, other: object) -> bool:
        if self.mode == "eq raises":
            raise ValueError("eq")
        if self.mode == "eq builds":
            eg.const(math.pi * id(other))
        return self.mode == "eq true"


def _bare_op() -> Op:
    return Op.__new__(Op)


OP_NAMES = sorted({op.name for op in ops()})
OPS = st.one_of(
    st.sampled_from(OP_NAMES),
    st.sampled_from(ops()),
    st.text(max_size=8),
    st.sampled_from([1, None, 1.5, b"add", Op, x, ("add",), get_op, object()]),
    st.builds(_bare_op),
)
OPERAND = st.one_of(st.sampled_from(TERMS), st.integers(), st.floats(), st.none(), st.text(max_size=3))
ARGS = st.one_of(
    st.lists(OPERAND, max_size=4).map(tuple),
    st.lists(OPERAND, max_size=4),
    st.lists(st.sampled_from(TERMS), max_size=4).map(tuple),
    st.sampled_from([None, 5, "xy", b"", iter([x])]),
)
ATTRS = st.one_of(
    st.none(),
    st.integers(),
    st.floats(allow_nan=True),
    st.tuples(st.integers(-2, 3)),
    st.lists(st.integers(), max_size=2),
    st.sampled_from(["eq raises", "hash raises", "eq builds", "eq true", "eq false"]).map(_Eq),
    st.sampled_from([("x", "float64", ()), ("x", "int64", (3,)), ("bad name", "float64", ()), ("x", "nope", ())]),
)
CLASSES = st.sampled_from([eg.Term, eg.Term, eg.Term, termbase.TermBase])
EXPECTED = (TypeError, ValueError, KeyError, AttributeError, ExprgraphError)


@FUZZ
@given(OPS, ARGS, ATTRS, CLASSES, st.booleans())
def test_fuzz_term_constructor(op: Any, args: Any, attr: Any, cls: type, keywords: bool) -> None:
    before = termbase.intern_table_size()
    try:
        made = cls(op=op, args=args, attr=attr) if keywords else cls(op, args, attr)
    except EXPECTED:
        made = None
    if made is not None:
        assert type(made) is eg.Term
        assert made is eg.Term(made.op, made.args, made.attr) or made.attr is not made.attr
    # the table is still sound: equal constructions are one Term
    s = x + y
    assert type(s) is eg.Term and s is eg.Term("add", (x, y)) and s is x + y
    assert termbase.intern_table_size() >= 0 and before >= 0


@FUZZ
@given(st.sampled_from(["name", "arity", "notation", "attr_name", "attr_key", "infer", "grad"]), OPERAND, ARGS)
def test_fuzz_ops_with_forced_fields(field: str, value: Any, args: Any) -> None:
    # fields forced past the read-only check (object.__setattr__): errors, never a crash
    op = Op("forced", 1, same, attr_name=None)
    object.__setattr__(op, field, value)
    try:
        made = eg.Term(op, args)
    except EXPECTED:
        return
    except Exception as exc:  # a forced infer or attr_key is user code: its own error is passed on
        assert field in ("infer", "attr_key"), repr(exc)
        return
    assert type(made) is eg.Term


_NATIVE = sweep.SWEEP
_FUNCTIONS = ["live_order", "product", "negate", "fan_in", "backprop", "forward", "dependency_sets"]
_VALUES = st.sampled_from(
    [None, 1, 1.5, "add", (), (x,), (x, y), [x], (1,), ((x,),), {x: 1}, x, x + y, (x + y,), ({},), get_op("add")]
)


@FUZZ
@given(st.sampled_from(_FUNCTIONS), st.lists(_VALUES, max_size=6))
def test_fuzz_the_c_module_functions(name: str, args: list[Any]) -> None:
    # the C base's module functions are private, but a careless call must still be an error, not a crash
    if _NATIVE is None:
        return
    try:
        getattr(_NATIVE, name)(*args)
    except EXPECTED:
        pass
    s = x * y
    assert s is eg.Term("mul", (x, y))
