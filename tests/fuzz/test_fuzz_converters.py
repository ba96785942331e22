"""Fuzzing the converters: hostile input never runs nor crashes, and converted terms compute evaluate's values.

``from_sympy`` gets random text (read by our parser, never by SymPy's ``eval``) and random SymPy
objects, odd ones included (``I``, ``zoo``, ``AccumBounds``, huge integers, imaginary symbols);
``from_pytensor`` gets small graphs over PyTensor's other dtypes (int8, uint64, float16...) with
edge constants; ``to_onnx``, ``to_pytensor``, ``to_jax`` and ``to_sympy`` get random terms of mixed
dtypes, computed at points that include the edge values (0, -0.0, subnormals, +-inf, nan, the
int64 limits, huge floats). Only exprgraph's error classes may escape, and where a conversion
succeeds it computes what ``evaluate`` computes, bit for bit (JAX: wherever no subnormal number
is involved, since XLA flushes them to zero on CPU, as docs/interop.md says).
"""

from __future__ import annotations

import contextlib
import importlib.util
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from fuzz_support import EXPR_TOKENS, EXPRESSIONS, FUZZ, inputs, mutated
from hypothesis import assume, given
from hypothesis import strategies as st

from exprgraph import Symbol, Term, const, evaluate, get_op, parse, postorder
from exprgraph.errors import ConversionError, ExprgraphError, ParseError

X, Y = Symbol("x"), Symbol("y")
N, M = Symbol("n", "int64"), Symbol("m", "int64")
B, F = Symbol("b", "bool"), Symbol("f", "float32")
SYMBOLS = [X, Y, N, M, B, F]

TINY = np.finfo(np.float64).tiny
EDGE_FLOATS = [0.0, -0.0, 5e-324, -1e-310, TINY, 1.0, -1.5, 0.5, 3.0, -7.0, 1e16, 9007199254740993.0]
EDGE_FLOATS += [1.7976931348623157e308, -1e308, 710.0, -745.5, np.inf, -np.inf, np.nan]
EDGE_INTS = [0, 1, -1, 2, -3, 7, 2**31, 2**53 + 1, 2**62, 2**63 - 1, -(2**63), -(2**63) + 1]

#: ops every converter writes (to_sympy: the scalar ones)
ARITH = ["add", "sub", "mul", "truediv", "floordiv", "mod", "neg", "abs", "maximum", "minimum"]
LOGIC = ["lt", "le", "gt", "ge", "eq", "ne", "where", "logical_and", "logical_or", "logical_not"]
#: functions numpy (so evaluate, ONNX's reference evaluator, PyTensor's Python code) computes alike
FUNCTIONS = ["pow", "sqrt", "exp", "log", "sin", "tanh"]
#: ONNX computes these as we do, bit for bit; PyTensor's sigmoid and softplus are its own formulas (an ulp off)
SOFTPLUS = ["sigmoid", "softplus", "log_sigmoid", "logaddexp"]
#: the rounding family (issue 31's new ops): exact in every converter, the edge values included
ROUNDING = ["floor", "ceil", "trunc", "sign", "fmod", "truncdiv"]

FLOAT_VALUES = st.one_of(st.sampled_from(EDGE_FLOATS), st.floats(allow_nan=True, allow_infinity=True))
INT_VALUES = st.one_of(st.sampled_from(EDGE_INTS), st.integers(-(2**63), 2**63 - 1), st.integers(-9, 9))


def _optional(name: str) -> Any:
    """The module, or a skip of this test where it is not installed."""
    if importlib.util.find_spec(name) is None:
        pytest.skip(f"{name} is not installed")
    return importlib.import_module(name)


@st.composite
def constants(draw: st.DrawFn) -> Term:
    kind = draw(st.sampled_from(["float", "int", "bool"]))
    if kind == "float":
        return const(draw(FLOAT_VALUES))
    return const(draw(INT_VALUES)) if kind == "int" else const(draw(st.booleans()))


