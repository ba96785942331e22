"""Every elementwise op of the op table in a one-line kernel: the compiled C agrees with ``evaluate``, and
the gradient kernel with ``exprgraph.grad`` of the same scalar expression; on the edges (nan, the
infinities, signed zeros, huge and subnormal values) both agree with the op table's numpy evaluation
of the same terms, nan for nan, inf for inf and zero sign for zero sign. A new op needs no other file.

One kernel holds a statement per op (``Y_op<8>[i] = op(X0_op<8>[i], X1_op<8>[i]);``), so the whole table
compiles once; each op is still its own test. Ops that cannot appear in a kernel are skipped, with
the reason.
"""

from __future__ import annotations

import numpy as np
import pytest

import exprgraph.dims  # noqa: F401 - completes the op table (ceil_div)
from exprgraph.core import FLOAT64, INT64, Symbol, Term, get_op, ops, parse
from exprgraph.core.dtypes import BOOL
from exprgraph.diff import grad
from exprgraph.errors import KernelError
from exprgraph.eval import evaluate
from exprgraph.tensor import build, grad_kernel, parse_kernel, reference, reference_grad
from exprgraph.tensor.terms import function, read

N = 8
#: inside every op's domain (log, sqrt, a divisor, the base of a power) and clear of tan's pole
LOW, HIGH = 0.5, 1.5


def _arity(op) -> int:
    lo, hi = op.arity
    return lo + 1 if hi is None else lo  # a variadic op gets one operand more than it needs: the fold


def _params() -> list:
    out = []
    for op in ops():
        if op.notation == "leaf":
            reason = "a leaf (symbol, constant): nothing to apply"
        elif op.notation == "index":
            reason = "the indexed access itself: every tensor read of a kernel is one"
        elif function(op.name) is None:
            reason = "not elementwise (a tensor-shaped op such as sum, matmul, dot, transpose)"
        elif op.c_render is None:
            reason = "no C rendering in its table entry (an op a test registered for numpy only)"
        else:
            out.append(pytest.param(op.name, id=op.name))
            continue
        out.append(pytest.param(op.name, id=op.name, marks=pytest.mark.skip(reason=f"{op.name}: {reason}")))
    return out


PARAMS = _params()
NAMES = [p.values[0] for p in PARAMS if not p.marks]


def _int_capable(name: str) -> bool:
    op = get_op(name)
    term = op(*(Symbol(f"eg_n{k}", INT64) for k in range(_arity(op))))
    return term.dtype != FLOAT64 and name != "pow"


INT_NAMES = [n for n in NAMES if _int_capable(n)]


def _text(names: list[str], size: int = N) -> str:
    """A kernel applying each op of ``names`` to its own inputs of length ``size``."""
    lines = []
    for name in names:
        args = ", ".join(f"X{k}_{name}<{size}>[i]" for k in range(_arity(get_op(name))))
        lines.append(f"Y_{name}<{size}>[i] = {name}({args});")
    return "\n".join(lines)


#: int operands: every sign combination, a zero and a -1 divisor (C division must not trap), then random
INT_EDGES = ([7, -7, 7, -7, 5, 0, -20, 13], [2, 2, -2, -2, 0, 3, -1, -5])


def _inputs(kernel, rng: np.random.Generator) -> dict[str, np.ndarray]:
    if kernel.data_type == "int":
        pick = {"0": INT_EDGES[0], "1": INT_EDGES[1]}
        return {n: np.array(pick.get(n[1], rng.integers(-20, 20, N)), np.int32) for n in kernel.ins}
    return {n: rng.uniform(LOW, HIGH, N).astype(np.float32) for n in kernel.ins}


def _scalar(name: str, dtype: str) -> tuple[Term, list[Term]]:
    """``op(x0, x1, ...)`` on scalar symbols: the expression each kernel line computes."""
    op = get_op(name)
    syms = [Symbol(f"x{k}", dtype) for k in range(_arity(op))]
    return op(*syms), syms


