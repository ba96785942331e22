"""The kernel language and IR: grammar, range inference, reductions, accumulation, semantics in numpy and C."""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exprgraph.tensor import (
    build,
    check_kernel,
    codegen_c,
    format_kernel,
    grad_kernel,
    parse_kernel,
    reference,
    reference_grad,
)
from exprgraph.tensor.affine import index_var
from exprgraph.tensor.parse import tokenize


def ranges(kernel, k=0):
    return {lp.name: (lp.lo, lp.hi) for lp in kernel.statements[k].loops}


# -- grammar ---------------------------------------------------------------------------------------


def test_tokens_and_positions():
    toks = tokenize("A<2>[i//2] = 1.5e-3;")
    assert [(t.kind, t.text, t.pos) for t in toks] == [
        ("name", "A", 0),
        ("op", "<", 1),
        ("int", "2", 2),
        ("op", ">", 3),
        ("op", "[", 4),
        ("name", "i", 5),
        ("op", "//", 6),
        ("int", "2", 8),
        ("op", "]", 9),
        ("op", "=", 11),
        ("float", "1.5e-3", 13),
        ("op", ";", 19),
        ("end", "", 20),
    ]


def test_precedence_and_functions():
    k = parse_kernel("A<3>[i] = -B<3>[i] * 2 + max(B<3>[i], 1) / 4 - exp(-B<3>[i]) % 3 + (B<3>[i] - 1) // 2;")
    b = np.array([0.5, -1.25, 2.0])
    got = reference(k, B=b)["A"]
    want = -b * 2 + np.fmax(b, 1) / 4 - np.fmod(np.exp(-b), 3) + np.floor((b - 1) / 2)
    np.testing.assert_allclose(got, want.astype(np.float32), rtol=1e-6)
    for c in check_kernel(k):
        assert c.ok, str(c)


def test_scalars_and_shape_omission():
    k = parse_kernel("A<4>[i] = alpha<1> * B<4>[i] + B[i] * beta<1>;", name="axpy")
    assert k.params == ("alpha", "B", "beta", "A")
    assert k.tensors["alpha"].scalar and not k.tensors["B"].scalar
    src = codegen_c(k)
    assert "const float *alpha" in src and "*alpha * B[i]" in src
    got = build(k)(alpha=2.0, beta=3.0, B=np.arange(4.0))["A"]
    np.testing.assert_allclose(got, 5 * np.arange(4.0))


def test_scalar_output_is_a_full_reduction():
    k = parse_kernel("s<1> = A<5>[i] * B<5>[i];", name="dot")
    a, b = np.arange(5.0), np.arange(5.0) + 1
    assert reference(k, A=a, B=b)["s"][0] == pytest.approx(a @ b)
    assert build(k)(A=a, B=b)["s"][0] == pytest.approx(a @ b)
    g = grad_kernel(k, ["A"])
    assert g.params == ("B", "ds", "dA")
    np.testing.assert_allclose(build(g)(B=b, ds=2.0)["dA"], 2 * b)


def test_ins_and_outs_inferred():
    k = parse_kernel("T<4>[i] = B<4>[i] + 1; A<4>[i] = T<4>[i] * C<4>[i];")
    assert k.ins == ("B", "C") and k.outs == ("T", "A")


# -- ranges ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A<8, 8>[i, j] = B<10, 10>[i + 2, j];", {"i": (0, 8), "j": (0, 8)}),
        ("A<8>[i] = B<10>[i - 3];", {"i": (3, 8)}),
        ("A<8>[i] = B<7>[2*i];", {"i": (0, 4)}),
        ("A<8>[i] = B<7>[2*i + 1];", {"i": (0, 3)}),
        ("A<8>[i] = B<3>[i // 3];", {"i": (0, 8)}),
        ("A<8>[i] = B<2>[i // 3];", {"i": (0, 6)}),
        ("A<8>[i] = B<5>[(i + 1) // 2];", {"i": (0, 8)}),
        ("A<9>[i] = B<5>[4 - i];", {"i": (0, 5)}),
        ("A<9>[i] = B<5>[8 - 2*i];", {"i": (2, 5)}),
        ("A<8>[i] = B<3>[i % 3];", {"i": (0, 8)}),
        ("A<2, 8>[n, p] = B<2, 10>[n, p + r] * C<3>[r];", {"n": (0, 2), "p": (0, 8), "r": (0, 3)}),
    ],
)
def test_range_inference(text, expected):
    k = parse_kernel(text)
    assert ranges(k) == expected
    for c in check_kernel(k):
        assert c.ok, str(c)


