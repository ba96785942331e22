"""C generation and building: the text of the code, random kernels compiled against numpy, unroll-and-jam
remainders, OpenMP, the compiled-kernel API, the cache and compiler errors."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from exprgraph.errors import CompileError, CompilerNotFoundError, KernelError
from exprgraph.tensor import (
    build,
    check_kernel,
    codegen_c,
    count_iterations,
    grad_kernel,
    parse_kernel,
    reference,
)
from exprgraph.tensor import build as build_module  # noqa: F401 - the function, for symmetry
from exprgraph.tensor.build import cache_dir, compile_source


def body(src: str) -> str:
    return src[src.index("void ") :]


# -- the text --------------------------------------------------------------------------------------


def test_signature_and_qualifiers():
    k = parse_kernel(
        "A<16, 32>[i, j] = A<16, 32>[i, j] + alpha<1> * B<16, 32>[i, k] * C<32, 32>[k, j];",
        name="gemm",
        ins=["B", "C", "alpha"],
        outs=["A"],
    )
    src = codegen_c(k)
    assert "void gemm(const float B[16][32], const float C[32][32], const float *alpha, float A[16][32])" in src
    assert "#include" not in src and "eg_" not in src.split("void")[0]
    assert "A[i][j] += *alpha * B[i][k] * C[k][j];" in src


def test_loop_order_puts_the_contiguous_loop_inside():
    k = parse_kernel("C<64, 64>[i, j] = A<64, 64>[i, k] * B<64, 64>[k, j];")
    src = codegen_c(k)
    loops = re.findall(r"for \(int (\w+) =", body(src))
    assert loops == ["i", "j", "i", "k", "j"]  # zeroing, then i, k, j: j walks C and B contiguously
    k2 = parse_kernel("C<64, 64>[i, k] = A<64, 64>[i, j] * B<64, 64>[k, j];")
    src2 = codegen_c(k2)
    assert "#pragma omp simd reduction(+:eg_acc)" in src2  # a dot product over contiguous j
    assert re.findall(r"for \(int (\w+) =", body(src2))[-3:] == ["i", "k", "j"]


def test_helpers_appear_only_when_used():
    plain = codegen_c(parse_kernel("A<4>[i] = B<4>[i] / 2;", data_type="int"))
    assert "#include" not in plain and "eg_" not in plain and "B[i] / 2" in plain
    risky = codegen_c(parse_kernel("A<4>[i] = B<4>[i] / C<4>[i] % (0 - 1);", data_type="int"))
    assert "eg_fmod(eg_truncdiv(B[i], C[i]), (0 - 1))" in risky
    assert "static inline int64_t eg_truncdiv_i" in risky and "static inline int64_t eg_fmod_i" in risky
    assert "eg_floordiv" not in risky and "eg_max" not in risky
    fl = codegen_c(parse_kernel("A<4>[i] = exp(B<4>[i]) % 2 + B<4>[i] // 3;"))
    assert fl.startswith("#include <math.h>") and "#include <tgmath.h>" in fl  # exp(float) is expf
    assert "A[i] = eg_fmod(exp(B[i]), 2.0f) + eg_floordiv(B[i], 3.0f);" in fl


def test_floor_division_of_possibly_negative_indices():
    k = parse_kernel("A<8>[i] = B<8>[(3 - i) // 2 + 3];")
    src = codegen_c(k)
    assert "eg_floordiv(1 - i, 2)" in src
    b = np.arange(8.0)
    want = [b[(3 - i) // 2 + 3] for i in range(8)]
    np.testing.assert_allclose(build(k)(B=b)["A"], want)


def test_operator_grouping_is_kept():
    # a * (b / c) and 2 * (w // 2) must not lose their parentheses in C
    k = parse_kernel(
        "A<6>[i] = B<6>[i] * (C<6>[i] / 4) - (B<6>[i] - (C<6>[i] - 1)); D<6>[i] = B<6>[2*(i//2)];", data_type="int"
    )
    src = codegen_c(k)
    assert "B[i] * (C[i] / 4)" in src and "B[2 * (i / 2)]" in src
    for c in check_kernel(k):
        assert c.ok and c.max_abs == 0


# -- random kernels compiled against numpy --------------------------------------------------------


@st.composite
def index_expr(draw):
    parts = []
    for v in ("i", "j"):
        c = draw(st.integers(-2, 2))
        if c:
            parts.append(f"{c}*{v}")
    text = " + ".join(parts) or "i"
    text = f"({text} + {draw(st.integers(-3, 6))})"
    kind = draw(st.integers(0, 4))
    d = draw(st.integers(2, 4))
    if kind == 1:
        text = f"{text} // {d}"
    elif kind == 2:
        text = f"{text} % {d}"
    elif kind == 3:
        text = f"{d} * ({text} // {d}) + {text} % {d}"
    elif kind == 4:
        text = f"({text} % {d + 2}) // {d}"
    return text


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(index_expr(), index_expr()), min_size=3, max_size=3))
def test_random_indices_compiled(pairs):
    lines = [f"A{n}<5, 4>[i, j] = K<5, 4>[i, j] + B<7, 6>[{a}, {b}];" for n, (a, b) in enumerate(pairs)]
    try:
        k = parse_kernel(" ".join(lines))
    except KernelError as exc:
        assume("empty range" not in str(exc))
        raise
    for unroll in (True, False):
        for c in check_kernel(k, unroll=unroll):
            assert c.ok, (c, codegen_c(k))


_INT_LEAVES = ["B<5>[i]", "C<5>[i]", "B<5>[4 - i]", "3", "0", "7"]


@st.composite
def int_expr(draw, depth=3):
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(_INT_LEAVES))
    op = draw(st.sampled_from(["+", "-", "*", "/", "%", "//", "max", "min", "neg"]))
    a, b = draw(int_expr(depth - 1)), draw(int_expr(depth - 1))
    if op in ("max", "min"):
        return f"{op}({a}, {b})"
    if op == "neg":
        return f"-({a})"
    return f"({a}) {op} ({b})" if draw(st.booleans()) else f"{a} {op} {b}"


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(int_expr(), min_size=3, max_size=3))
def test_random_int_expressions_compiled(exprs):
    k = parse_kernel(" ".join(f"A{n}<5>[i] = {e};" for n, e in enumerate(exprs)), data_type="int")
    for seed in (0, 1):
        for c in check_kernel(k, seed=seed):
            assert c.ok and c.max_abs == 0, (c, codegen_c(k))


# -- unroll-and-jam and OpenMP -------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "C<7, 9>[i, j] = A<7, 5>[i, k] * B<5, 9>[k, j];",
        "C<7, 6>[i, k] = A<7, 9>[i, j] * B<6, 9>[k, j];",
        "C<7, 9>[i, j] = C<7, 9>[i, j] + A<7, 5>[i, k] * B<5, 9>[k, j];",
        "A<3, 5, 6, 6>[n, k, p, q] = B<3, 7, 8, 8>[n, c, p + r, q + s] * W<5, 7, 3, 3>[k, c, r, s];",
        "D<6, 10>[i, j] = A<6, 10>[i, j] * 2 + B<10>[j];",
    ],
)
def test_unroll_and_jam_with_remainders(text):
    k = parse_kernel(
        text,
        ins=None if "C<7, 9>[i, j] = C" not in text else ["A", "B"],
        outs=None if "C<7, 9>[i, j] = C" not in text else ["C"],
    )
    src = codegen_c(k, unroll=True)
    assert "+= 4)" in src or "+= 3)" in src or "+= 2)" in src
    for unroll in (True, False):
        for c in check_kernel(k, unroll=unroll):
            assert c.ok, str(c)
    for x in k.ins:
        if "C<7, 9>[i, j] = C" in text:
            break
        gk = grad_kernel(k, [x])
        for c in check_kernel(gk, unroll=True):
            assert c.ok, str(c)


def test_parallel_build():
    k = parse_kernel("C<33, 17>[i, j] = A<33, 20>[i, k] * B<20, 17>[k, j];")
    src = codegen_c(k, parallel=True)
    assert src.count("#pragma omp parallel for") >= 2
    for c in check_kernel(k, parallel=True):
        assert c.ok, str(c)
    gk = grad_kernel(k, ["A"])
    for c in check_kernel(gk, parallel=True):
        assert c.ok, str(c)


# -- iterations ------------------------------------------------------------------------------------


def test_count_iterations():
    k = parse_kernel("C<3, 4>[i, j] = A<3, 5>[i, k] * B<5, 4>[k, j]; D<6>[p] = E<8>[p + r] * F<3>[r];")
    assert count_iterations(k) == [3 * 4 * 5, sum(min(3, 8 - p) for p in range(6))]
    src = codegen_c(k, count=True, name="counter")
    assert "void counter(long long *eg_count)" in src and "+=" in src


# -- the compiled-kernel API -----------------------------------------------------------------------


def test_compiled_kernel_api():
    k = parse_kernel("A<2, 3>[i, j] = A<2, 3>[i, j] + B<2, 3>[i, j];", ins=["B"], outs=["A"], name="addto")
    fn = build(k)
    assert fn.params == ("B", "A") and "addto" in repr(fn)
    b = np.ones((2, 3))
    assert fn(b)["A"].tolist() == [[1.0] * 3] * 2  # A starts at zero when not given
    a = np.full((2, 3), 2.0)
    out = fn(b, a)
    assert out["A"][0, 0] == 3.0 and a[0, 0] == 2.0  # inputs are copied
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    fn.run_inplace(b32, a32)
    assert a32[0, 0] == 3.0
    with pytest.raises(ValueError, match="C-contiguous float32"):
        fn.run_inplace(b32, a)
    with pytest.raises(ValueError, match="overlap"):
        fn.run_inplace(a32, a32)
    with pytest.raises(ValueError, match="read-only"):
        ro = a32.copy()
        ro.flags.writeable = False
        fn.run_inplace(b32, ro)
    with pytest.raises(TypeError, match="takes 2 arrays"):
        fn.run_inplace(b32)
    with pytest.raises(TypeError, match="needs the input B"):
        fn(A=a)
    with pytest.raises(TypeError, match="no parameter"):
        fn(Q=a)
    with pytest.raises(TypeError, match="given twice"):
        fn(b, B=b)
    with pytest.raises(ValueError, match="shape"):
        fn(np.ones((3, 2)))
    with pytest.raises(KernelError):
        build("A<2>[i] = B<2>[i];")  # type: ignore[arg-type]


def test_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EXPRGRAPH_CACHE", str(tmp_path))
    assert cache_dir() == tmp_path
    k = parse_kernel("A<3>[i] = B<3>[i] * 3;", name="cached")
    first = build(k).path
    assert first.parent == tmp_path
    libs = set(tmp_path.glob("*.so"))  # the kernel, and perhaps the compiler-flag probe
    inode = first.stat().st_ino
    assert (
        build(k).path == first and first.stat().st_ino == inode
    )  # reused, not rebuilt (a build renames a new file in)
    assert set(tmp_path.glob("*.so")) == libs
    assert build(k, parallel=True).path not in libs


def test_compiler_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("EXPRGRAPH_CACHE", str(tmp_path))
    with pytest.raises(CompileError, match="failed"):
        compile_source("this is not C")
    monkeypatch.setenv("CC", "no-such-compiler-exists")
    with pytest.raises(CompilerNotFoundError):
        build(parse_kernel("A<3>[i] = B<3>[i] * 5;"))


def test_reference_api():
    k = parse_kernel("A<2>[i] = B<2>[i] + 1;")
    assert reference(k, [1.0, 2.0])["A"].tolist() == [2.0, 3.0]
    with pytest.raises(TypeError, match="needs the input"):
        reference(k)
    with pytest.raises(TypeError, match="no parameter"):
        reference(k, Z=[1.0])
