"""graph_replace and clone_replace (exprgraph.graph.replace): PyTensor's replacement helpers over terms."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from variadic_ops import variadic

from exprgraph import Symbol, const, exp, get_op, sin, substitute, symbols
from exprgraph.errors import ReplacementTypeError
from exprgraph.eval import evaluate
from exprgraph.graph import clone_replace, graph_replace

x, y, z, w = symbols("x y z w")


xop, yop, xyop = variadic("replace_xop"), variadic("replace_yop"), variadic("replace_xyop")


def test_graph_replace_as_upstream_tests_it():
    x2 = xop(x, w)
    y2 = yop(y)
    (yc,) = graph_replace([x2], {x: y2})
    assert yc.args == (y2, w)  # the untouched operand is the same term
    (yc,) = graph_replace([x2], {x2: y2})
    assert yc is y2  # replacing the output itself
    o = xyop(x2, y2)
    new_x, new_y2 = Symbol("x_new"), Symbol("y2_new")
    (oc,) = graph_replace([o], {x: new_x, y2: new_y2})  # a key below the other is replaced too
    assert oc.args[1] is new_y2 and oc.args[0].args == (new_x, w)
    assert graph_replace(o, {x: new_x, y: z}) == xyop(xop(new_x, w), yop(z))  # one term in, one term out


def test_an_unused_replacement_is_an_error_unless_not_strict():
    o = xop(x)
    fake = yop(x)
    assert graph_replace([o], {fake: y}, strict=False) == [o]
    with pytest.raises(ValueError, match="not used"):
        graph_replace([o], {fake: y})
    # a key under another key is in the graph: it counts as used (upstream's rule)
    a = x + y
    assert graph_replace((a * z,), {a: z, x: z}) == [z * z]


def test_replacements_are_simultaneous_and_take_pairs_or_a_dict():
    assert graph_replace(x + y, {x: y, y: x}) is y + x  # a swap, not a chain
    assert graph_replace(x * y, [(x, y * 2.0), (y, x)]) is (y * 2.0) * x
    assert graph_replace((x + y) * z, {x + y: (x + y) * 2.0}) is ((x + y) * 2.0) * z  # not looked into again
    assert graph_replace([x, sin(x)], iter([(x, z)])) == [z, sin(z)]
    assert graph_replace(x + 1.0, {x: 2}) is const(2.0) + 1.0  # a number becomes a constant of the dtype
    out = sin(x)
    assert graph_replace(out) is out and graph_replace([out], {}) == [out]


def test_replacements_keep_the_type_and_keys_are_terms():
    with pytest.raises(ReplacementTypeError):
        graph_replace(x + y, {x: Symbol("i", "int64")})
    with pytest.raises(TypeError):  # ReplacementTypeError is a TypeError, as upstream raises
        graph_replace(x + y, {x: Symbol("v", shape=(3,))})
    with pytest.raises(TypeError, match="must be a term"):
        graph_replace(x + y, {"x": y})
    with pytest.raises(TypeError, match="pairs"):
        graph_replace(x + y, [x])
    with pytest.raises(TypeError, match="outputs"):
        graph_replace([x, "y"], {x: y})


def test_clone_replace_ignores_unused_replacements_and_may_rebuild_types():
    f1 = z * (x + y) ** 2 + 5.0
    f2 = clone_replace(f1, replace=None, rebuild_strict=True, copy_inputs_over=True)
    assert f2 is f1  # nothing to copy: terms are values
    assert clone_replace(f1, {w: x}) is f1
    assert clone_replace([f1], [(y, w)]) == [z * (x + w) ** 2 + 5.0]
    i = Symbol("i", "int64")
    with pytest.raises(ReplacementTypeError):
        clone_replace(f1, {y: i})
    loose = clone_replace(x + y, {y: i}, rebuild_strict=False)  # the node is rebuilt for the new type
    assert loose is x + i and loose.dtype == "float64"
    with pytest.raises(TypeError, match="strict"):
        clone_replace(f1, {y: w}, strict=True)  # not one of the rebuild keywords (as upstream)


def test_replace_is_iterative_and_shares_work_across_outputs():
    t = x
    for i in range(100_000):
        t = sin(t) if i % 2 else t * y
    out, same = graph_replace([t, t], {y: z})
    assert out is same and out.depth == t.depth and y not in out.free_symbols
    assert graph_replace(t, {t.args[0]: x}) is sin(x)


# -- the defining property: replacing, then evaluating, is evaluating with the substituted value ----------


def _random_term(choices: list[int], leaves: list) -> object:
    pool = list(leaves)
    ops = [get_op("add"), get_op("mul"), get_op("sub"), get_op("sin")]
    for k in range(0, len(choices) - 2, 3):
        op = ops[choices[k] % 4]
        a, b = pool[choices[k + 1] % len(pool)], pool[choices[k + 2] % len(pool)]
        pool.append(op(a) if op.name == "sin" else op(a, b))
    return pool[-1]


terms = st.lists(st.integers(0, 10**6), min_size=3, max_size=60)
values = st.floats(-2.0, 2.0, allow_nan=False)


@settings(max_examples=80, deadline=None)
@given(terms, terms, values, values, values)
def test_graph_replace_then_evaluate_is_evaluate_with_the_value(e_choices, r_choices, vx, vy, vz):
    e = _random_term(e_choices, [x, y, z, const(0.5)])
    r = _random_term(r_choices, [y, z, const(1.5)])  # what x becomes
    env = {x: vx, y: vy, z: vz}
    replaced = graph_replace(e, {x: r}, strict=False)
    assert replaced is substitute(e, {x: r})  # the one-term substitution of the core, for one output
    expected = evaluate(e, {**env, x: evaluate(r, env)})
    np.testing.assert_array_equal(evaluate(replaced, env), expected)
    swapped = graph_replace(e, {x: y, y: x}, strict=False)  # simultaneous: a swap of the values
    np.testing.assert_array_equal(evaluate(swapped, env), evaluate(e, {**env, x: vy, y: vx}))


def test_graph_replace_handles_several_outputs_at_once():
    a = exp(x) + y
    outs = graph_replace([a, a * z, z], {y: z, z: y})
    assert outs == [exp(x) + z, (exp(x) + z) * y, y]
