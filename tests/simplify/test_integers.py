"""Integer subterms simplified by dims inside ``simplify``: same values for every int64 input, never larger."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from exprgraph import Symbol, const, get_op, simplify
from exprgraph.core import postorder
from exprgraph.dims import CEIL_DIV
from exprgraph.eval import evaluate
from exprgraph.simplify.integers import integer_regions, simplify_integers
from exprgraph.simplify.simplify import cost

A, B, C = (Symbol(n, "int64") for n in "abc")
X = Symbol("x")  # a float: integer regions sit under float ops too
_BINARY = ["add", "sub", "mul", "floordiv", "mod", "maximum", "minimum", "floordiv", "mod"]
_DIVISIONS = ("floordiv", "mod", "ceil_div")
_leaves = st.one_of(st.sampled_from([A, B, C]), st.integers(-6, 9).map(const), st.sampled_from([8, 16, -4]).map(const))


def _extend(children):
    binary = st.tuples(st.sampled_from(_BINARY), children, children).map(lambda t: get_op(t[0])(t[1], t[2]))
    ceil = st.tuples(children, st.sampled_from([2, 3, 8, -3])).map(lambda t: CEIL_DIV(t[0], const(t[1])))
    return st.one_of(binary, binary, ceil, children.map(lambda t: -t), children.map(abs))


integer_terms = st.recursive(_leaves, _extend, max_leaves=12)
_values = st.integers(-1000, 1000)
environments = st.lists(st.fixed_dictionaries({"a": _values, "b": _values, "c": _values}), min_size=3, max_size=6)
# the safe strength keeps values where int64 wraps, too
_wide = st.one_of(_values, st.integers(-(2**63), 2**63 - 1), st.sampled_from([2**61, 2**62 - 1, -(2**63), 2**63 - 1]))
wide_environments = st.lists(st.fixed_dictionaries({"a": _wide, "b": _wide, "c": _wide}), min_size=3, max_size=6)


def _value(term, env):
    return evaluate(term, {**env, "x": 0.5})


def _zero_divisor(term, env) -> bool:
    """Whether a division of ``term`` divides by 0 at ``env`` (where dims' forms may differ: unsafe only)."""
    return any(t.op.name in _DIVISIONS and _value(t.args[1], env) == 0 for t in postorder(term))


def _check(original, simplified, envs, unsafe: bool, measure=cost) -> None:
    assert measure(simplified) <= measure(original)
    for env in envs:
        if unsafe and _zero_divisor(original, env):
            continue
        want, got = _value(original, env), _value(simplified, env)
        assert np.array_equal(want, got), (str(original), str(simplified), env, want, got)


@settings(max_examples=200, deadline=None)
@given(term=integer_terms, envs=wide_environments)
def test_safe_simplify_keeps_every_value(term, envs):
    out = simplify(term)
    _check(term, out, envs, unsafe=False)
    assert simplify(out) is out  # canonical: simplify gives it back
    _check(term, simplify_integers(term), envs, unsafe=False, measure=lambda t: t.size)
    _check(term, simplify_integers(term, cost=cost), envs, unsafe=False)


@settings(max_examples=150, deadline=None)
@given(term=integer_terms, envs=environments)
def test_unsafe_simplify_keeps_values_where_divisors_are_not_zero(term, envs):
    _check(term, simplify(term, unsafe=True), envs, unsafe=True)


@settings(max_examples=80, deadline=None)
@given(term=integer_terms, envs=environments)
def test_regions_under_float_ops(term, envs):
    mixed = get_op("sin")(X * term) + term
    _check(mixed, simplify(mixed), envs, unsafe=False)


def test_dims_decides_the_integer_subterms():
    batch = Symbol("batch", "int64")
    assert str(simplify(2 * batch // batch, unsafe=True)) == "2"
    assert str(simplify((A * B + A) // A, unsafe=True)) == "b + 1"
    assert str(simplify(A - A)) == "0" and str(simplify(A + B - A)) == "b"  # exact for ints: no inf - inf
    assert str(simplify((batch + 7) // 8 * 8 - (batch + 7) // 8 * 8 + (4 * A + 2) // 2, unsafe=True)) == "2*a + 1"
    assert str(simplify(get_op("maximum")(A, B) + get_op("minimum")(A, B) - B, unsafe=True)) == "a"
    assert str(simplify(X * (A + A - A))) == "a*x"


def test_safe_strength_leaves_symbolic_divisors():
    batch = Symbol("batch", "int64")
    t = 2 * batch // batch
    assert simplify(t) is t  # 0 at batch == 0 (numpy), where 2 would not be
    assert evaluate(t, {"batch": 0}) == 0
    roots, inside = integer_regions(t)
    assert roots == [2 * batch] and t not in inside


def test_safe_strength_keeps_what_wraps():
    """Divisions, max and min are exact only where nothing wraps: the safe strength leaves them whole."""
    big = np.array([2**61, 2**63 - 1, -(2**63), 5])
    for t in ((A * 4) // 4, (A * 4 + 8) // 4, get_op("maximum")(A + 1, A), (A * 3 + 1) // 3):
        out = simplify(t)
        np.testing.assert_array_equal(evaluate(out, {"a": big}), evaluate(t, {"a": big}))
    assert str(simplify((A * 4 + 8) // 4, unsafe=True)) == "a + 2"  # unsafe: exact where nothing wraps


def test_atoms_are_hidden_from_dims():
    """An int64 subterm dims does not model is an atom: simplified on its own, never looked into."""
    t = abs(A + A - A) + abs(A) - abs(A)
    assert str(simplify_integers(t)) == "abs(a)"
    u = (abs(A) * 2 + 1) // 2 + get_op("where")(X > 0, B - B, C)
    assert str(simplify_integers(u, unsafe=True)) == "abs(a) + where(x > 0, 0, c)"


def test_name_clashes_and_limits():
    clash = Symbol("_eg_int_atom_1", "int64")
    t = abs(B) + clash - clash
    assert str(simplify_integers(t)) == "abs(b)"
    huge = A * const(2**62) + A * const(2**62)  # a coefficient past int64: left alone
    assert simplify_integers(huge) is huge


def test_deep_chain_at_the_default_recursion_limit():
    t = A
    for i in range(30_000):
        t = t + (i % 3 - 1)
    out = simplify_integers(t)
    assert out is A
