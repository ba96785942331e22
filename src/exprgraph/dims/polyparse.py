"""Reading dimension text straight into its polynomial normal form: the fast path for text.

``simplify_expression`` takes text and gives text. For the short expressions of shape inference,
building the core term of the text and then walking it (:mod:`.simplify`) costs more than the
algebra, so this module reads the tokens once and keeps, for each operand, what the general walk
would know about the same node:

- a name or an integer literal, as it is;
- an open *region*, as the general walk defines them (a chain of one kind of node, see
  :mod:`.simplify`): the summands of a chain of ``+``, ``-``, unary ``-`` and ``k*x``, each with
  its coefficient; the factors of a chain of products; the arguments of a chain of ``^`` (``&``);
- a closed polynomial: a floor division, modulo or ceiling division already simplified (by
  :mod:`.division`), or a region closed because its parent is of another kind.

A region is closed by the same algebra as in the general walk, with the same operands in the same
order: summands and factors right to left, max/min arguments left to right. So the polynomial is
the one ``to_poly(parse_expression(text))`` gives on cold caches, dict order included, and the
opaque atoms (floor divisions, max...) are the same interned terms.

The general walk runs on the interned DAG, where a subexpression written twice is one node: a
node used twice is its own region there, while here each occurrence is read again. That makes no
difference, except when such a node is merged into a region of its own kind; every node gets an
id (equal nodes, equal ids, as for interned terms) so that this case is seen, and the fast path
then declines. It also declines (returns None, and the caller takes the general path, which gives
the answer or the error with its position) on text the parser would reject, on text of more than
``MAX_TOKENS`` tokens (but a flat sum, see below, is read whatever its length), and on a result
over a limit of :mod:`.normal`.

Work charged to the budget of :mod:`.normal` is never less than the general walk's (a repeated
subexpression is worked out again here, once there), so whatever the fast path finishes, the
general walk finishes too.

Text without floor division, modulo, max, min or calls of two arguments or more (sums and
products of names and integers) makes no atom, and needs none of this: no rule across the terms
of a sum can apply (they need opaque atoms), the order of the terms never reaches the output
(printing sorts them), and a region boundary changes nothing. Such text is read as its exact
polynomial, up to the order of its terms: a flat sum of products (``2*batch*seq - s0 + 1``, the
commonest shape expression) by one scan of its tokens, anything else by the operator loop with
_LightReader. A product of two sums makes the light reader decline; without one, the general
walk's work on at most MAX_TOKENS tokens stays below ``_LIGHT_WORK``, so neither path reaches the
budget (when a test lowers MAX_WORK below that, the exact reader takes the text).
"""

from __future__ import annotations

from typing import Final

from ..errors import TermTooLargeError
from . import ring
from .context import Context
from .grammar import BINARY, CALLS, P_MAX, UNARY_PREC  # one grammar table for both readers
from .monomials import mono_of_powers
from .parse import NotATokenError, split_tokens, token_kind  # one tokenizer for both readers
from .polyoperands import (
    _CONST,
    _NAME,
    _OPAQUE,
    _DeclineError,
    _LightReader,
    _Reader,
)
from .ring import Budget, Poly
from .terms import ADD, INT64_MAX, MAX, MIN, MUL, RESERVED_NAMES, SUB, dim_name, memo_table, remember

__all__ = ["read_polynomial", "MAX_TOKENS"]

#: longer texts take the general path (linear in the size of its input, however large)
MAX_TOKENS: Final = 256


#: the operators and calls this reader takes (a '/' and any other call send the text the general way)
_FAST_BINARY: Final = {
    token: entry for token, entry in BINARY.items() if entry[1] in _OPAQUE or entry[1] in (ADD, SUB, MUL, MAX, MIN)
}
_FAST_CALLS: Final = {name: entry for name, entry in CALLS.items() if entry[0] in _OPAQUE or entry[0] in (MAX, MIN)}
#: tokens that make atoms (a call with one argument makes no node: Max(a) is a)
_ATOM_TOKENS: Final = frozenset(["//", "%", "^", "&", ","])

#: a bound on the general walk's work on a text the light reader takes: at most 2*MAX_TOKENS
#: references to sums of at most MAX_TOKENS terms, and as many products of a sum by a monomial
_LIGHT_WORK: Final = 4 * MAX_TOKENS**2

