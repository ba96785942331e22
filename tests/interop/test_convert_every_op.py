"""One term per op of the op table, with values in its domain: the cases every converter's round trip uses.

Each converter's test (``test_convert_every_op_<converter>.py``) enumerates the package's op table:
an op is either converted (its case computes our values on the other side) or listed in that
converter's ``NOT_THERE`` with the reason; a new op in the table fails every converter test until it
is one or the other. This module checks the cases themselves.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from exprgraph import Symbol, Term, const, evaluate, get_op
from exprgraph.core import ops
from exprgraph.errors import ConversionError
from exprgraph.interop.equivalents import equivalent


def _package_ops() -> list:
    """The op table as exprgraph fills it (the suite's other tests register ops of their own as they run)."""
    code = "import exprgraph; from exprgraph.core import ops; print(' '.join(o.name for o in ops()))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    names = set(out.stdout.split())
    return [op for op in ops() if op.name in names]


#: the ops of exprgraph's own table (each converter test walks these)
PACKAGE_OPS = _package_ops()

#: ops with no value of their own: nothing to convert on any side
NO_VALUE = {
    "symbol": "a leaf: every case converts symbols",
    "const": "a leaf: every case converts constants",
    "dim_fn": "an opaque named function of dimensions: it has no value to compute",
    "eclass": "the e-graph's placeholder for an equivalence class, never in a user's term",
}

#: ops taking a tensor (not only elementwise): the scalar converters (SymPy) have none of them
TENSOR_OPS = frozenset(
    {"access", "matmul", "dot", "sum", "logsumexp", "transpose", "amax", "amin", "prod", "mean"}
    | {"slice_axis", "take", "scatter_add", "concat", "reshape", "broadcast_to"}
    | {"einsum", "topk_indices", "take_along", "scatter_along", "arange"}
)

#: elementwise ops on int64 operands (n, m; m is never 0)
INT_OPS = frozenset({"floordiv", "mod", "truncdiv", "fmod", "ceil_div", "broadcast_dim"})
#: ops on bool operands
BOOL_OPS = frozenset({"logical_and", "logical_or", "logical_not"})

#: the domain of each float op's operands (default: uniform on -3..3)
DOMAINS: dict[str, tuple[float, float]] = {
    "log": (0.1, 5.0),
    "log2": (0.1, 5.0),
    "log10": (0.1, 5.0),
    "sqrt": (0.1, 5.0),
    "pow": (0.1, 3.0),
    "asin": (-0.95, 0.95),
    "acos": (-0.95, 0.95),
    "atanh": (-0.95, 0.95),
    "acosh": (1.05, 5.0),
    "log1p": (-0.9, 3.0),
}


def case(name: str, shape: tuple = ()) -> tuple[Term, Callable[[int, np.random.Generator], dict]]:
    """``(term, env)`` for the op ``name``: a term applying it, and a function drawing ``k`` points.

    Elementwise operands are symbols of ``shape`` (``()`` for the scalar converters); the values
    are ``k`` points stacked along a leading axis for scalars (evaluate broadcasts), one array per
    draw otherwise.
    """
    op = get_op(name)
    if name in TENSOR_OPS:
        return _tensor_case(name)
    x, y, z = (Symbol(s, "float64", shape) for s in "xyz")
    n, m = Symbol("n", "int64", shape), Symbol("m", "int64", shape)
    b, c = Symbol("b", "bool", shape), Symbol("c", "bool", shape)
    if name in INT_OPS:
        term = op(n, m)
    elif name in BOOL_OPS:
        term = op(b) if name == "logical_not" else op(b, c)
    elif name == "where":
        term = op(b, x, y)
    elif op.arity[1] is None:
        term = op(x, y, z)
    elif op.arity == (1, 1):
        term = op(x)
    else:
        term = op(x, y)
    low, high = DOMAINS.get(name, (-3.0, 3.0))

    def env(k: int, rng: np.random.Generator) -> dict:
        size = (k, *shape) if not shape else shape
        values = {s: rng.uniform(low, high, size) for s in "xyz"}
        values["n"] = rng.integers(-20, 21, size)
        values["m"] = rng.choice([-7, -3, -2, -1, 1, 2, 3, 5], size)
        if name == "broadcast_dim":
            values["m"] = rng.choice([1, 3], size)
        values["b"], values["c"] = rng.random(size) < 0.5, rng.random(size) < 0.5
        return {key: v for key, v in values.items() if key in {s.name for s in term.free_symbols}}

    return term, env


def _tensor_case(name: str) -> tuple[Term, Callable[[int, np.random.Generator], dict]]:
    a, c = Symbol("a", "float64", (2, 3)), Symbol("c", "float64", (3, 4))
    t, i, j = Symbol("t", "float64", (3, 4)), Symbol("i", "int64"), Symbol("j", "int64")
    op = get_op(name)
    term = {
        "access": lambda: op(t, i, j),
        "matmul": lambda: op(a, c),
        "dot": lambda: op(a, c),
        "sum": lambda: op(c, axis=1),
        "logsumexp": lambda: op(c, axis=0),
        "transpose": lambda: op(a),
        "amax": lambda: op(c, axis=1),
        "amin": lambda: op(a),
        "prod": lambda: op(c, axis=(0, 1)),
        "mean": lambda: op(c, axis=-1),
        "slice_axis": lambda: op(c, spec=(1, 3, 2, -2)),
        "take": lambda: op(c, const(np.array([[2, 0], [-1, 1]])), axis=0),
        "scatter_add": lambda: op(a, const(np.array([1, 1, 3])), spec=(1, 5)),
        "concat": lambda: op(c, t, axis=0),
        "reshape": lambda: op(c, shape=(2, 6)),
        "broadcast_to": lambda: op(a, shape=(2, 2, 3)),
        "einsum": lambda: op(a, c, spec="ij,jk->ik"),
        "topk_indices": lambda: op(c, spec=(2, -1, 1)),
        "take_along": lambda: op(c, get_op("topk_indices")(c, spec=(3, -1, 0)), axis=-1),
        "scatter_along": lambda: op(a, const(np.array([[0, 4, 4], [3, 1, 2]])), spec=(-1, 5)),
        "arange": lambda: op(i, spec=(1, 2)),
    }[name]()

    def env(k: int, rng: np.random.Generator) -> dict:
        values = {"a": rng.uniform(-3, 3, (2, 3)), "c": rng.uniform(-3, 3, (3, 4)), "t": rng.uniform(-3, 3, (3, 4))}
        values["i"], values["j"] = np.int64(rng.integers(0, 3)), np.int64(rng.integers(0, 4))
        if name == "arange":
            values["i"] = np.int64(rng.integers(2, 9))
        return {key: v for key, v in values.items() if key in {s.name for s in term.free_symbols}}

    return term, env


#: einsum specs the converters' tests run (a contraction, a batch, a permuted output, an index summed
#: in one operand alone, a scalar result, three operands) with the operands' shapes
EINSUM_SPECS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("bij,bjk->bki", [(2, 3, 4), (2, 4, 5)]),
    ("ijk->kj", [(2, 3, 4)]),
    ("ij,k->ik", [(2, 3), (4,)]),
    ("i,i->", [(5,), (5,)]),
    ("ij,jk,kl->li", [(2, 3), (3, 4), (4, 2)]),
]
#: values with ties (equal entries), for the converters' top-k tests
TIES = np.array([[1.0, 3, 3, 0, 2], [1, 5, 3, 1, 9], [0, -1, 3, 2, 7], [1, 5, 3, 0, 9]])


