"""from_pytensor reads argsort and sort as our top-k (k = n, smallest first), and argsort(x)[:k] as a top-k of k."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exprgraph import evaluate
from exprgraph.errors import ConversionError

pytensor = pytest.importorskip("pytensor")
import pytensor.tensor as pt  # noqa: E402
from pytensor.graph.traversal import graph_inputs  # noqa: E402

from exprgraph.interop.pytensor_read import from_pytensor  # noqa: E402

x = pt.tensor("x", shape=(6,), dtype="float64")
m = pt.tensor("m", shape=(3, 4), dtype="float64")
#: PyTensor's Python linker: numpy's sorts, with the kind asked for (the numba linker sorts stable as quicksort)
MODE = pytensor.compile.mode.Mode(linker="py", optimizer=None)
FORMS = {
    "argsort": lambda: pt.argsort(x, kind="stable"),
    "smallest k": lambda: pt.argsort(x, kind="stable")[:2],
    "largest k": lambda: pt.argsort(-x, kind="stable")[:3],
    "values of the smallest": lambda: x[pt.argsort(x, kind="stable")[:2]],
    "sort": lambda: pt.sort(x),
    "sorted tail": lambda: pt.sort(x)[-2:],
    "matrix axis 0": lambda: pt.argsort(m, axis=0, kind="stable"),
    "matrix rows cut": lambda: pt.sort(m, axis=1)[:, :2],
    "flattened": lambda: pt.argsort(m, axis=None, kind="stable"),
}


def _inputs(out):
    return [v for v in (x, m) if v in set(graph_inputs([out]))]


@pytest.mark.parametrize("name", sorted(FORMS))
@settings(max_examples=10, deadline=None)
@given(st.lists(st.integers(-2, 2), min_size=12, max_size=12))  # small ints: ties, kept in stable order
def test_sorts_read_as_topk_give_pytensors_values(name: str, entries: list[int]) -> None:
    out = FORMS[name]()
    values = {"x": np.asarray(entries[:6], dtype=np.float64), "m": np.asarray(entries, dtype=np.float64).reshape(3, 4)}
    ins = _inputs(out)
    want = pytensor.function(ins, out, mode=MODE)(*(values[v.name] for v in ins))
    term = from_pytensor(out)
    np.testing.assert_array_equal(evaluate(term, values), want)


def test_argsort_cut_at_k_is_one_topk_of_k() -> None:
    term = from_pytensor(pt.argsort(-x)[:3])
    assert term.op.name == "topk_indices" and term.shape == (3,)
    values = from_pytensor(x[pt.argsort(x)[:2]])
    assert values.op.name == "take_along" and values.args[1].attr[0] == 2


def test_a_sort_of_unknown_length_is_refused_by_name() -> None:
    v = pt.vector("v")
    with pytest.raises(ConversionError, match=r"ArgSortOp.*unknown length"):
        from_pytensor(pt.argsort(v)[:2])
