"""Fuzzing compile: every backend computes what evaluate computes, on random mixed-dtype DAGs at edge points.

Terms are drawn from a pool (so later terms share earlier ones: a DAG) over float64, float32, int64
and bool inputs and constants, of every op the C renderer knows (arithmetic, comparisons and logic,
where, floor division and remainders, min/max, abs, powers with integer exponents, rounding, the
transcendental functions). Points mix the edge values (both zeros, +-inf, nan, subnormals, huge
values, the int64 limits) with random ones. The contracts checked, backend by backend:

- ``numpy``: the same ufuncs as evaluate, so the same bits;
- ``vm``, ``llvm``, ``c``: the same bits for outputs made of exactly rounded ops only (IEEE arithmetic,
  sqrt, comparisons, selections, integer ops); where a libm function is involved, the C backend may
  call glibc's vector variants (at most 4 ulp, see :mod:`exprgraph.compile.crender`) and numpy its own
  SIMD versions (and the vm's lanes may differ from its one-point road), so those outputs agree to a
  tolerance scaled by the intermediates' magnitudes (``assert_close_conditioned``: 1e-9 relative,
  1e-4 with float32 math), except where the inputs moving by 2**-40 move the value as far (``sin`` of a
  huge argument), and are not compared at all where such a value reaches a jump (a comparison, a
  floor, a remainder), where one ulp moves a step; the same contract between any two roads below;
- every backend: the dtype and shape of evaluate's result; an integer power with a negative exponent
  is an error wherever evaluate raises one;
- ``packed=True`` gives the positional call's values, as float64 rows (bools given as any double of
  their truth, ints with fractions), whole and a row at a time; a point at a time gives the
  vectorised call's values; loops over repeated structure (families ``body(x_i, x_j, c_i)`` of at
  least THRESHOLD members, and ``loops=2`` on random programs) give the straight-line code's values;
  a pickled function and a second build (the cache) compute the same bits; vector symbols too;
- bad calls (argument counts, shapes, dtypes, unreadable rows, C words as names) end in a named error
  or evaluate's values.

C builds take hundreds of milliseconds, so each C example batches many random terms as the outputs
of one function; numpy, the vm and llvm carry the volume. ``$EXPRGRAPH_FUZZ_EXAMPLES`` scales all.
"""

from __future__ import annotations

import math
import pickle
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from eg_strategies import assert_close_conditioned
from fuzz_support import EXAMPLES, FUZZ
from hypothesis import given, settings
from hypothesis import strategies as st
from test_simplify import _conditioning

import exprgraph as eg
from exprgraph import Term, get_op, postorder
from exprgraph.compile import cbuild, vm
from exprgraph.compile import compile as eg_compile
from exprgraph.compile.llvm_backend import llvm_available
from exprgraph.compile.structure import THRESHOLD
from exprgraph.errors import EvaluationError, ExprgraphError

