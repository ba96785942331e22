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
is limited by memory only, and it never evaluates the text. A text longer than the parsers' limit
(:func:`exprgraph.core.tokens.max_text`) raises :class:`~exprgraph.errors.SizeLimitError` before it
is split; only short texts and words are cached, so the caches stay small. Errors raise
:class:`~exprgraph.errors.DimExpressionError` (a ``SyntaxError`` and a ``RuntimeError``) with the
position of the fault and a caret line.
"""

from __future__ import annotations

from typing import Any, Final

from ..core.term import Term
from ..core.tokens import MAX_TOKEN, SHORT_TEXT, check_text_size, tokenize
from ..errors import DimExpressionError
from .grammar import BINARY, CALLS, LEXICON, RATIO_OP, ROUNDING, UNARY_PREC
from .terms import ABS, FLOORDIV, FN, INT64_MAX, MOD, NEG, RESERVED_NAMES, dim_const, dim_name, make_term

__all__ = [
    "parse_expression",
    "parse_expression_tokens",
    "tokenize_expression",
    "clear_parse_cache",
    "split_tokens",
    "token_kind",
    "NotATokenError",
]

_RATIO_MESSAGE: Final = (
    "'/' is not a dimension operator; use '//' for floor division (a/b is read only as floor(a/b) or ceiling(a/b))"
)
_POWER_MESSAGE: Final = "'**' (power) is not a dimension operator; multiply instead"
#: kinds of operator-stack entries, compared by identity (an entry is a tuple whose first item is its kind)
_BIN: Final = "bin"
_NEG_KIND: Final = "neg"
_PAREN: Final = "paren"
_CALL: Final = "call"
_RATIO_KIND: Final = "ratio"
#: an operator-stack entry of a binary operator (or a ratio): kind, precedence, op, position
_BinEntry = tuple[str, int, Any, int]
#: binary operator token -> its operator-stack entry (kind, precedence, op, position); the position
#: is needed only for a '/' (its error), so the other entries are made once
_BIN_ENTRIES: Final[dict[str, _BinEntry]] = {token: (_BIN, prec, op, -1) for token, (prec, op) in BINARY.items()}
#: the bottom of the operator stack (its precedence, -1, is below every operator's: nothing reduces it)
_BOTTOM: Final = ("bottom", 0, None, -1)


class _Ratio:
    """The operand ``a/b`` (only a rounding call takes it) and the position of its ``/``."""

    __slots__ = ("num", "den", "pos")

    def __init__(self, num: Term, den: Term, pos: int) -> None:
        self.num, self.den, self.pos = num, den, pos


#: marks ``//`` while a text is split (a character that no valid text holds)
_MARK: Final = "\x00"
#: the one-character operators (and the mark of ``//``): a space is put around each
_SPACED: Final = ("-", "+", "*", "/", "%", "^", "&", "(", ")", ",", _MARK)
#: each of them with its spaced text
_SPACINGS: Final[tuple[tuple[str, str], ...]] = tuple([(op, f" {op} ") for op in _SPACED])
#: the kinds of the operators, and of the end
_OPERATORS: Final = {**dict.fromkeys(_SPACED, "op"), "//": "op", "": "end"}
#: the kinds of the pieces of text met so far (the operators, the names and numbers read)
_words: Final[dict[str, str]] = dict(_OPERATORS)
#: the names and the numbers read so far (names of the grammar, not reserved) and their terms
_operand_terms: Final[dict[str, Term]] = {}

_cache: Final[dict[str, Term]] = {}
_CACHE_LIMIT: Final = 1 << 16
#: the longest name or number the word tables keep (the text cache keeps texts of at most SHORT_TEXT
#: characters): each table holds at most _CACHE_LIMIT entries, so a few MB of text however long the input
_CACHED_WORD: Final = 64


def clear_parse_cache() -> None:
    """Forget cached parses (parsing is pure; the cache only saves time)."""
    _cache.clear()
    _words.clear()
    _words.update(_OPERATORS)
    _operand_terms.clear()


def tokenize_expression(text: str) -> list[tuple[str, str, int]]:
    """Tokens ``(kind, text, position)`` of a dimension expression; kinds: num, name, op, end.

    The shared tokenizer (:func:`exprgraph.core.tokens.tokenize`) in the dimension language
    (:data:`.grammar.LEXICON`); a ``**`` is refused here, where it is first met.
    """
    try:
        tokens = tokenize(text, LEXICON)
    except DimExpressionError as err:
        power = text.find("**", 0, err.pos)  # an earlier '**' is the first fault
        if power >= 0:
            raise DimExpressionError(_POWER_MESSAGE, text, power) from None
        raise
    for _, value, pos in tokens:
        if value == "**":
            raise DimExpressionError(_POWER_MESSAGE, text, pos)
    return tokens


def split_tokens(text: str) -> list[str] | None:
    """The texts of the tokens, with ``""`` (the end) last, or None for the shared tokenizer to read.

    The common text (tokens separated by spaces or operators) is split by str methods in C:
    ``//`` is marked by a character no valid text holds, a space is put around each operator,
    and the pieces between spaces are the tokens. A piece that is no token (``2x``, a character
    no token takes) is found by the parser, which then reads the tokens of the shared tokenizer
    (:func:`tokenize_expression`), as it does for a ``**``. A text over the parsers' size limit
    raises SizeLimitError.
    """
    if len(text) > SHORT_TEXT:
        check_text_size(text)
    if "**" in text or _MARK in text:
        return None
    floor = "//" in text
    spaced = text.replace("//", _MARK) if floor else text
    for op, spaced_op in _SPACINGS:
        if op in spaced:
            spaced = spaced.replace(op, spaced_op)  # one pass in C per operator the text holds
    pieces = spaced.split()
    if floor:
        pieces = [p if p != _MARK else "//" for p in pieces]
    pieces.append("")
    return pieces


def _tokens(text: str) -> list[str]:
    """The texts of the tokens of the shared tokenizer, with ``""`` last (it raises on a fault)."""
    return [value for _, value, _ in tokenize_expression(text)]


class NotATokenError(Exception):
    """A piece of a quick split that is no token: the parse starts again on the shared tokenizer's tokens."""


