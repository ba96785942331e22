"""The exprgraph command line: each subcommand's output, error messages and exit codes, the demo."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph import cli, demo


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- eval --------------------------------------------------------------------------------------


def test_eval_at_a_point(capsys):
    code, out, err = run(capsys, "eval", "(x*y + 3)/(z - 2)", "x=2", "y=3", "z=3")
    assert (code, err) == (0, "")
    assert float(out) == 9.0


def test_eval_prints_a_round_tripping_float(capsys):
    code, out, _ = run(capsys, "eval", "sin(x) + exp(y)", "x=0.5", "y=-1.25")
    assert code == 0
    assert float(out.strip()) == np.sin(0.5) + np.exp(-1.25)


def test_eval_constant_expression_needs_no_values(capsys):
    code, out, _ = run(capsys, "eval", "2**10 - 24")
    assert (code, out) == (0, "1000\n")


def test_eval_integer_semantics_with_int_symbols(capsys):
    # Python's floor semantics for // and % on int64 symbols
    code, out, _ = run(capsys, "eval", "--dtype", "int64", "a // b + a % b", "a=-7", "b=2")
    assert code == 0
    assert int(out) == -7 // 2 + -7 % 2


def test_eval_booleans_and_comparisons(capsys):
    code, out, _ = run(capsys, "eval", "where(x > 1, x, 0 - x)", "x=0.5")
    assert (code, float(out)) == (0, -0.5)
    code, out, _ = run(capsys, "eval", "--dtype", "bool", "p and not q", "p=True", "q=False")
    assert (code, out) == (0, "True\n")


def test_eval_vector(capsys):
    code, out, err = run(capsys, "eval", "x**2 + y", "x=1,2,3", "y=0.5")
    assert (code, err) == (0, "")
    assert out == "[1.5, 4.5, 9.5]\n"


def test_eval_vectors_broadcast_and_match_numpy(capsys):
    xs = [0.1, -2.5, 3.0, 1e-3]
    ys = [1.0, 2.0, -4.0, 0.25]
    code, out, _ = run(
        capsys,
        "eval",
        "log(abs(x)) * cos(y) / (1 + y**2)",
        "x=" + ",".join(map(repr, xs)),
        "y=" + ",".join(map(repr, ys)),
    )
    assert code == 0
    x, y = np.array(xs), np.array(ys)
    expected = np.log(np.abs(x)) * np.cos(y) / (1 + y**2)
    got = np.array(eval_list(out))
    np.testing.assert_allclose(got, expected, rtol=1e-15)


def eval_list(text: str) -> list[float]:
    # the CLI prints a Python list of float reprs; read it back without eval
    return [float(t) for t in text.strip().strip("[]").split(",")]


def test_eval_ieee_semantics_print_inf_and_nan(capsys):
    code, out, err = run(capsys, "eval", "1/x", "x=0.0")
    assert (code, out, err) == (0, "inf\n", "")
    code, out, _ = run(capsys, "eval", "log(x)", "x=-1,0,1")
    got = eval_list(out)
    assert math.isnan(got[0]) and got[1] == -math.inf and got[2] == 0.0


def test_eval_expression_starting_with_minus_after_double_dash(capsys):
    code, out, _ = run(capsys, "eval", "--", "-x**2", "x=3")
    assert (code, float(out)) == (0, -9.0)


# -- eval errors -------------------------------------------------------------------------------


def test_eval_missing_value_names_the_symbol(capsys):
    code, out, err = run(capsys, "eval", "x + yy", "x=1")
    assert code == 2 and out == ""
    assert "yy" in err
    assert "Traceback" not in err


def test_eval_unknown_function(capsys):
    code, out, err = run(capsys, "eval", "frob(x) + 1", "x=1")
    assert code == 2 and out == ""
    assert "unknown function 'frob'" in err
    lines = err.rstrip("\n").splitlines()
    assert lines[-2:] == ["frob(x) + 1", "^"]


def test_eval_bad_syntax_shows_the_caret(capsys):
    code, out, err = run(capsys, "eval", "x + * 2", "x=1")
    assert code == 2 and out == ""
    assert err.startswith("exprgraph: syntax error:")
    assert "position 4" in err
    assert err.rstrip("\n").splitlines()[-2:] == ["x + * 2", "    ^"]


@pytest.mark.parametrize(
    ("item", "needle"),
    [
        ("x", "expected name=value"),
        ("x=", "missing value"),
        ("=3", "expected name=value"),
        ("1x=3", "expected name=value"),
        ("x=abc", "'abc' is not a number"),
        ("x=__import__('os')", "is not a number"),
        ("x=1,,2", "is not a number"),
        ("x=1,two", "'two' is not a number"),
    ],
)
def test_eval_bad_assignment(capsys, item, needle):
    code, out, err = run(capsys, "eval", "x + 1", item)
    assert code == 2 and out == ""
    assert needle in err
    assert err.startswith("exprgraph: error:")


def test_eval_rejects_repeated_and_unused_names(capsys):
    code, _, err = run(capsys, "eval", "x + 1", "x=1", "x=2")
    assert code == 2 and "'x' is given twice" in err
    code, _, err = run(capsys, "eval", "x + 1", "x=1", "y=2")
    assert code == 2 and "does not use 'y'" in err


def test_eval_mismatched_vector_lengths_is_an_error(capsys):
    code, out, err = run(capsys, "eval", "x + y", "x=1,2,3", "y=1,2")
    assert code == 2 and out == ""
    assert err.startswith("exprgraph: error:")


def test_usage_errors_exit_2(capsys):
    code, _, err = run(capsys)
    assert code == 2 and "COMMAND" in err
    code, _, err = run(capsys, "frobnicate")
    assert code == 2 and "invalid choice" in err
    code, _, err = run(capsys, "print", "x", "--tree", "--dot")
    assert code == 2 and "not allowed with" in err


def test_help_exits_0(capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0
    for name, _spec in cli.COMMANDS:
        assert name in out


def _help(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code, out, _ = run(capsys, *argv, "--help")
    assert code == 0
    return " ".join(out.split())  # argparse wraps to the terminal width


def test_help_describes_what_the_commands_do_today(capsys):
    text = _help(capsys)
    # the summary names what the commands cover, not only "build, print, parse and evaluate"
    for words in ("simplify", "differentiate", "dimension expressions", "equality saturation", "tensor index kernels"):
        assert words in text
    assert "exprgraph print EXPR --svg" in text and "Graphviz" in text  # how pictures are made


def test_demo_help_lists_every_section_with_its_title(capsys):
    text = _help(capsys, "demo")
    assert demo.TOUR_TEXT in text
    for sec in demo.SECTIONS:
        assert f"{sec.name} {sec.title}" in text


def test_dims_help_shows_the_operators_as_typed(capsys):
    text = _help(capsys, "dims")
    assert "%%" not in text and "// %," in text


def test_print_svg_draws_with_graphviz(capsys):
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is not installed")
    code, out, _ = run(capsys, "print", "sin(x*y) + cos(x*y)", "--svg")
    assert code == 0 and "<svg" in out and out.rstrip().endswith("</svg>")
    # x, y, x*y, sin, cos and the sum: each distinct node drawn once, with six edges
    assert out.count('class="node"') == 6 and out.count('class="edge"') == 6


def test_print_svg_without_graphviz_says_what_to_install(capsys, monkeypatch):
    monkeypatch.setenv("PATH", "")
    code, out, err = run(capsys, "print", "x*y", "--svg")
    assert code == 2 and out == ""
    assert "Graphviz's `dot` program, which is not on PATH" in err and "install Graphviz" in err and "--dot" in err


# -- parse_assignment / format_value -------------------------------------------------------------


def test_parse_assignment_values():
    assert cli.parse_assignment("n=3") == ("n", 3)
    assert type(cli.parse_assignment("n=3")[1]) is int
    assert cli.parse_assignment("x=-2.5e3") == ("x", -2500.0)
    assert cli.parse_assignment("b=True") == ("b", True)
    name, v = cli.parse_assignment("x=inf")
    assert name == "x" and v == math.inf
    name, arr = cli.parse_assignment("v=1,2,3")
    assert arr.dtype == np.int64 and arr.tolist() == [1, 2, 3]
    name, arr = cli.parse_assignment("v=1,2.5")
    assert arr.dtype == np.float64 and arr.tolist() == [1.0, 2.5]
    name, arr = cli.parse_assignment("v=True,False")
    assert arr.dtype == np.bool_ and arr.tolist() == [True, False]
    with pytest.raises(cli.CommandError, match="int64"):
        cli.parse_assignment("v=1,99999999999999999999")


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.floats(), st.integers(-(2**63), 2**63 - 1), st.booleans()))
def test_assignment_and_format_round_trip(value):
    # the text the CLI prints for a value reads back as the same value, bit for bit
    name, got = cli.parse_assignment(f"v={cli.format_value(np.asarray(value))}")
    assert name == "v"
    assert type(got) is type(value)
    if isinstance(value, float):
        assert np.float64(got).tobytes() == np.float64(value).tobytes() or (np.isnan(got) and np.isnan(value))
    else:
        assert got == value


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=8),
    st.floats(-1e6, 1e6),
)
def test_eval_vector_matches_evaluate(xs, y):
    from exprgraph.eval import evaluate

    text = "x*y - sin(x)/(1 + y**2)"
    argv = ["eval", text, "x=" + ",".join(map(repr, xs)), f"y={y!r}"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(argv)
    assert code == 0
    expected = evaluate(eg.parse(text), {"x": np.array(xs), "y": y})
    got = eval_list(out.getvalue())
    assert np.array_equal(np.array(got), expected, equal_nan=True)


def test_command_error_is_a_value_error():
    assert issubclass(cli.CommandError, ValueError)
    assert issubclass(cli.CommandError, eg.ExprgraphError)


def test_format_value():
    assert cli.format_value(np.float64(0.1)) == "0.1"
    assert cli.format_value(np.int64(7)) == "7"
    assert cli.format_value(np.array([[1, 2], [3, 4]])) == "[[1, 2], [3, 4]]"


# -- print ---------------------------------------------------------------------------------------


def test_print_infix_minimal_parentheses(capsys):
    code, out, _ = run(capsys, "print", "((x*y) + (3))/((z - 2))")
    assert (code, out) == (0, "(x*y + 3)/(z - 2)\n")


def test_print_round_trips(capsys):
    for text in ["-x**2", "(-2)**x", "-2**x", "x - (y - z)", "add(x, y, z)", "sin(x)**-y", "x < y"]:
        code, out, _ = run(capsys, "print", "--", text)
        assert code == 0
        assert eg.parse(out.strip()) is eg.parse(text)


def test_print_repr(capsys):
    code, out, _ = run(capsys, "print", "x + 1", "--repr")
    assert (code, out) == (0, "add(Symbol('x'), const(1))\n")


def test_print_repr_int_symbols(capsys):
    code, out, _ = run(capsys, "print", "--dtype", "int64", "n // 2", "--repr")
    assert (code, out) == (0, "floordiv(Symbol('n', 'int64'), const(2))\n")


def test_print_tree_shows_shared_node_once(capsys):
    code, out, _ = run(capsys, "print", "sin(x*y) + cos(x*y)", "--tree")
    assert code == 0
    assert out == eg.dformat(eg.parse("sin(x*y) + cos(x*y)")) + "\n"
    assert out.count("mul float64 [id A]") == 1
    assert out.count("[id A] ···") == 1


def test_print_dot(capsys):
    code, out, _ = run(capsys, "print", "x*x + 1", "--dot")
    assert code == 0
    assert out.startswith('digraph "expr" {')
    assert out.rstrip().endswith("}")
    # x, 1, mul, add: each distinct node once
    assert len(re.findall(r"^\s*n\d+ \[label=", out, re.M)) == 4


def test_print_syntax_error(capsys):
    code, out, err = run(capsys, "print", "x * (y + 1")
    assert code == 2 and out == ""
    assert "'(' was never closed" in err
    assert err.rstrip("\n").splitlines()[-2:] == ["x * (y + 1", "    ^"]


def test_print_deep_chain_without_recursion(capsys):
    text = "x" + " + 1" * 100_000
    code, out, _ = run(capsys, "print", text)
    assert code == 0
    assert out == text + "\n"


# -- extensibility --------------------------------------------------------------------------------


def test_a_command_module_adds_a_subcommand(capsys, monkeypatch):
    # a later layer registers a command with one COMMANDS entry pointing at its add_parser
    module = type(sys)("exprgraph_test_cmd")

    def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
        p = subparsers.add_parser("size", help="number of distinct nodes")
        p.add_argument("expr")
        p.set_defaults(func=lambda args: print(eg.parse(args.expr).size) or 0)
        return p

    module.add_parser = add_parser
    monkeypatch.setitem(sys.modules, "exprgraph_test_cmd", module)
    monkeypatch.setattr(cli, "COMMANDS", [*cli.COMMANDS, ("size", "exprgraph_test_cmd")])
    code, out, _ = run(capsys, "size", "x*x + x*x")
    assert (code, out) == (0, "3\n")


# -- demo ----------------------------------------------------------------------------------------


def test_demo_sections_and_value(capsys):
    code, out, err = run(capsys, "demo")
    assert (code, err) == (0, "")
    titles = re.findall(r"^== \d+\. .* \[(\w+)\] ==$", out, re.M)
    assert titles == [s.name for s in demo.SECTIONS]
    assert titles[:5] == ["build", "interning", "printing", "parsing", "evaluation"]
    # the evaluated number at the tour point, against hand-written numpy
    m = re.search(r"evaluate\(f, \{'x': 2\.0, 'y': 3\.0, 'z': 3\.0\}\)\s+-> (\S+)", out)
    assert m is not None
    x, y, z = 2.0, 3.0, 3.0
    assert float(m.group(1)) == pytest.approx((x * y + 3) / (z - 2) + np.sin(x * y), rel=1e-15)
    m = re.search(r"max \|ours - hand-written numpy\|\s+-> (\S+)", out)
    assert m is not None and float(m.group(1)) <= 1e-12
    assert "parse(str(f)) is f" in out
    assert re.search(r"parse\(str\(f\)\) is f\s+-> True", out)
    assert re.search(r"\(x\*y \+ 3\) is \(x\*y \+ 3\)\s+-> True", out)
    assert "mul float64 [id A]" in out


def test_demo_runs_selected_sections():
    buf = io.StringIO()
    demo.run(buf, only=["parsing"])
    text = buf.getvalue()
    assert text.startswith("== 4. Parsing")
    assert "[build]" not in text


def test_demo_unknown_section(capsys):
    code, _, err = run(capsys, "demo", "nosuch")
    assert code == 2 and "no demo section nosuch" in err


def test_demo_section_names_are_unique():
    with pytest.raises(ValueError, match="exists already"):
        demo.section("build", "again")(lambda tour: None)


def test_python_dash_m_exprgraph():
    proc = subprocess.run(
        [sys.executable, "-m", "exprgraph", "print", "x*(y + 1)", "--repr"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0
    assert proc.stdout == "mul(Symbol('x'), add(Symbol('y'), const(1)))\n"
    proc = subprocess.run(
        [sys.executable, "-m", "exprgraph", "print", "x +"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "^" in proc.stderr


# -- console: the helpers every sub-command shares --------------------------------------------------


def test_console_is_what_cli_re_exports():
    from exprgraph import console

    assert cli.parse_assignment is console.parse_assignment
    assert cli.format_value is console.format_value
    assert cli.EXIT_INPUT == console.EXIT_INPUT == 2


def test_console_add_command_adds_expr_and_dtype():
    from exprgraph import console

    parser = argparse.ArgumentParser(prog="t")
    sub = parser.add_subparsers(dest="command", required=True)
    one = console.add_command(sub, "one", lambda a: 0, "the summary\n\nthe description,\n  in two lines", expr="one")
    console.add_command(sub, "many", lambda a: 1, "s", expr="many")
    console.add_command(sub, "none", lambda a: 2, "s\n\nd")
    assert one.description == "the description, in two lines"  # the summary is what `exprgraph --help` lists
    assert "the summary" in parser.format_help()
    args = parser.parse_args(["one", "x+1", "--dtype", "int64"])
    assert (args.expr, args.dtype, args.func(args)) == ("x+1", "int64", 0)
    args = parser.parse_args(["many", "x", "y"])
    assert (args.exprs, args.dtype, args.func(args)) == (["x", "y"], "float64", 1)
    args = parser.parse_args(["none"])
    assert not hasattr(args, "expr") and args.func(args) == 2


def test_console_read_text_file(tmp_path):
    from exprgraph import console

    good = tmp_path / "r.txt"
    good.write_text("x -> x\n", encoding="utf-8")
    assert console.read_text_file(str(good), "rule file", 100) == "x -> x\n"
    with pytest.raises(eg.errors.CommandError, match="a rule file is at most 3 bytes"):
        console.read_text_file(str(good), "rule file", 3)
    with pytest.raises(eg.errors.CommandError, match="cannot read the rule file"):
        console.read_text_file(str(tmp_path / "missing.txt"), "rule file", 100)
    bad = tmp_path / "b.txt"
    bad.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(eg.errors.CommandError, match="is not UTF-8 text"):
        console.read_text_file(str(bad), "rule file", 100)


def test_console_report_error(capsys):
    from exprgraph import console

    assert console.report_error(eg.errors.CommandError("bad value")) == 2
    assert capsys.readouterr().err == "exprgraph: error: bad value\n"
    with pytest.raises(eg.errors.ParseError) as info:
        eg.parse("x +")
    assert console.report_error(info.value) == 2
    assert capsys.readouterr().err.startswith("exprgraph: syntax error: ")


# -- pipes, standard input, JSON and float32 (issue 31) ---------------------------------------------


def _exprgraph(*argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m exprgraph`` with ``argv`` (and ``stdin``)."""
    return subprocess.run(
        [sys.executable, "-m", "exprgraph", *argv], input=stdin, capture_output=True, text=True, timeout=120
    )