#: name -> its operand (the name's term and polynomial); cleared with the other caches
_names: Final[dict[str, tuple]] = memo_table()


def _name(text: str) -> tuple:
    operand = _names.get(text)
    if operand is None:
        if text in RESERVED_NAMES:
            raise _DeclineError  # the parser rejects it
        t = dim_name(text)
        operand = remember(_names, text, (_NAME, t, {((t, 1),): 1}))
    return operand


#: a monomial of names: ``((name, power), ...)`` sorted by name, which is its mono_key; ``()`` is 1
NameMono = tuple
#: a polynomial over names: ``{NameMono: coefficient}``, no zero coefficients
NamePoly = dict


def _flat_sum(tokens: list[str]) -> NamePoly | None:
    """The polynomial of a flat sum (``2*batch*seq - s0 + -1``) over names, or None if the tokens are not one.

    A flat sum is terms with their signs in front, each a product of names and integers. Its
    polynomial is just the sum of the terms. ``tokens`` ends with _END.
    """
    acc: NamePoly = {}
    sign = 1  # of the next term: the binary '+' or '-' before it
    i = 0
    while True:
        tok = tokens[i]
        i += 1
        # the unary signs of the term; the parser reads a '-' right before a literal as its sign
        # (so -9223372036854775808 is a literal, but not in a - 9223372036854775808)
        negated = False
        while tok == "-" or tok == "+":
            negated = tok == "-"
            if negated:
                sign = -sign
            tok = tokens[i]
            i += 1
        coef = sign
        powers: dict[str, int] = {}
        while True:  # factors joined by '*'
            kind = token_kind(tok)
            if kind == "num":
                value = int(tok)
                if value > INT64_MAX + negated:
                    raise _DeclineError  # the parser rejects it
                coef *= value
            elif kind == "name":
                if tok in RESERVED_NAMES:
                    raise _DeclineError  # the parser rejects it
                powers[tok] = powers.get(tok, 0) + 1
            else:
                return None  # not a flat sum
            negated = False
            tok = tokens[i]
            i += 1
            if tok != "*":
                break
            tok = tokens[i]
            i += 1
        if coef:
            m = tuple(sorted(powers.items())) if len(powers) > 1 else tuple(powers.items())
            v = acc.get(m, 0) + coef
            if v:
                acc[m] = v
            else:
                del acc[m]
        if tok == "+":
            sign = 1
        elif tok == "-":
            sign = -1
        elif tok == _END:
            return acc
        else:
            return None  # not a flat sum


def _name_poly(named: NamePoly) -> Poly:
    """The polynomial over the names' atoms."""
    return {mono_of_powers({_name(n)[1]: p for n, p in m}): c for m, c in named.items()}


def _is_light(text: str) -> bool:
    """Whether the text makes no atom and the light reader may take it (see the module docstring)."""
    # a token of _ATOM_TOKENS is in the tokens exactly when its text is in the text: no other
    # token holds any of their characters, and two '/' in a row always read as '//'
    return (
        ring.MAX_WORK >= _LIGHT_WORK
        and "//" not in text
        and "%" not in text
        and "^" not in text
        and "&" not in text
        and "," not in text
    )


def read_polynomial(text: str, ctx: Context) -> Poly | None:
    """The polynomial ``to_poly(parse_expression(text), ctx)`` gives on cold caches, or None to decline.

    Its terms are in the same order too, except for text without atoms (read by _LightReader).
    """
    tokens = split_tokens(text)  # the parser's tokens (the end, "", last)
    if tokens is None:
        return None  # '**' or a character no text holds: the general path reports it
    long = len(tokens) > MAX_TOKENS + 1
    try:
        if _is_light(text):
            if not long or len(tokens) <= ring.MAX_WORK:
                # a flat sum is read in one scan, however long: the general walk's work on it is one
                # operation a term, within MAX_WORK
                named = _flat_sum(tokens)
                if named is not None:
                    return _name_poly(named)
            if long:
                return None
            return _read(tokens, _LIGHT)
        if long:
            return None
        ctx.budget = Budget()
        return _read(tokens, _Reader(ctx))
    except (_DeclineError, NotATokenError, TermTooLargeError, OverflowError):
        return None  # (a piece of text that is no token: the general path reports it)


_LIGHT: Final = _LightReader()


def _literal(digits: str, sign: int) -> tuple:
    value = int(digits)
    if value > INT64_MAX + (sign < 0):
        raise _DeclineError  # the parser rejects it
    value *= sign
    return (_CONST, value, value)