@pytest.fixture(scope="module")
def float_run():
    kernel = parse_kernel(_text(NAMES), name="every_op")
    rng = np.random.default_rng(7)
    values = _inputs(kernel, rng)
    outputs = build(kernel)(**values)
    smooth = [x for x in kernel.ins if get_op(x.split("_", 1)[1]).grad is not None]
    gkernel = grad_kernel(kernel, smooth)
    upstream = {f"d{o}": rng.uniform(-1, 1, N).astype(np.float32) for o in kernel.outs}
    gvalues = {**values, **upstream}
    grads = build(gkernel)(**{p: gvalues[p] for p in gkernel.params if p in gvalues})
    return values, outputs, upstream, grads, reference(kernel, **values)


@pytest.fixture(scope="module")
def int_run():
    kernel = parse_kernel(_text(INT_NAMES), name="every_int_op", data_type="int")
    values = _inputs(kernel, np.random.default_rng(11))
    return values, build(kernel)(**values), reference(kernel, **values)


@pytest.mark.parametrize("name", PARAMS)
def test_float_kernel_agrees_with_evaluate(name, float_run):
    values, outputs, _, _, ref = float_run
    term, syms = _scalar(name, FLOAT64)
    env = {s: values[f"X{k}_{name}"].astype(np.float64) for k, s in enumerate(syms)}
    want = np.asarray(evaluate(term, env), np.float64)
    got = outputs[f"Y_{name}"].astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=f"{name}: C kernel vs evaluate")
    np.testing.assert_allclose(ref[f"Y_{name}"], want, rtol=1e-5, atol=1e-6, err_msg=f"{name}: reference vs evaluate")


@pytest.mark.parametrize("name", PARAMS)
def test_gradient_kernel_agrees_with_grad(name, float_run):
    values, _, upstream, grads, _ = float_run
    if get_op(name).grad is None:
        pytest.skip(f"{name} has no gradient rule in the op table")
    term, syms = _scalar(name, FLOAT64)
    env = {s: values[f"X{k}_{name}"].astype(np.float64) for k, s in enumerate(syms)}
    dy = upstream[f"dY_{name}"].astype(np.float64)
    for k, partial in enumerate(grad(term, syms)):
        want = dy * np.broadcast_to(np.asarray(evaluate(partial, env), np.float64), (N,))
        got = grads[f"dX{k}_{name}"].astype(np.float64)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=f"{name}: d/dx{k}")


@pytest.mark.parametrize("name", INT_NAMES)
def test_int_kernel_agrees_with_evaluate_exactly(name, int_run):
    values, outputs, ref = int_run
    term, syms = _scalar(name, INT64)
    env = {s: values[f"X{k}_{name}"].astype(np.int64) for k, s in enumerate(syms)}
    want = np.asarray(evaluate(term, env)).astype(np.int64)
    assert outputs[f"Y_{name}"].tolist() == want.tolist(), name
    assert ref[f"Y_{name}"].tolist() == want.tolist(), name


def test_float_results_are_refused_in_int_kernels():
    for name in NAMES:
        term, _ = _scalar(name, INT64)
        if _int_capable(name):
            continue
        with pytest.raises(KernelError, match=f"cannot call {name}"):
            parse_kernel(_text([name]), data_type="int")
        assert term.dtype == FLOAT64 or name == "pow"


# -- the indexed access and the C-division ops ------------------------------------------------------


def test_reads_are_access_terms_that_print_and_parse_back():
    k = parse_kernel("C<4, 3>[i, j] = A<4, 5>[i, k] * B<5, 3>[k, j] + 1;")
    rhs = k.statements[0].rhs
    assert str(rhs) == "A[i, k]*B[k, j] + 1.0"
    a, b = (acc.args[0] for acc, _ in k.statements[0].reads())
    assert (a.shape, a.dtype, b.shape) == ((4, 5), FLOAT64, (5, 3))
    names = {t.name: t for t in rhs.free_symbols}
    assert parse(str(rhs), names) is rhs
    alpha = Symbol("alpha", FLOAT64, (1,))
    assert str(read(alpha, ())) == "alpha[]" and parse("alpha[]", [alpha]) is read(alpha, ())


