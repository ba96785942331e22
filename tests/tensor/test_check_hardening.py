"""Kernel checks that fail on nan/inf, draw inputs inside each op's domain, and refuse huge cases up front."""

from __future__ import annotations

import importlib
import json
import tracemalloc

import numpy as np
import pytest

from exprgraph.cli import main
from exprgraph.errors import BuildTimeoutError, CacheSecurityError, SizeLimitError
from exprgraph.tensor import check_kernel, check_kernel_grad, compare, parse_kernel, random_inputs
from exprgraph.tensor.check import check_limits, input_domains


def _case(tmp_path, kernel: str, ins: list[str], outs: list[str], grad_to: list[str]) -> str:
    path = tmp_path / "case.json"
    case = {"name": "k", "ins": ins, "outs": outs, "data_type": "float", "kernel": kernel, "grad_to": grad_to}
    path.write_text(json.dumps(case))
    return str(path)


# -- compare --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("got", "want"),
    [
        ([1.0, np.nan], [1.0, 2.0]),  # nan against a number
        ([1.0, 2.0], [1.0, np.nan]),  # the finding: a finite gradient against nan finite differences
        ([1.0, np.inf], [1.0, 2.0]),
        ([1.0, 2.0], [1.0, np.inf]),  # worst error inf, relative error nan: was "ok"
        ([np.inf], [-np.inf]),
        ([np.nan], [np.inf]),
    ],
)
def test_nan_or_inf_on_one_side_fails(got: list, want: list) -> None:
    c = compare(np.array(got), np.array(want), "d")
    assert not c.ok and c.failures == 1
    assert c.max_abs == np.inf and "MISMATCH" in str(c)


def test_nan_and_inf_agreeing_pass_and_are_reported() -> None:
    c = compare(np.array([np.nan, np.inf, -np.inf, 1.0]), np.array([np.nan, np.inf, -np.inf, 1.0 + 1e-9]), "d")
    assert c.ok and c.special == 3
    assert c.max_abs < 1e-8 and "3 element(s) nan or inf on both sides" in str(c)


def test_finite_values_use_the_course_tolerance() -> None:
    assert compare(np.array([1.0, 0.0]), np.array([1.0005, 1e-4]), "d").ok  # abs error below 1e-3
    assert compare(np.array([1000.0]), np.array([1000.05]), "d").ok  # rel error below 1e-4
    assert not compare(np.array([1000.0]), np.array([1000.5]), "d").ok
    assert not compare(np.array([1.0]), np.array([0.0]), "d").ok  # relative error against 0 is infinite


# -- domains --------------------------------------------------------------------------------------


def test_inputs_are_drawn_inside_the_domains() -> None:
    k = parse_kernel("C<4, 8>[i, j] = log(A<4, 8>[i, j]) + sqrt(-B<4, 8>[i, j]) + E<4, 8>[i, j] / D<4, 8>[i, j];")
    domains = input_domains(k)
    assert set(domains) == {"A", "B", "D"}
    values = random_inputs(k, k.ins, seed=3, domains=domains)
    assert (values["A"] > 0.5).all() and (values["A"] < 10).all()
    assert (values["B"] < -0.5).all()
    assert (np.abs(values["D"]) > 0.5).all() and (values["D"] < 0).any() and (values["D"] > 0).any()
    assert (values["E"] < 0).any()  # unrestricted: [-10, 10)


def test_int_kernels_draw_nonzero_divisors() -> None:
    k = parse_kernel("C<64>[i] = A<64>[i] % B<64>[i];", data_type="int")
    values = random_inputs(k, k.ins, seed=0, domains=input_domains(k))
    assert values["B"].dtype.kind == "i" and (values["B"] != 0).all()


