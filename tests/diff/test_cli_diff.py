"""``exprgraph diff``: derivatives on the command line."""

from __future__ import annotations

import pytest

from exprgraph import cli


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_seed_gradient_with_values(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "diff", "(x*y + 3)/(z - 2)", "--at", "x=2", "y=3", "z=3")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "df/dx = y/(z - 2) = 3.0",
        "df/dy = x/(z - 2) = 2.0",
        "df/dz = -((x*y + 3)/(z - 2)/(z - 2)) = -9.0",  # safe simplify merges no powers that may overflow
    ]


def test_second_order_partials(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "diff", "(x*y + 3)/(z - 2)", "--wrt", "x", "--wrt", "y", "--order", "2")
    assert code == 0
    assert out.splitlines() == ["d2f/dxdx = 0.0", "d2f/dxdy = 1.0/(z - 2)", "d2f/dydy = 0.0"]


def test_raw_and_vectors(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "diff", "x*x", "--wrt", "x", "--raw", "--at", "x=1,2,3")
    assert (code, out) == (0, "df/dx = x + x = [2.0, 4.0, 6.0]\n")
    code, out, _ = run(capsys, "diff", "sin(x)", "--wrt", "x", "--order", "4")
    assert (code, out) == (0, "d4f/dxdxdxdx = sin(x)\n")


def test_unused_variable_has_zero_derivative(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "diff", "x*2", "--wrt", "x,w")
    assert (code, out) == (0, "df/dx = 2.0\ndf/dw = 0.0\n")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["diff", "x*y", "--order", "0"], "--order must be between"),
        (["diff", "x*y", "--wrt", "1x"], "is not a variable name"),
        (["diff", "2*3"], "no variables"),
        (["diff", "x*(y"], "syntax error"),
        (["diff", "x", "--at", "x=abc"], "not a number"),
    ],
)
def test_input_errors(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert message in err and "Traceback" not in err
