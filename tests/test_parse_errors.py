"""Every parser's errors in one table: the error classes, the position, the message and the caret line.

A row is ``(parser, text, at, message)``: ``at`` is the offset of the fault, or a fragment of the text
that starts there (its first occurrence), or None where the error carries no position to check. Each
error must be an instance of all of its parser's error classes, contain ``message``, and end with the
line of ``text`` holding the fault and a caret under its column.

Then the size limits every parser shares (:func:`exprgraph.core.tokens.max_text`): a text over the
limit raises SizeLimitError naming ``$EXPRGRAPH_MAX_TEXT`` before any work is done on it, a token
over :data:`~exprgraph.core.tokens.MAX_TOKEN` characters is a positioned error of its parser, and
deep nesting is read without recursion.
"""

from __future__ import annotations

import functools
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import exprgraph.dims.parse as dims_parse
from exprgraph import Symbol, parse
from exprgraph.cli import main
from exprgraph.core.tokens import DEFAULT_MAX_TEXT, ENV_MAX_TEXT, MAX_TOKEN, SHORT_TEXT, tokenize
from exprgraph.dims import parse_expression, simplify_expression
from exprgraph.errors import CARET_WINDOW, DimExpressionError, KernelError, ParseError, RuleSyntaxError, SizeLimitError
from exprgraph.rules import RuleSet, parse_condition, rule
from exprgraph.tensor import load_case, parse_kernel


@dataclass(frozen=True)
class Parser:
    """A parser under test: its name, the function reading text, and the classes its errors belong to."""

    name: str
    read: Callable[[str], Any]
    errors: tuple[type[BaseException], ...]

    def given(self, **options: Any) -> Parser:
        """The same parser called with keyword ``options``."""
        shown = ", ".join(f"{k}={v!r}" for k, v in options.items())
        return Parser(f"{self.name}({shown})", functools.partial(self.read, **options), self.errors)


CORE = Parser("parse", parse, (ParseError, SyntaxError, ValueError))
DIMS = Parser("parse_expression", parse_expression, (DimExpressionError, ParseError, SyntaxError, RuntimeError))
RULE = Parser("rule", rule, (RuleSyntaxError, ParseError, SyntaxError, ValueError))
KERNEL = Parser("parse_kernel", parse_kernel, (KernelError, ValueError))

