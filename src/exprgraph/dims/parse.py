"""Parsing dimension expressions: integers, names, ``+ - * // %``, ``^`` (max), ``&`` (min), calls.

Precedence is Python's, loosest first: ``^``, ``&``, ``+ -``, ``* // %``, unary ``+ -``.
Any ``NAME(args...)`` is a call. The known functions get their meaning (the table below); any
other name is an opaque function (the ``dim_fn`` op), printed back as it was read:

- ours and the reference's: ``CeilToInt(n, d)``, ``Max``/``max``/``Min``/``min`` (any number of
  arguments), ``broadcast(a, b)``, ``abs(x)``;
- torch's: ``FloorDiv(a, b)`` and ``CleanDiv(a, b)`` (``a//b``), ``CeilDiv(a, b)``,
  ``ModularIndexing(x, d, m)`` (``(x//d)%m``), ``PythonMod(a, b)`` and ``Mod(a, b)`` (``a%b``),
  ``CeilToInt(x)``/``FloorToInt(x)``;
- sympy's: ``floor(a/b)`` and ``ceiling(a/b)``: a ``/`` is read only as the whole argument of
  one of these four rounding functions.

The parser is an operator-precedence (shunting-yard) loop with explicit stacks, so nesting depth
is limited by memory only, and it never evaluates the text. Errors raise
:class:`~exprgraph.errors.DimExpressionError` (a ``SyntaxError`` and a ``RuntimeError``) with the
position of the fault and a caret line.
"""

from __future__ import annotations

import re
import string
from itertools import accumulate

from ..core.leaves import RESERVED_NAMES
from ..core.op import get_op
from ..core.term import Term
from ..errors import DimExpressionError
from .terms import BROADCAST, CEIL_DIV, FN, INT64_MAX, dim_const, dim_name, make_term

__all__ = ["parse_expression", "parse_expression_tokens", "tokenize_expression", "clear_parse_cache"]

#: the tokens (numbers, names, operators; ``**`` only to reject it); what lies between them must be whitespace
_PIECES = re.compile(r"(\d+|[A-Za-z_][A-Za-z0-9_]*|//|\*\*|[-+*/%^&(),])")
#: the kind of a token by its first character (a token starting with none of these is a number)
_KIND = {c: "name" for c in string.ascii_letters + "_"} | {c: "op" for c in "-+*/%^&(),"}

_ADD, _SUB, _MUL = get_op("add"), get_op("sub"), get_op("mul")
_FLOORDIV, _MOD, _NEG = get_op("floordiv"), get_op("mod"), get_op("neg")
_MAX, _MIN, _ABS = get_op("maximum"), get_op("minimum"), get_op("abs")
#: marks the operator ``/``, read only as the argument of a rounding call (floor(a/b))
_RATIO_OP = "ratio"

#: binary operator -> (precedence, op); all are left-associative
_BINARY = {
    "^": (1, _MAX),
    "&": (2, _MIN),
    "+": (3, _ADD),
    "-": (3, _SUB),
    "*": (4, _MUL),
    "//": (4, _FLOORDIV),
    "%": (4, _MOD),
    "/": (4, _RATIO_OP),
}
_UNARY_PREC = 5
#: calls that fold their arguments with one binary op: name -> (op, min args, max args or None)
_CALLS = {
    "CeilToInt": (CEIL_DIV, 2, 2),
    "ceil_div": (CEIL_DIV, 2, 2),
    "CeilDiv": (CEIL_DIV, 2, 2),  # torch
    "Max": (_MAX, 1, None),
    "max": (_MAX, 1, None),
    "Min": (_MIN, 1, None),
    "min": (_MIN, 1, None),
    "FloorDiv": (_FLOORDIV, 2, 2),  # torch: a//b
    "CleanDiv": (_FLOORDIV, 2, 2),  # torch: a/b known to be exact, so a//b
    "PythonMod": (_MOD, 2, 2),  # torch: a%b
    "Mod": (_MOD, 2, 2),  # torch (for a >= 0, b > 0, where C's and Python's % agree) and sympy: a%b
    "broadcast": (BROADCAST, 2, 2),  # the reference: the broadcast size of two dimensions
}
#: rounding calls of one argument, which may be a ratio a/b: name -> the op of the rounded ratio
#: (the rounding of an integer is the integer itself)
_ROUNDING = {"floor": _FLOORDIV, "FloorToInt": _FLOORDIV, "ceiling": CEIL_DIV, "CeilToInt": CEIL_DIV}
_RATIO_MESSAGE = (
    "'/' is not a dimension operator; use '//' for floor division (a/b is read only as floor(a/b) or ceiling(a/b))"
)


