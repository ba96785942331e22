"""to_pytensor / from_pytensor on every op of the table: PyTensor computes our values, and the graph read back does too.

PyTensor functions are compiled with the Python linker and no rewrites (fast to build); the graph
is cloned before it is read, so it is read op by op (an untouched graph reads back as the very terms).
"""

from __future__ import annotations

import numpy as np
import pytest
from test_convert_every_op import EINSUM_SPECS, NO_VALUE, PACKAGE_OPS, TIES, assert_values, case, check_table

from exprgraph import Symbol, evaluate, get_op
from exprgraph.core.ops_einsum import einsum
from exprgraph.core.ops_sort import topk
from exprgraph.errors import ConversionError

pytensor = pytest.importorskip("pytensor")
import pytensor.tensor as pt  # noqa: E402
from pytensor.graph.basic import clone  # noqa: E402

from exprgraph.interop.pytensor import to_pytensor  # noqa: E402
from exprgraph.interop.pytensor_read import from_pytensor  # noqa: E402

#: ops PyTensor has no counterpart for, with the reason (none: every op with a value is written)
NOT_THERE: dict[str, str] = {}
#: ops written with a PyTensor op from_pytensor cannot read op by op, with the reason
NOT_READ_BACK: dict[str, str] = {
    "take_along": "take_along_axis indexes with index grids computed from the inputs",
    "scatter_along": "inc_subtensor at index grids computed from the inputs",
}
#: the PyTensor op each refusal of NOT_READ_BACK names
REFUSED_AS = {"take_along": "ArgSort|Subtensor", "scatter_along": "IncSubtensor|ARange"}
#: the vector ops written by hand in PyTensor (as its users would): read by from_pytensor, each gives our case's values
PYTENSOR_FORMS = {
    "amax": lambda v: pt.max(v["c"], axis=1),
    "amin": lambda v: pt.min(v["a"]),
    "prod": lambda v: pt.prod(v["c"], axis=(0, 1)),
    "mean": lambda v: pt.mean(v["c"], axis=-1),
    "slice_axis": lambda v: v["c"][:, 3:0:-2],
    "take": lambda v: v["c"][np.array([[2, 0], [-1, 1]])],
    "concat": lambda v: pt.concatenate([v["c"], v["t"]], axis=0),
    "reshape": lambda v: v["c"].reshape((2, 6)),
    "scatter_add": lambda v: pt.inc_subtensor(pt.zeros((2, 5))[:, np.array([1, 1, 3])], v["a"]),
    "broadcast_to": lambda v: pt.broadcast_to(v["a"], (2, 2, 3)),
}
ALL = sorted(o.name for o in PACKAGE_OPS if o.name not in NO_VALUE)
MODE = pytensor.compile.mode.Mode(linker="py", optimizer=None)


def _run(inputs, outputs, values):
    fn = pytensor.function(inputs, outputs, mode=MODE, on_unused_input="ignore")
    return fn(*values)


@pytest.mark.parametrize("name", ALL)
def test_every_op_converts_both_ways(name):
    term, env = case(name, (6,))
    values = env(1, np.random.default_rng(len(name)))
    want = evaluate(term, values)
    symbols = sorted(term.free_symbols, key=lambda s: s.name)
    out, *ins = to_pytensor([term, *symbols])
    point = [values[s.name] for s in symbols]
    with np.errstate(all="ignore"):
        assert_values(_run(ins, out, point), want, term.dtype)
    _, (cloned,) = clone(ins, [out])
    if name in NOT_READ_BACK:
        assert from_pytensor(out) is term
        with pytest.raises(ConversionError, match=REFUSED_AS.get(name, "Max")):
            from_pytensor(cloned)
        return
    back = from_pytensor(cloned)
    assert_values(evaluate(back, values), want, term.dtype)


def test_no_op_is_left_unaccounted():
    assert check_table(NOT_THERE, lambda name: name in ALL) == []


@pytest.mark.parametrize("name", sorted(PYTENSOR_FORMS))
def test_vector_ops_written_in_pytensor_read_back(name):
    term, env = case(name)
    build = PYTENSOR_FORMS[name]
    values = env(1, np.random.default_rng(len(name)))
    variables = {s.name: pt.tensor(s.name, dtype="float64", shape=s.shape) for s in term.free_symbols}
    back = from_pytensor(build(variables))
    assert_values(evaluate(back, values), evaluate(term, values), term.dtype)