@pytest.mark.parametrize(
    "text",
    [
        "B<4, 16>[i, j] = log(A<4, 16>[i, j]);",
        "B<4, 16>[i, j] = sqrt(A<4, 16>[i, j]) * A[i, j];",
        "B<4, 16>[i, j] = 1.0 / A<4, 16>[i, j];",
    ],
)
def test_gradient_checks_of_log_sqrt_and_division_pass_inside_their_domain(text: str) -> None:
    k = parse_kernel(text)
    report = check_kernel_grad(k, ["A"])
    assert report.ok, str(report)
    assert all(c.special == 0 for c in report.comparisons)


def test_a_check_that_leaves_the_domain_fails(tmp_path, capsys) -> None:
    # the finding: "ok" with a worst error of inf when log read negative values; a compound
    # argument is not restricted, so here the check sees the nan and must say so
    case = _case(tmp_path, "C<4, 4>[i, j] = log(A<4, 4>[i, j] - B<4, 4>[i, j]);", ["A", "B"], ["C"], ["A"])
    assert main(["kernel", "grad", case, "--check", "-o", str(tmp_path / "g.c")]) == 1
    out = capsys.readouterr().out
    assert "MISMATCH" in out and "check FAILED" in out and "check passed" not in out


# -- limits ---------------------------------------------------------------------------------------

HUGE = "B<100000, 100000>[i, j] = A<100000, 100000>[i, j] * A[i, j];"


def test_huge_cases_are_refused_before_allocating() -> None:
    # the finding: a raw MemoryError (74.5 GiB) from kernel grad --check
    k = parse_kernel(HUGE)
    tracemalloc.start()
    try:
        with pytest.raises(SizeLimitError) as info:
            check_kernel_grad(k, ["A"])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 50_000_000
    err = info.value
    assert (
        err.size == 5 * 10**10
    )  # A and B, and the gradient kernel's A, dB and dA and err.limit == 2**24 and "--max-elements" in str(err)
    with pytest.raises(SizeLimitError):
        check_kernel(k)


def test_limits_can_be_raised_and_count_loop_iterations(monkeypatch) -> None:
    k = parse_kernel("C<64, 64>[i, j] = A<64, 64>[i, k] * B<64, 64>[k, j];")
    elements, points = check_limits(k)
    assert elements == 3 * 64 * 64 and points == 64**3
    with pytest.raises(SizeLimitError, match="--max-points"):
        check_limits(k, max_points=1000)
    monkeypatch.setenv("EXPRGRAPH_CHECK_MAX_POINTS", "1000")
    with pytest.raises(SizeLimitError) as info:
        check_kernel(k)
    assert info.value.limit == 1000
    monkeypatch.setenv("EXPRGRAPH_CHECK_MAX_POINTS", "10_000_000")
    assert all(c.ok for c in check_kernel(k))


def test_cli_refuses_huge_cases_with_a_message(tmp_path, capsys) -> None:
    case = _case(tmp_path, HUGE, ["A"], ["B"], ["A"])
    assert main(["kernel", "grad", case, "--check"]) == 2
    err = capsys.readouterr().err
    assert "50,000,000,000 tensor elements" in err and "--max-elements" in err and "Traceback" not in err
    assert main(["kernel", "grad", case, "--check", "--max-elements", "0"]) == 2
    assert "positive integer" in capsys.readouterr().err


@pytest.mark.parametrize("error", [CacheSecurityError, BuildTimeoutError])
def test_a_security_or_timeout_error_is_not_swallowed_by_the_flag_probe(
    monkeypatch: pytest.MonkeyPatch, error: type[Exception]
) -> None:
    # the probe tries weaker flags on a compile error; an unsafe cache or a hung build is no such error
    build = importlib.import_module("exprgraph.tensor.build")  # the package's `build` is the function
    calls: list[tuple] = []

    def refuse(*args: object, **kwargs: object) -> None:
        calls.append(args)
        raise error("refused")

    monkeypatch.setattr(build.cbuild, "library_path", refuse)
    monkeypatch.setattr(build, "_native_ok", {})
    with pytest.raises(error):
        build._flags_for("cc", None)
    assert len(calls) == 1 and "cc" not in build._native_ok