HAVE_CC = any(cbuild.shutil.which(c) for c in ("cc", "gcc", "clang"))
needs_cc = pytest.mark.skipif(not HAVE_CC, reason="no C compiler")
#: the backends run for volume (no compiler process): numpy, the vm (when built) and llvm (with llvmlite)
CHEAP = ["numpy", *(["vm"] if vm._native is not None else []), *(["llvm"] if llvm_available() else [])]
#: C examples: each is a build or two (a few hundred ms each), so a twentieth of the others'
C_EXAMPLES = max(2, EXAMPLES // 20)
#: examples of programs with loops: each builds four functions of up to a hundred outputs
LOOP_EXAMPLES = max(4, EXAMPLES // 5)

XS = [eg.Symbol(f"x{i}") for i in range(3)]
FS = [eg.Symbol(f"f{i}", "float32") for i in range(2)]
NS = [eg.Symbol(f"n{i}", "int64") for i in range(2)]
BS = [eg.Symbol(f"b{i}", "bool") for i in range(2)]
INPUTS = [*XS, *FS, *NS, *BS]
#: the vm has no float32 registers (it refuses them with VMUnsupportedError, tested in tests/compile)
NO_FLOAT32 = [*XS, *NS, *BS]


@pytest.fixture(autouse=True, scope="module")
def private_cache(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """C libraries built here go to a cache of this module's own (nobody else's builds are touched)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EXPRGRAPH_CACHE", str(tmp_path_factory.mktemp("fuzz-compile-cache")))
        yield


def inputs_for(backend: str) -> list[Term]:
    """The inputs a backend's programs read: all of them, but float32 for the vm."""
    return NO_FLOAT32 if backend == "vm" else INPUTS


I64 = np.iinfo(np.int64)
#: edge values of floats: both zeros, +-inf, nan, subnormals, the smallest normal, huge, small integers
FLOAT_EDGES = [0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324, -2.5e-310, 2.2250738585072014e-308]
FLOAT_EDGES += [1.7976931348623157e308, -1e300, 1e-300, 1.0, -1.0, 0.5, 3.0, -7.0, 2.0**53 + 2, 1e19]
#: edge values of int64: the limits, zero, +-1, and values whose squares and sums wrap
INT_EDGES = [0, 1, -1, 2, -2, 3, -7, 7, int(I64.max), int(I64.min), 2**62, -(2**62), 2**32 + 1, 2**53 + 1]
FLOAT_CONSTS = [0.0, -0.0, 0.5, -2.0, 3.0, math.inf, math.nan, 1e308, 5e-324, -1.5]
INT_CONSTS = [0, 1, -1, 2, -3, 7, int(I64.max), int(I64.min)]

#: ops whose result is the exactly rounded value in every backend (IEEE arithmetic, selections, integers)
EXACT = {
    "add", "sub", "mul", "truediv", "floordiv", "mod", "truncdiv", "fmod", "neg", "abs", "sqrt", "identity",
    "lt", "le", "gt", "ge", "eq", "ne", "logical_and", "logical_or", "logical_not", "maximum", "minimum",
    "where", "floor", "ceil", "trunc", "sign", "ceil_div",
    "access", "slice_axis", "concat", "reshape", "broadcast_to", "take", "transpose", "amax", "amin",
}  # fmt: skip
#: ops (or operands) where a last-bit difference moves the value by a step
JUMPS = {"floordiv", "mod", "truncdiv", "fmod", "floor", "ceil", "trunc", "sign", "ceil_div", "lt", "le", "gt", "ge"}
JUMPS |= {"eq", "ne", "logical_and", "logical_or", "logical_not"}
UNARY = ["neg", "abs", "sqrt", "floor", "ceil", "trunc", "sign", "logical_not", "exp", "log", "sin", "cos", "tan"]
UNARY += ["tanh", "sigmoid", "log1p", "expm1", "erf", "atan", "sinh", "asinh", "log2", "softplus", "log_sigmoid"]
BINARY = ["add", "sub", "mul", "truediv", "floordiv", "mod", "truncdiv", "fmod", "maximum", "minimum", "ceil_div"]
BINARY += ["lt", "le", "gt", "ge", "eq", "ne", "logical_and", "logical_or", "atan2", "hypot", "logaddexp"]
VARIADIC = ["add", "mul", "maximum", "minimum"]


def _libm(node: Term) -> bool:
    """Whether ``node`` calls a libm function (a float power, a float sum in some order): its bits may differ
    between backends. Integer and bool steps are exact."""
    return bool(node.args) and node.op.name not in EXACT and node.dtype in ("float64", "float32")


def _trust(t: Term) -> str:
    """How ``t``'s values compare across backends: "exact" (bit for bit), "close" (libm tolerance) or "loose".

    "loose": a libm value reaches a jump (a comparison, a floor, a remainder, a where's condition), so a
    last-bit difference may move the result by a step; only the dtype and shape are compared.
    """
    tainted: set[Term] = set()
    for node in postorder(t):
        args = node.args
        if node.op.name == "where" and args[0] in tainted:
            return "loose"
        if any(a in tainted for a in args) and node.op.name in JUMPS:
            return "loose"
        if _libm(node) or any(a in tainted for a in args):
            tainted.add(node)
    return "close" if t in tainted else "exact"


def _make(name: str, args: list[Term]) -> Term | None:
    """The op ``name`` of ``args``, or None when its dtype rule refuses them (sqrt of a bool...)."""
    try:
        return get_op(name)(*args)
    except (TypeError, ValueError, ExprgraphError):
        return None


@st.composite
def programs(draw: st.DrawFn, inputs: list[Term] = INPUTS, most: int = 16) -> list[Term]:
    """Outputs built from a pool of inputs, constants and earlier terms (so they share subterms)."""
    pool: list[Term] = list(inputs)
    pool.append(eg.const(draw(st.sampled_from(FLOAT_CONSTS))))
    pool.append(eg.const(draw(st.sampled_from(INT_CONSTS))))
    if any(s.dtype == "float32" for s in inputs):
        pool.append(eg.const(draw(st.sampled_from([0.5, -2.0, 3.0])), "float32"))
    pool.append(eg.const(draw(st.booleans())))
    start = len(pool)
    for _ in range(draw(st.integers(1, most))):
        pick = st.sampled_from(pool)
        kind = draw(st.sampled_from(["unary", "binary", "binary", "binary", "fold", "where", "pow"]))
        if kind == "unary":
            t = _make(draw(st.sampled_from(UNARY)), [draw(pick)])
        elif kind == "binary":
            t = _make(draw(st.sampled_from(BINARY)), [draw(pick), draw(pick)])
        elif kind == "fold":
            # short folds, and long ones (cut into chained folds of FOLD_WIDTH operands, mixed dtypes in order)
            width = draw(st.sampled_from([3, 4, 5, 9, 13]))
            t = _make(draw(st.sampled_from(VARIADIC)), [draw(pick) for _ in range(width)])
        elif kind == "where":
            t = _make("where", [draw(pick), draw(pick), draw(pick)])
        else:  # integer exponents: constants (negative ones too) or an int64 term
            k = draw(st.one_of(st.sampled_from([0, 1, 2, 3, 5, -1, -2, 63, 64]).map(eg.const), st.sampled_from(NS)))
            t = _make("pow", [draw(pick), k])
        if t is not None:
            pool.append(t)
    computed = pool[start:] or [XS[0] + 1.0]
    outs = computed[-draw(st.integers(1, len(computed))) :]
    known = draw(st.lists(st.sampled_from(pool[:start]), max_size=3))  # inputs and constants as outputs too
    return draw(st.permutations(outs + known))


@st.composite
def points(draw: st.DrawFn, inputs: list[Term] = INPUTS) -> list[np.ndarray]:
    """Values of ``inputs`` at many points: the edge values in a shuffled order, and random ones."""
    n = draw(st.integers(1, 40))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    out = []
    for s in inputs:
        if s.dtype == "bool":
            out.append(rng.integers(0, 2, n).astype(bool))
            continue
        edges = np.array(INT_EDGES if s.dtype == "int64" else FLOAT_EDGES, dtype=object)
        if s.dtype == "int64":
            randoms = rng.integers(-10, 10, n).astype(object)
        else:
            randoms = (rng.uniform(-4, 4, n) * 10.0 ** rng.integers(-3, 4, n)).astype(object)
        chosen = np.where(rng.integers(0, 2, n).astype(bool), rng.choice(edges, n), randoms)
        dtype = np.dtype(s.dtype)
        with np.errstate(all="ignore"):
            out.append(np.array(list(chosen), dtype=dtype))
    return out


def outcome(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``, or the class of the named error it raised (warnings off); other errors propagate."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return fn(*args)
        except ExprgraphError as exc:
            return type(exc)


def same_bits(got: Any, want: Any) -> bool:
    """Whether two arrays hold the same values: the same dtype and shape, floats bit for bit (any nan for nan)."""
    g, w = np.asarray(got), np.asarray(want)
    if g.dtype != w.dtype or g.shape != w.shape:
        return False
    if g.dtype.kind != "f":
        return bool(np.array_equal(g, w))
    nan = np.isnan(g)
    if not np.array_equal(nan, np.isnan(w)):
        return False
    return bool(np.array_equal(np.where(nan, 0, g).view(f"u{g.itemsize}"), np.where(nan, 0, w).view(f"u{g.itemsize}")))


def _float32_math(t: Term) -> bool:
    return any(n.dtype == "float32" and _libm(n) for n in postorder(t))


def check_values(outs: list[Term], got: Any, want: Any, env: dict[Term, Any], backend: str) -> None:
    """``got`` (a backend's outputs) against ``want`` (evaluate's) by each output's contract (module docstring)."""
    if isinstance(want, type) or isinstance(got, type):
        assert got is want, (backend, got, want, [str(t) for t in outs])
        return
    for t, g, w in zip(outs, got, want, strict=True):
        check_output(t, g, w, env, backend, exact=backend == "numpy")


def check_output(t: Term, got: Any, want: Any, env: dict[Term, Any], where: str, exact: bool = False) -> None:
    """One output's values: the same dtype and shape; the same bits unless libm is involved (see ``_trust``)."""
    g, w = np.asarray(got), np.asarray(want)
    where = f"{where}: {t}"
    assert g.dtype == w.dtype and g.shape == w.shape, (where, g.dtype, w.dtype, g.shape, w.shape)
    trust = "exact" if exact else _trust(t)
    if trust == "exact":
        assert same_bits(g, w), (where, _first_difference(g, w, env))
    elif trust == "close":
        rtol = 1e-4 if _float32_math(t) else 1e-9
        g64, w64 = g.astype(np.float64), w.astype(np.float64)
        with np.errstate(all="ignore"):
            # where the inputs moving by 2**-40 moves the value (sin of 1e300*x) or flips a nan, a last-bit
            # difference in a libm value moves it as far: there the value is noise, allowed to differ
            moves, flips = _conditioning(t, w64, env)
            noise = flips | (moves > rtol * (np.abs(np.where(np.isfinite(w64), w64, 0.0)) + 1.0))
        try:
            with np.errstate(all="ignore"):
                assert_close_conditioned(t, np.where(noise, w64, g64), w64, env, rtol)
        except AssertionError as exc:
            raise AssertionError(f"{where}: {exc}; {_first_difference(g, w, env)}") from None


def _first_difference(g: np.ndarray, w: np.ndarray, env: dict[Term, Any]) -> str:
    with np.errstate(all="ignore"):
        differ = ~((g == w) | (np.isnan(g) & np.isnan(w)) if g.dtype.kind == "f" else g == w)
        if g.dtype.kind == "f":
            differ |= np.signbit(g) != np.signbit(w)
    k = int(np.flatnonzero(np.broadcast_to(differ, g.shape))[0]) if differ.any() else 0
    at = {s.name: np.broadcast_to(v, g.shape).ravel()[k] if g.ndim else v for s, v in env.items()}
    return f"got {g.ravel()[k]!r}, want {w.ravel()[k]!r} at {at}"


def evaluated(outs: list[Term], env: dict[Term, Any]) -> Any:
    """evaluate's values of ``outs`` (as a list), or the class of its named error."""
    return outcome(lambda: list(eg.evaluate(outs, env)))


def drawn(data: st.DataObject, backend: str) -> tuple[list[Term], list[Term], list[np.ndarray]]:
    """The inputs a backend takes, a program over them and values at many points."""
    inputs = inputs_for(backend)
    return inputs, data.draw(programs(inputs)), data.draw(points(inputs))


# -- every backend against evaluate --------------------------------------------------------------


@pytest.mark.parametrize("backend", CHEAP)
@FUZZ
@given(data=st.data())
def test_backends_agree_with_evaluate(backend: str, data: st.DataObject) -> None:
    inputs, outs, values = drawn(data, backend)
    env = dict(zip(inputs, values, strict=True))
    fn = eg_compile(outs, inputs, backend, loops=data.draw(st.sampled_from([True, 2, 3, False])))  # 2: small loops
    check_values(outs, outcome(fn, *values), evaluated(outs, env), env, backend)


@pytest.mark.parametrize("backend", CHEAP)
@FUZZ
@given(data=st.data())
def test_one_point_and_packed_rows_agree_with_the_vectorised_call(backend: str, data: st.DataObject) -> None:
    inputs, outs, values = drawn(data, backend)
    loops = data.draw(st.sampled_from([True, 2]))
    fn = eg_compile(outs, inputs, backend, loops=loops)
    whole = outcome(fn, *values)
    packed = eg_compile(outs, inputs, backend, packed=True, loops=loops)
    _check_points_and_rows(outs, inputs, fn, packed, values, whole, backend)


def _check_points_and_rows(
    outs: list[Term], inputs: list[Term], fn: Any, packed: Any, values: list[np.ndarray], whole: Any, backend: str
) -> None:
    """Each point alone gives the vectorised values; packed rows give them as float64 (same bits)."""
    n = len(values[0])
    if isinstance(whole, type):  # an error: every point at once raises it, and some point alone does
        assert any(outcome(fn, *(v[k] for v in values)) is whole for k in range(n)), (backend, whole)
    else:
        for k in range(min(n, 12)):
            one = outcome(fn, *(v[k] for v in values))
            assert not isinstance(one, type), (backend, one, k)
            env = {s: v[k] for s, v in zip(inputs, values, strict=True)}
            for t, a, b in zip(outs, one, whole, strict=True):
                check_output(t, a, np.broadcast_to(b, (n,))[k], env, f"{backend} at point {k}")
    rows = _rows(values)
    got = outcome(packed, rows)
    want = _through_rows(fn, inputs, rows)
    if isinstance(want, type):
        assert got is want, (backend, got, want)
        return
    assert not isinstance(got, type), (backend, got)
    assert got.shape == (n, len(outs)) and got.dtype == np.float64
    with np.errstate(all="ignore"):
        env = {s: rows[:, k].astype(np.dtype(s.dtype)) for k, s in enumerate(inputs)}
    wants = [np.broadcast_to(np.asarray(w, dtype=np.float64), (n,)) for w in want]
    for j, (t, w) in enumerate(zip(outs, wants, strict=True)):
        check_output(t, got[:, j], w, env, f"{backend} packed")
    for k in range(min(n, 6)):  # one row at a time (the vm's dense scalar road)
        one, at = outcome(packed, rows[k]), {s: v[k] for s, v in env.items()}
        for j, (t, w) in enumerate(zip(outs, wants, strict=True)):
            check_output(t, one[j], w[k], at, f"{backend} packed row {k}")


#: doubles standing for True and False in packed rows of bool inputs (a packed call reads any non-zero as True)
TRUE_DOUBLES = [1.0, 0.5, math.nan, -math.inf, 5e-324, -3.0, 2.0**70]
FALSE_DOUBLES = [0.0, -0.0]


def _rows(values: list[np.ndarray]) -> np.ndarray:
    """The points as packed float64 rows: bools as any double of their truth, some ints with a fraction (read
    truncated); int64 values a double cannot hold are replaced (they are bad input)."""
    cols = []
    for v in values:
        k = np.arange(len(v))
        if v.dtype == np.bool_:
            v = np.where(v, np.take(TRUE_DOUBLES, k, mode="wrap"), np.take(FALSE_DOUBLES, k, mode="wrap"))
        elif v.dtype == np.int64:
            v = np.where(np.abs(v.astype(np.float64)) <= 2.0**50, v + np.where(k % 2, 0.0, 0.75), 3.0)
        with np.errstate(all="ignore"):
            cols.append(np.asarray(v, dtype=np.float64))
    return np.stack(cols, 1)


def _through_rows(fn: Any, inputs: list[Term], rows: np.ndarray) -> Any:
    """The positional call on the packed rows' columns, each cast to its input's dtype (as packed calls do)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cols = [rows[:, k].astype(np.dtype(s.dtype)) for k, s in enumerate(inputs)]
    return outcome(lambda: list(fn(*cols)))


# -- the C backend: many random terms as the outputs of one build -----------------------------------


@needs_cc
@settings(FUZZ, max_examples=C_EXAMPLES)
@given(data=st.data())
def test_c_builds_agree_with_evaluate_and_survive_pickle_and_cache(data: st.DataObject) -> None:
    outs = [t for _ in range(6) for t in data.draw(programs(INPUTS, most=24))]
    values = data.draw(points(INPUTS))
    env = dict(zip(INPUTS, values, strict=True))
    fn = eg_compile(outs, INPUTS, "c")
    whole = outcome(fn, *values)
    check_values(outs, whole, evaluated(outs, env), env, "c")
    packed = eg_compile(outs, INPUTS, "c", packed=True)  # the same library, from the cache
    assert packed.library is fn.library and eg_compile(outs, INPUTS, "c").library is fn.library
    _check_points_and_rows(outs, INPUTS, fn, packed, values, whole, "c")
    again = pickle.loads(pickle.dumps(fn))  # rebuilt through the cache
    assert again.library is fn.library and again.source == fn.source
    _same_outcome(outcome(again, *values), whole)
    plain = [t for t in outs if all(n.dtype != "float32" for n in postorder(t))]
    if vm._native is not None and plain:  # "auto": the vm at once, the C library once it is built
        cols = [values[INPUTS.index(s)] for s in NO_FLOAT32]
        at = dict(zip(NO_FLOAT32, cols, strict=True))
        want = evaluated(plain, at)
        auto = eg_compile(plain, NO_FLOAT32, "auto")
        check_values(plain, outcome(auto, *cols), want, at, "auto (vm)")
        if auto.library is not None:  # None: an output that cannot be folded ((-3)**-3) makes it numpy's
            assert auto.library.wait(600) and auto.library.error is None and auto.library.active == "c"
            check_values(plain, outcome(auto, *cols), want, at, "auto (c)")


def _same_outcome(got: Any, want: Any) -> None:
    """Two calls of one program: the same error, or the same bits in every output."""
    if isinstance(want, type) or isinstance(got, type):
        assert got is want
        return
    assert len(got) == len(want) and all(same_bits(g, w) for g, w in zip(got, want, strict=True))


@pytest.mark.parametrize("backend", CHEAP)
@FUZZ
@given(data=st.data())
def test_pickled_functions_compute_the_same_bits(backend: str, data: st.DataObject) -> None:
    inputs, outs, values = drawn(data, backend)
    fn = eg_compile(outs, inputs, backend, packed=data.draw(st.booleans()), loops=data.draw(st.sampled_from([True, 2])))
    again = pickle.loads(pickle.dumps(fn))
    assert (again.backend, again.packed, again.outputs, again.inputs) == (fn.backend, fn.packed, fn.outputs, fn.inputs)
    if fn.packed:
        rows = _rows(values)
        got, want = outcome(again, rows), outcome(fn, rows)
        assert got is want if isinstance(want, type) else same_bits(got, want)
    else:
        _same_outcome(outcome(again, *values), outcome(fn, *values))


# -- many outputs of one shape: loops over classes --------------------------------------------------

SLOTS = [eg.Symbol(f"s{i}") for i in range(3)]
KS = [eg.Symbol(f"k{i}") for i in range(2)]
FAMILY_UNARY = ["neg", "abs", "sqrt", "sin", "cos", "exp", "log", "tanh", "floor", "sigmoid", "square", "recip"]
FAMILY_BINARY = ["add", "sub", "mul", "truediv", "maximum", "minimum", "floordiv", "mod", "pow", "where", "hypot"]
#: family constants of each dtype: specials (both zeros, inf, nan, subnormal) among floats; ints exact as
#: doubles (and one that is not: that member stays out of the loop)
FAMILY_CONSTS = {
    "float64": st.one_of(
        st.floats(-4, 4, allow_nan=False),
        st.sampled_from([0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324, 1e308, -1.0]),
    ).map(eg.const),
    "int64": st.sampled_from([0, 1, -3, 7, 12, -(2**60), 2**53 + 1]).map(eg.const),
}


@st.composite
def bodies(draw: st.DrawFn) -> Term:
    """A small float64 term over the slots s0..s2 and the constants k0, k1 (a family's shape)."""

    def build(depth: int) -> Term:
        if depth == 0 or draw(st.integers(0, 3)) == 0:
            return draw(st.sampled_from([*SLOTS, *SLOTS, *KS]))
        if draw(st.booleans()):
            name, a = draw(st.sampled_from(FAMILY_UNARY)), build(depth - 1)
            if name == "square":
                return a * a
            return 1.0 / a if name == "recip" else get_op(name)(a)
        name, a, b = draw(st.sampled_from(FAMILY_BINARY)), build(depth - 1), build(depth - 1)
        if name == "pow":
            return a ** eg.const(draw(st.sampled_from([2, 3, -1, 0.5, 2.0])))
        if name == "where":
            return eg.where(a < b, a, b * 2.0)
        return get_op(name)(a, b)

    body = build(draw(st.integers(1, 4)))
    body = body if body.free_symbols & set(SLOTS) else body * SLOTS[0]
    # a constant per member (c_i*x_j): else the members of a family over a few inputs are the same few terms
    return body if body.free_symbols & set(KS) else body + KS[0] * SLOTS[1]


@st.composite
def families(draw: st.DrawFn) -> tuple[list[Term], list[Term]]:
    """Outputs in families ``body(x_i, x_j, ..., c_i)`` of at least THRESHOLD members, irregular outputs and
    families over earlier outputs (a second level), shuffled; and the inputs."""
    xs = [eg.Symbol(f"x{i}") for i in range(draw(st.integers(2, 12)))]
    outs: list[Term] = []
    for _ in range(draw(st.integers(1, 3))):
        body = draw(bodies())
        kinds = {k: draw(st.sampled_from(["float64", "float64", "int64"])) for k in KS}  # one dtype per constant
        readable = xs + (outs if outs and draw(st.booleans()) else [])  # a family over earlier outputs
        step = draw(st.integers(0, 3))
        for m in range(draw(st.integers(THRESHOLD - 1, 2 * THRESHOLD + 4))):
            mapping: dict[Term, Term] = {s: readable[(m + k * step) % len(readable)] for k, s in enumerate(SLOTS)}
            if draw(st.integers(0, 4)) == 0:  # now and then a slot read at random
                mapping[SLOTS[2]] = draw(st.sampled_from(readable))
            mapping.update({k: draw(FAMILY_CONSTS[kinds[k]]) for k in KS})
            outs.append(eg.substitute(body, mapping))
    for _ in range(draw(st.integers(0, 6))):  # irregular outputs, some reading family members
        a, b = draw(st.sampled_from(outs + xs)), draw(st.sampled_from(xs))
        outs.append(get_op(draw(st.sampled_from(["add", "mul", "maximum", "sub"])))(eg.sin(a), b))
    order = draw(st.permutations(range(len(outs))))
    return [outs[k] for k in order], xs


def _family_points(xs: list[Term], n: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    edges = np.array(FLOAT_EDGES)
    return [np.where(rng.integers(0, 4, n) == 0, rng.choice(edges, n), rng.uniform(-3, 3, n)) for _ in xs]


@pytest.mark.parametrize("backend", CHEAP)
@settings(FUZZ, max_examples=LOOP_EXAMPLES)
@given(program=families(), seed=st.integers(0, 2**32 - 1), n=st.sampled_from([1, 3, 37]))
def test_loops_over_families_agree_with_straight_line_code(
    backend: str, program: tuple[list[Term], list[Term]], seed: int, n: int
) -> None:
    outs, xs = program
    values = _family_points(xs, n, seed)
    env = dict(zip(xs, values, strict=True))
    looped = eg_compile(outs, xs, backend, loops=True)
    flat = eg_compile(outs, xs, backend, loops=False)
    assert not flat.info["classes"]
    got, straight, want = outcome(looped, *values), outcome(flat, *values), evaluated(outs, env)
    check_values(outs, got, want, env, backend)
    packed = eg_compile(outs, xs, backend, packed=True)
    rows = np.stack(values, 1)
    if isinstance(want, type):  # (0**-1 in int64): every way of calling raises it
        assert straight is want and outcome(packed, rows) is want and outcome(packed, rows[0]) is want
        return
    for t, g, w in zip(outs, got, straight, strict=True):
        check_output(t, g, w, env, f"{backend} looped vs flat")
    packed_loops, packed_flat = packed(rows), eg_compile(outs, xs, backend, packed=True, loops=False)(rows)
    one_row, one_point = packed(rows[0]), looped(*(float(v[0]) for v in values))  # one point: the lanes are members
    point = {s: v[0] for s, v in env.items()}
    for j, t in enumerate(outs):
        check_output(t, packed_loops[:, j], packed_flat[:, j], env, f"{backend} packed looped vs flat")
        check_output(t, packed_loops[:, j], np.broadcast_to(straight[j], (n,)), env, f"{backend} packed vs positional")
        check_output(t, one_row[j], packed_flat[0, j], point, f"{backend} one packed row vs flat")
        check_output(t, one_point[j], np.broadcast_to(straight[j], (n,))[0], point, f"{backend} one point vs flat")


@needs_cc
@settings(FUZZ, max_examples=C_EXAMPLES)
@given(program=families(), seed=st.integers(0, 2**32 - 1))
def test_c_loops_over_families_agree_with_evaluate(program: tuple[list[Term], list[Term]], seed: int) -> None:
    """The same checks, in C: two builds (looped, straight-line), each called positionally and packed."""
    inner = test_loops_over_families_agree_with_straight_line_code.hypothesis.inner_test  # type: ignore[attr-defined]
    inner("c", program, seed, 37)


# -- findings, kept as regression tests ---------------------------------------------------------------


@pytest.mark.parametrize("backend", [*CHEAP, pytest.param("c", marks=needs_cc)])
def test_a_packed_bool_column_is_true_wherever_it_is_not_zero(backend: str) -> None:
    """Found by this fuzzer: the C backend read a packed double into a bool input with a C cast, ``(int)0.5``,
    so 0.5 (and any fraction) was False where numpy's ``astype(bool)`` and every other backend read True."""
    x, b = eg.Symbol("x"), eg.Symbol("b", "bool")
    fn = eg_compile([eg.where(b, x, -x), b & (x > 0)], [x, b], backend, packed=True)
    flags = np.array([0.5, -0.25, 1e-300, 5e-324, math.nan, -math.inf, 3.0, 0.0, -0.0])
    rows = np.stack([np.ones_like(flags), flags], 1)
    truth = flags.astype(bool)
    want = np.stack([np.where(truth, 1.0, -1.0), truth.astype(float)], 1)
    np.testing.assert_array_equal(fn(rows), want)
    for row, w in zip(rows, want, strict=True):  # one row at a time: the vm's dense scalar road
        np.testing.assert_array_equal(fn(row), w)


@pytest.mark.parametrize("backend", [*CHEAP, pytest.param("c", marks=needs_cc)])
def test_a_packed_int_column_is_cut_toward_zero_or_int64_min(backend: str) -> None:
    """A packed double read into an int64 input is cut toward 0 where an int64 holds it, and is INT64_MIN
    elsewhere (nan, the infinities, beyond 2**63): x86's and numpy's cast; C's own cast leaves it undefined."""
    n = eg.Symbol("n", "int64")
    fn = eg_compile([n + 0, n // 2], [n], backend, packed=True)
    doubles = [2.5, -2.5, 0.9, -0.0, 2.0**62, -(2.0**63), 2.0**63, 1e19, -1e19, math.inf, -math.inf, math.nan]
    low = -(2**63)
    ints = [int(v) if math.isfinite(v) and low <= v < 2**63 else low for v in doubles]
    want = np.array([[float(i), float(i // 2)] for i in ints])
    np.testing.assert_array_equal(fn(np.array(doubles)[:, None]), want)
    for v, w in zip(doubles, want, strict=True):  # one row at a time: the vm's dense scalar road
        np.testing.assert_array_equal(fn(np.array([v])), w)


@pytest.mark.parametrize("backend", [*CHEAP, pytest.param("c", marks=needs_cc)])
def test_outputs_whose_inputs_do_not_all_broadcast_together_come_out_as_evaluate_gives_them(backend: str) -> None:
    """Each output broadcasts its own inputs, as ``evaluate`` does: compiled code over one broadcast of every input
    refused ``x`` of 2 points beside ``y`` of 3 with a named error, where ``evaluate`` gives both outputs."""
    x, y, n = eg.Symbol("x"), eg.Symbol("y"), eg.Symbol("n", "int64")
    outs = [x * 2.0 + n, eg.sin(y) - n, x * 0.0 + 1.5]
    fn = eg_compile(outs, [x, y, n], backend)
    args = (np.array([0.5, -1.0]), np.array([1.0, 2.0, 3.0]), 4)
    want = eg.evaluate(outs, dict(zip([x, y, n], args, strict=True)))
    got = fn(*args)
    for g, w in zip(got, want, strict=True):
        assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)
    with pytest.raises(EvaluationError):  # an output whose own inputs do not broadcast is refused by name
        eg_compile([x * y], [x, y], backend)(np.ones(2), np.ones(3))


# -- vector symbols ------------------------------------------------------------------------------------

VN = 6
VECTORS = [eg.Symbol("xv", shape=(VN,)), eg.Symbol("nv", "int64", shape=(VN,)), eg.Symbol("bv", "bool", shape=(VN,))]
V_INPUTS = [*VECTORS, XS[0]]
REDUCTIONS = ["sum", "amax", "amin", "prod", "mean"]
#: the backends that compile vector terms (the vm refuses them by name)
VECTOR_BACKENDS = [b for b in CHEAP if b != "vm"]


@st.composite
def vector_programs(draw: st.DrawFn) -> list[Term]:
    """Vector terms over xv, nv, bv (length VN) and a scalar: elementwise ops, slices, reversals, reductions."""
    pool: list[Term] = [
        *V_INPUTS,
        eg.const(draw(st.sampled_from(FLOAT_CONSTS))),
        eg.const(draw(st.sampled_from(INT_CONSTS))),
    ]
    start = len(pool)
    for _ in range(draw(st.integers(1, 10))):
        a = draw(st.sampled_from(pool))
        kind = draw(st.sampled_from(["unary", "binary", "binary", "where", "move", "reduce"]))
        t: Term | None = None
        if kind == "unary":
            t = _make(draw(st.sampled_from(UNARY)), [a])
        elif kind == "binary":
            t = _make(draw(st.sampled_from(BINARY)), [a, draw(st.sampled_from(pool))])
        elif kind == "where":
            t = _make("where", [a, draw(st.sampled_from(pool)), draw(st.sampled_from(pool))])
        elif kind == "move" and tuple(a.shape) == (VN,):
            i = draw(st.integers(0, VN - 1))
            t = _make("concat", [[a[i:], a[:i][::-1]]])
        elif kind == "reduce" and a.ndim:
            t = _make(draw(st.sampled_from(REDUCTIONS)), [a])
        if t is not None and tuple(t.shape) in ((), (VN,)):
            pool.append(t)
    computed = pool[start:] or [VECTORS[0] * 2.0]
    return computed[-draw(st.integers(1, len(computed))) :]


@pytest.mark.parametrize("backend", VECTOR_BACKENDS)
@FUZZ
@given(outs=vector_programs(), seed=st.integers(0, 2**32 - 1))
def test_vector_programs_agree_with_evaluate(backend: str, outs: list[Term], seed: int) -> None:
    rng = np.random.default_rng(seed)
    values = [
        np.where(rng.integers(0, 2, VN) == 0, rng.choice(FLOAT_EDGES, VN), rng.uniform(-3, 3, VN)),
        rng.choice(np.array(INT_EDGES, dtype=np.int64), VN),
        rng.integers(0, 2, VN).astype(bool),
        rng.choice(FLOAT_EDGES),
    ]
    env = dict(zip(V_INPUTS, values, strict=True))
    got = outcome(lambda: eg_compile(outs, V_INPUTS, backend)(*values))
    check_values(outs, got, evaluated(outs, env), env, backend)


@needs_cc
@settings(FUZZ, max_examples=C_EXAMPLES)
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_c_vector_programs_agree_with_evaluate(data: st.DataObject, seed: int) -> None:
    outs = [t for _ in range(4) for t in data.draw(vector_programs())]
    test_vector_programs_agree_with_evaluate.hypothesis.inner_test("c", outs, seed)  # type: ignore[attr-defined]


@pytest.mark.parametrize("backend", [*VECTOR_BACKENDS, pytest.param("c", marks=needs_cc)])
def test_vector_inputs_whose_batch_axes_do_not_broadcast_are_refused_by_name(backend: str) -> None:
    """A batch of 2 vectors beside 3 scalars: evaluate refuses it by name, and so does every backend (the C and
    LLVM calls raised numpy's bare ValueError)."""
    xv, y = VECTORS[0], XS[0]
    outs = [eg.sum(xv * 2.0), y + 1.0]
    args = (np.arange(2 * VN, dtype=float).reshape(2, VN), np.array([1.0, 2.0, 3.0]))
    with pytest.raises(ExprgraphError):
        eg.evaluate(outs, dict(zip([xv, y], args, strict=True)))
    with pytest.raises(ExprgraphError):
        eg_compile(outs, [xv, y], backend)(*args)


# -- bad calls end in a named error (or evaluate's value), never in a crash ------------------------------

#: argument values of the wrong kind, shape or dtype, and edge values for every dtype
ODD_VALUES = [
    "abc", 1j, None, object(), [[1.0], [1.0, 2.0]], np.array([object()]), np.datetime64("2020"), b"\x00",
    np.zeros(0), np.ones((2, 1, 3)), np.ones(4), np.arange(10.0)[::3], np.arange(3.0).astype(">f8"),
    np.array([2**64 - 1], np.uint64), np.float16(1.5), np.array([np.nan, 1.5, 1e30]), 2**70, -(2**63), math.nan,
    np.array([0.5, np.nan, 0.0]), np.ones((3, 3), order="F"), True, np.int8(-3), [1, 2, 3], (), {},
]  # fmt: skip


@pytest.mark.parametrize("backend", [*CHEAP, pytest.param("c", marks=needs_cc)])
def test_bad_calls_raise_named_errors_or_give_evaluates_values(backend: str) -> None:
    x, n, b = eg.Symbol("x"), eg.Symbol("n", "int64"), eg.Symbol("b", "bool")
    outs = [x * 2.0 + n, n // 3, eg.where(b, x, -x), n**2, eg.sin(x) + n]
    fn = eg_compile(outs, [x, n, b], backend)
    packed = eg_compile(outs, [x, n, b], backend, packed=True)
    for args in ((1.0, 2), (1.0, 2, True, 4), ()):
        with pytest.raises(TypeError, match="takes 3 inputs"):
            fn(*args)
    rng = np.random.default_rng(7)
    for _ in range(12 * len(ODD_VALUES)):
        args = [
            ODD_VALUES[k] if rng.integers(0, 3) else v
            for k, v in zip(rng.integers(0, len(ODD_VALUES), 3), (0.5, 3, True), strict=True)
        ]
        want = outcome(lambda args=args: list(eg.evaluate(outs, dict(zip([x, n, b], args, strict=True)))))
        got = outcome(fn, *args)
        if isinstance(want, type):  # evaluate refuses: so does the backend, with a named error
            assert isinstance(got, type) and issubclass(got, ExprgraphError), (backend, args, got)
        else:  # inputs that do not all broadcast together: each output over its own, as evaluate does
            assert not isinstance(got, type), (backend, args, got)
            with np.errstate(all="ignore"):
                env = {s: np.asarray(v).astype(s.dtype) for s, v in zip([x, n, b], args, strict=True)}
            check_values(outs, got, want, env, backend)
        rows = ODD_VALUES[rng.integers(0, len(ODD_VALUES))]
        try:
            answer = packed(rows)
        except EvaluationError as exc:  # rows of the wrong width or not numbers; or a negative power of 0
            if str(exc).startswith("packed input must have shape"):
                shape = np.shape(rows)
                assert shape[-1:] != (3,) or len(shape) > 2, (backend, rows, exc)
        else:
            assert isinstance(answer, np.ndarray) and answer.shape[-1:] == (5,), (backend, rows, answer)
    read_only = np.empty(5)
    read_only.flags.writeable = False
    wrong_outs = (np.empty(5, np.float32), np.empty((1, 5)), np.empty(4), np.empty(5)[::-1], np.empty(10)[::2])
    for out in (*wrong_outs, read_only, [0.0] * 5):
        try:  # a wrong out= array is refused (native code writes contiguous rows only), or written
            got = packed(np.ones(3), out=out)
        except EvaluationError as exc:
            assert "out must be" in str(exc)
            assert out is not wrong_outs[3] or backend != "numpy", (backend, exc)  # numpy writes a reversed view
        else:
            assert got is out and same_bits(got, packed(np.ones(3))), (backend, out)
            assert out is not read_only and isinstance(out, np.ndarray)


#: symbol names that are C keywords, macros or libc and helper names (names that are no identifiers at all are
#: refused by Symbol itself, tested below)
ODD_NAMES = ["int", "double", "static", "NAN", "INFINITY", "eg_error", "eg_floordiv", "eg_run", "sin", "__x", "é"]
ODD_NAMES += ["main", "x0", "wd", "xs", "out", "m", "j", "work", "e", "pi"]
NOT_NAMES = ["a b", "1x", "x;abort()", "x\n#define", "a-b", "", "return", "if", "in", "lambda", "inf", "nan"]


@pytest.mark.parametrize("backend", [*CHEAP, pytest.param("c", marks=needs_cc)])
def test_names_that_are_c_words_compile_to_the_right_values(backend: str) -> None:
    for name in NOT_NAMES:
        with pytest.raises(ValueError, match="symbol name"):
            eg.Symbol(name)
    syms = [eg.Symbol(name) for name in ODD_NAMES]
    outs = [eg.sin(s) * k + syms[0] for k, s in enumerate(syms)]
    fn = eg_compile(outs, syms, backend)
    values = [np.linspace(-1.0, 1.0, 5) * (k + 1) for k in range(len(syms))]
    env = dict(zip(syms, values, strict=True))
    check_values(outs, outcome(fn, *values), evaluated(outs, env), env, backend)


@pytest.mark.parametrize("exponent", [eg.const(2.0), eg.const(2), eg.const(0.5)])
def test_a_constant_exponent_in_a_numpy_loop_is_the_straight_line_codes(exponent: Term) -> None:
    """Found by this fuzzer: in a loop over a family ``(x_i + c_i)**2`` the numpy backend read the exponent from
    the class's constant table, an array, and numpy's power of an array of 2s is not the square (1 ulp off:
    ``(x + 0.0)**2`` at x = 2.610434542726609 gave 6.81436850186028 where evaluate squares to
    6.814368501860281)."""
    xs = [eg.Symbol(f"x{i}") for i in range(THRESHOLD)]
    outs = [(s + eg.const(0.25 * k + 0.01)) ** exponent for k, s in enumerate(xs)]
    values = list(np.random.default_rng(3).uniform(0.0, 3.0, (THRESHOLD, 64)))
    values[0][0] = 2.600434542726609
    fn = eg_compile(outs, xs, "numpy")
    assert fn.info["classes"]
    want = eg.evaluate(outs, dict(zip(xs, values, strict=True)))
    for t, g, w in zip(outs, fn(*values), want, strict=True):
        assert same_bits(g, w), t


@pytest.mark.parametrize("backend", CHEAP)
def test_unreadable_rows_and_unbroadcastable_inputs_are_evaluation_errors(backend: str) -> None:
    """Found by this fuzzer: a packed call of a string or an object raised numpy's bare TypeError or ValueError
    (``float() argument must be ...``), and the numpy backend let numpy's broadcast ValueError through where
    evaluate and the native backends raise EvaluationError."""
    x, y = eg.symbols("x y")
    packed = eg_compile([x * y, x - y], [x, y], backend, packed=True)
    for rows in ("ab", object(), [[1.0], [1.0, 2.0]], {"x": 1.0}):
        with pytest.raises(EvaluationError, match="packed input must be rows of numbers"):
            packed(rows)
    with pytest.raises(EvaluationError, match="broadcast together"):
        eg_compile([x * y, x - y], [x, y], backend)(np.ones(3), np.ones(4))


@pytest.mark.parametrize("backend", [b for b in CHEAP if b != "vm"] + [pytest.param("c", marks=needs_cc)])
def test_a_max_of_float32_and_int64_folds_in_float64(backend: str) -> None:
    """Found by this fuzzer: ``maximum(f1, n1, x0)`` (float32, int64, float64) in C folded its first step as C's
    ``float`` max, rounding n1 = 2**32 + 1 to 2**32, where numpy (and the two-operand C code) compare in float64."""
    f, n, x = eg.Symbol("f", "float32"), eg.Symbol("n", "int64"), eg.Symbol("x")
    mx, mn = get_op("maximum"), get_op("minimum")
    outs = [mx(f, n, x), mn(f, n, x), mx(n, f, f), mn(f, f, n), mx(f, n)]
    values = [
        np.float32([-88.0, 1.0, 3e38]),
        np.array([2**32 + 1, -(2**40) - 1, 2**62 + 1]),
        np.array([-1e300, -5.0, 0.0]),
    ]
    want = eg.evaluate(outs, dict(zip([f, n, x], values, strict=True)))
    for t, g, w in zip(outs, eg_compile(outs, [f, n, x], backend)(*values), want, strict=True):
        assert same_bits(g, w), (t, g, w)
