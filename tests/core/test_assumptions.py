"""Assumptions on symbols (exprgraph.core.assumptions): identity, closure, contradictions, pickling, SymPy keywords."""

from __future__ import annotations

import copy
import math
import pickle

import pytest

from exprgraph.core import Symbol, TermPack, symbols
from exprgraph.core.assumptions import (
    Assumptions,
    SymbolAttr,
    assumptions_of,
    assumptions_text,
    from_sympy_keywords,
    make_assumptions,
    to_sympy_keywords,
)
from exprgraph.errors import AssumptionError


def test_plain_symbol_is_unchanged() -> None:
    x = Symbol("x")
    assert x.attr.__class__ is tuple and x.attr == ("x", "float64", ())
    assert assumptions_of(x) is None
    assert Symbol("x", positive=None) is x  # no fact given: the plain symbol


def test_assumptions_are_identity() -> None:
    x, xp = Symbol("x"), Symbol("x", positive=True)
    assert xp is not x and xp is Symbol("x", positive=True)
    assert xp is not Symbol("x", nonnegative=True)
    assert xp.name == "x" and xp.dtype == "float64" and xp.shape == ()
    name, dtype, shape = xp.attr  # every reader that unpacks three fields keeps working
    assert (name, dtype, shape) == ("x", "float64", ())
    assert xp.attr != x.attr and x.attr != xp.attr and hash(xp.attr) != hash(x.attr)
    assert (xp + x).args == (xp, x)


def test_implied_facts_are_closed() -> None:
    xp = Symbol("x", positive=True)
    # two spellings of the same facts are the same symbol
    assert Symbol("x", positive=True, nonnegative=True, real=True, nonzero=True) is xp
    assert Symbol("x", lower=0, positive=True) is xp
    facts = assumptions_of(xp).facts()  # type: ignore[union-attr]
    assert facts == {"positive", "nonnegative", "nonzero", "real"}
    assert assumptions_of(Symbol("n", integer=True)).facts() >= {"integer", "finite", "real"}  # type: ignore[union-attr]
    assert assumptions_of(Symbol("b", lower=1, upper=2)).facts() >= {"positive", "real", "nonzero"}  # type: ignore[union-attr]
    # a positive integer is >= 1
    a = assumptions_of(Symbol("k", integer=True, positive=True))
    assert a is not None and a.lower == 1 and not a.lower_open
    assert Symbol("k", integer=True, lower=0.5) is Symbol("k", integer=True, positive=True)


def test_symbols_takes_assumptions() -> None:
    x, y = symbols("x y", positive=True)
    assert x is Symbol("x", positive=True) and y is Symbol("y", positive=True)
    n = symbols("n", "int64", nonnegative=True)
    assert n.dtype == "int64" and assumptions_of(n).facts() >= {"nonnegative"}  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "given",
    [
        {"positive": True, "negative": True},
        {"positive": True, "nonpositive": True},
        {"nonzero": True, "nonnegative": True, "nonpositive": True},
        {"lower": 2, "upper": 1},
        {"integer": True, "lower": 0.2, "upper": 0.8},
        {"finite": True, "lower": math.inf},
        {"positive": True, "real": False},
        {"integer": True, "finite": False},
    ],
)
def test_contradictions_raise(given: dict) -> None:
    with pytest.raises(AssumptionError, match="contradictory assumptions") as info:
        Symbol("x", **given)
    assert isinstance(info.value, ValueError) and info.value.facts


@pytest.mark.parametrize(
    ("given", "message"),
    [({"postive": True}, "unknown assumption"), ({"positive": 1}, "True or False"), ({"lower": "a"}, "real number")],
)
def test_bad_keywords_raise(given: dict, message: str) -> None:
    with pytest.raises(AssumptionError, match=message):
        Symbol("x", **given)


def test_int64_symbols_are_integers() -> None:
    assert Symbol("n", "int64", nonnegative=True) is Symbol("n", "int64", nonnegative=True, integer=True)
    with pytest.raises(AssumptionError, match="drop integer=False"):
        Symbol("n", "int64", integer=False)


def test_denied_facts() -> None:
    n = Symbol("n", integer=False)
    assert n is not Symbol("n") and assumptions_of(n).denied == {"integer"}  # type: ignore[union-attr]
    assert Symbol("x", positive=True, negative=False) is not Symbol("x", positive=True)


@pytest.mark.parametrize(
    "given", [{"positive": True}, {"integer": True, "lower": -3, "upper": 7}, {"real": True, "finite": True}]
)
def test_pickle_copy_and_pack_keep_assumptions(given: dict) -> None:
    x = Symbol("x", **given)
    t = x * 2 + Symbol("x")
    assert pickle.loads(pickle.dumps(x)) is x
    assert pickle.loads(pickle.dumps(t)) is t
    assert copy.deepcopy(t) is t
    assert pickle.loads(pickle.dumps(TermPack([t, x]))).terms == (t, x)
    a = assumptions_of(x)
    assert pickle.loads(pickle.dumps(a)) == a


def test_repr_keywords_round_trip() -> None:
    for given in [{"positive": True}, {"lower": -1.5, "upper": 2}, {"integer": True, "nonnegative": True}]:
        x = Symbol("x", **given)
        text = assumptions_text(x.attr)
        kw = eval(f"dict({text[2:]})")
        assert Symbol("x", **kw) is x
    assert assumptions_text(Symbol("x").attr) == ""
    assert repr(SymbolAttr("x", "float64", (), make_assumptions({"positive": True}))).endswith("positive=True)")


def test_term_repr_keeps_assumptions() -> None:
    """The repr form builds the same symbol again, assumptions included."""
    x = Symbol("x", positive=True)
    assert repr(x) == "Symbol('x', positive=True)"
    assert eval(repr(x), {"Symbol": Symbol}) is x  # our own repr, in a test


@pytest.mark.parametrize(
    "given",
    [{"positive": True}, {"positive": True, "finite": True}, {"nonzero": True}, {"real": True}, {"negative": True}],
)
def test_sympy_keywords_round_trip(given: dict) -> None:
    sympy = pytest.importorskip("sympy")
    x = Symbol("x", **given)
    s = sympy.Symbol("x", **to_sympy_keywords(x))
    assert Symbol("x", **from_sympy_keywords(s.assumptions0, False)) is x


def test_sympy_keywords_of_sympy_symbols() -> None:
    sympy = pytest.importorskip("sympy")
    # SymPy's real is what to_sympy writes for a plain float symbol; its positive is finite
    assert from_sympy_keywords(sympy.Symbol("x", real=True).assumptions0, False) == {}
    assert from_sympy_keywords(sympy.Symbol("x").assumptions0, False) == {}
    assert from_sympy_keywords(sympy.Symbol("x", positive=True).assumptions0, False) == {
        "positive": True,
        "finite": True,
    }
    assert from_sympy_keywords(sympy.Symbol("n", integer=True).assumptions0, True) == {}
    kw = from_sympy_keywords(sympy.Symbol("n", integer=True, nonnegative=True).assumptions0, True)
    assert Symbol("n", "int64", **kw) is Symbol("n", "int64", nonnegative=True, integer=True)


def test_assumptions_value_semantics() -> None:
    a = make_assumptions({"positive": True})
    assert a == Assumptions(0, True, math.inf, False, real=True, nonzero=True)
    assert make_assumptions({"positive": True}) is a  # made once per spelling