ERRORS = [
    # -- core expressions --------------------------------------------------------------------------
    (CORE, "x +", 3, "expected an operand"),
    (CORE, "x + * y", 4, "expected an operand"),
    (CORE, "(x + y", 0, "never closed"),
    (CORE, "x + y)", 5, "unmatched"),
    (CORE, "x $ y", 2, "unexpected character"),
    (CORE, "foo(x)", 0, "unknown function"),
    (CORE, "x y", 2, "expected an operator"),
    (CORE, "x < y < z", 6, "chained"),
    (CORE, "exp(x, y)", 0, "cannot apply exp"),
    (CORE, "sum(x, axes=1)", 7, "no keyword"),
    (CORE, "x, y", 1, "outside a function call"),
    (CORE, "", 0, "unexpected end"),
    (CORE, "array([1.0, [2.0]])", 0, "array"),
    (CORE, "1 and", 5, "expected an operand"),
    # array literals are read token by token (these were found by fuzzing)
    (CORE, "array([2.5 1.0, -2.0])", "1.0", "expected ',' or ']'"),  # was a raw ValueError: could not convert '2.51.0'
    (CORE, "array(1e-320[1.0, -2.0])", "1e-320", "a bracketed list"),
    (CORE, "array([1.0,, 2.0])", ", 2.0", "unexpected ','"),
    (CORE, "array([1.0, x])", "x", "unexpected 'x'"),
    (CORE, "array([[1.0], [2.0, 3.0]])", "array", "ragged"),
    (CORE, "array([1.0, 2.0)", ")", "expected ',' or ']'"),
    (CORE, "array([1.0", 10, "got 'end of input'"),
    (CORE, "array([1, 2, 99999999999999999999999])", "999", "does not fit in int64"),  # was a DTypeError
    (CORE, "array([1.5, -9223372036854775809])", "922", "does not fit in int64"),
    # -- dimension expressions ---------------------------------------------------------------------
    (DIMS, "x +", 3, "unexpected end"),
    (DIMS, "s0::x", 2, "unexpected character ':'"),
    (DIMS, "a/b", 1, "use '//'"),
    (DIMS, "a**2", 1, "'**'"),
    (DIMS, "floor(a/b + 1)", 7, "floor(a/b)"),
    (DIMS, "floor(a/b+c)", 7, "use '//'"),
    (DIMS, "x + a/b", 5, "use '//'"),
    (DIMS, "floor(a/b/c)", 7, "use '//'"),
    (DIMS, "Max(a/b, c)", 5, "use '//'"),
    (DIMS, "-a/b", 2, "use '//'"),
    (DIMS, "ModularIndexing(a, b)", 0, "takes 3 arguments"),
    (DIMS, "FloorDiv(a)", 0, "takes 2 arguments"),
    (DIMS, "(a", 0, "never closed"),
    (DIMS, "Max(a, (b)", 3, "never closed"),
    (DIMS, "a)", 1, "unmatched ')'"),
    (DIMS, "a b", 2, "expected an operator"),
    (DIMS, "a,b", 1, "outside a function call"),
    (DIMS, "Max()", 4, "needs arguments"),
    (DIMS, "f()", 2, "needs arguments"),
    (DIMS, "CeilDiv(a)", 0, "takes 2 arguments"),
    (DIMS, "CeilToInt(a,b,c)", 0, "takes 2 arguments"),
    (DIMS, "None+1", 0, "reserved"),
    (DIMS, "", 0, "unexpected end"),
    (DIMS, "1+99999999999999999999", 2, "does not fit in int64"),
    (DIMS, "a + * b", 4, "expected a name"),
    # -- rule text ---------------------------------------------------------------------------------
    (RULE, "x * 1", 5, "expected '->'"),
    (RULE, "x -> y -> z", 7, "one '->'"),
    (RULE, " -> x", 1, "missing left-hand side"),
    (RULE, "x ->  ", 4, "missing right-hand side"),
    (RULE, "x + -> x", 4, "expected an operand"),
    (RULE, "(x + 1 -> x", 0, "never closed"),
    (RULE, "x $ 1 -> x", 2, "unexpected character"),
    (RULE, "foo(x) -> x", 0, "unknown function"),
    (RULE, "x -> x where", 12, "missing condition"),
    (RULE, "x where y -> x", 2, "after the right-hand side"),
    (RULE, "x -> x where z > 0", 13, "'z' in the condition"),
    (RULE, "exp(x, y) -> x", 0, "takes 1"),
    # bidirectional rules
    (RULE, "a + b <-> a", 6, "must use the same variables"),
    (RULE, "a*_ <-> a", 4, "cannot reverse"),
    (RULE, "a <-> (b", 6, "never closed"),
    (RULE, "x: a <-> a -> b", 11, "one '->'"),
    (RULE, "a <-> b <-> c", 9, "one '->'"),
    # -- tensor index kernels ----------------------------------------------------------------------
    (KERNEL, "A<2>[i] = B<2>[i] $ 1;", "$", "unexpected character"),
    (KERNEL, "A<2>[i] B<2>[i];", "B<2>[i];", "expected '='"),
    (KERNEL, "A<2>[i] = B<2>[i]", 17, "expected ';'"),
    (KERNEL, "A<2>[i] = B<2>[i] 3", "3", "expected ';'"),
    (KERNEL, "A<2>[None] = B<2>[None];", "None]", "reserved"),
    (KERNEL, "= B<2>[i];", "= B", "starts with the name"),
    (KERNEL, "3 = B<2>[i];", "3 =", "starts with the name"),
    (KERNEL, "exp<2>[i] = B<2>[i];", "exp<", "is a function"),
    (KERNEL, "A<0>[i] = B<2>[i];", "0>", "positive integer"),
    (KERNEL, "A<n>[i] = B<2>[i];", "n>", "positive integer"),
    (KERNEL, "A<2.5>[i] = B<2>[i];", "2.5", "positive integer"),
    (KERNEL, "A<2 3>[i] = B<2>[i];", "3>", "expected ',' or '>'"),
    (KERNEL, "A<99999999999>[i] = B<2>[i];", "99999999999", "too large"),
    (KERNEL, "A = B<1>;", "= B", "expected '<'"),
    (KERNEL, "A<2>[i j] = B<2>[i];", "j]", "expected ',' or ']'"),
    (KERNEL.given(data_type="int"), "A<2>[i] = B<2>[i] * 2.5;", "2.5", "fractional constant"),
    (KERNEL.given(data_type="int"), "A<2>[i] = B<2>[i] * 3e10;", "3e10", "too large"),
    (KERNEL, "A<2>[i] = B<2>[i] * 1e400;", "1e400", "out of range"),
    (KERNEL, "A<2>[i] = max(B<2>[i]);", "max(", "takes 2 argument"),
    (KERNEL, "A<2>[i] = exp(B<2>[i], 1);", "exp(", "takes 1 argument"),
    (KERNEL.given(data_type="int"), "A<2>[i] = exp(B<2>[i]);", "exp(", "cannot call exp"),
    (KERNEL, "A<2>[i] = B<2>[i]);", ");", "unmatched ')'"),
    (KERNEL, "A<2>[i] = B<2>[i], 1;", ", 1", "outside a function call"),
    (KERNEL, "A<2>[i] = ;", ";", "expected a number"),
    (KERNEL, "A<2>[i] = B<2>[i] + ;", ";", "expected a number"),
    (KERNEL, "A<2>[i] = ();", ");", "expected a number"),
    (KERNEL, "A<2>[i] = exp + 1;", "+ 1", "expected '(' after exp"),
    (KERNEL, "A<2>[i] = (B<2>[i];", "(B", "unclosed '('"),
    (KERNEL, "A<2>[i] = max(B<2>[i], 1;", "max(", "unclosed 'max('"),
    (KERNEL, "A<4>[i] = B<16>[i*j] * C<4, 4>[i, j];", "*j", "only by a constant"),
    (KERNEL, "A<4>[i] = B<16>[i//j] * C<4, 4>[i, j];", "//j", "constant divisor"),
    (KERNEL, "A<4>[i] = B<16>[i//0];", "//0", "must be positive"),
    (KERNEL, "A<4>[i] = B<16>[i%(1-3)];", "%(", "must be positive"),
    (KERNEL, "A<4>[i] = B<16>[exp];", "exp]", "cannot call exp"),
    (KERNEL, "A<4>[i] = B<16>[1.5];", "1.5", "must be an integer"),
    (KERNEL, "A<4>[i] = B<16>[i/2];", "/2", "'//'"),
    (KERNEL, "A<4>[i] = B<16>[];", "];", "expected a loop variable"),
    (KERNEL, "A<4>[i] = B<16>[i + ];", "];", "expected a loop variable"),
    (KERNEL, "A<4>[i] = B<16>[(i];", "(i]", "unclosed '(' in an index"),
    (KERNEL, "A<4>[i] = B<16>[i + 99999999999];", "99999999999", "too large"),
    (KERNEL, "", None, "at least one statement"),
    (KERNEL, "   ", 3, "at least one statement"),
    # names
    (KERNEL, "int<2>[i] = B<2>[i];", "int<", "reserved"),
    (KERNEL, "A<2>[i] = eg_B<2>[i];", "eg_B", "reserved"),
    (KERNEL, "A<2>[for] = B<2>[for];", "for]", "reserved"),
    (KERNEL, "A<2>[B] = B<2>[B];", "B] =", "both a tensor and a loop variable"),
    (KERNEL.given(name="void"), "A<2>[i] = B<2>[i];", None, "reserved"),
    (KERNEL.given(name="not a name"), "A<2>[i] = B<2>[i];", None, "not an identifier"),
    # shapes and ranks
    (KERNEL, "A<2>[i] = B<2>[i] + B<3>[i];", "B<3>", "shape mismatch"),
    (KERNEL, "A<2>[i] = B<2>[i];\nC<2>[i] = B<3>[i];", "B<3>", "shape mismatch"),  # its own caret line
    (KERNEL, "A<2>[i] = B[i];", "B[i]", "never given"),
    (KERNEL, "A<2>[i] = B<2>;", "B<2>;", "must be <1>"),
    (KERNEL, "A<2>[i] = B<2, 2>[i];", "B<2, 2>", "2 dimension(s) but 1 index"),
    # ins and outs
    (KERNEL.given(ins=["C"], outs=["A"]), "A<2>[i] = B<2>[i];", "B<2>", "unknown tensor B"),
    (KERNEL.given(ins=["B", "C"], outs=["A"]), "A<2>[i] = B<2>[i];", None, "never uses it"),
    (KERNEL.given(ins=["A", "B"], outs=[]), "A<2>[i] = B<2>[i];", "A<2>[i] =", "not listed in outs"),
    (KERNEL.given(grad_to=["C"]), "A<2>[i] = B<2>[i];", None, "not an input"),
    # indices
    (KERNEL, "A<4>[i + 1] = B<4>[i];", "i + 1]", "plain loop variable"),
    (KERNEL, "A<4, 4>[i, i] = B<4>[i];", "i] =", "written twice"),
    (KERNEL, "A<4>[i] = B<8>[i + j];", "j]", "index j has no derivable range"),
    (KERNEL, "A<4>[i] = B<8>[i % 2] * C<8>[j % 4];", "j % 4", "index j has no derivable range"),
    (KERNEL, "A<4>[i] = B<3>[i + 5];", "i] =", "empty range"),
    (KERNEL, "A<4, 4>[i, j] = A<4, 4>[j, i];", "A<4, 4>[j", "at other indices"),
    (KERNEL, "A<4>[i] = A<4>[i] * B<4, 4>[i, j];", "A<4>[i] *", "only as the accumulator"),
    # -- tokens over MAX_TOKEN characters: int() refused numbers of over 4,300 digits with a raw ValueError
    (CORE, "1" * 5000, 0, "a token of 5,000 characters"),
    (CORE, "x + 2.5" + "0" * 600, "2.5", "a token of 603 characters"),
    (CORE, "sum(x, axis=" + "9" * 5000 + ")", "999", "a token of 5,000"),
    (CORE, "array([" + "1" * 5000 + "])", "111", "a token of 5,000"),
    (CORE, "x" * (MAX_TOKEN + 1) + " + 1", 0, f"a token of {MAX_TOKEN + 1}"),
    (DIMS, "1" * 5000, 0, "a token of 5,000 characters"),
    (DIMS, "s0*" + "7" * 5000, "777", "a token of 5,000"),
    (DIMS, "-" + "7" * 5000, "777", "a token of 5,000"),
    (DIMS, "a" * (MAX_TOKEN + 1) + " + 1", 0, f"a token of {MAX_TOKEN + 1}"),  # the quick split leaves it
    (RULE, "x*" + "1" * 5000 + " -> x", "111", "a token of 5,000"),
    (KERNEL, "A<" + "1" * 5000 + ">[i] = B<2>[i];", "111", "a token of 5,000"),
    (KERNEL, "A<2>[i] = B<2>[i] * " + "1" * 5000 + ";", "111", "a token of 5,000"),
    (KERNEL, "A<2>[i] = B<2>[i + " + "1" * 5000 + "];", "111", "a token of 5,000"),
]


