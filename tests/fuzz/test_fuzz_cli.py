"""Fuzzing the command line: every argument list ends with an exit code and a message, never a traceback."""

from __future__ import annotations

import io
import json
import sys
from unittest import mock

import pytest
from fuzz_support import DIM_EXPRESSIONS, EXPR_TOKENS, EXPRESSIONS, FUZZ, mutated, token_soup
from hypothesis import given
from hypothesis import strategies as st

from exprgraph.cli import main

EXPR = st.one_of(token_soup(EXPR_TOKENS, max_size=8), mutated(EXPRESSIONS, EXPR_TOKENS), DIM_EXPRESSIONS)
ASSIGN = st.builds(
    lambda n, v: f"{n}={v}",
    st.sampled_from(["x", "y", "z", "", "1"]),
    st.sampled_from(["1", "2.5", "x", "[1, 2]", "", "True", "1e999"]),
)
OPTIONS = {
    "eval": ["--dtype", "int64", "bool", "float64"],
    "print": ["--tree", "--dot", "--repr", "--dtype", "int64"],
    "simplify": ["--safe", "--unsafe", "--stats", "--dtype", "bool"],
    "diff": ["--wrt", "x", "x,y", "--order", "2", "-1", "--raw", "--safe", "--unsafe", "--at"],
    "rewrite": ["--include", "canonicalize", "--exclude", "unsafe", "--require", "nothing", "--graph", "--profile"],
    "saturate": ["--unsafe", "--iter-limit", "3", "--node-limit", "200", "--time-limit", "0.5", "--op", "f:1"],
    "dims": ["simplify", "eval", "--", "-x"],
}


@st.composite
def argv(draw: st.DrawFn) -> list[str]:
    command = draw(st.sampled_from(sorted(OPTIONS)))
    words = draw(st.lists(st.one_of(EXPR, ASSIGN, st.sampled_from(OPTIONS[command])), max_size=5))
    return [command, *words]


@FUZZ
@given(argv(), st.lists(st.one_of(EXPR, st.sampled_from(["", "# note", "x" * 5000])), max_size=3))
def test_commands_end_with_an_exit_code(capsys: pytest.CaptureFixture[str], args: list[str], lines: list[str]) -> None:
    with mock.patch.object(sys, "stdin", io.StringIO("\n".join(lines))):  # what ``-`` reads
        code = main(args)
    out = capsys.readouterr()
    assert code in (0, 1, 2), (args, code)
    assert "Traceback" not in out.err and "Traceback" not in out.out
    if code == 2:
        assert out.err.strip(), args  # an error says what went wrong


@FUZZ
@given(
    st.lists(
        st.sampled_from(
            ["A<2, 3>[i, j] = B<3>[j] * 2.0;", "A<2, 3>[i, j] = log(B<3>[j]);", "x", ";", "=", "C<2>[i] = A[i, k];"]
        ),
        max_size=3,
    ),
    st.sampled_from(["codegen", "grad"]),
    st.lists(st.sampled_from(["--unroll", "--to", "B", "A,B", "", "-o"]), max_size=2),
)
def test_kernel_commands_end_with_an_exit_code(
    capsys: pytest.CaptureFixture[str],
    tmp_path_factory: pytest.TempPathFactory,
    statements: list[str],
    action: str,
    extra: list[str],
) -> None:
    path = tmp_path_factory.mktemp("case") / "case.json"
    case = {
        "name": "k",
        "ins": ["B"],
        "outs": ["A"],
        "data_type": "float",
        "kernel": " ".join(statements),
        "grad_to": ["B"],
    }
    path.write_text(json.dumps(case))
    extra = [e if e != "-o" else str(path.parent / "out.c") for e in extra]
    code = main(["kernel", action, str(path), *extra])
    out = capsys.readouterr()
    assert code in (0, 1, 2) and "Traceback" not in out.err