class _Ratio:
    """The operand ``a/b`` (only a rounding call takes it) and the position of its ``/``."""

    __slots__ = ("num", "den", "pos")

    def __init__(self, num: Term, den: Term, pos: int) -> None:
        self.num, self.den, self.pos = num, den, pos


#: marks ``//`` while a text is split (a character that no valid text holds)
_MARK = "\x00"
_OPERATORS = {c: "op" for c in "-+*/%^&(),"} | {_MARK: "op"}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_NUMBER = re.compile(r"\d+\Z")
#: the kinds of the pieces of text met so far (the operators, the names and numbers read)
_words: dict[str, str] = dict(_OPERATORS)

_cache: dict[str, Term] = {}
_CACHE_LIMIT = 1 << 16


def clear_parse_cache() -> None:
    """Forget cached parses (parsing is pure; the cache only saves time)."""
    _cache.clear()
    _words.clear()
    _words.update(_OPERATORS)


def tokenize_expression(text: str) -> list[tuple[str, str, int]]:
    """Tokens ``(kind, text, position)`` of a dimension expression; kinds: num, name, op, end."""
    # one split in C: the tokens at the odd places, the gaps between them (all whitespace when
    # the text is well formed) at the even ones; positions are the running sum of the lengths
    pieces = _PIECES.split(text)
    starts = list(accumulate(map(len, pieces)))
    values = pieces[1::2]
    gaps = "".join(pieces[0::2])
    if (gaps and not gaps.isspace()) or "**" in values:
        raise _first_fault(text, pieces, starts)
    kind = _KIND.get
    tokens = list(zip([kind(v[0], "num") for v in values], values, starts[0:-1:2], strict=True))
    tokens.append(("end", "", len(text)))
    return tokens


def _indexed_tokens(text: str) -> list[tuple[str, str, int]]:
    """Tokens ``(kind, text, index)``: as tokenize_expression's, with the token's index for its position.

    The common text (tokens separated by spaces or operators) is split by str methods in C:
    ``//`` is marked by a character no valid text holds, a space is put around each operator,
    and the pieces between spaces are the tokens, each looked up in a table of known words.
    Anything else (``2x``, a character no token takes, ``**``) is tokenised by the regular expression.
    """
    if "**" in text or _MARK in text:
        return _by_pattern(text)
    spaced = text.replace("//", _MARK) if "//" in text else text
    for op in _OPERATORS:
        if op in spaced:
            spaced = spaced.replace(op, f" {op} ")  # one pass in C per operator the text holds
    pieces = spaced.split()
    values = [p if p != _MARK else "//" for p in pieces] if "//" in text else pieces
    words = _words.get
    kinds = [words(p) or _word_kind(p) for p in pieces]
    if "" in kinds:
        return _by_pattern(text)
    tokens = list(zip(kinds, values, range(len(values)), strict=True))
    tokens.append(("end", "", len(values)))
    return tokens


def _by_pattern(text: str) -> list[tuple[str, str, int]]:
    return [(kind, value, i) for i, (kind, value, _) in enumerate(tokenize_expression(text))]


def _word_kind(word: str) -> str:
    """The kind of a piece of text between spaces and operators: name, num, or "" (not one token)."""
    kind = "name" if _NAME.match(word) else "num" if _NUMBER.match(word) else ""
    if kind:
        if len(_words) >= _CACHE_LIMIT:
            _words.clear()
            _words.update(_OPERATORS)
        _words[word] = kind
    return kind


def _first_fault(text: str, pieces: list[str], starts: list[int]) -> DimExpressionError:
    """The error for the first character that is neither whitespace nor a token, or the first ``**``."""
    for j, piece in enumerate(pieces):
        start = starts[j - 1] if j else 0
        if j % 2 and piece == "**":
            return DimExpressionError("'**' (power) is not a dimension operator; multiply instead", text, start)
        stripped = piece.lstrip()
        if not j % 2 and stripped:
            return _bad_character(text, start + len(piece) - len(stripped))
    raise AssertionError("no fault found")  # pragma: no cover - called only when there is one