def _row_id(row: tuple) -> str:
    parser, text = row[:2]
    return f"{parser.name}: {text!r}"


@pytest.mark.parametrize(("parser", "text", "at", "message"), ERRORS, ids=[_row_id(row) for row in ERRORS])
def test_parse_errors_have_positions_and_carets(parser: Parser, text: str, at: int | str | None, message: str):
    with pytest.raises(parser.errors[0]) as info:
        parser.read(text)
    err = info.value
    assert all(isinstance(err, kind) for kind in parser.errors), type(err).__mro__
    assert message in str(err)
    if at is None:
        return
    pos = text.index(at) if isinstance(at, str) else at
    assert err.pos == pos, str(err)
    # the last two lines: the line of the text holding the fault, and a caret under its column
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    line, caret = str(err).split("\n")[-2:]
    whole = text[start : end if end >= 0 else len(text)]
    if len(whole) <= CARET_WINDOW:
        assert line == whole
        assert caret == " " * (pos - start) + "^"
    else:  # a window of the line around the fault, "..." where it is cut
        assert line.removeprefix("...").removesuffix("...") in whole
        assert len(line) <= 2 * CARET_WINDOW + 6
        column = caret.index("^")
        assert caret == " " * column + "^"
        assert line[column : column + 1] == text[pos : pos + 1]


