"""to_pytensor / from_pytensor: exact round trips, values through PyTensor, the seed's graphs."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from interop_strategies import B, X, Y, Z, float_env, float_terms, int_env, int_terms, seed_examples

from exprgraph import Symbol, dot, evaluate, exp, get_op, sin, transpose, where
from exprgraph import sum as sum_
from exprgraph.errors import ConversionError
from exprgraph.graph import FunctionGraph
from exprgraph.interop import from_pytensor, to_pytensor

pytensor = pytest.importorskip("pytensor")
pt = pytest.importorskip("pytensor.tensor")
ps = pytest.importorskip("pytensor.scalar")


def _run(inputs, outputs, values):
    """Values of PyTensor ``outputs`` by its Python implementations, with no rewrites (what we built)."""
    mode = pytensor.compile.mode.Mode(linker="py", optimizer=None)
    return pytensor.function(inputs, outputs, mode=mode, on_unused_input="ignore")(*values)


def _run_points(inputs, outputs, columns):
    """``_run`` at each point of scalar inputs given as equal-length columns: an array per output."""
    mode = pytensor.compile.mode.Mode(linker="py", optimizer=None)
    fn = pytensor.function(inputs, outputs, mode=mode, on_unused_input="ignore")
    rows = [fn(*point) for point in zip(*columns, strict=True)]
    return [np.array([row[k] for row in rows]) for k in range(len(outputs))]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(float_terms())
def test_random_float_terms_round_trip_exactly(t):
    assert from_pytensor(to_pytensor(t)) is t
    assert from_pytensor(to_pytensor(t, scalar=True)) is t


@settings(max_examples=100, deadline=None)
@given(int_terms())
def test_random_int_terms_round_trip_exactly(t):
    assert from_pytensor(to_pytensor(t)) is t


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(float_terms(depth=3))
def test_pytensor_computes_our_values(t):
    env = float_env(8)
    names = ["x", "y", "z"]
    graph = to_pytensor(FunctionGraph([X, Y, Z], [t]))
    with np.errstate(all="ignore"):
        (got,) = _run_points(graph.inputs, graph.outputs, [env[n] for n in names])
    want = np.broadcast_to(evaluate(t, env), got.shape)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, equal_nan=True)


def test_int_and_bool_values():
    n, m = Symbol("n", "int64"), Symbol("m", "int64")
    outs = [n // 3, n % -4, -n // 2, B + B, where(B, n, m), ~B & (n < m), abs(n - m)]
    graph = to_pytensor(FunctionGraph([n, m, B], outs))
    env = int_env(32)
    flags = np.arange(32) % 3 == 0
    got = _run_points(graph.inputs, graph.outputs, [env["n"], env["m"], flags])
    want = evaluate(outs, {**env, "b": flags})
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, np.broadcast_to(w, g.shape))


def test_tensor_ops_round_trip_and_values():
    A = Symbol("A", shape=(3, "n"))
    v = Symbol("v", shape=("n",))
    w = Symbol("w", shape=(3,))
    outs = [A @ v, dot(A, v), dot(w, A), dot(w, w), sum_(A, axis=1), sum_(A), transpose(A) * 2, exp(A) * v]
    outs.append(transpose(Symbol("T", shape=(2, 3, 4)), axes=(1, 2, 0)))
    for t in outs:
        assert from_pytensor(to_pytensor(t)) is t
    rng = np.random.default_rng(1)
    values = {"A": rng.normal(size=(3, 5)), "v": rng.normal(size=5), "w": rng.normal(size=3)}
    graph = to_pytensor(FunctionGraph([A, v, w], outs[:-1]))
    got = _run(graph.inputs, graph.outputs, [values["A"], values["v"], values["w"]])
    for g, want in zip(got, evaluate(outs[:-1], values), strict=True):
        np.testing.assert_allclose(g, want, rtol=1e-12)


def test_function_graphs_both_ways():
    graph = FunctionGraph([X, Y, Z], [(X * Y + 3) / (Z - 2), sin(X)])
    theirs = to_pytensor(graph)
    assert type(theirs).__name__ == "FunctionGraph"
    assert [v.name for v in theirs.inputs] == ["x", "y", "z"]
    ours = from_pytensor(theirs)
    assert isinstance(ours, FunctionGraph)
    assert ours.inputs == (X, Y, Z)
    assert ours.outputs == graph.outputs
    assert _run(theirs.inputs, theirs.outputs, [2.0, 3.0, 3.0])[0] == 9.0  # the CGraph seed's value


def test_the_seed_graphs():
    # the PyTensor seed's scalar graphs
    x, y, z = ps.float64("x"), ps.float64("y"), ps.float64("z")
    a = ps.add(z, ps.mul(ps.true_div(ps.mul(y, x), y), ps.true_div(z, x)))
    g = pytensor.graph.fg.FunctionGraph([x, y, z], [a])
    (term,) = from_pytensor(g).outputs
    assert str(term) == "z + y*x/y*(z/x)"
    b = ps.true_div(ps.mul(ps.add(y, z), x), ps.add(y, z))
    # PyTensor's two add(y, z) nodes are one term here: merged on construction
    (term,) = from_pytensor(pytensor.graph.fg.FunctionGraph([x, y, z], [b])).outputs
    assert term.args[0].args[0] is term.args[1]
    # the seed's tensor graphs: A.dot(x + y), A.dot(x + (y + B.dot(z + w)))
    A, Bm = pt.matrix("A"), pt.matrix("B")
    xv, yv, zv, wv = (pt.vector(n) for n in "xyzw")
    assert str(from_pytensor(A.dot(xv + yv))) == "dot(A, x + y)"
    assert str(from_pytensor(A.dot(xv + (yv + Bm.dot(zv + wv))))) == "dot(A, x + (y + dot(B, z + w)))"
    for t in seed_examples():
        assert from_pytensor(to_pytensor(t)) is t


def test_pytensor_forms_read_back():
    s = pt.scalar("s")
    v = pt.vector("v")
    # explicit broadcasting, casts and fused Composite ops of a compiled graph
    assert str(from_pytensor(s + v)) == "s + v"
    assert str(from_pytensor(pt.cast(pt.lt(s, 1), "float64") * 2)) == "where(s < 1, 1.0, 0.0)*2"
    compiled = pytensor.function([v], pt.exp(v) * 2 + pt.sin(v)).maker.fgraph
    (term,) = from_pytensor(compiled).outputs
    values = np.linspace(-1, 1, 5)
    np.testing.assert_allclose(evaluate(term, {"v": values}), np.exp(values) * 2 + np.sin(values))
    m = pt.matrix("m")
    assert from_pytensor(m).shape[0].name == "m_dim0"
    assert str(from_pytensor(m.dimshuffle(1, 0))) == "transpose(m)"
    f32 = pt.vector("f", dtype="float32")
    assert from_pytensor(f32).dtype == "float32" and from_pytensor(pt.vector("h", dtype="float16")).dtype == "float32"
    assert str(from_pytensor(pt.log1p(s) + pt.softplus(s))) == "log1p(s) + softplus(s)"
    with pytest.raises(ConversionError, match=r"(?i)gamma"):
        from_pytensor(pt.gamma(s))
    with pytest.raises(ConversionError, match="scalar"):
        to_pytensor(Symbol("A", shape=(2,)) + 1, scalar=True)


def test_names_stay_distinct_and_deep_chains_do_not_recurse():
    a1, a2 = pt.scalar("a"), pt.scalar("a")  # PyTensor allows two inputs of one name
    t = from_pytensor(a1 + a2)
    assert sorted(s.name for s in t.free_symbols) == ["a", "a_1"]
    # PyTensor builds a node in tens of microseconds: 20,000 links are far past any recursion limit
    chain = X
    for _ in range(20_000):
        chain = get_op("add")(chain, 1)
    assert from_pytensor(to_pytensor(chain, scalar=True)) is chain


def test_logsumexp_goes_out_as_pytensors_stable_logsumexp():
    logsumexp = get_op("logsumexp")
    A = Symbol("A", shape=(2, "n"))
    outs = [logsumexp(A), logsumexp(A, axis=1), logsumexp(A * 2, axis=(0, 1)), logsumexp(A, axis=0) + 1]
    graph = to_pytensor(FunctionGraph([A], outs))
    values = np.array([[1000.0, 1000.0, -5.0], [-1e4, 0.5, 2.0]])
    got = _run(graph.inputs, graph.outputs, [values])
    for g, want in zip(got, evaluate(outs, {"A": values}), strict=True):
        np.testing.assert_allclose(g, want, rtol=1e-12)
    assert np.isfinite(got[0]) and got[1][0] == pytest.approx(1000 + np.log(2))


def test_formulas_compute_our_values_for_integers_and_mixed_floats():
    # log_sigmoid negated an int64 (-(-2**63) wraps); logaddexp subtracted int64s and added a float32 log 2
    n, m, f32 = Symbol("n", "int64"), Symbol("m", "int64"), Symbol("f", "float32")
    log_sigmoid, logaddexp = get_op("log_sigmoid"), get_op("logaddexp")
    outs = [log_sigmoid(n), logaddexp(n, m), logaddexp(f32, X), logaddexp(f32, n)]
    columns = [
        np.array([-(2**63), 2**63 - 1, 0, 5]),
        np.array([2**63 - 1, -(2**63), 0, 5]),
        np.array([0.0, -0.0, 1.0, 2.5], dtype=np.float32),
        np.array([0.0, 0.0, 1.0, -3.0]),
    ]
    graph = to_pytensor(FunctionGraph([n, m, f32, X], outs))
    got = _run_points(graph.inputs, graph.outputs, columns)
    want = evaluate(outs, {"n": columns[0], "m": columns[1], "f": columns[2], "x": columns[3]})
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-15)
    assert got[0][0] == -(2.0**63)
    # what to_pytensor wrote reads back as the very terms, formulas included
    assert list(from_pytensor(graph).outputs) == outs


@pytest.mark.parametrize("name", ["fmod", "truncdiv", "ceil_div", "hypot", "atan2"])
def test_equivalents_of_a_bool_beside_a_float32_read_back_and_compute_in_float32(name):
    # fmod(False, sqrt(f)) with f float32 is a float32: its formula once came out a float64 and read back as another
    # term; it must stay float32 in PyTensor and read back as the very term
    b, f = Symbol("b", "bool"), Symbol("f", "float32")
    outs = [get_op(name)(b, f), get_op(name)(f, b)]
    graph = to_pytensor(FunctionGraph([b, f], outs))
    assert [v.type.dtype for v in graph.outputs] == ["float32", "float32"]
    assert list(from_pytensor(graph).outputs) == outs
    columns = [np.array([False, True, True, False]), np.array([2.5, 1 / 3, -0.0, 3.0], dtype=np.float32)]
    with np.errstate(all="ignore"):
        got = _run_points(graph.inputs, graph.outputs, columns)
        want = evaluate(outs, {"b": columns[0], "f": columns[1]})
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=4e-7, equal_nan=True)


def test_compiled_c_code_computes_our_values():
    # PyTensor's C code: n // 0 raises, int64 maximum goes through a double, int64 with float32 is
    # computed in float32, pow(-inf, 0.5) is inf; the graphs we write avoid all four
    n, m, f32 = Symbol("n", "int64"), Symbol("m", "int64"), Symbol("f", "float32")
    maximum = get_op("maximum")
    outs = [n // m, n % m, maximum(n, m), n + f32, n / f32, X**0.5, X**n, n < f32]
    columns = [
        np.array([7, -7, 2**53 + 1, 1000, 2**24 + 1]),
        np.array([0, 0, 2**53, 3, -1]),
        np.array([1.5, 88.8, 1.0, 3e38, 2.0**24], dtype=np.float32),
        np.array([-np.inf, 4.0, -1.0, -0.0, 2.0]),
    ]
    graph = to_pytensor(FunctionGraph([n, m, f32, X], outs))
    mode = pytensor.compile.mode.Mode(linker="cvm", optimizer=None)
    fn = pytensor.function(graph.inputs, graph.outputs, mode=mode)
    got = [np.array(col) for col in zip(*(fn(*point) for point in zip(*columns, strict=True)), strict=True)]
    with np.errstate(all="ignore"):
        want = evaluate(outs, {"n": columns[0], "m": columns[1], "f": columns[2], "x": columns[3]})
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    # documented (docs/interop.md): float // is PyTensor's, whose C code is floor(a / b)
    floor_div = pytensor.function(*_inputs_outputs(X // Y), mode=mode)
    assert [float(floor_div(a, b)) for a, b in ((np.inf, 1.0), (1.0, 0.1))] == [np.inf, 10.0]
    assert [float(evaluate(X // Y, {"x": a, "y": b})) for a, b in ((1.0, 0.1),)] == [9.0]


def test_compiled_integer_division_at_the_int64_limits_does_not_trap():
    # -2**63 // -1 in PyTensor's C code killed the process (SIGFPE): run it in a child process
    code = """
