"""exprgraph.interop.dask.evaluate: lazy, one task per block for all outputs, on threads and on a cluster."""

from __future__ import annotations

import numpy as np
import pytest

from exprgraph import Symbol, cos, evaluate, exp, sin, symbols
from exprgraph import sum as sum_
from exprgraph.errors import EvaluationError, MissingValueError
from exprgraph.interop import dask as eg_dask

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

x, y = symbols("x y")
A = Symbol("A", shape=(2, 2))
OUTPUTS = [sin(x) * y + 1, x * y + sum_(A), cos(x) + exp(-(y**2))]


def _inputs():
    rng = np.random.default_rng(0)
    xs = rng.uniform(-2, 2, size=(40, 30))
    ys = rng.uniform(-1, 1, size=30)  # broadcast against x along the last axis
    return xs, ys, {"x": da.from_array(xs, chunks=(10, 15)), "y": da.from_array(ys, chunks=10), "A": np.eye(2)}


def test_lazy_blockwise_with_one_task_per_block(monkeypatch):
    calls = []
    real = eg_dask.evaluate_block

    def counting(*args):
        calls.append(np.shape(args[4]))
        return real(*args)

    monkeypatch.setattr(eg_dask, "evaluate_block", counting)
    xs, ys, env = _inputs()
    results = eg_dask.evaluate(OUTPUTS, env)
    assert not calls  # nothing computed yet
    assert [r.shape for r in results] == [(40, 30)] * 3
    assert results[0].chunks == ((10, 10, 10, 10), (10, 5, 5, 10))  # x's and y's chunks, unified
    got = dask.compute(*results, scheduler="threads")
    blocks = 4 * 4
    assert len(calls) == blocks  # one call per block for all three outputs
    want = evaluate(OUTPUTS, {"x": xs, "y": ys, "A": np.eye(2)})
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, np.broadcast_to(w, g.shape), rtol=1e-15)


def test_one_output_numbers_and_errors():
    xs, _, env = _inputs()
    single = eg_dask.evaluate(sin(x) * 2.5, {"x": env["x"]})
    np.testing.assert_allclose(single.compute(scheduler="threads"), np.sin(xs) * 2.5)
    assert float(eg_dask.evaluate(x * y, {"x": 3.0, "y": 2.0}).compute()) == 6.0
    constant_part = eg_dask.evaluate([x + 1, sum_(A) * 1.0], env)
    np.testing.assert_allclose(constant_part[1].compute(), np.full((40, 30), 2.0))
    assert constant_part[0].dtype == np.float64
    with pytest.raises(MissingValueError, match="no value for the symbol 'y'") as missing:
        eg_dask.evaluate(x + y, {"x": env["x"]})
    assert isinstance(missing.value, KeyError)  # a KeyError too, as the numpy evaluator raises
    with pytest.raises(EvaluationError, match="scalar terms"):
        eg_dask.evaluate(A * x, env)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_on_a_local_cluster_of_two_worker_processes():
    distributed = pytest.importorskip("distributed")
    xs, ys, env = _inputs()
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        results = eg_dask.evaluate(OUTPUTS, env)
        got = client.compute(results, sync=True)
        workers = client.run(lambda: __import__("os").getpid())
    assert len(set(workers.values())) == 2
    want = evaluate(OUTPUTS, {"x": xs, "y": ys, "A": np.eye(2)})
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, np.broadcast_to(w, g.shape), rtol=1e-15)