def test_single_var_ranges_are_exact():
    """The inferred range is exactly the set of values keeping every single-variable index in bounds."""
    from exprgraph.tensor.ir import single_var_range

    i = index_var("i")
    exprs = [i + 3, 2 * i - 1, -i + 4, (i + 5) // 3, (3 * i + 2) // 4, -3 * i + 10, ((i - 7) // 2) // 3]
    for t in exprs:
        for extent in (1, 2, 5, 9):
            got = single_var_range(t, extent)
            assert got is not None
            _, lo, hi = got
            from exprgraph.tensor.affine import evaluate_index

            for v in range(-60, 60):
                val = evaluate_index(t, {i: v})
                assert (0 <= val < extent) == (lo <= v < hi), (str(t), extent, v)


def test_multi_variable_index_is_guarded():
    # p + r may leave B: those iterations are skipped, in numpy and in C
    k = parse_kernel("A<6>[p] = B<6>[p + r] * C<3>[r];")
    src = codegen_c(k)
    assert "eg_min(" in src and "if (" not in src  # the guard p + r < 6 became a loop bound
    b, c = np.arange(1.0, 7.0), np.array([1.0, 10.0, 100.0])
    want = [sum(b[p + r] * c[r] for r in range(3) if p + r < 6) for p in range(6)]
    np.testing.assert_allclose(reference(k, B=b, C=c)["A"], want)
    np.testing.assert_allclose(build(k)(B=b, C=c)["A"], want)
    np.testing.assert_allclose(build(k, unroll=False)(B=b, C=c)["A"], want)


def test_guarded_assignment_without_sums_writes_zero():
    k = parse_kernel("A<4, 4>[i, j] = B<5>[i + j] + 1;")
    b = np.arange(5.0)
    want = np.array([[b[i + j] + 1 if i + j < 5 else 0 for j in range(4)] for i in range(4)])
    np.testing.assert_allclose(reference(k, B=b)["A"], want)
    np.testing.assert_allclose(build(k)(B=b, A=np.full((4, 4), 7.0))["A"], want)
    assert "? " in codegen_c(k)


def test_modulo_index_out_of_range_is_skipped():
    k = parse_kernel("A<8>[i] = B<3>[i % 4];")
    b = np.array([1.0, 2.0, 3.0])
    want = [b[i % 4] if i % 4 < 3 else 0 for i in range(8)]
    np.testing.assert_allclose(reference(k, B=b)["A"], want)
    np.testing.assert_allclose(build(k)(B=b)["A"], want)


# -- reductions, accumulation, several statements --------------------------------------------------


def test_bare_reduction_assigns_the_sum():
    k = parse_kernel("C<3, 2>[i, j] = A<3, 4>[i, k] * B<4, 2>[k, j];")
    st0 = k.statements[0]
    assert not st0.accumulate and [v.name for v in st0.reduction_vars] == ["k"]
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    start = np.full((3, 2), 5.0)
    np.testing.assert_allclose(build(k)(A=a, B=b, C=start)["C"], a @ b, rtol=1e-5)
    np.testing.assert_allclose(reference(k, A=a, B=b, C=start)["C"], a @ b, rtol=1e-5)


@pytest.mark.parametrize(
    "text",
    [
        "C<3, 2>[i, j] = C<3, 2>[i, j] + A<3, 4>[i, k] * B<4, 2>[k, j];",
        "C<3, 2>[i, j] = A<3, 4>[i, k] * B<4, 2>[k, j] + C<3, 2>[i, j];",
    ],
)
def test_explicit_accumulation(text):
    k = parse_kernel(text, ins=["A", "B"], outs=["C"])
    assert k.statements[0].accumulate
    rng = np.random.default_rng(0)
    a, b, c0 = rng.standard_normal((3, 4)), rng.standard_normal((4, 2)), rng.standard_normal((3, 2))
    np.testing.assert_allclose(build(k)(A=a, B=b, C=c0)["C"], c0 + a @ b, rtol=1e-5)


def test_accumulation_with_a_constant_term_runs_inside_the_reduction_loop():
    # course semantics: A = A + B*C + 1 executes for every k, so the 1 is added K times
    k = parse_kernel("A<2>[i] = A<2>[i] + B<2, 3>[i, k] + 1;", ins=["B"], outs=["A"])
    b = np.zeros((2, 3))
    np.testing.assert_allclose(build(k)(B=b, A=np.zeros(2))["A"], [3.0, 3.0])
    np.testing.assert_allclose(reference(k, B=b)["A"], [3.0, 3.0])


def test_subtracting_accumulator():
    k = parse_kernel("A<2>[i] = A<2>[i] - B<2>[i];", ins=["A", "B"], outs=["A"])
    np.testing.assert_allclose(build(k)(A=[5.0, 6.0], B=[1.0, 2.0])["A"], [4.0, 4.0])


def test_several_statements_run_in_order():
    text = "T<4>[i] = B<4>[i] * 2; A<4>[i] = T<4>[i] + B<4>[i]; T<4>[i] = T<4>[i] * T<4>[i];"
    k = parse_kernel(text)
    b = np.arange(4.0)
    out = build(k)(B=b)
    np.testing.assert_allclose(out["A"], 3 * b)
    np.testing.assert_allclose(out["T"], (2 * b) ** 2)
    ref = reference(k, B=b)
    np.testing.assert_allclose(ref["T"], (2 * b) ** 2)


def test_in_place_self_read():
    k = parse_kernel("A<3>[i] = A<3>[i] * A<3>[i] + 1;", ins=["A"], outs=["A"])
    assert not k.statements[0].accumulate
    np.testing.assert_allclose(build(k)(A=[1.0, 2.0, 3.0])["A"], [2.0, 5.0, 10.0])


# -- int kernels -----------------------------------------------------------------------------------


def test_int_kernel_division_semantics():
    k = parse_kernel(
        "Q<6>[i] = A<6>[i] / B<6>[i]; R<6>[i] = A<6>[i] % B<6>[i]; F<6>[i] = A<6>[i] // B<6>[i];",
        data_type="int",
    )
    a = np.array([7, -7, 7, -7, 5, -2147483648], np.int32)
    b = np.array([2, 2, -2, 0, 0, -1], np.int32)
    got = build(k)(A=a, B=b)
    ref = reference(k, A=a, B=b)
    # C truncation for / and %, floor for //, 0 for a zero divisor, wrapping for INT_MIN / -1
    assert got["Q"].tolist() == [3, -3, -3, 0, 0, -2147483648]
    assert got["R"].tolist() == [1, -1, 1, 0, 0, 0]
    assert got["F"].tolist() == [3, -4, -4, 0, 0, -2147483648]
    for n in got:
        assert got[n].tolist() == ref[n].tolist()
    src = codegen_c(k)
    assert "eg_truncdiv(A[i], B[i])" in src and "eg_fmod(A[i], B[i])" in src and "eg_floordiv(A[i], B[i])" in src


def test_int_kernel_wraps_and_uses_int_constants():
    k = parse_kernel("A<3>[i] = B<3>[i] * 65536 * 65536 + 3 / 2 + 2.0 + max(B<3>[i], 1);", data_type="int")
    b = np.array([1, -3, 7], np.int32)
    got, ref = build(k)(B=b)["A"], reference(k, B=b)["A"]
    assert got.tolist() == ref.tolist() == [0 + 1 + 2 + 1, 0 + 1 + 2 + 1, 0 + 1 + 2 + 7]
    src = codegen_c(k)
    assert "int A[3]" in src and "65536 * 65536" in src and "3 / 2" in src and "eg_max(" in src
    function = src[src.index("void ") :]
    assert "float" not in function and not re.search(r"\d\.|\df\b", function)  # int literals only


def test_int_kernel_case_style_reduction():
    k = parse_kernel(
        "A<4, 4>[i, j] = A<4, 4>[i, j] + B<4, 5>[i, k] * C<5, 4>[k, j];", ins=["B", "C"], outs=["A"], data_type="int"
    )
    for seed in range(3):
        for c in check_kernel(k, seed=seed):
            assert c.ok and c.max_abs == 0


# -- printing round trip and deep input ------------------------------------------------------------


def test_format_round_trip_of_cases():
    text = (
        "A<16, 32>[i, j] = A<16, 32>[i, j] + alpha<1> * (B<16, 32>[i, k] * C<32, 32>[k, j]);"
        " A<16, 32>[i, j] = A<16, 32>[i, j] + beta<1> * D<16, 32>[i, j];"
    )
    k = parse_kernel(text, ins=["B", "C", "D", "alpha", "beta"], outs=["A"])
    once = format_kernel(k)
    assert format_kernel(parse_kernel(once, ins=k.ins, outs=k.outs)) == once


_names = st.sampled_from(["i", "j", "k"])


@st.composite
def index_text(draw):
    v = draw(_names)
    form = draw(st.integers(0, 4))
    c = draw(st.integers(1, 3))
    return [f"{v}", f"{v} + {c}", f"{c}*{v}", f"{v} // {c + 1}", f"({v} + {c}) % {c + 2}"][form]


@st.composite
def kernel_text(draw):
    leaves = []
    for _ in range(draw(st.integers(1, 3))):
        leaves.append(f"B<4, 8>[{draw(index_text())}, {draw(index_text())}]")
    leaves.append(str(draw(st.integers(0, 9))))
    ops = draw(st.lists(st.sampled_from(["+", "-", "*", "/"]), min_size=len(leaves) - 1, max_size=len(leaves) - 1))
    expr = leaves[0]
    for op, leaf in zip(ops, leaves[1:], strict=True):
        expr = f"({expr} {op} {leaf})" if draw(st.booleans()) else f"{expr} {op} {leaf}"
    return f"A<3, 3, 3>[i, j, k] = {expr};"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kernel_text())
