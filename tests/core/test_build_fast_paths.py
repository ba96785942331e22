"""The C fast paths of building (issue 29 item 4) build exactly the terms of the generic path.

``x * y``, ``1.5 * x``, ``x**2``, ``sin(x)``, ``add(*terms)`` and ``Symbol(name)`` intern in C without
building an args tuple for a term found again, key the constants of Python floats and ints by the
number itself, and make plain symbols in C. Each test builds the same random expressions through
those paths and through the generic ones (``Term(op, args, attr)``, term.py's ``_binary`` methods,
leaves.Symbol's Python body) and checks that they are the same objects with the same fields.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.core import leaves, termbase
from exprgraph.core.op import Op, register_op
from exprgraph.core.term import REGISTRY, Term, _binary
from exprgraph.core.tokens import MAX_TOKEN, RESERVED_NAMES

native = pytest.mark.skipif(not termbase.native(), reason="the C base is not built")

#: operator method name -> the Python operator applying it
OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda p, q: p + q,
    "sub": lambda p, q: p - q,
    "mul": lambda p, q: p * q,
    "truediv": lambda p, q: p / q,
    "pow": lambda p, q: p**q,
}
UNARY = ("sin", "cos", "tanh", "exp")

NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.sampled_from([0.0, -0.0, 1.0, 1, 2, 2.0, True, False, math.nan, -math.nan]),
)

#: a program: each step reads earlier values by position (an index modulo the values so far)
STEP = st.one_of(
    st.tuples(st.just("bin"), st.sampled_from(sorted(OPERATORS)), st.integers(0, 99), st.integers(0, 99)),
    st.tuples(st.just("num"), st.sampled_from(sorted(OPERATORS)), st.integers(0, 99), NUMBERS, st.booleans()),
    st.tuples(st.just("un"), st.sampled_from(UNARY), st.integers(0, 99)),
    st.tuples(st.just("sum"), st.lists(st.integers(0, 99), min_size=1, max_size=5)),
)


def fields(t: Term) -> tuple:
    """What a term is made of (operands by identity, as the table compares them)."""
    return (t.op, tuple(map(id, t.args)), t.dtype, t.shape, repr(t.attr), type(t.attr))


def outcome(fn: Callable[..., Any], *args: Any) -> Any:
    """The term ``fn(*args)`` builds, or the class of the error it raises."""
    try:
        return fn(*args)
    except Exception as exc:  # the class is what both ways must agree on
        return type(exc)


def swapped(fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """``fn`` with its two operands swapped back: ``swapped(f)(a, n)`` is ``f(n, a)``."""
    return lambda a, n: fn(n, a)


def run(program: list, start: list[Term], fast: bool) -> list[Any]:
    """The terms (or error classes) of a program, built through the C fast paths or the generic constructors."""
    values: list[Any] = list(start)
    for step in program:
        kind, pool = step[0], [v for v in values if isinstance(v, Term)]
        if kind == "bin":
            _, name, i, j = step
            build = OPERATORS[name] if fast else (lambda p, q, op=REGISTRY[name]: Term(op, (p, q)))
            values.append(outcome(build, pool[i % len(pool)], pool[j % len(pool)]))
        elif kind == "num":
            _, name, i, number, left = step
            forward, reflected = _binary(name)
            if fast:
                build = swapped(OPERATORS[name]) if left else OPERATORS[name]
            else:
                build = reflected if left else forward
            values.append(outcome(build, pool[i % len(pool)], number))
        elif kind == "un":
            _, name, i = step
            build = REGISTRY[name] if fast else (lambda p, op=REGISTRY[name]: Term(op, (p,)))
            values.append(outcome(build, pool[i % len(pool)]))
        else:
            ops = tuple(pool[i % len(pool)] for i in step[1])
            values.append(outcome(eg.add, *ops) if fast else outcome(Term, REGISTRY["add"], ops))
    return values


@settings(max_examples=150, deadline=None)
@given(st.lists(STEP, min_size=1, max_size=30), st.sampled_from(["float64", "int64", "float32", "bool"]))
def test_fast_and_generic_paths_build_the_same_terms(program: list, dtype: str) -> None:
    base = [eg.Symbol("x"), eg.Symbol("y"), eg.Symbol("n", dtype)]
    fast = run(program, base, fast=True)
    fast_fields = [fields(t) if isinstance(t, Term) else t for t in fast]
    generic = run(program, base, fast=False)
    assert all(a is b for a, b in zip(fast, generic, strict=True))
    assert [fields(t) if isinstance(t, Term) else t for t in generic] == fast_fields
    # found again, term by term (the tuple-free lookup of a live term)
    again = run(program, base, fast=True)
    assert all(a is b for a, b in zip(fast, again, strict=True))


@settings(max_examples=200, deadline=None)
@given(NUMBERS)
def test_a_number_becomes_the_one_constant_of_its_dtype_and_bits(number: Any) -> None:
    x = eg.Symbol("x")
    made = (x * number).args[1]
    assert made is (number * x).args[0]
    assert made is eg.const(number) is Term(REGISTRY["const"], (), number)
    assert type(made.value) is type(number)
    assert termbase.find_term(REGISTRY["const"], (), number) is made
    if isinstance(number, float) and not math.isnan(number):
        assert math.copysign(1.0, made.value) == math.copysign(1.0, number)


def test_constants_of_equal_numbers_of_other_types_or_bits_differ() -> None:
    one, one_f, true = eg.const(1), eg.const(1.0), eg.const(True)
    assert len({id(one), id(one_f), id(true)}) == 3
    assert (one.dtype, one_f.dtype, true.dtype) == ("int64", "float64", "bool")
    assert eg.const(-0.0) is not eg.const(0.0)
    assert eg.const(math.nan) is eg.const(math.nan)
    x = eg.Symbol("x")
    assert (x * 2).args[1] is not (x * 2.0).args[1]
    assert (x * 2).args[1].dtype == "int64" and (x * 2.0).args[1].dtype == "float64"
    big = 2**62 + 1  # beyond a float's exact range: the int constant keeps every bit
    assert (x * big).args[1].value == big and (x * float(big)).args[1] is not (x * big).args[1]
    assert termbase.find_term(REGISTRY["const"], (), 3.0) is None or termbase.find_term(
        REGISTRY["const"], (), 3.0
    ) is not termbase.find_term(REGISTRY["const"], (), 3)


NAMES = st.one_of(
    st.text(min_size=0, max_size=12),
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True),
    st.sampled_from(["if", "None", "inf", "nan", "True", "x" * 600, "x" * 512, "é", "x y", "_d0"]),
)


@native
@settings(max_examples=300, deadline=None)
@given(NAMES)
def test_plain_symbols_made_in_c_are_the_symbols_python_makes(name: str) -> None:
    plain = leaves._plain
    assert plain is not None
    made = plain(name)
    leaves._plain = None  # Symbol's Python body, the twin
    try:
        want = outcome(eg.Symbol, name)
    finally:
        leaves._plain = plain
    if made is None:  # C declines any name but a short unreserved ASCII identifier, and leaves it to Python
        assert not (name.isascii() and name.isidentifier() and len(name) <= MAX_TOKEN and name not in RESERVED_NAMES)
    else:
        assert made is want
        assert (made.attr, made.dtype, made.shape) == ((name, "float64", ()), "float64", ())
    assert outcome(eg.Symbol, name) is want


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False), st.booleans())
def test_equal_floats_of_distinct_objects_are_one_constant(value: float, left: bool) -> None:
    # the C key of a plain float constant hashes its bits: an equal float that is another object
    # finds the same constant, and the product the same term, through either operand order
    x = eg.Symbol("x")
    twin = float(repr(value))
    assert twin == value
    first = value * x if left else x * value
    second = twin * x if left else x * twin
    assert first is second
    assert eg.const(twin) is eg.const(value) is Term(REGISTRY["const"], (), value)
    assert (eg.const(value).attr, type(eg.const(value).attr)) == (value, float)
    assert math.copysign(1.0, eg.const(value).attr) == math.copysign(1.0, value)


def test_an_operator_follows_its_op_registered_again() -> None:
    # the C operators remember the op they found until the registry changes (issue 29 item 4)
    x, y = eg.Symbol("x"), eg.Symbol("y")
    old = REGISTRY["mul"]
    assert (x * y).op is old and (x * 2.5).op is old
    new = Op(
        "mul",
        2,
        old.infer,
        notation=old.notation,
        symbol=old.symbol,
        precedence=old.precedence,
        assoc=old.assoc,
        commutative=True,
        associative=True,
        doc="again",
    )
    try:
        register_op(new, replace=True)
        assert (x * y).op is new and (2.5 * x).op is new and (x * y).args == (x, y)
    finally:
        register_op(old, replace=True)
    assert (x * y).op is old and (x * 2.5).op is old