@st.composite
def terms(draw: st.DrawFn, ops: list[str], depth: int = 3) -> Term:
    """A random scalar term over x, y (float64), n, m (int64), b (bool) and f (float32)."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(SYMBOLS)) if draw(st.booleans()) else draw(constants())
    op = get_op(draw(st.sampled_from(ops)))
    low, high = op.arity
    count = draw(st.integers(low, 3 if high is None else high))
    args = [draw(terms(ops, depth - 1)) for _ in range(count)]
    try:
        return op(*args)
    except ExprgraphError:  # a dtype the op refuses
        return args[0]


@st.composite
def points(draw: st.DrawFn, size: int = 6) -> dict[str, np.ndarray]:
    """Values of every symbol at ``size`` points, edge values often."""
    floats = st.lists(FLOAT_VALUES, min_size=size, max_size=size)
    with np.errstate(over="ignore"):  # a float beyond float32 is inf there
        return {
            "x": np.array(draw(floats)),
            "y": np.array(draw(floats)),
            "f": np.array(draw(floats), dtype=np.float32),
            "n": np.array(draw(st.lists(INT_VALUES, min_size=size, max_size=size)), dtype=np.int64),
            "m": np.array(draw(st.lists(INT_VALUES, min_size=size, max_size=size)), dtype=np.int64),
            "b": np.array(draw(st.lists(st.booleans(), min_size=size, max_size=size))),
        }


def _inputs(t: Term) -> list[Term]:
    return sorted(t.free_symbols, key=lambda s: s.name)


def _ours(t: Term, env: dict[str, np.ndarray]) -> Any:
    """evaluate's value of ``t`` at every point (None where evaluate refuses: an int to a negative power)."""
    names = {s.name for s in t.free_symbols}
    try:
        with np.errstate(all="ignore"):
            return np.broadcast_to(evaluate(t, {k: v for k, v in env.items() if k in names}), (len(env["x"]),))
    except ExprgraphError:
        return None