def assert_values(got: object, want: object, dtype: str, rtol: float = 1e-9, atol: float = 1e-12) -> None:
    """Floats equal within ``rtol`` (nan where ours is nan); ints and bools exactly."""
    got_a, want_a = np.asarray(got), np.asarray(want)
    if dtype in ("int64", "bool"):
        np.testing.assert_array_equal(got_a.astype(want_a.dtype), want_a)
    else:
        np.testing.assert_allclose(got_a, want_a, rtol=rtol, atol=atol, equal_nan=True)


def check_table(not_there: dict[str, str], converted: Callable[[str], bool]) -> list[str]:
    """The ops of the table that are neither converted nor listed as not on the other side (with a reason);
    a listed name that is no op of the table is reported too (a stale exclusion)."""
    names = {op.name for op in PACKAGE_OPS}
    missing = [f"{name} (listed, but no op)" for name in not_there if name not in names]
    for op in PACKAGE_OPS:
        if op.name in NO_VALUE:
            continue
        if op.name in not_there:
            assert not_there[op.name], f"{op.name} is excluded without a reason"
        elif not converted(op.name):
            missing.append(op.name)
    return missing


@pytest.mark.parametrize("name", sorted(o.name for o in PACKAGE_OPS if o.name not in NO_VALUE))
def test_every_case_evaluates_in_its_domain(name):
    term, env = case(name)
    values = evaluate(term, env(8, np.random.default_rng(0)))
    if term.dtype == "float64":
        assert np.all(np.isfinite(values)), f"{name}: the case's domain gives non-finite values"


def test_every_op_has_a_case_or_no_value():
    for op in PACKAGE_OPS:
        if op.name not in NO_VALUE:
            assert isinstance(case(op.name)[0], Term)


def test_a_vector_case_is_elementwise():
    term, env = case("atan2", (5,))
    values = env(1, np.random.default_rng(1))
    np.testing.assert_allclose(evaluate(term, values), np.arctan2(values["x"], values["y"]))
    assert const(1).dtype == "int64"


