"""What an env gives evaluate(): values for intermediate terms, the unused-entry policy, missing symbols, every node."""

from __future__ import annotations

import sys
import warnings

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from exprgraph import Symbol, const, exp, sin, substitute, symbols
from exprgraph.errors import EvaluationError, MissingValueError, UnusedInputError, UnusedInputWarning
from exprgraph.eval import evaluate, evaluate_nodes

x, y, z = symbols("x y z")
n = Symbol("n", "int64")

# -- a given intermediate term replaces its computation (PyTensor's w.eval({z: 3})) ----------------


def test_a_given_intermediate_replaces_its_computation() -> None:
    inner = x + 1
    w = inner * 2
    assert float(evaluate(w, {inner: 3})) == 6.0  # x is not needed: nothing below x + 1 is computed
    assert float(evaluate(w, {inner: 3, x: 100})) == 6.0
    # a node read both through the given term and directly is still computed for the direct read
    f = (x + 1) * x
    assert float(evaluate(f, {x + 1: 10.0, x: 2.0})) == 20.0
    # the value is cast to the node's dtype and may be an array of points
    np.testing.assert_array_equal(evaluate(w, {inner: [1, 2, 3]}), [2.0, 4.0, 6.0])
    assert evaluate(n * 2 + 1, {n * 2: 4}).dtype == np.int64
    # a constant too: its value is replaced everywhere it is read
    assert float(evaluate(x + 3, {const(3): 10, x: 1})) == 11.0
    # an output given a value is that value
    assert float(evaluate(w, {w: 7.5})) == 7.5


def test_a_given_tensor_term_must_have_its_shape() -> None:
    v = Symbol("v", shape=(3,))
    t = sin(v)
    assert evaluate(t * 2, {t: [1.0, 2.0, 3.0]}).tolist() == [2.0, 4.0, 6.0]
    with pytest.raises(EvaluationError, match=r"has shape \(2,\), expected \(3\)"):
        evaluate(t * 2, {t: [1.0, 2.0]})
    with pytest.raises(EvaluationError, match="cannot use a str"):
        evaluate(x * 2, {x * 2: "many"})


@settings(max_examples=60, deadline=None)
@given(
    st.floats(-5, 5),
    st.floats(-5, 5),
    st.floats(-50, 50),
    st.sampled_from([0, 1, 2, 3]),
)
def test_giving_an_intermediate_equals_substituting_its_value(a: float, b: float, value: float, which: int) -> None:
    f = sin(x * y) + exp(x - y) * (x * y) + y
    nodes = [x * y, x - y, exp(x - y), sin(x * y)]
    node = nodes[which]
    given = evaluate(f, {node: value, x: a, y: b})
    want = evaluate(substitute(f, {node: const(value)}), {x: a, y: b})
    assert given == want or (np.isnan(given) and np.isnan(want))


def test_a_long_chain_with_a_given_middle_is_cut_without_recursion() -> None:
    t = x
    for _ in range(50_000):
        t = t + 1.0
    middle = t
    for _ in range(50_000):
        t = t * 1.0
    assert sys.getrecursionlimit() <= 10_000
    assert float(evaluate(t, {middle: 5.0})) == 5.0
    assert float(evaluate(t, {x: 0.0})) == 50_000.0


# -- names that match nothing, and PyTensor's on_unused_input -----------------------------------------


def test_by_default_an_entry_the_expression_does_not_need_is_ignored() -> None:
    # CGraph's idiom: one env of all variables for every derivative; and one env of names for many terms
    assert float(evaluate(x * 2, {x: 1.0, y: 2.0, z: 3.0})) == 2.0
    assert float(evaluate(const(2.0), {"x": 1.0, "y": 2.0})) == 2.0
    assert float(evaluate(x * 2, {"x": 1.0, "q": 0.0})) == 2.0