def token_kind(word: str) -> str:
    """The kind of a token: name, num, op or end (NotATokenError for a piece of text that is no token).

    A name is what the lexicon's name pattern takes (an ASCII identifier), a number what its
    number pattern takes (decimal digits, as ``\\d`` and ``int`` read them); a word longer than the
    tokenizer's :data:`~exprgraph.core.tokens.MAX_TOKEN` is left to the shared tokenizer, which refuses it.
    """
    kind = _words.get(word)
    if kind is not None:
        return kind
    if len(word) > MAX_TOKEN:
        raise NotATokenError
    if word.isascii() and word.isidentifier():
        kind = "name"
    elif word.isdecimal():
        kind = "num"
    else:
        raise NotATokenError
    if len(word) <= _CACHED_WORD:
        if len(_words) >= _CACHE_LIMIT:
            _words.clear()
            _words.update(_OPERATORS)
        _words[word] = kind
    return kind


def parse_expression(text: str) -> Term:
    """Parse a dimension expression into an int64 term (``"2*batch//batch"`` -> ``2*batch//batch``)."""
    if type(text) is not str:
        if isinstance(text, str):
            text = str(text)
        else:
            raise TypeError(f"parse_expression() takes a string, not {type(text).__name__}")
    term = _cache.get(text)
    if term is None:
        values = split_tokens(text)
        try:
            term = _Parser(text, _tokens(text) if values is None else values).parse()
        except NotATokenError:
            term = _Parser(text, _tokens(text)).parse()
        if len(text) <= SHORT_TEXT:
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
    """One parse: the token texts, an operand stack and an operator stack (with its precedences alongside)."""

    __slots__ = ("text", "values", "ratios")

    def __init__(self, text: str, values: list[str]) -> None:
        self.text = text
        self.values = values
        #: whether a ratio a/b was read (until then no operand can be one, and reductions need no check)
        self.ratios = False

    def fail(self, message: str, index: int) -> DimExpressionError:
        """The error at the token ``index`` (a token's index is its place in the list; the text is
        tokenised again, with positions, only to report an error: a fault of the tokenizer, before
        this one in the text, is raised there)."""
        return DimExpressionError(message, self.text, tokenize_expression(self.text)[index][2])

    def parse(self) -> Term:
        """The term of the whole text (operator precedence: an operand, then operators, in turn)."""
        values = self.values
        operands: list[Term | _Ratio] = []  # a ratio a/b only until a rounding call takes it
        # entries: (_BIN, prec, op, pos) | (_RATIO_KIND, prec, RATIO_OP, pos) | (_NEG_KIND, prec, None, pos)
        #          | (_PAREN, 0, None, pos)
        #          | (_CALL, 0, name, pos, operand height) | _BOTTOM; pos is the index of the token.
        # precs[k] is the precedence of stack[k], read without unpacking the entry: brackets and calls
        # have 0 and the bottom -1, so no operator reduces past them
        stack: list[tuple] = [_BOTTOM]
        precs: list[int] = [-1]
        i = 0
        while True:
            # an operand is expected: a name or a number read before (the commonest operands) at once
            term = _operand_terms.get(values[i])
            if term is not None and values[i + 1] != "(":
                operands.append(term)
                i += 1
            else:
                i = self.operand(i, stack, precs, operands)
                if i < 0:
                    i = -i  # a prefix was opened (a bracket, a sign, a call): still an operand to read
                    continue
            # operators, ')' and the end, until an operand is expected again
            while True:
                value = values[i]
                entry = _BIN_ENTRIES.get(value)
                if entry is not None:
                    i, expect_operand = self.binary(entry, i, stack, precs, operands)
                    if expect_operand:
                        break
                    continue
                i += 1
                if not value:
                    return self.finish(stack, precs, operands)
                if self.close(value, i - 1, stack, precs, operands):
                    break  # a ',': the next argument

    def binary(
        self, entry: _BinEntry, i: int, stack: list[tuple], precs: list[int], operands: list
    ) -> tuple[int, bool]:
        """Take the binary operator at token ``i`` (its stack entry): reduce what binds at least as tightly, then
        push it; the index of the next token and whether an operand is expected there.

        When a name or a number read before follows, and after it an operator that binds no tighter,
        ``)``, ``,`` or the end (``a + b + c``, ``a*b + c``), the operator takes it at once: the
        reduction the stack would make next, without pushing and popping.
        """
        values = self.values
        while True:
            prec = entry[1]
            while precs[-1] >= prec:
                top = stack[-1]
                if top[0] is _BIN and not self.ratios:
                    # a op b (the commonest reduction), at once: no operand can be a ratio yet
                    b = operands.pop()
                    operands[-1] = make_term(top[2], (operands[-1], b))
                    stack.pop()
                    precs.pop()
                else:
                    self.reduce(stack, precs, operands)
            op = entry[2]
            if op is RATIO_OP:
                stack.append((_RATIO_KIND, prec, RATIO_OP, i))
                precs.append(prec)
                return i + 1, True
            term = None if self.ratios else _operand_terms.get(values[i + 1])
            if term is not None and values[i + 2] != "(":  # (a name before '(' is a call)
                following = _BIN_ENTRIES.get(values[i + 2])
                if following is None or following[1] <= prec:
                    operands[-1] = make_term(op, (operands[-1], term))  # a op b, b a name or a number
                    i += 2
                    if following is None:
                        return i, False  # ')', ',' or the end (or no token): read by the caller
                    entry = following
                    continue
            stack.append(entry)
            precs.append(prec)
            return i + 1, True

    def close(self, value: str, pos: int, stack: list[tuple], precs: list[int], operands: list) -> bool:
        """Take a ',' (True: an operand is expected next) or a ')' (False), reducing the operators inside."""
        while precs[-1] > 0:  # the binary operators and unary minus since the bracket or call
            self.reduce(stack, precs, operands)
        top = stack[-1]
        if value == ",":
            if top[0] is not _CALL:
                raise self.fail("',' outside a function call", pos)
            return True
        if value == ")":
            if precs[-1] < 0:  # the bottom
                raise self.fail("unmatched ')'", pos)
            stack.pop()
            precs.pop()
            if top[0] is _CALL:
                self.call(top, operands)
            return False
        token_kind(value)  # a piece of text that is no token: the shared tokenizer's tokens are read
        raise self.fail(f"expected an operator, ')' or the end, got {value!r}", pos)

    def finish(self, stack: list[tuple], precs: list[int], operands: list) -> Term:
        """The term of the whole text, once its end is read."""
        while precs[-1] > 0:
            self.reduce(stack, precs, operands)
        top = stack[-1]
        if precs[-1] == 0:  # a bracket or a call (not the bottom)
            raise self.fail("'(' was never closed", top[3] + (top[0] is _CALL))  # the '(' after a call's name
        result = operands[0]
        if isinstance(result, _Ratio):
            raise self.fail(_RATIO_MESSAGE, result.pos)
        return result

    def operand(self, i: int, stack: list[tuple], precs: list[int], operands: list) -> int:
        """Read the token at ``i`` where an operand is expected: the next index, negated when one is still expected.

        A number or a name is pushed on ``operands``; a bracket, a unary minus or a call opens on ``stack``.
        """
        values = self.values
        value, pos = values[i], i
        kind = token_kind(value)
        i += 1
        if kind == "num":
            operands.append(self.number(value, pos, 1))
            return i
        if kind == "name":
            if values[i] != "(":
                operands.append(self.name(value, pos))
                return i
            i += 1
            if values[i] == ")":
                raise self.fail(f"{value}() needs arguments", i)
            stack.append((_CALL, 0, value, pos, len(operands)))
            precs.append(0)
        elif value == "(":
            stack.append((_PAREN, 0, None, pos))
            precs.append(0)
        elif value == "-":
            if token_kind(values[i]) == "num":
                # a minus sign on a literal is part of it: unary minus binds tighter than any operator
                operands.append(self.number(values[i], i, -1))
                return i + 1
            stack.append((_NEG_KIND, UNARY_PREC, None, pos))
            precs.append(UNARY_PREC)
        elif value == "+":
            pass  # unary plus changes nothing
        elif kind == "end":
            raise self.fail("unexpected end of expression: expected a name, a number or '('", pos)
        else:
            raise self.fail(f"expected a name, a number or '(', got {value!r}", pos)
        return -i

    def reduce(self, stack: list, precs: list[int], operands: list) -> None:
        """Apply the operator on top of the stack (a binary one, a ratio or unary minus) to its operands."""
        kind, _, op, pos = stack.pop()
        precs.pop()
        if kind is _NEG_KIND:
            self.no_ratio(operands[-1])
            operands[-1] = make_term(NEG, (operands[-1],))
            return
        b = operands.pop()
        a = operands[-1]
        self.no_ratio(a)
        self.no_ratio(b)
        if op is RATIO_OP:
            operands[-1] = _Ratio(a, b, pos)  # only a rounding call takes it
            self.ratios = True
        else:
            operands[-1] = make_term(op, (a, b))

    def no_ratio(self, operand: object) -> None:
        """Reject a ratio a/b anywhere but as the argument of a rounding call."""
        if type(operand) is _Ratio:
            raise self.fail(_RATIO_MESSAGE, operand.pos)

    def call(self, entry: tuple, operands: list) -> None:
        _, _, name, pos, height = entry
        args = operands[height:]
        del operands[height:]
        rounding = ROUNDING.get(name)
        if rounding is not None and len(args) == 1:
            arg = args[0]
            if type(arg) is _Ratio:
                # floor(a/b) -> a//b, ceiling(a/b) -> CeilToInt(a, b)
                operands.append(make_term(rounding, (arg.num, arg.den)))
            else:
                operands.append(arg)  # floor(n) -> n for an integer n
            return
        for arg in args:
            self.no_ratio(arg)
        if name == "ModularIndexing":
            if len(args) != 3:
                raise self.fail(f"ModularIndexing() takes 3 arguments, got {len(args)}", pos)
            x, d, m = args
            operands.append(make_term(MOD, (make_term(FLOORDIV, (x, d)), m)))  # ModularIndexing(x, d, m) -> (x//d)%m
            return
        if name == "abs" and len(args) == 1:
            operands.append(Term(ABS, (args[0],)))
            return
        spec = CALLS.get(name)
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
        term = dim_name(value)
        if len(value) <= _CACHED_WORD:
            if len(_operand_terms) >= _CACHE_LIMIT:
                _operand_terms.clear()
            _operand_terms[value] = term
        return term

    def number(self, digits: str, pos: int, sign: int) -> Term:
        value = int(digits)
        if value > INT64_MAX + (sign < 0):
            raise self.fail(f"the integer {digits} does not fit in int64", pos)
        term = dim_const(sign * value)
        if sign > 0 and len(digits) <= _CACHED_WORD:
            if len(_operand_terms) >= _CACHE_LIMIT:
                _operand_terms.clear()
            _operand_terms[digits] = term
        return term