_END: Final = ""  # appended after the last token: looking one token ahead never runs off the list
_BOTTOM: Final = (-1, None)  # the bottom of the operator stack
_BRACKET: Final = (0, "(")
_NEGATE: Final = (UNARY_PREC, None)


def _read(tokens: list[str], reader: _Reader | _LightReader) -> Poly:
    """The operator-precedence loop of :mod:`.parse`, on operands of the fast path (tokens end with _END)."""
    names = _names
    operands: list[tuple] = []
    # operator stack entries: (precedence, op) for binary operators, (5, None) for unary minus,
    # (0, "(") for a bracket, (0, name, operand height) for a call, and (-1, None) at the bottom;
    # a bracket, a call and the bottom stop reductions
    stack: list[tuple] = [_BOTTOM]
    i = 0
    while True:
        # an operand is expected
        tok = tokens[i]
        i += 1
        operand = names.get(tok)
        if operand is None or tokens[i] == "(":  # not a name read before (the most common operand)
            operand, i = _operand(tok, tokens, i, stack, len(operands))
            if operand is None:
                continue  # a prefix: a bracket, a sign or a call was opened
        operands.append(operand)
        # an operator, a comma, a closing bracket or the end is expected
        while True:
            tok = tokens[i]
            i += 1
            entry = _FAST_BINARY.get(tok)
            # reduce: apply the operators on top that bind at least as tightly as this one to their
            # operands; anything else closes, and reduces every operator (the loosest binds at P_MAX)
            prec = P_MAX if entry is None else entry[0]
            top = stack[-1]
            while top[0] >= prec:
                stack.pop()
                op = top[1]
                if op is None:
                    operands[-1] = reader.negate(operands[-1])
                else:
                    b = operands.pop()
                    operands[-1] = reader.binary(op, operands[-1], b)
                top = stack[-1]
            if entry is not None:
                stack.append(entry)
                break
            if tok == _END:
                return _finish(top, operands[0], reader)
            if tok != ")" and tok != ",":
                raise _DeclineError
            if top[0] < 0:  # the bottom
                raise _DeclineError  # an unmatched ')' or a ',' outside a call
            if tok == ",":
                if len(top) != 3:
                    raise _DeclineError  # a ',' inside a bracket
                break
            stack.pop()
            if len(top) == 3:
                _call(top, operands, reader)


def _operand(tok: str, tokens: list[str], i: int, stack: list[tuple], height: int) -> tuple[tuple | None, int]:
    """The operand starting with ``tok`` (``tokens[i]`` is the one after), and where to read on.

    A bracket, a unary sign or a call is pushed on ``stack`` instead (``height`` operands are
    read so far), and the operand is None: one is still expected.
    """
    kind = token_kind(tok)
    if kind == "num":
        return _literal(tok, 1), i
    if tok == "(":
        stack.append(_BRACKET)
        return None, i
    if tok == "-":
        if token_kind(tokens[i]) == "num":
            return _literal(tokens[i], -1), i + 1  # a minus sign on a literal is part of it
        stack.append(_NEGATE)
        return None, i
    if tok == "+":
        return None, i  # unary plus changes nothing
    if kind == "name":
        if tokens[i] == "(":
            if tok not in _FAST_CALLS or tokens[i + 1] == ")":
                raise _DeclineError
            stack.append((0, tok, height))
            return None, i + 1
        return _name(tok), i
    raise _DeclineError  # the end, or not an operand


def _finish(top: tuple, operand: tuple, reader: _Reader | _LightReader) -> Poly:
    """The polynomial of the whole text, ``operand``, once the end is reached with ``top`` on the stack."""
    if top[0] >= 0:  # not the bottom
        raise _DeclineError  # a bracket was never closed
    if reader.merged:
        reader.check_sharing()
    return reader.close(operand)


def _call(entry: tuple, operands: list, reader: _Reader | _LightReader) -> None:
    _, name, height = entry
    args = operands[height:]
    del operands[height:]
    op, lo, hi = _FAST_CALLS[name]
    if len(args) < lo or (hi is not None and len(args) > hi):
        raise _DeclineError
    acc = args[0]  # Max(a) is a
    for a in args[1:]:
        acc = reader.binary(op, acc, a)  # Max(a, b, c) is (a^b)^c
    operands.append(acc)