def test_a_long_line_is_shown_as_a_window_around_the_fault():
    text = "x+" * 50_000 + ")" + "+y" * 50_000
    pos = text.index(")")
    with pytest.raises(ParseError) as info:
        parse(text)
    assert info.value.pos == pos
    line, caret = str(info.value).split("\n")[-2:]
    assert len(line) <= 2 * CARET_WINDOW + 6  # not the 200,001 characters
    assert line.startswith("...") and line.endswith("...")
    assert line[caret.index("^")] == ")"


# -- the text size limit --------------------------------------------------------------------------

#: every reader of text, and a valid text for it (to be padded with trailing spaces or comments)
READERS: list[tuple[str, Callable[[str], Any], str]] = [
    ("parse", parse, "x + y*2"),
    ("parse_expression", parse_expression, "2*batch//8"),
    ("simplify_expression", simplify_expression, "2*batch//8"),  # the dims quick path (polyparse)
    ("rule", rule, "x*1 -> x"),
    ("RuleSet.parse", RuleSet.parse, "x*1 -> x\nx + 0 -> x"),
    ("parse_condition", parse_condition, "x != 0"),
    ("parse_kernel", parse_kernel, "A<2>[i] = B<2>[i] * 2.0;"),
    ("tokenize", tokenize, "x + y"),
]