def test_access_evaluates_as_numpy_indexing():
    b = Symbol("B", FLOAT64, (3, 4))
    i, j = Symbol("i", INT64), Symbol("j", INT64)
    t = read(b, (i, j + 1)) * 2
    arr = np.arange(12.0).reshape(3, 4)
    iv, jv = np.array([0, 2, 1]), np.array([0, 1, 2])
    np.testing.assert_array_equal(evaluate(t, {b: arr, i: iv, j: jv}), 2 * arr[iv, jv + 1])
    with pytest.raises(ValueError, match="2 dimension"):
        read(b, (i,))
    with pytest.raises(ValueError, match="int64"):
        read(b, (i, Symbol("x")))


@pytest.mark.parametrize("dtype", [np.int64, np.float64, np.int32, np.float32])
def test_c_division_ops_in_numpy(dtype):
    a = np.array([7, -7, 7, -7, 5, 0, -1], dtype)
    b = np.array([2, 2, -2, -2, 0, 3, 1], dtype)
    q = get_op("truncdiv").impl(a, b)
    r = get_op("fmod").impl(a, b)
    if np.dtype(dtype).kind == "i":
        assert q.tolist() == [3, -3, -3, 3, 0, 0, -1] and r.tolist() == [1, -1, 1, -1, 0, 0, 0]
        assert q.dtype == dtype and r.dtype == dtype
        assert (q * b + r)[b != 0].tolist() == a[b != 0].tolist()
    else:
        assert q[:4].tolist() == [3, -3, -3, 3] and np.isinf(q[4]) and r[:4].tolist() == [1, -1, 1, -1]
    low = np.iinfo(np.int32).min
    assert get_op("truncdiv").impl(np.int32([low]), np.int32([-1])).tolist() == [low]  # wraps, as C with -fwrapv
    assert get_op("fmod").impl(np.array([True]), np.array([False])).dtype.kind == "i"  # bools count as integers


def test_bool_valued_ops_store_zero_and_one():
    k = parse_kernel("Y<4>[i] = lt(A<4>[i], B<4>[i]) + ge(A<4>[i], 2.0) * 2;")
    a, b = np.array([1.0, 3.0, 2.0, 0.0]), np.array([2.0, 1.0, 2.0, 5.0])
    want = (a < b).astype(int) + (a >= 2.0) * 2
    assert build(k)(A=a, B=b)["Y"].tolist() == want.tolist() == reference(k, A=a, B=b)["Y"].tolist()
    assert k.statements[0].rhs.args[0].dtype == BOOL


def test_a_newly_registered_op_is_callable_and_differentiable_in_kernels():
    from exprgraph.core import Op, register_op
    from exprgraph.core.stdops import real
    from exprgraph.tensor import check_kernel_grad

    def softplus_grad(node, g):
        # d log(1 + exp(x)) = sigmoid(x) dx
        return (g * get_op("sigmoid")(node.args[0]),)

    register_op(
        Op(
            "softplus_k",
            1,
            real,
            impl=lambda x: np.logaddexp(0.0, x),
            c_render="log1p(exp({0}))",
            grad=softplus_grad,
            doc="log(1 + exp(x)).",
        ),
        replace=True,
    )
    k = parse_kernel("Y<2, 8>[n, i] = softplus_k(X<2, 8>[n, i] / 4) * W<8>[i];", grad_to=["X", "W"])
    x = np.linspace(-3, 3, 16).reshape(2, 8)
    w = np.arange(8.0)
    np.testing.assert_allclose(build(k)(X=x, W=w)["Y"], np.logaddexp(0, x / 4) * w, rtol=1e-5)
    report = check_kernel_grad(k)
    assert report.ok, str(report)


# -- the edges: nan, the infinities, signed zeros, huge and tiny values ------------------------------------