X = pt.tensor("x", dtype="float64", shape=(3, 4))
V = pt.tensor("v", dtype="float64", shape=(None, 4))
POINT = np.random.default_rng(3).uniform(-2, 2, (3, 4))


@pytest.mark.parametrize(
    "build",
    [
        lambda: pt.mean(X, axis=1),
        lambda: pt.mean(X),
        lambda: pt.mean(V, axis=0),
        lambda: pt.special.softmax(X, axis=-1),
        lambda: pt.special.softmax(X, axis=0),
        lambda: pt.special.log_softmax(X, axis=1),
        lambda: pt.clip(X, -0.5, 0.75),
        lambda: pt.erf(X) + pt.erfc(X),
        lambda: pt.sum(X, axis=(0, 1)) + pt.sum(X[1, 2]),
        lambda: X[-1, 0] * pt.arctan2(X, 2.0),
        lambda: X[1:3] + X[::-2, ::-1],
        lambda: X[1] * X[:, 2][:, None],
        lambda: X[[2, 0, 2]] + X[:, [3, 0]].sum(),
        lambda: pt.max(X, axis=0) + pt.min(X, axis=1).sum() + pt.prod(X),
        lambda: pt.concatenate([X, X[:1] * 2.0], axis=0).reshape((4, 4)),
        lambda: pt.stack([X[0], X[2]]).flatten(),
        lambda: pt.inc_subtensor(X[[0, 2, 0]], X * 2.0) + pt.inc_subtensor(X[:, 1:3], 1.0),
        lambda: pt.inc_subtensor(X[:, -1], X[0, :3]) * pt.broadcast_to(X[0], (2, 3, 4)),
    ],
)
def test_pytensor_graphs_read_into_terms(build):
    out = build()
    t = from_pytensor(out)
    ins = [v for v in (X, V) if v in pytensor.graph.basic.graph_inputs([out])]
    got = evaluate(t, {v.name: POINT for v in ins})
    np.testing.assert_allclose(got, _run(ins, out, [POINT] * len(ins)), rtol=1e-12)


@pytest.mark.parametrize(
    ("build", "named"),
    [
        (lambda: X[pt.iscalar("i") :], "slices at a computed position"),
        (lambda: X[1, pt.lscalar("j")], "computed position"),
        (lambda: X[7], "index 7 is out of range for axis 0"),
        (lambda: pt.set_subtensor(X[[0, 1]], 1.0), "sets entries"),
        (lambda: pt.inc_subtensor(X[1:, [0, 1]], 1.0), "one axis only"),
        (lambda: pt.cumsum(X, axis=0), "Cumsum"),
    ],
)
def test_unsupported_pytensor_ops_raise_naming_them(build, named):
    with pytest.raises(ConversionError, match=named):
        from_pytensor(build())


def test_element_access_writes_as_subtensor():
    t = Symbol("t", shape=(3, 4))
    i, j = Symbol("i", "int64"), Symbol("j", "int64")
    out, *ins = to_pytensor([get_op("access")(t, i, j) * 2.0, t, i, j])
    assert _run(ins, out, [POINT, -1, 2]) == POINT[-1, 2] * 2.0


@pytest.mark.parametrize(("spec", "shapes"), EINSUM_SPECS)
def test_einsum_converts_both_ways(spec, shapes):
    rng = np.random.default_rng(len(spec))
    ops = [Symbol(f"a{n}", shape=s) for n, s in enumerate(shapes)]
    values = [rng.uniform(-1, 1, s) for s in shapes]
    t = einsum(spec, *ops)
    want = evaluate(t, dict(zip(ops, values, strict=True)))
    out, *ins = to_pytensor([t, *ops])
    assert_values(_run(ins, out, values), want, "float64")
    _, (cloned,) = clone(ins, [out])
    assert from_pytensor(cloned) is t  # PyTensor's Einsum reads back as the very term


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("axis", [0, 1])
def test_topk_agrees_with_ties(axis, largest):
    x = Symbol("x", shape=TIES.shape)
    values, index = topk(x, 3, axis, largest)
    out_v, out_i, ins = to_pytensor([values, index, x])
    got = _run([ins], [out_v, out_i], [TIES])
    assert_values(got[0], evaluate(values, {"x": TIES}), "float64")
    assert_values(got[1], evaluate(index, {"x": TIES}), "int64")
