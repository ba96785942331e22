"""Parsing: the infix syntax the printer writes, read back without recursion and without eval.

An operator-precedence (shunting-yard) parser with explicit stacks over the tokens of
:mod:`.tokens`; the precedences and associativities come from the op table, shared with the
printers (:mod:`.notation`). A flat chain of a variadic infix op is one term
(``a*b*c`` is ``mul(a, b, c)``; ``(a*b)*c`` is ``mul(mul(a, b), c)``), as the printer writes it;
``pi`` and ``e`` are exact constants (:mod:`.exact`), and ``rational(1, 3)`` an exact rational; a
quoted name (`` `e` ``, :func:`~.tokens.name_text`) is the symbol of that name whatever the bare name reads as.
Errors raise :class:`~exprgraph.errors.ParseError` (a ``SyntaxError`` and a ``ValueError``) with the
position and a caret line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

import numpy as np

from ..errors import ParseError
from .dtypes import FLOAT32, FLOAT64, as_dtype
from .exact import EXACT_NAMES
from .leaves import Symbol, const
from .notation import binds_tighter_than_sign, infix_ops
from .op import Op, get_op, ops
from .term import Term, hooks
from .tokens import CONSTANT_NAMES, QUOTE, quoted_name, scan, tokenize

__all__ = ["parse", "tokenize", "scan"]

_LITERAL_NAMES = {"True": True, "False": False, "inf": float("inf"), "nan": float("nan")}


def _op_or_none(name: str) -> Op | None:
    """The op called ``name`` (:func:`get_op`), or None when there is none."""
    try:
        return get_op(name)
    except KeyError:
        return None


def _number(text: str) -> Any:
    if any(c in text for c in ".eE"):
        return float(text)
    return int(text)


class _Parser:
    def __init__(self, text: str, symbols: Mapping[str, Term], dtype: str, strict: bool) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0
        self.symbols = symbols
        self.dtype = dtype
        self.strict = strict
        self.binary = infix_ops()
        self.neg = get_op("neg")
        self.not_ = get_op("logical_not")
        self.operands: list[Any] = []  # terms (patterns, for the rule parser that extends this one)
        # entries: ("bin", op, pos, n) for n operands joined by op (n > 2: a flat chain a*b*c of a
        # variadic op) | ("pre", op, pos) | ("paren", None, pos) | ("call", op, pos, height, kw)
        # | ("index", op, pos, height, kw) for T[i, j]
        self.ops: list[tuple] = []

    def fail(self, message: str, pos: int) -> ParseError:
        return ParseError(message, self.text, pos)

    def peek(self, k: int = 0) -> tuple[str, str, int]:
        return self.tokens[min(self.i + k, len(self.tokens) - 1)]

    def build(self, op: Op, args: tuple, attr: Any, pos: int) -> Term:
        try:
            return op(*args, attr=attr)
        except (TypeError, ValueError) as exc:
            raise self.fail(f"cannot apply {op.name}: {exc}", pos) from None

    def reduce_one(self) -> None:
        entry = self.ops.pop()
        kind, op, pos = entry[0], entry[1], entry[2]
        if kind == "bin":
            n = entry[3]
            args = tuple(self.operands[-n:])
            del self.operands[-n:]
            self.operands.append(self.build(op, args, None, pos))
        else:  # prefix
            self.operands.append(self.build(op, (self.operands.pop(),), None, pos))

    def reduce_for(self, op: Op, pos: int) -> None:
        p = op.precedence
        while self.ops:
            top = self.ops[-1]
            if top[0] not in ("bin", "pre"):
                break
            if top[1] is op and top[0] == "bin" and op.chains:
                break  # the operator continues a flat chain: extended by the caller
            tp = top[1].precedence
            if top[0] == "bin" and tp == p and op.assoc is None:
                raise self.fail(
                    f"chained {top[1].symbol!r} and {op.symbol!r}: add parentheses to say which comes first", pos
                )
            if tp > p or (tp == p and op.assoc == "left"):
                self.reduce_one()
            else:
                break

    def operand_literal(self, kind: str, value: str) -> Any:
        if kind == "num":
            return _number(value)
        if kind == "name" and value in ("inf", "nan"):
            return _LITERAL_NAMES[value]
        return None

    def constant(self, value: Any, pos: int) -> Term:
        try:
            return const(value)
        except OverflowError as exc:
            raise self.fail(str(exc), pos) from None

    def quoted_symbol(self, token: str, pos: int) -> Term:
        """The symbol of a quoted name token (`` `e` ``): never a constant, whatever the bare name reads as."""
        name = quoted_name(token)
        if name is None:
            raise self.fail(f"a quoted name needs its closing {QUOTE}: write {QUOTE}name{QUOTE}", pos)
        found = self.symbols.get(name)
        if found is not None:
            return found
        if self.strict:
            raise self.fail(f"unknown name {name!r}", pos)
        try:
            return Symbol(name, self.dtype)
        except ValueError as exc:
            raise self.fail(f"bad quoted name: {exc}", pos) from None

    def symbol(self, name: str, pos: int) -> Term:
        found = self.symbols.get(name)
        if found is not None:
            return found
        if self.dtype == FLOAT64 and name in CONSTANT_NAMES:
            return const(EXACT_NAMES[name])  # exact pi, e (int64 and bool parses read them as names)
        if self.strict:
            raise self.fail(f"unknown name {name!r}", pos)
        try:
            return Symbol(name, self.dtype)
        except ValueError as exc:
            raise self.fail(str(exc), pos) from None

    def parse(self) -> Term:
        expect_operand = True
        while True:
            kind, value, pos = self.peek()
            if expect_operand:
                expect_operand = self.operand(kind, value, pos)
                continue
            if kind == "end":
                break
            self.i += 1
            if kind == "op" and value in self.binary:
                op = self.binary[value]
                self.reduce_for(op, pos)
                top = self.ops[-1] if self.ops else None
                if top is not None and top[0] == "bin" and top[1] is op and op.chains:
                    self.ops[-1] = ("bin", op, top[2], top[3] + 1)  # a*b*c: one variadic term
                else:
                    self.ops.append(("bin", op, pos, 2))
                expect_operand = True
            elif value == ",":
                self.comma(pos)
                expect_operand = True
                if self.peek()[0] == "name" and self.peek(1)[1] == "=":
                    self.keyword()
                    expect_operand = False
            elif value == ")":
                self.close(pos)
            elif value == "]":
                self.close(pos, "index")
            else:
                raise self.fail(f"expected an operator, got {value!r}", pos)
        while self.ops:
            top = self.ops[-1]
            if top[0] in ("paren", "call", "index"):
                raise self.fail(f"'{'[' if top[0] == 'index' else '('}' was never closed", top[2])
            self.reduce_one()
        if len(self.operands) != 1:  # pragma: no cover - the state machine prevents it
            raise self.fail("malformed expression", len(self.text))
        return self.operands[0]

    def operand(self, kind: str, value: str, pos: int) -> bool:
        """Consume an operand or a prefix; return whether an operand is still expected."""
        self.i += 1
        lit = self.operand_literal(kind, value)
        if lit is not None:
            self.operands.append(self.constant(lit, pos))
            return False
        if kind == "name":
            if self.peek()[1] == "(":
                self.i += 1
                if value == "array":
                    self.operands.append(self.array_literal(pos))
                    if self.peek()[1] != ")":
                        raise self.fail("expected ')' after the array literal", self.peek()[2])
                    self.i += 1
                    return False
                if value == "float32" and _op_or_none(value) is None:
                    self.operands.append(self.single_literal(pos))
                    return False
                if value == "rational" and _op_or_none(value) is None:
                    self.operands.append(self.rational_literal(pos))
                    return False
                self.open_call(value, pos)
                return self.peek()[1] != ")" or self.empty_call()
            if value in _LITERAL_NAMES:
                self.operands.append(const(_LITERAL_NAMES[value]))
            else:
                self.operands.append(self.symbol(value, pos))
            if self.peek()[1] == "[":
                return self.open_index(pos)
            return False
        if kind == "qname":
            self.operands.append(self.quoted_symbol(value, pos))
            if self.peek()[1] == "[":
                return self.open_index(pos)
            return False
        if value == "(":
            self.ops.append(("paren", None, pos))
            return True
        if value == "-":
            nxt = self.peek()
            lit = self.operand_literal(nxt[0], nxt[1])
            if lit is not None and self.signed_literal(nxt[0]):
                # a minus sign on a literal is part of it (-2), unless an operator (**) binds the literal first
                self.i += 1
                self.operands.append(self.constant(-lit, pos))
                return False
            self.ops.append(("pre", self.neg, pos))
            return True
        if value == "+":
            return True
        if value == "not":
            self.ops.append(("pre", self.not_, pos))
            return True
        if kind == "end":
            raise self.fail("unexpected end of input: expected an operand", pos)
        raise self.fail(f"expected an operand, got {value!r}", pos)

    def signed_literal(self, kind: str) -> bool:
        """Whether a minus sign takes the literal (of token ``kind``) after it: not in ``-2**x`` nor ``-inf(x)``."""
        after = self.peek(1)
        if after[0] == "op" and binds_tighter_than_sign(self.binary.get(after[1])):
            return False
        return not (kind == "name" and after[1] == "(")

    def single_literal(self, pos: int) -> Term:
        """``float32(1.5)``, ``float32(-inf)``, ``float32(array([...]))``: a float32 constant (after ``float32(``)."""
        kind, value, tpos = self.peek()
        if value == "array" and self.peek(1)[1] == "(":
            self.i += 2
            found = self.array_literal(tpos)
            if self.peek()[1] != ")":
                raise self.fail("expected ')' after the array literal", self.peek()[2])
            self.i += 1
            arr = found.attr.array
        else:
            nxt = self.peek(1) if value in ("-", "+") else (kind, value, tpos)
            if self.operand_literal(nxt[0], nxt[1]) is None:
                raise self.fail("float32(...) takes a number literal or an array literal", nxt[2])
            self.i += 1
            arr = np.asarray(self.array_number(kind, value, tpos))
        if arr.dtype.kind not in "iuf":
            raise self.fail("float32(...) takes a number or an array of numbers", tpos)
        if self.peek()[1] != ")":
            raise self.fail("float32(...) takes one number literal: expected ')'", self.peek()[2])
        self.i += 1
        return const(arr if arr.ndim else arr[()], FLOAT32)

    def integer_literal(self) -> int:
        """An optionally signed integer literal (inside ``rational(...)``)."""
        kind, value, pos = self.peek()
        sign = 1
        if value in ("-", "+"):
            sign = -1 if value == "-" else 1
            self.i += 1
            kind, value, pos = self.peek()
        if kind != "num" or not value.isdigit():
            raise self.fail("rational(...) takes two integer literals: rational(1, 3)", pos)
        self.i += 1
        return sign * int(value)

    def rational_literal(self, pos: int) -> Term:
        """``rational(-1, 3)``: an exact rational constant (after ``rational(``)."""
        num = self.integer_literal()
        if self.peek()[1] != ",":
            raise self.fail("rational(...) takes two integer literals: expected ','", self.peek()[2])
        self.i += 1
        den = self.integer_literal()
        if self.peek()[1] != ")":
            raise self.fail("rational(...) takes two integer literals: expected ')'", self.peek()[2])
        self.i += 1
        if den == 0:
            raise self.fail("rational(...) needs a non-zero denominator", pos)
        return self.constant(Fraction(num, den), pos)

    def open_call(self, name: str, pos: int) -> None:
        op = _op_or_none(name)
        if op is None or op.notation == "leaf":
            raise self.fail(f"unknown function {name!r}", pos)
        self.ops.append(("call", op, pos, len(self.operands), {}))

    def open_index(self, pos: int) -> bool:
        """``T[``: the indexed-access op applied to ``T`` and the indices up to ``]``."""
        op = next((op for op in ops() if op.notation == "index"), None)
        if op is None:  # pragma: no cover - the standard table registers access
            raise self.fail("no op reads T[i, j]", pos)
        self.i += 1
        self.ops.append(("index", op, pos, len(self.operands) - 1, {}))
        if self.peek()[1] != "]":
            return True
        self.i += 1
        self.close(pos, "index")
        return False

    def empty_call(self) -> bool:
        _, _, pos = self.peek()
        self.i += 1
        self.close(pos)
        return False

    def comma(self, pos: int) -> None:
        while self.ops and self.ops[-1][0] in ("bin", "pre"):
            self.reduce_one()
        if not self.ops or self.ops[-1][0] not in ("call", "index"):
            raise self.fail("',' outside a function call", pos)
        if self.ops[-1][4]:
            raise self.fail("positional argument after a keyword argument", pos)

    def keyword(self) -> None:
        _, name, pos = self.peek()
        call = self.ops[-1]
        op = call[1]
        if op.attr_name != name:
            raise self.fail(f"{op.name}() takes no keyword {name!r}", pos)
        self.i += 2
        call[4][name] = self.literal_attr()

    def literal_attr(self) -> Any:
        """An attribute value: an int, None, or a parenthesised tuple of ints."""
        value = self.peek()[1]
        if value == "None":
            self.i += 1
            return None
        if value == "(":
            self.i += 1
            items = []
            while self.peek()[1] != ")":
                items.append(self.int_literal())
                if self.peek()[1] == ",":
                    self.i += 1
                elif self.peek()[1] != ")":
                    raise self.fail("expected ',' or ')'", self.peek()[2])
            self.i += 1
            return tuple(items)
        return self.int_literal()

    def int_literal(self) -> int:
        sign = 1
        if self.peek()[1] == "-":
            sign = -1
            self.i += 1
        kind, value, pos = self.peek()
        if kind != "num" or not value.isdigit():
            raise self.fail("expected an integer", pos)
        self.i += 1
        return sign * int(value)

    def close(self, pos: int, kind: str = "call") -> None:
        """Close the innermost ``(`` (``kind`` call) or ``[`` (``kind`` index) at ``pos``."""
        bracket = "]" if kind == "index" else ")"
        while self.ops and self.ops[-1][0] in ("bin", "pre"):
            self.reduce_one()
        if not self.ops or (self.ops[-1][0] == "index") != (kind == "index"):
            raise self.fail(f"unmatched {bracket!r}", pos)
        entry = self.ops.pop()
        if entry[0] == "paren":
            return
        _, op, cpos, height, kw = entry
        args = tuple(self.operands[height:])
        del self.operands[height:]
        attr = kw.get(op.attr_name) if op.attr_name else None
        self.operands.append(self.build(op, args, attr, cpos))

    def array_literal(self, pos: int) -> Term:
        """``array([[1.0, 2.0], ...])``: nested lists of (signed) numbers, read iteratively, token by token."""
        kind, value, tpos = self.peek()
        if value != "[":
            raise self.fail("an array literal is a bracketed list: array([1.0, 2.0])", tpos)
        rows: list[list] = []
        expect_item = True  # after '[' or ',': a number, a sign or '['; else ',' or ']'
        while True:
            kind, value, tpos = self.peek()
            self.i += 1
            if expect_item and value == "[":
                rows.append([])
                continue
            if expect_item and value == "]" and rows and not rows[-1]:
                expect_item = False  # an empty list: []
            elif expect_item:
                rows[-1].append(self.array_number(kind, value, tpos))
                expect_item = False
                continue
            if value == ",":
                expect_item = True
                continue
            if value != "]":
                raise self.fail(f"expected ',' or ']' in an array literal, got {value or 'end of input'!r}", tpos)
            done = rows.pop()
            if not rows:
                return const(_to_array(done, self, pos))
            rows[-1].append(done)

    def array_number(self, kind: str, value: str, pos: int) -> Any:
        """One entry of an array literal: a number (after any signs), True, False, inf or nan."""
        sign = 1
        while value in ("-", "+"):
            if value == "-":
                sign = -sign
            kind, value, pos = self.peek()
            self.i += 1
        lit = self.operand_literal(kind, value)
        if lit is None and value in ("True", "False"):
            lit = _LITERAL_NAMES[value]
        if lit is None:
            raise self.fail(f"unexpected {value or 'end of input'!r} in an array literal", pos)
        lit = -lit if sign < 0 else lit
        if type(lit) is int and not _INT64_MIN <= lit <= _INT64_MAX:
            raise self.fail(f"integer {lit} in an array literal does not fit in int64", pos)
        return lit


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _to_array(rows: list, parser: _Parser, pos: int) -> np.ndarray:
    try:
        return np.array(rows)
    except ValueError as exc:
        raise parser.fail(f"ragged array literal: {exc}", pos) from None


def parse(
    text: str,
    symbols: Mapping[str, Term] | Iterable[Term] | None = None,
    *,
    dtype: Any = FLOAT64,
    strict: bool = False,
) -> Term:
    """Parse infix text (the syntax ``str(term)`` prints) into a term.

    ``symbols`` maps names to terms (or lists symbols, found by name); other names become
    new symbols of ``dtype``, or a :class:`ParseError` when ``strict``.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse() takes a string, not {type(text).__name__}")
    table: dict[str, Term] = {}
    if symbols is not None:
        if isinstance(symbols, Mapping):
            table.update(symbols)
        else:
            for s in symbols:
                table[s.name] = s
    return _Parser(text, table, as_dtype(dtype), strict).parse()


hooks.parse = parse
