"""``exprgraph simplify``."""

from __future__ import annotations

import pytest

from exprgraph import cli


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_simplify(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "simplify", "x*1 + 0 + x") == (0, "2*x\n", "")
    assert run(capsys, "simplify", "(x*y)/y - x", "--unsafe") == (0, "0.0\n", "")
    assert run(capsys, "simplify", "(x*y)/y") == (0, "x*(y/y)\n", "")  # the default: the safe rules
    assert run(capsys, "simplify", "(x*y)/y", "--safe") == (0, "x*(y/y)\n", "")
    assert run(capsys, "simplify", "--dtype", "int64", "a*1 + a") == (0, "2*a\n", "")


def test_stats(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "simplify", "x*x/x", "--stats", "--unsafe")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "x"
    assert lines[1] == "# cost 3 -> 1 (distinct nodes other than scalar constants, n - 1 for n > 2 operands)"
    assert "cancel_product" in lines[2] and "div_to_pow" in lines[2]


def test_syntax_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "simplify", "x +* y")
    assert code == 2 and out == "" and "syntax error" in err and "^" in err


def test_a_budget_too_small_is_a_named_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "simplify", "sin(x*1) + 0 + cos(x*1 + 0) + tan(x*1)*y*1", "--max-steps", "2")
    assert code == 2 and out == "" and "max_steps=2" in err
    assert run(capsys, "simplify", "2*x + 3*x", "--max-steps", "10", "--time-limit", "30") == (0, "5*x\n", "")
    code, _, err = run(capsys, "simplify", "x + x", "--time-limit", "-1")
    assert code == 2 and "time_limit" in err
