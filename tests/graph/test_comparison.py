"""equal_computations (exprgraph.graph.comparison) and as_string (exprgraph.graph.printing), PyTensor's helpers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from variadic_ops import variadic

from exprgraph import Symbol, const, exp, get_op, sin, symbols
from exprgraph.graph import as_string, equal_computations, graph_replace

x, y, z, w = symbols("x y z w")
a, b = Symbol("a", "int64"), Symbol("b", "int64")


my_op = variadic("comparison_op")


# -- equal_computations ------------------------------------------------------------------------------------


def test_equal_computations_as_upstream_tests_it():
    with pytest.raises(ValueError, match="as many"):
        equal_computations([a], [a, b])
    assert equal_computations([a], [a])
    assert equal_computations([const(1)], [const(1)])
    assert not equal_computations([b], [a])
    assert not equal_computations([const(1)], [const(2)])
    assert equal_computations([2], [2])
    assert equal_computations([np.r_[2, 1]], [np.r_[2, 1]])
    assert equal_computations([np.r_[2, 1]], [const(np.r_[2, 1])])
    assert equal_computations([const(np.r_[2, 1])], [np.r_[2, 1]])
    assert not equal_computations([2], [a]) and not equal_computations([a], [2])
    assert not equal_computations([np.r_[2, 1]], [a]) and not equal_computations([a], [np.r_[2, 1]])


def test_numbers_and_arrays_compare_by_value_and_shape():
    assert equal_computations([np.array(1.0)], [const(1.0)]) and equal_computations([1], [const(1.0)])
    assert equal_computations([np.array(1.0)], [np.array(1)])
    assert not equal_computations([np.array([1.0])], [np.array(1.0)])  # shapes differ
    assert not equal_computations([np.array([1.0, 2.0])], [np.array([1.0, 3.0])])
    assert equal_computations([np.bool_(True)], [const(True)])
    assert equal_computations([const(float("nan"))], [float("nan")])  # NaN equals NaN here


def test_constants_compare_by_dtype_unless_not_strict():
    assert not equal_computations([x + const(1)], [x + const(1.0)])
    assert equal_computations([x + const(1)], [x + const(1.0)], strict_dtype=False)
    assert not equal_computations([const(np.float32(1.0))], [const(1.0)])
    assert equal_computations([const(np.float32(1.0))], [const(1.0)], strict_dtype=False)
    assert not equal_computations([x], [x + 0.0])


def test_equivalent_inputs():
    assert equal_computations([x + 1.0], [y + 1.0], [x], [y])
    assert not equal_computations([x + 1.0], [y + 1.0])
    assert equal_computations([x + y], [y + x], [x, y], [y, x])
    assert equal_computations([x], [x], [x], [y])  # the same term is equal whatever the pairs say
    assert equal_computations([x + x], [z + w], [x, x], [z, w])  # any pair that fits, as upstream
    assert not equal_computations([x], [Symbol("i", "int64")], [x], [Symbol("i", "int64")])  # types differ
    assert not equal_computations([x], [x], [x], [])  # pairs of different lengths never match
    # an intermediate node may stand for another: interning makes x + y built twice one term
    assert equal_computations([exp(x + y) * 2.0], [exp(z) * 2.0], [x + y], [z])
    assert not equal_computations([sin(x)], [exp(x)]) and not equal_computations([my_op(x)], [my_op(x, x)])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 10**6), min_size=3, max_size=60), st.integers(0, 3))
def test_a_renamed_graph_is_equal_under_the_renaming(choices, which):
    pool = [x, y, z, const(2.0)]
    ops = [get_op("add"), get_op("mul"), get_op("sub"), get_op("sin")]
    for k in range(0, len(choices) - 2, 3):
        op = ops[choices[k] % 4]
        p, q = pool[choices[k + 1] % len(pool)], pool[choices[k + 2] % len(pool)]
        pool.append(op(p) if op.name == "sin" else op(p, q))
    e = pool[-1]
    old = [x, y, z][which % 3]
    renamed = graph_replace(e, {old: w}, strict=False)
    assert equal_computations([e], [renamed], [old], [w])
    assert equal_computations([e], [renamed]) == (old not in e.free_symbols)
    assert not equal_computations([e], [exp(e)])


def test_equal_computations_is_iterative():
    p, q = x, w
    for _ in range(100_000):
        p, q = sin(p) * y, sin(q) * y
    assert equal_computations([p], [q], [x], [w]) and not equal_computations([p], [q])


# -- as_string ---------------------------------------------------------------------------------------------


def _custom(inputs, outputs):
    return as_string(
        inputs, outputs, leaf_formatter=lambda t: f"R{t.name}", node_formatter=lambda n, s: f"My({', '.join(s)})"
    )


def test_as_string_as_upstream_tests_it():
    node = my_op(x, y)
    assert _custom([x, y], [node]) == ["My(Rx, Ry)"]
    assert _custom([x, y, z], [my_op(node, z)]) == ["My(My(Rx, Ry), Rz)"]
    twice = my_op(node, node)
    assert _custom([x, y, z], [twice]) == ["My(*1 -> My(Rx, Ry), *1)"]
    cut = as_string([node], [twice], leaf_formatter=lambda t: "R3", node_formatter=lambda n, s: f"My({', '.join(s)})")
    assert cut == ["My(R3, R3)"]  # a node given as an input is printed as a leaf


def test_as_string_default_format_tags_shared_nodes_across_outputs():
    s = x + y
    e = exp(s * z) + s
    assert as_string([x, y, z], [e]) == ["add(exp(mul(*1 -> add(x, y), z)), *1)"]
    assert as_string([s, z], [e]) == ["add(exp(mul(x + y, z)), x + y)"]  # cut nodes by leaf_formatter (str)
    assert as_string([x, y], [s, s * 2.0]) == ["*1 -> add(x, y)", "mul(*1, 2.0)"]
    assert as_string([x, y], [s * 2.0, s]) == ["mul(*1 -> add(x, y), 2.0)", "*1"]
    assert as_string([], [s]) == ["add(x, y)"]  # leaves are printed whether inputs or not
    assert as_string([x], [x]) == ["x"]
    two = (s * z) * (s * z) + s
    assert as_string([], [two]) == ["add(mul(*1 -> mul(*2 -> add(x, y), z), *1), *2)"]  # numbered as read
    assert as_string([], [two], node_formatter=lambda n, s: f"{n.op.name}({', '.join(s)})") == as_string([], [two])
    total = get_op("sum")(Symbol("v", shape=(3,)), attr=(0,))
    assert as_string([], [total]) == ["sum(v, axis=(0,))"]  # the node's attribute comes last


def test_as_string_is_iterative_at_any_depth():
    t = x
    for _ in range(100_000):
        t = sin(t)
    (text,) = as_string([x], [t])
    assert text.startswith("sin(sin(") and text.endswith("(x" + ")" * 100_000)
    u = x
    for _ in range(3_000):  # a custom formatter builds each text from its operands' texts
        u = sin(u)
    (text,) = as_string([x], [u], node_formatter=lambda n, s: f"s{s[0]}")
    assert text == "s" * 3_000 + "x"