def test_a_reader_that_goes_away_stops_the_command_quietly():
    # `exprgraph print --tree - | head -c 20`: far more output than a pipe holds, and the reader leaves
    expr = " + ".join(f"x{i}" for i in range(20_000))
    proc = subprocess.Popen(
        [sys.executable, "-m", "exprgraph", "print", "--tree", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(expr.encode())
    proc.stdin.close()
    assert proc.stdout.read(20).startswith(b"add float64")
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141  # 128 + SIGPIPE, as seq or cat under `set -o pipefail`
    assert "Traceback" not in err and "Exception ignored" not in err and "BrokenPipe" not in err


def test_a_closed_pipe_in_process_returns_the_pipe_status(monkeypatch):
    class Gone(io.StringIO):
        """A pipe whose reader left: writes go to the buffer, flushing it fails."""

        def flush(self) -> None:
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", Gone())
    assert cli.main(["print", "x + 1"]) == 141
    assert cli.main(["--help"]) == 141


def test_expressions_from_standard_input(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("x*y + 1\n\n# a comment\n  sin(x)**2 + cos(x)**2\n"))
    code, out, err = run(capsys, "eval", "-", "x=2", "y=3")
    assert (code, err) == (0, "")
    assert out.split() == ["7.0", "1.0"]  # one result a line; a value one expression does not use is fine
    monkeypatch.setattr(sys, "stdin", io.StringIO("x*1 + 0\n2*y + 3*y\n"))
    code, out, _ = run(capsys, "simplify", "-")
    assert (code, out) == (0, "x\n5*y\n")
    monkeypatch.setattr(sys, "stdin", io.StringIO("x*1\n"))
    code, out, _ = run(capsys, "rewrite", "-", "y*1")  # several EXPRs: - stands for the lines of stdin
    assert (code, out) == (0, "x\ny\n")


def test_errors_on_standard_input_name_the_line(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("x + 1\nx + * 2\n"))
    code, out, err = run(capsys, "print", "-")
    assert code == 2 and out == "x + 1\n"
    assert err.startswith("exprgraph: syntax error: expected an operand, got '*' (line 2 of standard input)")
    assert err.endswith("x + * 2\n    ^\n")
    monkeypatch.setattr(sys, "stdin", io.StringIO("x + y\n"))
    code, _, err = run(capsys, "eval", "-", "x=1")
    assert code == 2 and err.startswith("exprgraph: error: line 1 of standard input: no value for symbol 'y'")
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert run(capsys, "rewrite", "-")[:2] == (2, "")


def test_standard_input_closed_or_unreadable_is_an_error(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", None)  # what Python gives a process started with fd 0 closed
    code, out, err = run(capsys, "diff", "-")
    assert (code, out) == (2, "")
    assert err == "exprgraph: error: standard input is closed: give the expression as an argument\n"

    class Unreadable(io.StringIO):
        def readline(self, size: int | None = -1) -> str:
            raise OSError(5, "Input/output error")

    monkeypatch.setattr(sys, "stdin", Unreadable())
    code, out, err = run(capsys, "simplify", "-")
    assert (code, out) == (2, "") and err.startswith("exprgraph: error: cannot read line 1 of standard input: ")
    proc = subprocess.run(
        [sys.executable, "-m", "exprgraph", "eval", "-"], stdin=subprocess.DEVNULL, capture_output=True, text=True
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")  # no line: nothing to do, as with xargs


def test_standard_input_through_a_real_pipe():
    proc = _exprgraph("diff", "-", "--wrt", "x", stdin="x*y\nsin(x)\n")
    assert (proc.returncode, proc.stdout) == (0, "df/dx = y\ndf/dx = cos(x)\n")
    assert "error" not in proc.stderr


def _json_lines(out: str) -> list:
    return [json.loads(line) for line in out.splitlines()]


def test_json_output_of_each_command(capsys, monkeypatch, tmp_path):
    code, out, _ = run(capsys, "eval", "--json", "1/x", "x=0,-1,4")
    assert code == 0 and _json_lines(out) == [{"expr": "1/x", "dtype": "float64", "value": ["inf", -1.0, 0.25]}]
    code, out, _ = run(capsys, "eval", "--json", "log(x)", "x=-1")
    assert _json_lines(out)[0]["value"] == "nan"  # strict JSON: nan and the infinities as strings
    code, out, _ = run(capsys, "print", "--json", "--tree", "x*x + 1")
    (printed,) = _json_lines(out)
    assert printed["expr"] == "x*x + 1" and printed["size"] == 4 and printed["symbols"] == ["x"]
    assert printed["tree"].startswith("add float64") and printed["shape"] == []
    code, out, _ = run(capsys, "diff", "--json", "x*y", "--at", "x=1", "y=2")
    assert _json_lines(out) == [
        {
            "expr": "x*y",
            "order": 1,
            "derivatives": [
                {"wrt": ["x"], "derivative": "y", "value": 2.0},
                {"wrt": ["y"], "derivative": "x", "value": 1.0},
            ],
        }
    ]
    code, out, _ = run(capsys, "simplify", "--json", "x*1 + 0")
    assert _json_lines(out) == [{"expr": "x*1 + 0", "simplified": "x"}]
    code, out, _ = run(capsys, "dims", "eval", "--json", "(s+7)//8", "s=13")
    assert _json_lines(out) == [{"expr": "(s+7)//8", "value": 2}]
    code, out, _ = run(capsys, "dims", "simplify", "--json", "2*b//b")
    assert _json_lines(out) == [{"expr": "2*b//b", "simplified": "2"}]
    code, out, _ = run(capsys, "rewrite", "--json", "x*1", "y + 0")
    assert _json_lines(out) == [{"exprs": ["x*1", "y + 0"], "outputs": ["x", "y"]}]
    code, out, _ = run(capsys, "saturate", "--json", "--unsafe", "x*1 + 0")  # x + 0 -> x: -0.0 + 0 is +0.0
    (saturated,) = _json_lines(out)
    assert saturated["best"] == "x" and saturated["iterations"] and saturated["stop"]
    monkeypatch.setenv("EXPRGRAPH_CACHE", str(tmp_path / "cache"))
    code, out, _ = run(capsys, "cache", "info", "--json")
    assert code == 0 and _json_lines(out)[0]["libraries"] == 0
    monkeypatch.setattr(sys, "stdin", io.StringIO("x\n2*x\n"))
    code, out, _ = run(capsys, "eval", "--json", "-", "x=3")
    assert [d["value"] for d in _json_lines(out)] == [3.0, 6.0]  # JSON Lines: one object per expression


def test_to_json_is_strict_json():
    from exprgraph import console

    data = console.to_json({"a": np.array([np.nan, -np.inf]), "b": np.float32(0.1), eg.Symbol("t"): (1, True)})
    assert data == {"a": ["nan", "-inf"], "b": 0.1, "t": [1, True]}
    json.dumps(data, allow_nan=False)


def test_dtype_float32(capsys):
    code, out, _ = run(capsys, "eval", "--dtype", "float32", "x*y", "x=0.1", "y=3")
    want = np.float32(0.1) * np.float32(3)
    assert code == 0 and out == f"{float(str(want))!r}\n"  # the float32 result, in its shortest text
    code, out, _ = run(capsys, "eval", "--dtype", "float32", "--json", "x*x", "x=1e20,2")
    assert _json_lines(out) == [{"expr": "x*x", "dtype": "float32", "value": ["inf", 4.0]}]
    code, out, _ = run(capsys, "print", "--dtype", "float32", "--repr", "x")
    assert out == "Symbol('x', 'float32')\n"
    code, out, _ = run(capsys, "diff", "--dtype", "float32", "--json", "x*y", "--at", "x=0.1", "y=2")
    assert _json_lines(out)[0]["derivatives"][1]["value"] == 0.1
    for command in ("eval", "print", "diff", "simplify", "rewrite", "saturate"):
        assert "float32" in _help(capsys, command, "--help")
