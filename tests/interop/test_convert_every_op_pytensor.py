"""to_pytensor / from_pytensor on every op of the table: PyTensor computes our values, and the graph read back does too.

PyTensor functions are compiled with the Python linker and no rewrites (fast to build); the graph
is cloned before it is read, so it is read op by op (an untouched graph reads back as the very terms).
"""

from __future__ import annotations

import numpy as np
import pytest
from test_convert_every_op import NO_VALUE, PACKAGE_OPS, assert_values, case, check_table

from exprgraph import Symbol, evaluate, get_op
from exprgraph.errors import ConversionError

pytensor = pytest.importorskip("pytensor")
import pytensor.tensor as pt  # noqa: E402
from pytensor.graph.basic import clone  # noqa: E402

from exprgraph.interop.pytensor import to_pytensor  # noqa: E402
from exprgraph.interop.pytensor_read import from_pytensor  # noqa: E402

#: ops PyTensor has no counterpart for, with the reason (none: every op with a value is written)
NOT_THERE: dict[str, str] = {}
#: ops written with a PyTensor op from_pytensor cannot read op by op, with the reason
NOT_READ_BACK = {
    "logsumexp": "written shifted by PyTensor's Max, a reduction no op of ours computes (an untouched"
    " graph reads back through to_pytensor's record)",
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
        with pytest.raises(ConversionError, match="Max"):
            from_pytensor(cloned)
        return
    back = from_pytensor(cloned)
    assert_values(evaluate(back, values), want, term.dtype)


def test_no_op_is_left_unaccounted():
    assert check_table(NOT_THERE, lambda name: name in ALL) == []


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
        (lambda: X[1:3], "slice"),
        (lambda: X[1], "one element"),
        (lambda: pt.max(X, axis=0), "Max"),
        (lambda: pt.prod(X), "Prod"),
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