INT64_VALUES = st.one_of(st.integers(-(2**63), 2**63 - 1), st.integers(-9, 9), st.sampled_from([-(2**63), 2**63 - 1]))
FLOAT_VALUES = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, -0.0, 1.0, -2.5]))


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["fmod", "truncdiv", "ceil_div", "broadcast_dim"]), INT64_VALUES, INT64_VALUES)
@example("fmod", 1, -(2**63))
@example("fmod", -(2**63), 3)
@example("truncdiv", -(2**63), -1)
def test_integer_equivalents_are_exact(name, a, b):
    n, m = Symbol("n", "int64"), Symbol("m", "int64")
    node = get_op(name)(n, m)
    env = {"n": np.int64(a), "m": np.int64(b)}
    with np.errstate(all="ignore"):
        assert evaluate(equivalent(node), env) == evaluate(node, env)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["fmod", "truncdiv", "trunc", "atan2", "hypot"]), FLOAT_VALUES, FLOAT_VALUES)
@example("atan2", -np.inf, np.inf)
@example("hypot", np.nan, -np.inf)
def test_float_equivalents_agree(name, a, b):
    x, y = Symbol("x"), Symbol("y")
    node = get_op(name)(x) if name == "trunc" else get_op(name)(x, y)
    env = {"x": np.float64(a), "y": np.float64(b)}
    with np.errstate(all="ignore"):
        got, want = evaluate(equivalent(node), env), evaluate(node, env)
    np.testing.assert_allclose(got, want, rtol=1e-14 if name != "hypot" else 1e-15 * 4, equal_nan=True)
    if name in ("fmod", "trunc", "truncdiv") and want == 0:
        assert np.signbit(got) == np.signbit(want)


DTYPES = ("bool", "int64", "float32", "float64")
UNARY = ("log2", "log10", "identity", "trunc")
BINARY = ("fmod", "truncdiv", "ceil_div", "broadcast_dim", "hypot", "atan2")


@pytest.mark.parametrize("name", UNARY + BINARY)
@pytest.mark.parametrize("a", DTYPES)
@pytest.mark.parametrize("b", DTYPES)
def test_an_equivalent_has_the_dtype_of_its_node(name, a, b):
    # fmod of a bool and a float32 is a float32: its equivalent must not widen it (a converter reads it back by dtype)
    args = (Symbol("x", a),) if name in UNARY else (Symbol("x", a), Symbol("y", b))
    if name in UNARY and b != "bool":
        return
    try:
        node = get_op(name)(*args)
    except (TypeError, ValueError):
        return  # the op refuses these dtypes
    assert equivalent(node).dtype == node.dtype


def _value(dtype: str, draw_int: int, draw_float: float):
    if dtype == "bool":
        return np.bool_(draw_int % 2)
    if dtype == "int64":
        return np.int64(draw_int)
    with np.errstate(over="ignore"):
        return np.dtype(dtype).type(draw_float)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["fmod", "truncdiv", "ceil_div", "hypot", "atan2"]),
    st.sampled_from(DTYPES),
    st.sampled_from(DTYPES),
    INT64_VALUES,
    INT64_VALUES,
    FLOAT_VALUES,
    FLOAT_VALUES,
)
@example("fmod", "bool", "float32", 0, 0, 0.0, 2.0)
@example("ceil_div", "int64", "float64", -(2**63), 0, 0.0, 2.0)
def test_mixed_dtype_equivalents_agree(name, da, db, ia, ib, fa, fb):
    # a bool or int64 operand beside a float: the node computes in the float dtype, and so does its equivalent
    node = get_op(name)(Symbol("x", da), Symbol("y", db))
    env = {"x": _value(da, ia, fa), "y": _value(db, ib, fb)}
    with np.errstate(all="ignore"):
        got, want = evaluate(equivalent(node), env), evaluate(node, env)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    exact = name in ("fmod", "truncdiv", "ceil_div") or not np.issubdtype(np.asarray(want).dtype, np.floating)
    rtol = 0 if exact else (4e-15 if np.asarray(want).dtype == np.float64 else 4e-6)
    np.testing.assert_allclose(got, want, rtol=rtol, equal_nan=True)


@pytest.mark.parametrize(
    ("module", "function"),
    [("sympy", "to_sympy"), ("pytensor", "to_pytensor"), ("jax", "to_jax"), ("onnx", "to_onnx")],
)
def test_an_op_without_a_value_is_refused_by_name(module, function):
    pytest.importorskip(module)
    convert = getattr(importlib.import_module(f"exprgraph.interop.{module}"), function)
    opaque = Term(get_op("dim_fn"), (Symbol("n", "int64"),), "opaque")
    with pytest.raises(ConversionError, match="dim_fn"):
        convert(opaque + 1)