def _differ(got: Any, want: np.ndarray, where: np.ndarray | None = None) -> np.ndarray:
    """The points where ``got`` is not ``want`` bit for bit (nan equals nan; -0.0 is not 0.0)."""
    got = np.broadcast_to(np.asarray(got), want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    same = got == want
    if want.dtype.kind == "f":
        same = (same & (np.signbit(got) == np.signbit(want))) | (np.isnan(got) & np.isnan(want))
    return ~same if where is None else ~same & where


# -- text and odd objects in --------------------------------------------------------------------------

#: Python that sympify would have run, mixed with the expression tokens
CODE_TOKENS = ["__import__", "('os')", ".system", "('true')", "lambda", ":", "exec", "eval", ";", "'", '"']
CODE_TOKENS += ["__class__", "__subclasses__()", "getattr", "Symbol", "Integer", "I", "oo", "zoo", "^", "!"]


@FUZZ
@given(st.one_of(mutated(EXPRESSIONS, EXPR_TOKENS + CODE_TOKENS), inputs(EXPR_TOKENS + CODE_TOKENS)))
def test_text_is_read_by_our_parser_or_refused(text: str) -> None:
    _optional("sympy")
    from exprgraph.interop import from_sympy

    try:
        want = parse(text)
    except ParseError:
        with pytest.raises(ParseError):
            from_sympy(text)
        return
    assert from_sympy(text) is want


def _sympy_leaves(sp: Any) -> list[Any]:
    x = sp.Symbol("x", real=True)
    return [
        x,
        sp.Symbol("k", integer=True),
        sp.Symbol("w"),
        sp.Symbol("z", imaginary=True),
        sp.Symbol("x y"),
        sp.Integer(2**70),
        sp.Integer(-(2**63)),
        sp.Float("1e500"),
        sp.Float("1e-400"),
        sp.Float(-0.0),
        sp.Rational(1, 3),
        sp.I,
        sp.oo,
        -sp.oo,
        sp.zoo,
        sp.nan,
        sp.E,
        sp.pi,
        sp.EulerGamma,
        sp.AccumBounds(-1, 1),
        sp.true,
        sp.false,
        sp.Integer(0),
        sp.Integer(-8),
    ]


def _tame(sp: Any, expr: Any) -> bool:
    """Whether every finite number in ``expr`` is below 1e6 in magnitude."""
    return all(abs(float(n)) < 1e6 for n in expr.atoms(sp.Number) if n.is_finite)


def _sympy_builders(sp: Any) -> list[Any]:
    f = sp.Function("f")
    return [
        sp.Add,
        sp.Mul,
        # small exponents only: SymPy computes 2**70 to the 2**70 exactly, for ever
        lambda a, b: sp.Pow(a, b if b.is_Number and abs(b) < 64 else 2),
        lambda a, b: sp.Pow(a, sp.Rational(1, 3)),
        lambda a, b: sp.Pow(a, -1, evaluate=False),
        lambda a, b: sp.Pow(a, sp.Rational(-1, 2), evaluate=False),
        # numbers far from 1 only where SymPy stays quick (Mod(1e500, 1/3) computes 10**500 exactly)
        lambda a, b: sp.Mod(a, b) if _tame(sp, a) and _tame(sp, b) else sp.Mod(a, 3),
        lambda a, b: sp.floor(a / b) if _tame(sp, a) and _tame(sp, b) else sp.floor(a),
        lambda a, b: sp.Piecewise((a, sp.Gt(b, 0)), (b, True)),
        lambda a, b: sp.Piecewise((a, sp.Lt(a, b))),
        lambda a, b: sp.Max(a, b),
        lambda a, b: sp.Lt(a, b),
        lambda a, b: sp.And(sp.Gt(a, 0), sp.Lt(b, 1)),
        lambda a, b: sp.Not(sp.Eq(a, b)),
        lambda a, b: sp.sin(a),
        lambda a, b: sp.exp(a),
        lambda a, b: sp.log(a),
        lambda a, b: sp.sqrt(a),
        lambda a, b: sp.Abs(a),
        lambda a, b: sp.cosh(a),
        lambda a, b: f(a),
        lambda a, b: sp.re(a),
        lambda a, b: sp.Derivative(a, sp.Symbol("x", real=True)),
        lambda a, b: sp.Tuple(a, b),
        lambda a, b: sp.Interval(0, 1),
    ]


@st.composite
def sympy_objects(draw: st.DrawFn, sp: Any, depth: int = 3) -> Any:
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        return draw(st.sampled_from(_sympy_leaves(sp)))
    a, b = draw(sympy_objects(sp, depth - 1)), draw(sympy_objects(sp, depth - 1))
    build = draw(st.sampled_from(_sympy_builders(sp)))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SymPy deprecates some of these (a power of a boolean)
            out = build(a, b)
            str(out)  # some unevaluated forms cannot even print (a power of False)
            return out
    except Exception:  # SymPy refuses the combination (Mod by zero, And of numbers...): keep an operand
        return a


@FUZZ
@given(st.data())
def test_odd_sympy_objects_convert_or_raise_conversion_errors(data: st.DataObject) -> None:
    sp = _optional("sympy")
    from exprgraph.interop import from_sympy

    expr = data.draw(sympy_objects(sp))
    try:
        term = from_sympy(expr)
    except ConversionError:
        return
    assert term.__class__ is Term
    if expr.is_Number and expr.is_finite:
        # a number becomes its float64 value (beyond float64's range: inf or 0.0, as float() rounds)
        with np.errstate(all="ignore"):
            assert float(evaluate(term)) == float(expr)


# -- from PyTensor: odd dtypes and constants ---------------------------------------------------------

PYTENSOR_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint32", "uint64"]
PYTENSOR_DTYPES += ["float16", "float32", "float64"]


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """No warnings from numpy's casts of nan, inf or big values to integers (the wrapped values are the point)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def _in_dtype(values: list[Any], dtype: str) -> np.ndarray:
    """``values`` made ``dtype`` as numpy casts them (wrapping or rounding)."""
    with _quiet():
        return np.array([np.array(v).astype(dtype) for v in values], dtype=dtype)


@st.composite
def pytensor_graphs(draw: st.DrawFn, pt: Any, inputs: list[Any], depth: int = 3) -> Any:
    """A small PyTensor graph over ``inputs`` and constants of any dtype, edge values included."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        if draw(st.booleans()):
            return draw(st.sampled_from(inputs))
        dtype = draw(st.sampled_from(PYTENSOR_DTYPES))
        value = draw(st.one_of(st.sampled_from(EDGE_INTS + EDGE_FLOATS + [2**64 - 1, 255, -129])))
        return pt.constant(_in_dtype([value], dtype)[0])
    a, b = draw(pytensor_graphs(pt, inputs, depth - 1)), draw(pytensor_graphs(pt, inputs, depth - 1))
    build = draw(
        st.sampled_from(
            [
                lambda: a + b,
                lambda: a - b,
                lambda: a * b,
                lambda: -a,
                lambda: pt.abs(a),
                lambda: pt.maximum(a, b),
                lambda: pt.lt(a, b),
                lambda: pt.eq(a, b),
                lambda: pt.switch(pt.gt(a, 0), a, b),
                lambda: pt.cast(a, draw(st.sampled_from(PYTENSOR_DTYPES))),
                lambda: pt.exp(a),
                lambda: a / b,
                lambda: a // b,
            ]
        )
    )
    try:
        return build()
    except Exception:  # PyTensor refuses the combination (// on bools, a cast to bool of a float...)
        return a


@FUZZ
@given(st.data())
def test_pytensor_odd_dtypes_convert_exactly_or_raise(data: st.DataObject) -> None:
    pytensor = _optional("pytensor")
    import pytensor.tensor as pt
    from pytensor.graph.fg import FunctionGraph as TheirGraph

    from exprgraph.interop import from_pytensor

    dtypes = data.draw(st.lists(st.sampled_from(PYTENSOR_DTYPES), min_size=2, max_size=2))
    ins = [pt.scalar(name, dtype=d) for name, d in zip(("p", "q"), dtypes, strict=True)]
    out = data.draw(pytensor_graphs(pt, ins))
    if out in ins:
        out = out + 0  # a node, not an input passed through
    try:
        ours = from_pytensor(TheirGraph(ins, [out], clone=False))
    except ConversionError:
        return
    values = [
        _in_dtype(data.draw(st.lists(st.sampled_from(EDGE_INTS + EDGE_FLOATS), min_size=3, max_size=3)), d)
        for d in dtypes
    ]
    mode = pytensor.compile.mode.Mode(linker="py", optimizer=None)
    fn = pytensor.function(ins, out, mode=mode, on_unused_input="ignore")
    env = {s.name: v for s, v in zip(ours.inputs, values, strict=True)}
    with _quiet():
        theirs = np.array([fn(*point) for point in zip(*values, strict=True)])
        want = np.broadcast_to(
            evaluate(
                ours.outputs[0], {k: v for k, v in env.items() if k in {s.name for s in ours.outputs[0].free_symbols}}
            ),
            (3,),
        )
    # their int8, float16... (kept by a selection: max, where) are our int64 and float32, same values
    got = theirs.astype(want.dtype) if theirs.dtype.name not in ("bool", "int64", "float32", "float64") else theirs
    assert not _differ(got, want).any(), (str(ours.outputs[0]), got, want)


# -- terms out -----------------------------------------------------------------------------------------


@FUZZ
@given(terms(ARITH + LOGIC + FUNCTIONS + SOFTPLUS + ROUNDING), points())
def test_to_onnx_computes_our_values(t: Term, env: dict[str, np.ndarray]) -> None:
    onnx = _optional("onnx")
    from onnx.reference import ReferenceEvaluator

    from exprgraph.interop import to_onnx

    want = _ours(t, env)
    model = to_onnx(t, _inputs(t))
    onnx.checker.check_model(model)
    if want is None:
        return
    with np.errstate(all="ignore"):
        (got,) = ReferenceEvaluator(model).run(None, {s.name: env[s.name] for s in _inputs(t)})
    assert not _differ(got, want).any(), (str(t), got, want)


@FUZZ
@given(terms(ARITH + LOGIC + FUNCTIONS + ROUNDING), points())
def test_to_pytensor_computes_our_values_and_reads_back(t: Term, env: dict[str, np.ndarray]) -> None:
    pytensor = _optional("pytensor")
    from exprgraph.graph import FunctionGraph
    from exprgraph.interop import from_pytensor, to_pytensor

    ins = _inputs(t)
    graph = to_pytensor(FunctionGraph(ins, [t]))
    assert from_pytensor(graph.outputs[0]) is t  # the very same term back
    want = _ours(t, env)
    if want is None:
        return
    mode = pytensor.compile.mode.Mode(linker="py", optimizer=None)
    fn = pytensor.function(graph.inputs, graph.outputs[0], mode=mode, on_unused_input="ignore")
    with np.errstate(all="ignore"):
        got = np.array([fn(*point) for point in zip(*(env[s.name] for s in ins), strict=True)])
    if not ins:
        got = np.broadcast_to(fn(), want.shape)
    # PyTensor's float32 transcendental functions round in float32 code of their own (1 ulp)
    loose = t.dtype == "float32" and any(n.op.name in FUNCTIONS for n in postorder(t))
    if loose:
        np.testing.assert_allclose(got, want, rtol=1e-5, equal_nan=True)
    else:
        assert not _differ(got, want).any(), (str(t), got, want)


#: ops XLA rounds exactly as numpy does (its exp, log, sin... and its vectorised float division, so
#: float // and %, differ in the last place: integer // and % are drawn, float ones skipped)
EXACT = ["add", "sub", "mul", "floordiv", "mod", "neg", "abs", "maximum", "minimum", "sqrt"]


@FUZZ
@given(terms(EXACT + LOGIC + ROUNDING), points())
def test_to_jax_computes_our_values_away_from_subnormals(t: Term, env: dict[str, np.ndarray]) -> None:
    jax = _optional("jax")
    from exprgraph.interop import to_jax

    assume(all(n.op.name not in ("floordiv", "mod") or n.dtype == "int64" for n in postorder(t)))
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        got = to_jax(t, _inputs(t))(*(env[s.name] for s in _inputs(t)))
    finally:
        jax.config.update("jax_enable_x64", before)
    want = _ours(t, env)
    if want is None:
        return
    # XLA flushes subnormal operands and results to zero on CPU (results that round up to the smallest
    # normal number too): only points without one are compared
    clean = np.ones(want.shape, dtype=bool)
    nodes = postorder(t)
    with np.errstate(all="ignore"):
        values = evaluate(nodes, {k: v for k, v in env.items() if k in {s.name for s in t.free_symbols}})
    for value in values:
        if value.dtype.kind == "f":
            clean &= ~((value != 0) & (np.abs(value) <= np.finfo(value.dtype).tiny))
    assert not _differ(np.asarray(got), want, clean).any(), (str(t), got, want)


@FUZZ
@given(terms(ARITH + LOGIC + FUNCTIONS + SOFTPLUS + ROUNDING))
def test_to_sympy_and_back_raise_only_conversion_errors(t: Term) -> None:
    _optional("sympy")
    from exprgraph.interop import from_sympy, to_sympy

    try:
        back = from_sympy(to_sympy(t))
    except ExprgraphError:
        # SymPy made a subterm complex (sqrt(-(x % 2)) is I*sqrt(x % 2) to it): refused, named; or a
        # constant subterm has no value (2**-1 in int64): EvaluationError, as evaluate says
        return
    assert back.dtype in ("float64", "int64", "bool")


@FUZZ
@given(terms(["add", "sub", "mul", "floordiv", "mod", "neg", "abs", "maximum", "minimum"], depth=3), points())
def test_integer_terms_through_sympy_keep_their_values(t: Term, env: dict[str, np.ndarray]) -> None:
    _optional("sympy")
    from exprgraph.interop import from_sympy, to_sympy

    if t.dtype != "int64" or any(n.dtype != "int64" or (n.is_const and abs(n.value) > 100) for n in postorder(t)):
        return
    small = {"n": np.arange(-6, 6, dtype=np.int64), "m": np.arange(5, -7, -1, dtype=np.int64), "x": np.zeros(12)}
    back = from_sympy(to_sympy(t))  # SymPy's integers never overflow: values small enough for int64
    # SymPy cancels as it builds (n // n is 1): points where a divisor is 0 (n // 0 is 0 to us) differ
    defined = np.ones(12, dtype=bool)
    for node in postorder(t):
        if node.op.name in ("floordiv", "mod"):
            defined &= _ours(node.args[1], small) != 0
    assert not _differ(_ours(back, small), _ours(t, small), defined).any()