#: float32 edge values; a binary op meets every pair of them (EDGE_N lanes)
EDGES = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3e38, -3e38, 1e-40, 7.0], np.float32)
EDGE_N = len(EDGES) ** 2


def _edge_inputs(kernel) -> dict[str, np.ndarray]:
    first, second = np.meshgrid(EDGES, EDGES, indexing="ij")
    columns = [first.ravel(), second.ravel(), EDGES[np.arange(EDGE_N) % len(EDGES)]]
    return {n: columns[int(n[1])].copy() for n in kernel.ins}


def _same_special(got: np.ndarray, want: np.ndarray, what: str, rtol: float = 4e-6) -> None:
    """nan where the reference has nan, the same infinities and zero signs, finite values to ``rtol``."""
    assert np.array_equal(np.isnan(got), np.isnan(want)), (
        f"{what}: nan at {np.flatnonzero(np.isnan(got) != np.isnan(want))}"
    )
    known = ~np.isnan(want)
    g, w = got[known], want[known]
    assert np.array_equal(np.isinf(g), np.isinf(w)) and np.array_equal(g[np.isinf(g)], w[np.isinf(w)]), what
    zero = w == 0
    assert np.array_equal(np.signbit(g[zero]), np.signbit(w[zero])), f"{what}: the sign of a zero"
    finite = np.isfinite(w)
    np.testing.assert_allclose(g[finite], w[finite], rtol=rtol, atol=1e-37, err_msg=what)


@pytest.fixture(scope="module")
def edge_run():
    names = [n for n in NAMES if get_op(n).ufunc is not None or get_op(n).impl is not None]
    kernel = parse_kernel(_text(names, EDGE_N), name="every_op_edges")
    values = _edge_inputs(kernel)
    with np.errstate(all="ignore"):
        outputs = build(kernel)(**values)
        ref = reference(kernel, **values)
    smooth = [x for x in kernel.ins if get_op(x.split("_", 1)[1]).grad is not None]
    gkernel = grad_kernel(kernel, smooth)
    upstream = {f"d{o}": np.full(EDGE_N, 0.75, np.float32) for o in kernel.outs}
    gvalues = {**values, **upstream}
    with np.errstate(all="ignore"):
        grads = build(gkernel)(**{p: gvalues[p] for p in gkernel.params if p in gvalues})
        ref_grads = reference_grad(kernel, smooth, **values, **upstream)
    # lanes whose inputs float32 and float64 treat alike (no value near float32's overflow or underflow)
    extreme = np.zeros(EDGE_N, bool)
    for v in values.values():
        extreme |= np.isfinite(v) & ((np.abs(v) > 1e30) | ((v != 0) & (np.abs(v) < 1e-30)))
    return names, outputs, ref, grads, ref_grads, ~extreme


@pytest.mark.parametrize("name", PARAMS)
def test_float_kernel_agrees_with_the_op_table_on_edge_values(name, edge_run):
    names, outputs, ref, _, _, _ = edge_run
    if name not in names:
        pytest.skip(f"{name} has no numpy evaluation")
    _same_special(outputs[f"Y_{name}"], ref[f"Y_{name}"], f"{name}: C kernel vs reference on edges")


@pytest.mark.parametrize("name", PARAMS)
def test_gradient_kernel_agrees_with_the_op_table_on_edge_values(name, edge_run):
    names, _, _, grads, ref_grads, lanes = edge_run
    if name not in names or get_op(name).grad is None:
        pytest.skip(f"{name} has no gradient rule or no numpy evaluation")
    for k in range(_arity(get_op(name))):
        key = f"dX{k}_{name}"
        if key in grads:
            # the reference works in float64, so lanes with values near float32's overflow or underflow
            # are left out (x**-1 of 1e-40 is finite in one, inf in the other); finite values may differ
            # by float32 cancellation (1 - tanh(7)**2), hence the tolerance
            want = ref_grads[key][lanes].astype(np.float32)
            what = f"{name}: gradient kernel d/dx{k} vs reference on edges"
            _same_special(grads[key][lanes], want, what, rtol=1e-2)
