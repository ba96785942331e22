"""The course cases (tests/data/tensor): every forward kernel and every gradient kernel builds,
runs and matches numpy within the course tolerance; gradient signatures follow the course order."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from exprgraph.tensor import (
    build,
    check_kernel,
    check_kernel_grad,
    codegen_c,
    format_kernel,
    grad_kernel,
    load_case,
    reference,
)

DATA = Path(__file__).parents[1] / "data" / "tensor"
CODEGEN = sorted((DATA / "codegen").glob("*.json"))
GRAD = sorted((DATA / "grad").glob("*.json"))


def test_all_cases_present():
    assert len(CODEGEN) == 11 and len(GRAD) == 10


@pytest.mark.parametrize("path", CODEGEN, ids=lambda p: p.stem)
def test_codegen_case_matches_reference(path):
    kernel = load_case(path)
    data = json.loads(path.read_text())
    assert kernel.name == data["name"]
    # parameters: ins then outs, each name once
    expected = list(dict.fromkeys(data["ins"] + data["outs"]))
    assert list(kernel.params) == expected
    src = codegen_c(kernel)
    assert f"void {data['name']}(" in src
    for seed in (0, 1):
        for comparison in check_kernel(kernel, seed=seed):
            assert comparison.ok, str(comparison)


@pytest.mark.parametrize("path", CODEGEN, ids=lambda p: p.stem)
def test_codegen_case_outputs_start_from_given_values(path):
    """Accumulating cases add to the output's initial value, assigning cases overwrite it."""
    kernel = load_case(path)
    fn = build(kernel)
    rng = np.random.default_rng(5)
    dtype = np.float32 if kernel.data_type == "float" else np.int32
    values = {n: rng.integers(-10, 10, kernel.tensors[n].shape).astype(dtype) for n in kernel.params}
    got = fn(**values)
    want = reference(kernel, **values)
    for n in want:
        np.testing.assert_allclose(got[n], want[n], rtol=1e-5, atol=1e-3)
    accumulates = any(st.accumulate for st in kernel.statements)
    out = kernel.outs[0]
    zero_start = fn(**{**values, out: np.zeros_like(values[out])})[out]
    assert (not np.array_equal(zero_start, got[out])) == accumulates


@pytest.mark.parametrize("path", GRAD, ids=lambda p: p.stem)
def test_grad_case_matches_reverse_mode_and_finite_differences(path):
    kernel = load_case(path)
    for seed in (0, 3):
        report = check_kernel_grad(kernel, seed=seed)
        assert report.ok, str(report)
        assert len(report.comparisons) == 2 * len(kernel.grad_to)


#: gradient signatures: inputs still used (ins order), then d<out>, then d<x> per grad_to
SIGNATURES = {
    "case1": ("B", "dC", "dA"),
    "case2": ("A", "dB", "dA"),
    "case3": ("B", "dC", "dA"),
    "case4": ("B", "C", "dA", "dB", "dC"),
    "case5": ("C", "D", "dA", "dB"),
    "case6": ("C", "dA", "dB"),
    "case7": ("dB", "dA"),
    "case8": ("dB", "dA"),
    "case9": ("dB", "dA"),
    "case10": ("dA", "dB"),
}


@pytest.mark.parametrize("path", GRAD, ids=lambda p: p.stem)
def test_grad_case_signature_and_plain_written_indices(path):
    gk = grad_kernel(load_case(path))
    assert gk.params == SIGNATURES[path.stem]
    src = codegen_c(gk)
    assert f"void grad_{path.stem}(" in src
    # no arithmetic in the indices of any written gradient element
    for line in src.splitlines():
        m = re.match(r"\s*(d[A-Za-z_]\w*)((?:\[[^\]]*\])+)\s*(\+?=)", line)
        if m:
            for index in re.findall(r"\[([^\]]*)\]", m.group(2)):
                assert re.fullmatch(r"[A-Za-z_]\w*|\d+", index.strip()), line
    # every gradient is zeroed before it is accumulated
    names = [st.name for st in gk.statements]
    for x in gk.outs:
        first = names.index(x)
        assert not gk.statements[first].accumulate


def test_case6_gradient_keeps_the_short_loops():
    """h = p + r: eliminating p (32 values at scale) and looping over r (3) gives the fewest iterations."""
    gk = grad_kernel(load_case(DATA / "grad" / "case6.json"))
    text = format_kernel(gk)
    assert "dA<2, 8, 5, 5>[n, k, h - r, w - s] * C<8, 16, 3, 3>[k, c, r, s]" in text
    contrib = gk.statements[1]
    assert [lp.name for lp in contrib.loops] == ["n", "c", "h", "w", "k", "r", "s"]
    assert [str(g) for g in contrib.guards] == ["0 <= h - r < 5", "0 <= w - s < 5"]
    src = codegen_c(gk)
    # the guards become loop bounds, not tests
    assert "for (int r = eg_max(0, h - 4); r < eg_min(3, h + 1); ++r)" in src
    assert "if (" not in src


def test_case8_gradient_is_a_reshape():
    gk = grad_kernel(load_case(DATA / "grad" / "case8.json"))
    assert "dA<2, 16>[h, w] = dA<2, 16>[h, w] + dB<32>[16*h + w]" in format_kernel(gk)
    assert not gk.statements[1].guards


def test_case10_one_contribution_per_occurrence():
    gk = grad_kernel(load_case(DATA / "grad" / "case10.json"))
    contribs = gk.statements[1:]
    assert len(contribs) == 3
    assert [str(g) for st in contribs for g in st.guards] == ["0 <= i < 8", "0 <= h - 1 < 8", "0 <= h - 2 < 8"]
    src = codegen_c(gk)
    assert "for (int h = 1; h < 9; ++h)" in src and "for (int h = 2; h < 10; ++h)" in src


def test_case2_occurrences_are_summed_in_one_statement():
    gk = grad_kernel(load_case(DATA / "grad" / "case2.json"))
    assert len(gk.statements) == 2
    assert "dB<4, 16>[i, j] * A<4, 16>[i, j] + dB<4, 16>[i, j] * A<4, 16>[i, j]" in format_kernel(gk)


def test_case5_products_multiply_from_the_upstream_down():
    """(B*C)*D: reverse mode multiplies the upstream by D, then by C: dB = dA*D*C."""
    gk = grad_kernel(load_case(DATA / "grad" / "case5.json"))
    assert "dA<16, 32>[i, j] * D<4, 32>[l, j] * C<32, 32>[k, j]" in format_kernel(gk)