def _bad_character(text: str, pos: int) -> DimExpressionError:
    ch = text[pos]
    return DimExpressionError(f"unexpected character {ch!r}", text, pos)


def parse_expression(text: str) -> Term:
    """Parse a dimension expression into an int64 term (``"2*batch//batch"`` -> ``2*batch//batch``)."""
    if text.__class__ is not str:
        if isinstance(text, str):
            text = str(text)
        else:
            raise TypeError(f"parse_expression() takes a string, not {type(text).__name__}")
    term = _cache.get(text)
    if term is None:
        term = _Parser(text).parse()
        if len(_cache) >= _CACHE_LIMIT:
            _cache.clear()
        _cache[text] = term
    return term


def parse_expression_tokens(text: str) -> set[str]:
    """The names an expression uses; an unparsable text comes back as ``{text}`` (as the reference does)."""
    try:
        term = parse_expression(text)
    except DimExpressionError:
        return {text}
    return {s.name for s in term.free_symbols}


class _Parser:
    """One parse: the token list, an operand stack and an operator stack."""

    __slots__ = ("text", "tokens", "i")

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _indexed_tokens(text)
        self.i = 0

    def fail(self, message: str, index: int) -> DimExpressionError:
        """The error at the token ``index`` (tokens carry their index; the text is tokenised
        again, with positions, only to report an error)."""
        return DimExpressionError(message, self.text, tokenize_expression(self.text)[index][2])

    def parse(self) -> Term:
        """The term of the whole text (operator precedence: an operand, then an operator, in turn)."""
        tokens = self.tokens
        operands: list[Term | _Ratio] = []  # a ratio a/b only until a rounding call takes it
        # entries: ("bin", prec, op, pos) | ("neg", prec, None, pos) | ("paren", 0, None, pos)
        #          | ("call", 0, name, pos, operand height)
        stack: list[tuple] = []
        i = 0
        expect_operand = True
        while True:
            if expect_operand:
                kind, value, pos = tokens[i]
                if kind == "name" and tokens[i + 1][1] != "(" and value not in RESERVED_NAMES:
                    operands.append(dim_name(value))  # the commonest operand, at once
                    i += 1
                    expect_operand = False
                else:
                    i, expect_operand = self.operand(i, stack, operands)
                continue
            kind, value, pos = tokens[i]
            i += 1
            if kind == "end":
                break
            entry = _BINARY.get(value) if kind == "op" else None
            if entry is not None:
                prec = entry[0]
                while stack and stack[-1][0] == "bin" and stack[-1][1] >= prec and stack[-1][2] is not _RATIO_OP:
                    b = operands.pop()  # a op b, reduced at once when neither is a ratio
                    a = operands[-1]
                    if isinstance(a, _Ratio) or isinstance(b, _Ratio):
                        operands.append(b)
                        break
                    operands[-1] = make_term(stack.pop()[2], (a, b))
                if not stack or stack[-1][1] < prec:
                    stack.append(("bin", prec, entry[1], pos))
                    expect_operand = True
                    continue
            self.operator(kind, value, pos, stack, operands)
            expect_operand = value != ")"
        while stack:
            top = stack[-1]
            if top[0] in ("paren", "call"):
                raise self.fail("'(' was never closed", top[3] + (top[0] == "call"))  # the '(' after a call's name
            self.reduce(stack, operands)
        result = operands[0]
        if isinstance(result, _Ratio):
            raise self.fail(_RATIO_MESSAGE, result.pos)
        return result

    def operand(self, i: int, stack: list[tuple], operands: list) -> tuple[int, bool]:
        """Read the token at ``i`` where an operand is expected: the next index, and whether one is still expected.

        A number or a name is pushed on ``operands``; a bracket, a unary minus or a call opens on ``stack``.
        """
        tokens = self.tokens
        kind, value, pos = tokens[i]
        i += 1
        if kind == "num":
            operands.append(self.number(value, pos, 1))
            return i, False
        if kind == "name":
            if tokens[i][1] != "(":
                operands.append(self.name(value, pos))
                return i, False
            i += 1
            if tokens[i][1] == ")":
                raise self.fail(f"{value}() needs arguments", tokens[i][2])
            stack.append(("call", 0, value, pos, len(operands)))
        elif value == "(":
            stack.append(("paren", 0, None, pos))
        elif value == "-":
            nxt = tokens[i]
            if nxt[0] == "num":
                # a minus sign on a literal is part of it: unary minus binds tighter than any operator
                operands.append(self.number(nxt[1], nxt[2], -1))
                return i + 1, False
            stack.append(("neg", _UNARY_PREC, None, pos))
        elif value == "+":
            pass  # unary plus changes nothing
        elif kind == "end":
            raise self.fail("unexpected end of expression: expected a name, a number or '('", pos)
        else:
            raise self.fail(f"expected a name, a number or '(', got {value!r}", pos)
        return i, True

    def operator(self, kind: str, value: str, pos: int, stack: list[tuple], operands: list) -> None:
        """Take a binary operator, a ',' or a ')' (reducing what binds at least as tightly)."""
        entry = _BINARY.get(value) if kind == "op" else None
        if entry is not None:
            prec = entry[0]
            while stack and stack[-1][1] >= prec:
                self.reduce(stack, operands)
            stack.append(("bin", prec, entry[1], pos))
        elif value == ",":
            while stack and stack[-1][0] in ("bin", "neg"):
                self.reduce(stack, operands)
            if not stack or stack[-1][0] != "call":
                raise self.fail("',' outside a function call", pos)
        elif value == ")":
            while stack and stack[-1][0] in ("bin", "neg"):
                self.reduce(stack, operands)
            if not stack:
                raise self.fail("unmatched ')'", pos)
            top = stack.pop()
            if top[0] == "call":
                self.call(top, operands)
        else:
            raise self.fail(f"expected an operator, ')' or the end, got {value!r}", pos)

    def reduce(self, stack: list, operands: list) -> None:
        kind, _, op, pos = stack.pop()
        if kind == "neg":
            self.no_ratio(operands[-1])
            operands[-1] = make_term(_NEG, (operands[-1],))
            return
        b = operands.pop()
        a = operands[-1]
        self.no_ratio(a)
        self.no_ratio(b)
        if op is _RATIO_OP:
            operands[-1] = _Ratio(a, b, pos)  # only a rounding call takes it
        else:
            operands[-1] = make_term(op, (a, b))

    def no_ratio(self, operand: object) -> None:
        """Reject a ratio a/b anywhere but as the argument of a rounding call."""
        if operand.__class__ is _Ratio:
            raise self.fail(_RATIO_MESSAGE, operand.pos)

    def call(self, entry: tuple, operands: list) -> None:
        _, _, name, pos, height = entry
        args = operands[height:]
        del operands[height:]
        rounding = _ROUNDING.get(name)
        if rounding is not None and len(args) == 1:
            arg = args[0]
            if arg.__class__ is _Ratio:
                operands.append(
                    make_term(rounding, (arg.num, arg.den))
                )  # floor(a/b) -> a//b, ceiling(a/b) -> CeilToInt(a, b)
            else:
                operands.append(arg)  # floor(n) -> n for an integer n
            return
        for arg in args:
            self.no_ratio(arg)
        if name == "ModularIndexing":
            if len(args) != 3:
                raise self.fail(f"ModularIndexing() takes 3 arguments, got {len(args)}", pos)
            x, d, m = args
            operands.append(make_term(_MOD, (make_term(_FLOORDIV, (x, d)), m)))  # ModularIndexing(x, d, m) -> (x//d)%m
            return
        if name == "abs" and len(args) == 1:
            operands.append(Term(_ABS, (args[0],)))
            return
        spec = _CALLS.get(name)
        if spec is None:
            operands.append(Term(FN, tuple(args), name))  # any other function: opaque
            return
        op, lo, hi = spec
        if len(args) < lo or (hi is not None and len(args) > hi):
            want = str(lo) if lo == hi else f"at least {lo}"
            raise self.fail(f"{name}() takes {want} arguments, got {len(args)}", pos)
        if len(args) == 1:
            operands.append(args[0])
            return
        result = make_term(op, (args[0], args[1]))
        for a in args[2:]:
            result = make_term(op, (result, a))  # Max(a, b, c) -> a^b^c
        operands.append(result)

    def name(self, value: str, pos: int) -> Term:
        if value in RESERVED_NAMES:
            raise self.fail(f"{value!r} is reserved and cannot name a dimension", pos)
        return dim_name(value)

    def number(self, digits: str, pos: int, sign: int) -> Term:
        value = int(digits)
        if value > INT64_MAX + (sign < 0):
            raise self.fail(f"the integer {digits} does not fit in int64", pos)
        return dim_const(sign * value)
