"""Index arithmetic on exprgraph.dims: the affine view, the tensor spelling of dims's canonical forms,
reductions under loop ranges and bounds, checked against brute force on small boxes."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from index_strategies import index_terms

import exprgraph.dims as dims
from exprgraph.core import const
from exprgraph.tensor.affine import (
    Lin,
    NonAffineError,
    bounds,
    evaluate_index,
    index_var,
    linearize,
    reduce_atoms,
    substitute_var,
    to_term,
)
from exprgraph.tensor.index_values import dims_env

_H, _W, _U = index_var("h"), index_var("w"), index_var("u")


def _values(t, ranges):
    """Every value of ``t`` on the box ``ranges`` (brute force)."""
    names = list(ranges)
    out = []
    for point in itertools.product(*(range(*ranges[v]) for v in names)):
        out.append(int(evaluate_index(t, dict(zip(names, point, strict=True)))))
    return out


# affine index terms over h, w, u through up to three floor divisions and remainders
_TERMS = index_terms(
    {_H: (-3, 3), _W: (-3, 3), _U: (-2, 2)},
    constants=(-5, 11),
    steps=(0, 3),
    divisors=(2, 7),
)


_BOX = st.fixed_dictionaries(
    {_H: st.tuples(st.integers(-3, 2), st.integers(1, 6)), _W: st.tuples(st.integers(0, 2), st.integers(1, 5))}
).map(lambda r: {v: (lo, lo + ext) for v, (lo, ext) in r.items()} | {_U: (0, 3)})


@settings(max_examples=200, deadline=None)
@given(_TERMS, _BOX)
def test_reduce_and_bounds_agree_with_brute_force(t, ranges):
    values = _values(t, ranges)
    reduced = reduce_atoms(t, ranges)
    assert _values(reduced, ranges) == values
    lo, hi = bounds(t, ranges)
    assert lo <= min(values) and max(values) <= hi
    # the range is the one dims proves under the loop ranges (inclusive ends)
    assert (lo, hi) == dims_env(ranges).bound(t)


@settings(max_examples=200, deadline=None)
@given(_TERMS)
def test_affine_view_is_a_fixpoint_and_agrees_with_dims(t):
    lin = linearize(t)
    canon = to_term(lin)
    # reading the canonical term gives the same form, atom for atom
    assert linearize(canon).key() == lin.key()
    # and the same value as dims's canonical form, on negative values too
    theirs = dims.simplify_term(t)
    for h, w, u in itertools.product((-7, -1, 0, 3, 11), (-4, 0, 5), (-2, 0, 2)):
        env = {_H: h, _W: w, _U: u}
        assert evaluate_index(canon, env) == evaluate_index(theirs, env) == evaluate_index(t, env)


@pytest.mark.parametrize(
    ("expr", "spelled"),
    [
        # remainders keep the coefficients nearest 0 (dims: (4*h + 2*w)%5)
        ((2 * _W - _H) % 5, "(2*w - h)%5"),
        ((3 * _H + 3 * _W) % 5, "(-(2*h) - 2*w)%5"),
        # atoms follow their text; the constant comes last
        ((_H + 1) // 2 * 2, "2*((h + 1)//2)"),
        (_W - _H + 3, "w - h + 3"),
        # dims recombines k*(u//c) with u%c, also where u//c merged into one quotient ((w//4)//5 is w//20)
        (5 * ((_W // 4) // 5) + (_W // 4) % 5, "w//4"),
        (_H // 4 - 3 * (_H // 12), "h//4%3"),
        ((2 * _W) // 3 - 2 * (_W // 3), "2*w//3%2"),
    ],
)
def test_tensor_spelling_of_dims_forms(expr, spelled):
    assert str(to_term(linearize(expr))) == spelled


def test_reduce_atoms_uses_the_centred_spelling():
    # dims spells (11 - u - 4*w) % 12 as (11*u + 8*w + 11) % 12, which leaves one period on the box;
    # the remainder goes as (11 - u - 4*w) stays in one
    ranges = {_H: (0, 2), _W: (0, 3), _U: (0, 4)}
    t = 12 * _H - (11 - _U - 4 * _W) % 12 + 11
    assert str(reduce_atoms(t, ranges)) == "12*h + 4*w + u"
    # quotients that stay in one period go, in loop order
    assert str(reduce_atoms((4 * _W + _U) // 4 + (4 * _W + _U) % 4, ranges)) == "w + u"


def test_bounds_are_those_dims_proves():
    ranges = {_H: (0, 7), _W: (0, 6)}
    t = _W + 4 * ((2 * _H - _W) // 4) - _H
    values = _values(t, ranges)
    lo, hi = bounds(t, ranges)
    # tighter than interval arithmetic on the term ((-14, 17)): dims reads it as h - (2*h + 3*w)%4
    assert (lo, hi) == (-3, 6) and lo <= min(values) and max(values) <= hi
    assert bounds(_H + _U, ranges) is None  # u has no range
    assert bounds(_H * _W, ranges) == (0, 30)
    assert bounds(_H // (_W + 1), ranges) is None  # a divisor must be a constant


def test_fragment_errors():
    for bad, message in (
        (_H * _W, "multiply a variable only by a constant"),
        (_H // _W, "divisor of an index must be a constant"),
        (_H % (1 - 2 + const(0)), "positive constant"),
        (_H + const(1.5), "not an integer"),
    ):
        with pytest.raises(NonAffineError, match=message):
            linearize(bad)
    # a product whose factors cancel to a constant is affine
    assert str(to_term(linearize((_H - _H + 2) * _W))) == "2*w"


def test_substitute_var_reaches_inside_divisions():
    lin = linearize(_H + (_H + _W) // 3)
    out = substitute_var(lin, _H, linearize(2 * _U + 1))
    assert str(to_term(out)) == str(to_term(linearize(2 * _U + 1 + (2 * _U + 1 + _W) // 3)))
    assert isinstance(out, Lin)


def test_deep_division_chain_is_iterative():
    t = _H
    for k in range(20_000):
        t = (t + 1) % (7 if k % 2 else 5)
    assert str(to_term(linearize(t))) == "(h + 4)%5 + 1"
    grid = np.arange(-5, 20)
    assert np.array_equal(evaluate_index(to_term(linearize(t)), {_H: grid}), evaluate_index(t, {_H: grid}))
