"""to_onnx on every op of the table: the exported model passes onnx.checker and computes our values
(onnx's reference evaluator). ONNX export is one way: there is no reader of ONNX models into terms
(``infer_onnx_shapes`` reads their shapes, not their values)."""

from __future__ import annotations

import numpy as np
import pytest
from test_convert_every_op import EINSUM_SPECS, NO_VALUE, PACKAGE_OPS, TIES, assert_values, case, check_table

from exprgraph import Symbol, Term, const, evaluate, get_op
from exprgraph.core.ops_einsum import einsum
from exprgraph.core.ops_range import arange
from exprgraph.core.ops_sort import topk
from exprgraph.errors import ConversionError

onnx = pytest.importorskip("onnx")
from onnx.reference import ReferenceEvaluator  # noqa: E402

from exprgraph.interop.onnx import to_onnx  # noqa: E402

#: ops ONNX has no counterpart for, with the reason (none: every op with a value is exported)
NOT_THERE: dict[str, str] = {}
#: ONNX operators the issue names that no op of ours computes: there is no term to export them from
NO_TERM = {
    "ConstantOfShape": "array constants are initializers (scatter_add's zeros use it)",
    "Squeeze": "no op removes length-1 axes (take of an int and reshape do, as Gather and Reshape)",
}
ALL = sorted(o.name for o in PACKAGE_OPS if o.name not in NO_VALUE)
#: ops written with an ONNX formula rather than one operator: equal within rounding
LOOSE = {"hypot": 1e-12, "atan2": 1e-12, "log2": 1e-12, "log10": 1e-12}
#: onnx's reference evaluator computes Erf in float32 (a runtime with a float64 Erf: full precision)
ABSOLUTE = {"erf": 1e-7, "erfc": 1e-7}


def _run(model, values: dict) -> object:
    onnx.checker.check_model(model)
    feeds = {i.name: np.asarray(values[i.name]) for i in model.graph.input}
    with np.errstate(all="ignore"):
        return ReferenceEvaluator(model).run(None, feeds)[0]


@pytest.mark.parametrize("name", ALL)
def test_every_op_exports_and_computes_our_values(name):
    term, env = case(name, (6,))
    values = env(1, np.random.default_rng(len(name)))
    want = evaluate(term, values)
    got = _run(to_onnx(term), values)
    assert_values(got, want, term.dtype, rtol=LOOSE.get(name, 1e-12), atol=ABSOLUTE.get(name, 1e-12))


def test_no_op_is_left_unaccounted():
    assert check_table(NOT_THERE, lambda name: name in ALL) == []


def test_an_opaque_dimension_function_is_refused_by_name():
    n = Symbol("n", "int64")
    with pytest.raises(ConversionError, match="dim_fn"):
        to_onnx(Term(get_op("dim_fn"), (n,), "opaque"))


@pytest.mark.parametrize(
    ("y", "x"),
    [(0.0, 0.0), (-0.0, 0.0), (0.0, -0.0), (-0.0, -0.0), (1.0, 0.0), (-1.0, -0.0), (2.0, -3.0), (-2.0, -3.0)],
)
def test_atan2_signs_and_zeros_are_ieees(y, x):
    a, b = Symbol("a"), Symbol("b")
    got = _run(to_onnx(get_op("atan2")(a, b), [a, b]), {"a": np.float64(y), "b": np.float64(x)})
    want = np.arctan2(y, x)
    assert got == pytest.approx(want, rel=1e-15) and np.signbit(got) == np.signbit(want)


def test_a_dimension_of_an_input_is_read_from_its_shape():
    x = Symbol("x", shape=("n",))
    n = x.shape[0]
    mean = get_op("sum")(x) / (n * const(1.0))
    model = to_onnx(mean, [x])
    assert [node.op_type for node in model.graph.node][:2] == ["Shape", "Gather"]
    values = np.arange(5.0)
    assert _run(model, {"x": values}) == pytest.approx(2.0)


@pytest.mark.parametrize("op_type", sorted(NO_TERM))
def test_operators_without_a_term_have_a_reason(op_type):
    assert NO_TERM[op_type]
    assert op_type not in {o.name for o in PACKAGE_OPS}


def test_topk_exports_as_one_topk_giving_both_outputs():
    x = Symbol("x", shape=(3, 5))
    values, index = topk(x, 2, axis=0, largest=False)
    model = to_onnx([values, index], [x])
    assert [node.op_type for node in model.graph.node].count("TopK") == 1
    v = np.array([[1.0, 3, 3, 0, 2], [1, 5, 3, 1, 9], [0, -1, 3, 2, 7]])  # ties: the lower index first
    onnx.checker.check_model(model)
    got = ReferenceEvaluator(model).run(None, {"x": v})
    np.testing.assert_array_equal(got[0], evaluate(values, {"x": v}))
    np.testing.assert_array_equal(got[1], evaluate(index, {"x": v}))


def test_einsum_and_range_of_a_symbolic_length_export():
    a, b, n = Symbol("a", shape=(2, 3, 4)), Symbol("b", shape=(4, 2)), Symbol("n", "int64")
    t = einsum("bij,jb->ib", a, b)
    av, bv = np.random.default_rng(0).uniform(-1, 1, (2, 3, 4)), np.random.default_rng(1).uniform(-1, 1, (4, 2))
    assert_values(_run(to_onnx(t), {"a": av, "b": bv}), evaluate(t, {"a": av, "b": bv}), "float64")
    r = arange(3, n, 2)
    assert_values(_run(to_onnx(r), {"n": np.int64(10)}), np.arange(3, 10, 2), "int64")


@pytest.mark.parametrize(("spec", "shapes"), EINSUM_SPECS)
def test_einsum_specs_export(spec, shapes):
    rng = np.random.default_rng(len(spec))
    ops = [Symbol(f"a{n}", shape=s) for n, s in enumerate(shapes)]
    values = {f"a{n}": rng.uniform(-1, 1, s) for n, s in enumerate(shapes)}
    t = einsum(spec, *ops)
    assert_values(_run(to_onnx(t, ops), values), evaluate(t, values), "float64")


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("axis", [0, 1])
def test_topk_agrees_with_ties(axis, largest):
    x = Symbol("x", shape=TIES.shape)
    values, index = topk(x, 3, axis, largest)
    model = to_onnx([values, index], [x])
    onnx.checker.check_model(model)
    got = ReferenceEvaluator(model).run(None, {"x": TIES})
    assert_values(got[0], evaluate(values, {"x": TIES}), "float64")
    assert_values(got[1], evaluate(index, {"x": TIES}), "int64")
