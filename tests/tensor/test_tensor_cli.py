"""``exprgraph kernel codegen`` and ``exprgraph kernel grad``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from index_strategies import index_terms

import exprgraph.dims as dims
from exprgraph.cli import main
from exprgraph.tensor.affine import evaluate_index, index_var, linearize, to_term

DATA = Path(__file__).parents[1] / "data" / "tensor"


def test_codegen_to_stdout(capsys):
    assert main(["kernel", "codegen", str(DATA / "codegen" / "case4.json")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("void kernel_case4(const float B[16][32], const float C[32][32], float A[16][32])")


def test_codegen_to_file(tmp_path, capsys):
    target = tmp_path / "k.c"
    assert main(["kernel", "codegen", str(DATA / "codegen" / "case6.json"), "-o", str(target)]) == 0
    assert capsys.readouterr().out == ""
    assert "void kernel_case6(" in target.read_text()
    assert main(["kernel", "codegen", str(DATA / "codegen" / "case6.json"), "--unroll", "-o", str(target)]) == 0
    assert "+= 4)" in target.read_text()


def test_grad_and_check(tmp_path, capsys):
    case = str(DATA / "grad" / "case6.json")
    assert main(["kernel", "grad", case]) == 0
    captured = capsys.readouterr()
    assert (
        "void grad_case6(const float C[8][16][3][3], const float dA[2][8][5][5], float dB[2][16][7][7])" in captured.out
    )
    target = tmp_path / "g.c"
    assert main(["kernel", "grad", case, "--check", "-o", str(target)]) == 0
    report = capsys.readouterr().out
    assert "forward A vs numpy: ok" in report and "dB vs finite differences" in report
    assert report.strip().endswith("check passed")
    assert main(["kernel", "grad", case, "--check", "--seed", "3"]) == 0
    assert "check passed" in capsys.readouterr().err


def test_grad_to_option(capsys):
    case = str(DATA / "grad" / "case4.json")
    assert main(["kernel", "grad", case, "--to", "C"]) == 0
    out = capsys.readouterr().out
    assert "void grad_case4(const float B[16][32], const float dA[16][32], float dC[32][32])" in out
    assert main(["kernel", "grad", str(DATA / "codegen" / "case7.json"), "--to", "A"]) == 0
    assert "dA[j][i] += dB[i][j];" in capsys.readouterr().out


def test_input_errors_exit_2(tmp_path, capsys):
    assert main(["kernel", "codegen", str(tmp_path / "missing.json")]) == 2
    assert "cannot read" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            {"name": "k", "ins": ["B"], "outs": ["A"], "data_type": "float", "kernel": "A<2>[i] = B<3>[i] + B<2>[i];"}
        )
    )
    assert main(["kernel", "codegen", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "shape mismatch" in err and "^" in err
    assert main(["kernel", "grad", str(DATA / "codegen" / "case4.json")]) == 2
    assert "nothing to differentiate" in capsys.readouterr().err
    assert main(["kernel", "grad", str(DATA / "grad" / "case1.json"), "--to", " , "]) == 2
    assert main(["kernel", "grad", str(DATA / "grad" / "case1.json"), "-o", str(tmp_path / "no" / "x.c")]) == 2
    assert "cannot write" in capsys.readouterr().err
    assert main(["kernel"]) == 2


def test_check_failure_exits_1(monkeypatch, capsys):
    from exprgraph.tensor import check

    real = check.reference_grad

    def wrong(*args, **kwargs):
        out = real(*args, **kwargs)
        return {k: v + 1.0 for k, v in out.items()}

    monkeypatch.setattr(check, "reference_grad", wrong)
    assert main(["kernel", "grad", str(DATA / "grad" / "case1.json"), "--check"]) == 1
    assert "check FAILED" in capsys.readouterr().err


def test_module_entry_point():
    proc = subprocess.run(
        [sys.executable, "-m", "exprgraph", "kernel", "codegen", str(DATA / "codegen" / "case7.json")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0 and "B[i][j] = A[j][i];" in proc.stdout


# -- the index canonical form agrees with the dims simplifier -----------------------------------------

_H, _W = index_var("h"), index_var("w")


# one to three division steps over h and w (w with a coefficient >= 0)
_DIV_MOD_TERMS = index_terms(
    {_H: (-2, 3), _W: (0, 3)},
    constants=(0, 9),
    steps=(1, 3),
    divisors=(2, 5),
)


# a quotient of a quotient met a remainder: ((2w//3) - 2*((2w//3)//2)) // 2 once printed as
# (2*w//3)//2 - w//3, which reads back as 0 since (2*w//3)//2 = (2*w)//6 = w//3
_NESTED_QUOTIENT = (0 * _H + 2 * _W + 0) // 3
_NESTED_CASE = (_NESTED_QUOTIENT - 2 * (_NESTED_QUOTIENT // 2)) // 2


@settings(max_examples=150, deadline=None)
@given(_DIV_MOD_TERMS)
@example(_NESTED_CASE)
def test_canonical_index_agrees_with_dims(t):
    ours = to_term(linearize(t))
    theirs = dims.simplify_term(t)
    grid = np.arange(0, 13)
    for hv in grid:
        for wv in (0, 1, 5, 12):
            env = {_H: int(hv), _W: wv}
            v = evaluate_index(t, env)
            assert evaluate_index(ours, env) == v
            assert evaluate_index(theirs, env) == v
    # canonical: reading the canonical form again gives the same term
    assert to_term(linearize(ours)) is ours


# longer chains of division steps (quotients of quotients, remainders of remainders), signs mixed
_NESTED_TERMS = index_terms(
    {_H: (-3, 3), _W: (-3, 3)},
    constants=(-4, 9),
    steps=(1, 4),
    divisors=(2, 6),
)


_GRID_H, _GRID_W = np.meshgrid(np.arange(-4, 15), np.array([-3, -1, 0, 1, 2, 5, 7, 12, 13]), indexing="ij")


def _assert_canonical_fixpoint(t):
    ours = to_term(linearize(t))
    env = {_H: _GRID_H, _W: _GRID_W}
    np.testing.assert_array_equal(evaluate_index(ours, env) + 0 * _GRID_H, evaluate_index(t, env) + 0 * _GRID_H)
    again = to_term(linearize(ours))
    assert again is ours, f"{t} -> {ours} -> {again}"


@settings(max_examples=500, deadline=None)
@given(st.one_of(_DIV_MOD_TERMS, _NESTED_TERMS))
@example(_NESTED_CASE)
@example(((_H % 6) % 4) % 2 + _W)
@example((4 * (_W // 2) - 5 * _W) % 6)
def test_canonical_index_is_a_fixpoint(t):
    # to_term(linearize(.)) is idempotent and keeps the value, on a grid with negative indices too
    _assert_canonical_fixpoint(t)


def test_canonical_index_nested_quotient_regression():
    assert to_term(linearize(_NESTED_CASE)) is to_term(linearize(0 * _H))
    # the remainder it divides is read as one: (2w//3) - 2*((2w//3)//2) = (2w//3) % 2
    numerator = _NESTED_QUOTIENT - 2 * (_NESTED_QUOTIENT // 2)
    assert to_term(linearize(numerator)) is to_term(linearize((2 * _W) // 3 % 2))
    # a quotient left with whole multiples beside it still merges: (2w//3 + 7)//2 = (w + 1)//3 + 3
    assert str(to_term(linearize(((2 * _W) // 3 + 7) // 2))) == "(w + 1)//3 + 3"
    for t in (_NESTED_CASE, numerator, ((2 * _W) // 3 + 7) // 2, ((_H % 6) % 4) % 2, (4 * (_W // 2) - 5 * _W) % 6):
        _assert_canonical_fixpoint(t)


@pytest.mark.parametrize(
    ("expr", "canonical"),
    [
        (_H - 8 * (_H // 8), "h%8"),
        (16 * (_H // 16) + _H % 16, "h"),
        ((_H // 4) // 3, "h//12"),
        (_H // 4 - 3 * (_H // 12), "h//4%3"),
        ((2 * _H + 1) // 4, "h//2"),
        ((3 * _H + 3 * _W) % 2, "(h + w)%2"),
        (((_W + 2) % 4) % 2, "w%2"),
        ((_W - 2 * (_W // 2)) // 2, "0"),
        (3 * ((2 * _W) // 3) + (2 * _W) % 3, "2*w"),
        ((2 * _W) // 3 - 2 * (_W // 3), "2*w//3%2"),
        (5 * ((_W // 4) // 5) + (_W // 4) % 5, "w//4"),
        (((_H % 6) % 4) % 2, "h%2"),
        ((4 * (_W // 2) - 5 * _W) % 6, "w%2"),
        ((3 * _H + _H % 4 - 3 * ((_W % 6) % 4)) % 2, "w%2"),
    ],
)
def test_canonical_index_forms(expr, canonical):
    assert str(to_term(linearize(expr))) == canonical
    assert evaluate_index(dims.simplify_term(expr), {_H: 29, _W: 7}) == evaluate_index(expr, {_H: 29, _W: 7})