def test_parse_format_round_trip(text):
    k = parse_kernel(text)
    once = format_kernel(k)
    k2 = parse_kernel(once)
    assert format_kernel(k2) == once
    rng = np.random.default_rng(0)
    b = rng.uniform(1, 2, (4, 8))
    np.testing.assert_array_equal(reference(k, B=b)["A"], reference(k2, B=b)["A"])


def test_deep_parentheses():
    assert sys.getrecursionlimit() <= 10_000
    depth = 10_000
    text = "A<2>[i] = " + "(" * depth + "B<2>[" + "(" * depth + "i" + ")" * depth + "]" + ")" * depth + ";"
    k = parse_kernel(text)
    assert format_kernel(k) == "A<2>[i] = B<2>[i];"
    assert "B[i]" in codegen_c(k)


def test_deep_expression_chain():
    n = 10_000
    text = "A<2>[i] = " + " + ".join(["B<2>[i]"] * n) + " - " + "-" * 50 + "B<2>[i];"
    k = parse_kernel(text)
    src = codegen_c(k)
    assert src.count("B[i]") == n + 1
    b = np.array([1.0, 2.0])
    # n copies, minus (an even number of negations of) one more
    np.testing.assert_allclose(reference(k, B=b)["A"], (n - 1) * b)
    short = parse_kernel("A<2>[i] = " + " + ".join(["B<2>[i]"] * 500) + ";")
    np.testing.assert_allclose(build(short)(B=b)["A"], 500 * b)
    g = grad_kernel(k, ["B"])
    assert len(g.statements) == 2  # one zeroing, one merged contribution
    d = reference(g, dA=np.ones(2))["dB"]
    np.testing.assert_allclose(d, [n - 1, n - 1])
    np.testing.assert_allclose(reference_grad(k, ["B"], B=b, dA=np.ones(2))["dB"], [n - 1, n - 1])


def test_deep_unary_minus_in_a_gradient():
    n = 10_000
    k = parse_kernel("A<2>[i] = " + "-" * n + "B<2>[i] * (" + "-" * (n + 1) + "B<2>[i]);", grad_to=["B"])
    g = grad_kernel(k)
    b = np.array([1.0, 3.0])
    np.testing.assert_allclose(reference(g, B=b, dA=np.ones(2))["dB"], -2 * b)
    np.testing.assert_allclose(reference_grad(k, ["B"], B=b, dA=np.ones(2))["dB"], -2 * b)


def test_deep_index_chain():
    n = 10_000
    text = "A<2>[i] = B<" + str(n + 2) + ">[i" + " + 1" * n + "];"
    k = parse_kernel(text)
    assert "B[i + 10000]" in codegen_c(k)
    b = np.arange(n + 2.0)
    np.testing.assert_allclose(reference(k, B=b)["A"], [n, n + 1])