import numpy as np, pytensor
from exprgraph import Symbol, evaluate
from exprgraph.graph import FunctionGraph
from exprgraph.interop import to_pytensor
n, m = Symbol("n", "int64"), Symbol("m", "int64")
outs = [n // m, n % m]
graph = to_pytensor(FunctionGraph([n, m], outs))
fn = pytensor.function(graph.inputs, graph.outputs, mode=pytensor.compile.mode.Mode(linker="cvm", optimizer=None))
edges = [0, 1, -1, 2, -3, 2**63 - 1, -(2**63)]
for a in edges:
    for b in edges:
        with np.errstate(all="ignore"):
            want = [int(v) for v in evaluate(outs, {"n": a, "m": b})]
        assert [int(v) for v in fn(a, b)] == want, (a, b)
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), (done.returncode, done.stderr[-2000:])


def _inputs_outputs(t):
    graph = to_pytensor(FunctionGraph(sorted(t.free_symbols, key=lambda s: s.name), [t]))
    return graph.inputs, graph.outputs[0]


def test_from_pytensor_refuses_what_would_change_values():
    big = pt.constant(np.array(2**64 - 1, dtype=np.uint64))
    with pytest.raises(ConversionError, match="does not fit in int64"):
        from_pytensor(big + pt.scalar("s", dtype="int64"))  # read as -1 before
    with pytest.raises(ConversionError, match="uint64 input"):
        from_pytensor(pt.scalar("u", dtype="uint64") * 2)
    a8, b8 = pt.scalar("a", dtype="uint8"), pt.scalar("b", dtype="uint8")
    for wrapping in (a8 + b8, -pt.scalar("i", dtype="int8"), pt.scalar("h", dtype="float16") * 3):
        with pytest.raises(ConversionError, match="computes in"):
            from_pytensor(wrapping)  # 255 + 1 is 0 in uint8, 256 in our int64
    with pytest.raises(ConversionError, match="gives float32"):
        from_pytensor(pt.scalar("i", dtype="int8") + pt.scalar("f", dtype="float32"))  # numpy: float32
    with pytest.raises(ConversionError, match="changes values"):
        from_pytensor(pt.cast(pt.scalar("w", dtype="int64"), "int8"))
    # exact: narrow inputs widened, arithmetic in int64 (PyTensor upcasts too), selections in any dtype
    w = pt.scalar("w", dtype="int64")
    for graph, point in ((a8 + w, (255, 2**62)), (pt.maximum(a8, b8), (7, 200)), (pt.lt(a8, w), (3, 4))):
        ins = [v for v in (a8, b8, w) if v in pytensor.graph.basic.graph_inputs([graph])]
        term = from_pytensor(graph)
        want = pytensor.function(ins, graph)(*point[: len(ins)])
        env = {v.name: p for v, p in zip(ins, point, strict=False)}
        assert evaluate(term, env) == want


def test_formula_tags_survive_only_untouched_graphs():
    log_sigmoid = get_op("log_sigmoid")
    out = to_pytensor(log_sigmoid(X))
    assert from_pytensor(out) is log_sigmoid(X)  # was -softplus(-x)
    from pytensor.graph.replace import clone_replace

    x_var = out.owner.inputs[0].owner.inputs[0].owner.inputs[0]  # -softplus(-x): the x
    replaced = clone_replace(out, {x_var: pt.scalar("y")})
    term = from_pytensor(replaced)  # a clone: read op by op, in y
    assert term.free_symbols == {Symbol("y")}
    assert float(evaluate(term, {"y": 3.0})) == pytest.approx(float(evaluate(log_sigmoid(X), {"x": 3.0})))
