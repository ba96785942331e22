"""Every parser's errors in one table: the error classes, the position, the message and the caret line.

A row is ``(parser, text, at, message)``: ``at`` is the offset of the fault, or a fragment of the text
that starts there (its first occurrence), or None where the error carries no position to check. Each
error must be an instance of all of its parser's error classes, contain ``message``, and end with the
line of ``text`` holding the fault and a caret under its column.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from exprgraph import parse
from exprgraph.dims import parse_expression
from exprgraph.errors import DimExpressionError, KernelError, ParseError, RuleSyntaxError
from exprgraph.rules import rule
from exprgraph.tensor import parse_kernel


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
    assert line == text[start : end if end >= 0 else len(text)]
    assert caret == " " * (pos - start) + "^"