def _padded(text: str, size: int) -> str:
    """``text`` followed by spaces (read as nothing) up to ``size`` characters."""
    return text + " " * (size - len(text))


@pytest.mark.parametrize(("name", "read", "text"), READERS, ids=[r[0] for r in READERS])
def test_every_parser_refuses_a_text_over_the_limit(name: str, read: Callable, text: str, monkeypatch):
    monkeypatch.setenv(ENV_MAX_TEXT, "2_000")
    read(_padded(text, 2_000))  # at the limit: read
    with pytest.raises(SizeLimitError) as info:
        read(_padded(text, 2_001))
    err = info.value
    assert isinstance(err, ValueError)
    assert (err.size, err.limit, err.setting) == (2_001, 2_000, "$EXPRGRAPH_MAX_TEXT")
    assert "EXPRGRAPH_MAX_TEXT" in str(err)


@pytest.mark.parametrize(("name", "read", "text"), READERS, ids=[r[0] for r in READERS])
def test_the_default_limit_is_refused_before_any_work(name: str, read: Callable, text: str, monkeypatch):
    # ten million characters took 1.9 GB and a hundred million of '(' ran on past a CPU alarm
    monkeypatch.delenv(ENV_MAX_TEXT, raising=False)
    huge = "(" * (DEFAULT_MAX_TEXT + 1) if name != "rule" else "(" * DEFAULT_MAX_TEXT + " -> x"
    start = time.process_time()
    with pytest.raises(SizeLimitError) as info:
        read(huge)
    assert time.process_time() - start < 0.5  # refused before tokenizing: no memory, no time
    assert info.value.limit == DEFAULT_MAX_TEXT and info.value.size == len(huge)


def test_a_token_of_max_token_characters_is_read():
    name, digits = "x" * MAX_TOKEN, "0" * (MAX_TOKEN - 1) + "7"
    assert parse(f"{name} + {digits}").args[1].value == 7
    assert parse(str(Symbol(name))) is Symbol(name)
    with pytest.raises(ValueError, match="at most"):
        Symbol(name + "x")  # printed, it would not read back
    assert str(parse_expression(f"{name.replace('x', 'a')} + {digits}")) == f"{'a' * MAX_TOKEN} + 7"
    assert rule(f"{name}*1 -> {name}") is not None
    assert parse_kernel(f"A<2>[i] = B<2>[i] * {digits};") is not None


