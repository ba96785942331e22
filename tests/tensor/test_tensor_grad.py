"""Gradient kernels: index solving (strided and dilated convolution, pooling, transposes, reshapes),
the equality-guard fallback, local derivatives, and random kernels checked against numeric reverse mode."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from index_strategies import index_terms

from exprgraph.tensor import (
    build,
    check_kernel_grad,
    codegen_c,
    count_iterations,
    format_kernel,
    grad_kernel,
    parse_kernel,
    reference,
    reference_grad,
)
from exprgraph.tensor.affine import bounds, evaluate_index, index_var, linearize, to_term
from exprgraph.tensor.solve import Read, guard_gather, solve_gather


def contribution(gk, k=-1):
    return [s for s in gk.statements if s.accumulate][k]


def assert_checked(kernel, grad_to, **kw):
    for strategy in ("solve", "guard"):
        report = check_kernel_grad(kernel, grad_to, strategy=strategy, **kw)
        assert report.ok, f"{strategy}:\n{report}"


# -- convolutions ----------------------------------------------------------------------------------

STRIDED = "A<2, 4, 3, 3>[n, k, p, q] = B<2, 3, 7, 7>[n, c, 2*p + r, 2*q + s] * C<4, 3, 3, 3>[k, c, r, s];"
DILATED = "A<2, 4, 3, 3>[n, k, p, q] = B<2, 3, 7, 7>[n, c, p + 2*r, q + 2*s] * C<4, 3, 3, 3>[k, c, r, s];"


def test_strided_convolution_keeps_the_output_loop():
    # h = 2p + r: solving for r leaves p with about 1.5 values per h (no divisibility test)
    k = parse_kernel(STRIDED, grad_to=["B", "C"])
    gk = grad_kernel(k, ["B"])
    st0 = contribution(gk)
    assert "C<4, 3, 3, 3>[k, c, h - 2*p, w - 2*q]" in format_kernel(gk)
    assert [str(g) for g in st0.guards] == ["0 <= h - 2*p < 3", "0 <= w - 2*q < 3"]
    assert all(g.modulus is None for g in st0.guards)
    assert "if (" not in codegen_c(gk).split("void ")[1]
    assert_checked(k, ["B"])
    assert_checked(k, ["C"])


def test_dilated_convolution_keeps_the_filter_loop():
    k = parse_kernel(DILATED, grad_to=["B"])
    gk = grad_kernel(k)
    assert "dA<2, 4, 3, 3>[n, k, h - 2*r, w - 2*s] * C<4, 3, 3, 3>[k, c, r, s]" in format_kernel(gk)
    assert_checked(k, ["B"])
    assert_checked(k, ["C"])


def test_strided_and_dilated_together_needs_a_divisibility_test():
    # h = 2p + 2r: every choice divides by 2
    k = parse_kernel("A<4>[p] = B<12>[2*p + 2*r] * C<3>[r];", grad_to=["B"])
    st0 = contribution(grad_kernel(k))
    assert any(g.modulus == 2 for g in st0.guards)
    assert_checked(k, ["B"])


def test_gradient_iterations_match_forward_for_convolution():
    k = parse_kernel("A<2, 4, 6, 6>[n, k, p, q] = B<2, 3, 8, 8>[n, c, p + r, q + s] * C<4, 3, 3, 3>[k, c, r, s];")
    fwd = sum(count_iterations(k))
    for x in ("B", "C"):
        gk = grad_kernel(k, [x])
        assert sum(count_iterations(gk)[1:]) == fwd
    # the fallback keeps every forward loop and every input element: many more iterations
    slow = grad_kernel(k, ["B"], strategy="guard")
    assert sum(count_iterations(slow)[1:]) >= fwd


# -- pooling, transposes, reshapes ----------------------------------------------------------------


def test_pooling_by_division_sums_the_window():
    k = parse_kernel("A<8, 6>[i, j] = B<4, 3>[i // 2, j // 2];", grad_to=["B"])
    gk = grad_kernel(k)
    assert "dA<8, 6>[2*h + t, 2*w + t1]" in format_kernel(gk)
    assert [lp.name for lp in contribution(gk).loops] == ["h", "w", "t", "t1"]
    assert_checked(k, ["B"])
    da = np.arange(48.0).reshape(8, 6)
    want = da.reshape(4, 2, 3, 2).sum(axis=(1, 3))
    np.testing.assert_allclose(build(gk)(dA=da)["dB"], want)


def test_strided_window_gradient_has_no_loop():
    k = parse_kernel("A<4>[i] = B<8>[2*i + r] * W<2>[r];", grad_to=["B"])
    gk = grad_kernel(k)
    assert "dA<4>[h//2] * W<2>[h%2]" in format_kernel(gk)
    assert [lp.name for lp in contribution(gk).loops] == ["h"]
    src = codegen_c(gk)
    assert "dA[h / 2] * W[h % 2]" in src
    assert_checked(k, ["B", "W"])


def test_transpose_gradient():
    k = parse_kernel("B<3, 5>[i, j] = A<5, 3>[j, i];", grad_to=["A"])
    gk = grad_kernel(k)
    assert "dA<5, 3>[j, i] = dA<5, 3>[j, i] + dB<3, 5>[i, j]" in format_kernel(gk)
    a = np.arange(15.0).reshape(5, 3)
    np.testing.assert_allclose(build(gk)(dB=a.T)["dA"], a)


@pytest.mark.parametrize(
    ("text", "x", "expected"),
    [
        ("A<4, 8>[i, j] = B<32>[8*i + j];", "B", "dB<32>[h] = dB<32>[h] + dA<4, 8>[h//8, h%8]"),
        ("B<32>[i] = A<2, 16>[i//16, i%16];", "A", "dA<2, 16>[h, w] = dA<2, 16>[h, w] + dB<32>[16*h + w]"),
        ("B<32>[i] = A<16>[i%16];", "A", "dB<32>[h + 16*t]"),
        ("A<2, 3, 4>[i, j, k] = B<24>[12*i + 4*j + k];", "B", "dA<2, 3, 4>[h//12, h//4%3, h%4]"),
        ("A<24>[m] = B<2, 3, 4>[m // 12, m // 4 % 3, m % 4];", "B", "dA<24>[12*h + 4*w + u]"),
    ],
)
def test_reshape_gradients(text, x, expected):
    k = parse_kernel(text, grad_to=[x])
    gk = grad_kernel(k)
    assert expected in format_kernel(gk)
    assert_checked(k, [x])


def test_diagonal_read_gives_an_equality_guard():
    k = parse_kernel("B<4, 3>[i, j] = A<4, 4>[i, i] * C<4, 3>[i, j];", grad_to=["A"])
    st0 = contribution(grad_kernel(k))
    assert [str(g) for g in st0.guards] == ["i - h == 0"]
    assert_checked(k, ["A"])


def test_unreachable_read_gives_no_contribution():
    # B[i + 10] with i < 4 never lands inside B<8>... after range inference i has no values: an error;
    # but B[2*i] never reaches odd elements: their gradient is zero
    k = parse_kernel("A<4>[i] = B<8>[2*i];", grad_to=["B"])
    d = build(grad_kernel(k))(dA=np.ones(4))["dB"]
    np.testing.assert_allclose(d, [1, 0, 1, 0, 1, 0, 1, 0])


def test_forward_guards_carry_into_the_gradient():
    # p + r may leave B: the gradient of C must skip the same iterations
    k = parse_kernel("A<6>[p] = B<6>[p + r] * C<3>[r];", grad_to=["C", "B"])
    assert_checked(k, ["C", "B"])
    gc = grad_kernel(k, ["C"])
    assert [str(g) for g in contribution(gc).guards] == ["0 <= r + p < 6"]


def test_negative_lower_bounds():
    k = parse_kernel("A<8>[i] = B<10>[i - 3] * C<8>[i];", grad_to=["B", "C"])
    assert_checked(k, ["B", "C"])


def test_scalar_input_gradient():
    k = parse_kernel("A<3, 4>[i, j] = alpha<1> * B<3, 4>[i, j] * alpha<1>;", grad_to=["alpha"])
    gk = grad_kernel(k)
    assert gk.params == ("alpha", "B", "dA", "dalpha")
    assert "float *dalpha" in codegen_c(gk)
    assert_checked(k, ["alpha"])


def test_several_outputs():
    k = parse_kernel("A<3>[i] = B<3>[i] * 2; D<3, 2>[i, j] = B<3>[i] * E<2>[j];", grad_to=["B"])
    gk = grad_kernel(k)
    assert gk.params == ("E", "dA", "dD", "dB")
    assert_checked(k, ["B"])


# -- local derivatives ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rhs",
    [
        "B<4>[i] / (C<4>[i] + 20)",
        "(C<4>[i] + 20) / B<4>[i]",
        "-B<4>[i] - C<4>[i] * B<4>[i]",
        "exp(B<4>[i] / 10) * tanh(C<4>[i] / 10)",
        "log(B<4>[i] + 20) + sqrt(B<4>[i] + 20)",
        "max(B<4>[i], C<4>[i]) - min(B<4>[i], 2 * C<4>[i])",
        "B<4>[i] % (C<4>[i] + 20) + (C<4>[i] + 20) % (B<4>[i] + 15)",
        "B<4>[i] // 3 + B<4>[i]",
    ],
)
def test_local_derivatives(rhs):
    k = parse_kernel(f"A<4>[i] = {rhs};", grad_to=["B", "C"] if "C<4>" in rhs else ["B"])
    for seed in range(3):
        report = check_kernel_grad(k, seed=seed)
        assert report.ok, str(report)


def test_quotient_rule_shape():
    gk = grad_kernel(parse_kernel("A<4>[i] = C<4>[i] / B<4>[i];"), ["B"])
    # the op table's rule: d(c/b)/db = -(g*(c/b))/b
    assert "dA<4>[i] * -(C<4>[i] / B<4>[i] / B<4>[i])" in format_kernel(gk)


def test_floor_division_has_zero_gradient():
    gk = grad_kernel(parse_kernel("A<4>[i] = B<4>[i] // 2;"), ["B"])
    assert len(gk.statements) == 1  # only the zeroing
    assert build(gk)(dA=np.ones(4))["dB"].tolist() == [0, 0, 0, 0]


# -- the solver and index arithmetic, by brute force -----------------------------------------------

_VARS = [index_var(n) for n in ("i", "j", "k")]


def _index_terms(most_names: int) -> st.SearchStrategy:
    """A sum of multiples of at most ``most_names`` of i, j, k, then at most one division step."""
    return index_terms(
        dict.fromkeys(_VARS, (-3, 3)),
        constants=(-4, 4),
        steps=(0, 1),
        divisors=(2, 4),
        most_names=most_names,
    )


@settings(max_examples=200, deadline=None)
@given(_index_terms(3), st.integers(0, 5), st.integers(1, 6), st.integers(1, 5))
def test_linearize_to_term_and_bounds(t, lo, ext_i, ext_j):
    env_ranges = {_VARS[0]: (lo - 3, lo - 3 + ext_i), _VARS[1]: (0, ext_j), _VARS[2]: (1, 4)}
    canon = to_term(linearize(t))
    b = bounds(canon, env_ranges)
    assert b is not None
    for i in range(*env_ranges[_VARS[0]]):
        for j in range(*env_ranges[_VARS[1]]):
            for k in range(*env_ranges[_VARS[2]]):
                env = dict(zip(_VARS, (i, j, k), strict=True))
                v = evaluate_index(t, env)
                assert evaluate_index(canon, env) == v
                assert b[0] <= v <= b[1]
    assert to_term(linearize(canon)) is canon


def _brute(index, extents, ranges, g):
    """Check a gather solution: each forward point maps to exactly one (x, remaining) point."""
    fwd = list(ranges)
    hits: dict[tuple, int] = {}
    import itertools

    for point in itertools.product(*(range(*ranges[v]) for v in fwd)):
        env = dict(zip(fwd, point, strict=True))
        x = tuple(evaluate_index(t, env) for t in index)
        if all(0 <= xv < e for xv, e in zip(x, extents, strict=True)):
            hits[(x, point)] = hits.get((x, point), 0) + 1
    found: dict[tuple, int] = {}
    new_vars = [lp.var for lp in g.loops]
    for point in itertools.product(*(range(lp.lo, lp.hi) for lp in g.loops)):
        env = dict(zip(new_vars, point, strict=True))
        ok = True
        for gd in g.guards:
            v = evaluate_index(gd.expr, env)
            if gd.modulus is not None:
                ok &= v % gd.modulus == 0
            else:
                ok &= (gd.lo is None or v >= gd.lo) and (gd.hi is None or v < gd.hi)
        if not ok:
            continue
        fpoint = tuple(evaluate_index(g.subst.get(v, v), env) for v in fwd)
        x = tuple(env[v] for v in g.lhs)
        # the forward point must be in its box and must read x
        assert all(ranges[v][0] <= p < ranges[v][1] for v, p in zip(fwd, fpoint, strict=True)), (x, fpoint)
        fenv = dict(zip(fwd, fpoint, strict=True))
        assert tuple(evaluate_index(t, fenv) for t in index) == x
        found[(x, fpoint)] = found.get((x, fpoint), 0) + 1
    assert found == hits


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_index_terms(2), min_size=1, max_size=2), st.lists(st.integers(1, 7), min_size=2, max_size=2))
def test_gather_solutions_are_exact(index, extents):
    fv = set()
    for t in index:
        fv |= t.free_symbols
    ranges = {v: (0, 3 + k) for k, v in enumerate(_VARS) if v in fv}
    ext = tuple(extents[: len(index)])
    read = Read(index, ext, ranges, list(ranges))
    g = solve_gather(read, set())
    if not g.feasible:
        return
    _brute(index, ext, ranges, g)
    _brute(index, ext, ranges, guard_gather(read, set()))


@st.composite
def gather_kernel(draw):
    i1 = draw(
        st.sampled_from(["i", "i + 1", "2*i", "i + j", "2*i + j", "i + 2*j", "(i + j) // 2", "i % 3", "j - i + 3"])
    )
    i2 = draw(st.sampled_from(["j", "j // 2", "i", "j + 1", "3 - j", "(i + 2*j) % 4"]))
    e1, e2 = draw(st.integers(2, 8)), draw(st.integers(2, 6))
    op = draw(st.sampled_from(["*", "+", "/"]))
    return f"A<4, 3>[i, j] = X<{e1}, {e2}>[{i1}, {i2}] {op} (W<4, 3>[i, j] + 11) * X<{e1}, {e2}>[{i2}, {i1}];"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gather_kernel(), st.sampled_from(["solve", "guard"]))
def test_random_gradients_match_numeric_reverse_mode(text, strategy):
    k = parse_kernel(text.replace("X<", "B<"), grad_to=["B", "W"])
    gk = grad_kernel(k, strategy=strategy)
    rng = np.random.default_rng(0)
    vals = {n: rng.uniform(-2, 2, k.tensors[n].shape) for n in ("B", "W")}
    vals["dA"] = rng.uniform(-2, 2, (4, 3))
    want = reference_grad(k, ["B", "W"], **vals)
    got = reference(gk, **{n: vals[n] for n in gk.params if n in vals})
    for d in ("dB", "dW"):
        np.testing.assert_allclose(got[d], want[d], rtol=1e-4, atol=1e-4)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gather_kernel())
def test_random_gradients_compiled(text):
    k = parse_kernel(text.replace("X<", "B<"), grad_to=["B", "W"])
    for unroll in (True, False):
        report = check_kernel_grad(k, finite_differences=False, unroll=unroll)
        assert report.ok, str(report)