def test_on_unused_input_raise_as_pytensor() -> None:
    # a name that matches no symbol (a typo)
    with pytest.raises(UnusedInputError, match="does not use the env entries for 'q'"):
        evaluate(x + y, {"x": 1, "y": 2, "q": 3}, on_unused_input="raise")
    assert isinstance(UnusedInputError("m"), ValueError)
    # a term the expression does not use
    with pytest.raises(UnusedInputError, match="entries for y"):
        evaluate(x * 2, {x: 1.0, y: 2.0}, on_unused_input="raise")
    # as PyTensor: an input cut off by another given input is unused, by term or by name
    with pytest.raises(UnusedInputError, match="entries for x"):
        evaluate((x + 1) * 2, {x + 1: 3.0, x: 1.0}, on_unused_input="raise")
    with pytest.raises(UnusedInputError, match="entries for 'x'"):
        evaluate((x + 1) * 2, {x + 1: 3.0, "x": 1.0}, on_unused_input="raise")
    # everything used: nothing to say; dimension names count as used
    assert float(evaluate(x * y, {x: 1.0, y: 2.0}, on_unused_input="raise")) == 2.0
    A = Symbol("A", shape=("m", 2))
    assert evaluate(A * 2, {"A": np.ones((4, 2)), "m": 4}, on_unused_input="raise").shape == (4, 2)


def test_on_unused_input_warn_and_ignore() -> None:
    env = {x: 1.0, y: 2.0, "q": 0}
    with pytest.warns(UnusedInputWarning, match="entries for y, 'q'") as caught:
        assert float(evaluate(x * 2, env, on_unused_input="warn")) == 2.0
    assert caught[0].filename == __file__  # the warning points at the caller's line
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert float(evaluate(x * 2, env, on_unused_input="ignore")) == 2.0
        assert float(evaluate_nodes(x * 2, env)[x * 2]) == 2.0
    with pytest.raises(UnusedInputError):
        evaluate_nodes(x * 2, env, on_unused_input="raise")
    with pytest.raises(ValueError, match="on_unused_input must be"):
        evaluate(x, {x: 1.0}, on_unused_input="loud")  # type: ignore[arg-type]


# -- a missing symbol is an EvaluationError and a KeyError ---------------------------------------------


def test_a_missing_symbol_is_a_key_error_too() -> None:
    with pytest.raises(MissingValueError) as info:
        evaluate(x + y, {"x": 1.0})
    err = info.value
    assert isinstance(err, KeyError) and isinstance(err, EvaluationError) and isinstance(err, ValueError)
    # the message reads as a message, not as the repr of a key
    assert str(err) == "no value for symbol 'y' (float64); give it in the env by name or by term"
    # CGraph's constant folding: try to evaluate, and a KeyError means "has symbols"
    try:
        evaluate(x * 2, {})
        folded = True
    except KeyError:
        folded = False
    assert not folded
    A = Symbol("A", shape=(2,))
    with pytest.raises(KeyError):
        evaluate(A + 1, {})


# -- the value of every node at once (CGraph's values(f, fargs)) -----------------------------------------


def test_evaluate_nodes_gives_every_node() -> None:
    f = (x + y) * x
    values = evaluate_nodes(f, {x: 2, y: 3})
    assert {str(k): float(v) for k, v in values.items()} == {"x": 2.0, "y": 3.0, "x + y": 5.0, "(x + y)*x": 10.0}
    assert list(values)[-1] is f  # children first, the output last
    # several outputs, constants included; arrays of points are kept whole (none overwritten)
    g = sin(x) * 2
    many = evaluate_nodes([f, g], {x: np.array([0.0, 1.0]), y: 1.0})
    assert set(many) == {x, y, x + y, f, sin(x), const(2), g}
    np.testing.assert_array_equal(many[x + y], [1.0, 2.0])
    np.testing.assert_array_equal(many[f], [0.0, 2.0])
    # below a given term nothing is computed, so nothing is reported
    cut = evaluate_nodes(f, {x + y: 4.0, x: 2.0})
    assert y not in cut and float(cut[f]) == 8.0
    with pytest.raises(TypeError, match="evaluate_nodes"):
        evaluate_nodes("x + y", {})  # type: ignore[arg-type]
