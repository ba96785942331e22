"""Index values computed with dims's DimArith (exprgraph.tensor.index_arith), checked against brute force:
values on a loop box, values after substitution, bounds, quotients, affine forms, loop bounds from
guards and loop ranges, on random small extents."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from index_strategies import index_terms

from exprgraph.core import const
from exprgraph.tensor.affine import evaluate_index, index_var, linearize
from exprgraph.tensor.index_arith import ANY, IndexArith, arith_for, canonical_term
from exprgraph.tensor.ir import Guard
from exprgraph.tensor.lin import Lin
from exprgraph.tensor.loop_ranges import single_var_range
from exprgraph.tensor.schedule import _bound_terms

_H, _W, _U, _X = index_var("h"), index_var("w"), index_var("u"), index_var("x")

# index terms over h, w, u through up to three floor divisions and remainders
_TERMS = index_terms({_H: (-3, 3), _W: (-3, 3), _U: (-2, 2)}, constants=(-5, 11), steps=(0, 3), divisors=(2, 7))
# plain affine terms (no division)
_AFFINE = index_terms({_H: (-3, 3), _W: (-3, 3), _U: (-2, 2)}, constants=(-5, 11), steps=(0, 0), divisors=(2, 2))

#: random small boxes: h may start below 0, u is fixed
_BOX = st.fixed_dictionaries(
    {_H: st.tuples(st.integers(-3, 2), st.integers(1, 6)), _W: st.tuples(st.integers(0, 2), st.integers(1, 5))}
).map(lambda r: {v: (lo, lo + ext) for v, (lo, ext) in r.items()} | {_U: (0, 3)})


def _points(ranges):
    """Every point of the box ``ranges`` as an environment."""
    names = list(ranges)
    for point in itertools.product(*(range(*ranges[v]) for v in names)):
        yield dict(zip(names, point, strict=True))


def _eval(value, env):
    """The value of an index value (an int or a term) at ``env``."""
    return value if isinstance(value, int) else int(evaluate_index(value, env))


@settings(max_examples=200, deadline=None)
@given(_TERMS, _BOX)
def test_values_on_a_box_agree_with_brute_force(t, ranges):
    box = arith_for(ranges)
    value = box.value(t)
    term = box.term(value, tuple(ranges))  # the edge: the kernel's spelling
    values = []
    for env in _points(ranges):
        want = int(evaluate_index(t, env))
        values.append(want)
        assert _eval(value, env) == want
        assert int(evaluate_index(term, env)) == want
    lo, hi = box.bounds(value)
    assert lo <= min(values) and max(values) <= hi


@settings(max_examples=200, deadline=None)
@given(_AFFINE, _BOX)
def test_bounds_of_affine_values_are_exact(t, ranges):
    box = arith_for(ranges)
    values = [int(evaluate_index(t, env)) for env in _points(ranges)]
    assert box.bounds(box.value(t)) == (min(values), max(values))


@settings(max_examples=200, deadline=None)
@given(_TERMS, _TERMS, _BOX)
def test_substituted_values_agree_with_brute_force(t, s, ranges):
    # h := s(h, w, u) inside t, computed on dims's values: t(s(h, w, u), w, u) at every point
    box = arith_for(ranges)
    value = box.value(t, {_H: ANY.value(s)})
    for env in _points(ranges):
        inner = int(evaluate_index(s, env))
        want = int(evaluate_index(t, {**env, _H: inner}))
        assert _eval(value, env) == want
    # without ranges (any integer), on negative values too
    free = ANY.value(t, {_H: ANY.value(s)})
    for h, w, u in itertools.product((-9, -1, 0, 4, 13), (-5, 0, 6), (-2, 1)):
        env = {_H: h, _W: w, _U: u}
        inner = int(evaluate_index(s, env))
        assert _eval(free, env) == int(evaluate_index(t, {**env, _H: inner}))


@settings(max_examples=200, deadline=None)
@given(_TERMS, st.integers(1, 9))
def test_quotients_and_affine_forms_agree_with_brute_force(t, c):
    lin = linearize(t)
    value = ANY.of_lin(lin)
    quotient = ANY.floordiv(value, c)
    canon = canonical_term(lin)
    for h, w, u in itertools.product((-7, -1, 0, 3, 11), (-4, 0, 5), (-2, 0, 2)):
        env = {_H: h, _W: w, _U: u}
        want = int(evaluate_index(t, env))
        assert _eval(value, env) == want
        assert _eval(quotient, env) == want // c
        assert int(evaluate_index(canon, env)) == want
        assert int(evaluate_index(ANY.term(value), env)) == want


@settings(max_examples=300, deadline=None)
@given(
    st.integers(-4, 4).filter(bool),
    st.integers(-3, 3),
    st.integers(-3, 3),
    st.integers(-6, 6),
    st.tuples(st.integers(-8, 8), st.integers(1, 10)),
    st.tuples(st.integers(-3, 3), st.integers(1, 5)),
    st.tuples(st.integers(-3, 3), st.integers(1, 5)),
)
def test_loop_bounds_from_guards_are_exact(a, b, c, k, guard, wbox, ubox):
    # guard lo <= a*x + b*w + c*u + k < hi as bounds of x's loop, over every point of the outer loops
    lo, hi = guard[0], guard[0] + guard[1]
    expr = a * _X + b * _W + c * _U + k
    lin = linearize(expr)
    lower, upper = _bound_terms(Guard(expr, lo, hi), _X, lin)
    outer = {_W: (wbox[0], wbox[0] + wbox[1]), _U: (ubox[0], ubox[0] + ubox[1])}
    xs = np.arange(-200, 200)
    for env in _points(outer):
        values = evaluate_index(expr, {**env, _X: xs})
        want = xs[(lo <= values) & (values < hi)].tolist()
        first, end = int(evaluate_index(lower, env)), int(evaluate_index(upper, env))
        assert want == list(range(first, end))


@settings(max_examples=300, deadline=None)
@given(
    st.integers(-4, 4).filter(bool),
    st.integers(-6, 6),
    st.lists(st.integers(1, 5), max_size=2),
    st.integers(1, 12),
)
def test_loop_ranges_are_exact(c, k, divisors, extent):
    # a position c*x + k, divided by each divisor in turn, keeps [0, extent) exactly on [lo, hi)
    t = c * _X + k
    for d in divisors:
        t = t // d
    got = single_var_range(t, extent)
    xs = np.arange(-400, 400)
    values = evaluate_index(t, {_X: xs})
    want = xs[(values >= 0) & (values < extent)].tolist()
    assert got is not None
    assert list(range(got[1], got[2])) == want


def test_dims_drops_what_is_constant_on_the_box():
    box = arith_for({_H: (0, 8), _W: (0, 4)})
    assert box.term(box.floordiv(_H, 8)) is const(0)
    assert str(box.term(box.value((4 * _H + _W) % 4 + (4 * _H + _W) // 4), (_H, _W))) == "h + w"
    # the same arithmetic with any integer keeps them
    assert str(ANY.term(ANY.floordiv(_H, 8))) == "h//8"


def test_a_value_too_large_for_dims_is_read_whole_at_the_edge():
    # DimArith gives up past MAX_TERM_SIZE nodes: the value is then the operation's term, read at the edge
    names = [index_var(f"v{k}") for k in range(300)]
    t = names[0]
    for v in names[1:]:
        t = t + v
    value = ANY.value(t, {names[0]: ANY.add(_H, 1)})
    env = {v: k for k, v in enumerate(names)} | {_H: 5}
    assert _eval(value, env) == sum(range(1, 300)) + 6
    assert int(evaluate_index(ANY.term(value), env)) == sum(range(1, 300)) + 6
    assert isinstance(IndexArith().lin(value), Lin)
