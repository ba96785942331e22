"""Terms inside logical-unification, etuples and cons (the seed's unification walkthrough)."""

from __future__ import annotations

import pytest
from etuples.core import KwdPair

from exprgraph import Symbol, add, mul, symbols
from exprgraph import sum as sum_
from exprgraph.match.unify import (
    ConsError,
    car,
    cdr,
    cons,
    etuple,
    etuplize,
    reify,
    term_etuple,
    to_term,
    unify,
    var,
)

x, y, z = symbols("x y z")


def test_unify_a_term_with_an_etuple_and_reify():
    y_lv = var()
    s = unify(add(x, y), etuple(add, x, y_lv))
    assert s == {y_lv: y}
    res = reify(etuple(add, y_lv, y_lv), s)
    assert res.evaled_obj is add(y, y)
    assert unify(etuple(add, x, y_lv), add(x, y)) == {y_lv: y}  # either side


def test_unify_fails_on_different_structure():
    y_lv = var()
    assert unify(mul(x, y), etuple(add, x, y_lv)) is False
    assert unify(x, etuple(add, x, y_lv)) is False  # a symbol is an atom
    assert unify(add(x, y), add(x, y)) == {}
    assert unify(add(x, y), add(y, x)) is False  # plain unification knows no commutativity


def test_cons_takes_terms_apart():
    op_lv, args_lv = var(), var()
    s = unify(cons(op_lv, args_lv), add(x, y, z))
    assert s[op_lv] is add and tuple(s[args_lv]) == (x, y, z)
    res = reify(cons(mul, args_lv), s)
    assert to_term(res) is mul(x, y, z)
    assert car(x + y) is add and tuple(cdr(x + y)) == (x, y)
    with pytest.raises(ConsError):
        car(x)


def test_attrs_travel_as_keyword_pairs():
    m = Symbol("m", shape=(2, 3))
    t = sum_(m, axis=0)
    e = term_etuple(t)
    assert e.evaled_obj is t
    assert to_term(etuplize(t)) is t
    ax = var()
    assert unify(t, etuple(sum_, m, KwdPair("axis", ax))) == {ax: 0}
    assert reify(etuple(sum_, m, KwdPair("axis", ax)), {ax: 1}).evaled_obj is sum_(m, axis=1)
    assert to_term(list(etuplize(t))) is t


def test_etuplize_and_to_term_round_trip_deep_terms():
    t = x
    for i in range(3000):
        t = t * y + i
    e = etuplize(t)
    assert e[0] is add
    assert to_term(e) is t
    assert to_term([add, x, [mul, y, z]]) is x + y * z
    assert to_term(5) == 5
    with pytest.raises(ValueError, match="logic variable"):
        to_term(etuple(add, x, var()))