@pytest.mark.parametrize("value", ["abc", "-5", "0", str(SHORT_TEXT - 1), "1e6", "nan", "inf"])
def test_a_bad_limit_setting_names_the_variable(value: str, monkeypatch):
    monkeypatch.setenv(ENV_MAX_TEXT, value)
    assert parse("x + 1") is parse("x+1")  # a short text never reads the setting
    with pytest.raises(ValueError, match=ENV_MAX_TEXT):
        parse(_padded("x + 1", SHORT_TEXT + 1))


@pytest.mark.parametrize("depth", [10**5])
@pytest.mark.parametrize(("name", "read", "text"), READERS[:2] + READERS[3:4] + READERS[6:7])
def test_deep_nesting_is_read_without_recursion(name: str, read: Callable, text: str, depth: int):
    # explicit stacks: 10**5 brackets at the default recursion limit, in time linear in the depth
    nested = "(" * depth + text + ")" * depth
    if name == "rule":
        nested = "(" * depth + "x*1" + ")" * depth + " -> x"
    elif name == "parse_kernel":
        nested = "A<2>[i] = " + "(" * depth + "B<2>[i] * 2.0" + ")" * depth + ";"
    assert read(nested) is not None
    with pytest.raises((ParseError, KernelError)):
        read(nested[:-1])  # one bracket short: an error with its position


def test_cli_inputs_are_limited(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.setenv(ENV_MAX_TEXT, "2_000")
    assert main(["eval", _padded("x + 1", 2_001), "x=1"]) == 2
    assert "EXPRGRAPH_MAX_TEXT" in capsys.readouterr().err
    rules = tmp_path / "rules.txt"
    rules.write_text("x*1 -> x\n" + "# a comment\n" * 400)
    assert main(["saturate", "x*1", "--rules", str(rules)]) == 2
    assert "EXPRGRAPH_MAX_TEXT" in capsys.readouterr().err
    assert main(["dims", "simplify", _padded("2*batch//2", 2_001)]) == 2
    assert "EXPRGRAPH_MAX_TEXT" in capsys.readouterr().err


def _case(kernel: str) -> dict:
    return {"name": "k", "ins": ["B"], "outs": ["A"], "data_type": "float", "kernel": kernel}


def test_case_files_are_read_only_up_to_the_limit(tmp_path: Path, monkeypatch):
    monkeypatch.setenv(ENV_MAX_TEXT, "2_000")
    path = tmp_path / "case.json"
    path.write_text(json.dumps(_case("A<2>[i] = B<2>[i];")))
    assert load_case(path).name == "k"
    path.write_text(json.dumps(_case("A<2>[i] = B<2>[i];" + " " * 2_000)))
    with pytest.raises(SizeLimitError, match="EXPRGRAPH_MAX_TEXT"):
        load_case(path)
    # a file of many megabytes is not read whole: the bounded read is over the limit already
    path.write_bytes(b" " * (50 << 20))
    with pytest.raises(SizeLimitError):
        load_case(path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_case_file_that_is_not_a_regular_file_is_refused_at_once(tmp_path: Path):
    fifo = tmp_path / "case.json"
    os.mkfifo(fifo)  # reading it would wait for a writer for ever
    with pytest.raises(KernelError, match="not a regular file"):
        load_case(fifo)
    if Path("/dev/zero").exists():  # reading it would never end
        with pytest.raises(KernelError, match="not a regular file"):
            load_case("/dev/zero")


def test_the_dimension_caches_keep_only_short_texts_and_words():
    # each cache held up to 65,536 entries of any length: a few GB of text once texts may be a MB long
    dims_parse.clear_parse_cache()
    long_text = " + ".join(f"s{i}" for i in range(400))  # over SHORT_TEXT characters
    long_name = "n" * 100
    assert len(long_text) > SHORT_TEXT
    parse_expression(long_text)
    parse_expression(f"{long_name} + 1")
    assert long_text not in dims_parse._cache
    assert f"{long_name} + 1" in dims_parse._cache  # a short text is cached
    assert long_name not in dims_parse._words and long_name not in dims_parse._operand_terms
    assert "s399" in dims_parse._operand_terms  # short words are
