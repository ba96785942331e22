"""The one tokenizer of the text languages: expressions, rule text and kernels.

A language is a :class:`Lexicon`, a small table: its operator and bracket spellings, its words
that are operators (``and``, ``or``, ``not``), and the regular expressions of its other token
kinds (numbers and names by default). :func:`tokenize` turns text into ``(kind, text, position)``
tuples ending with an ``end`` token, whitespace dropped; a character no kind matches raises the
lexicon's error (a :class:`~exprgraph.errors.ParseError` unless the language says otherwise) at
its position, with the caret line. Imports only :mod:`exprgraph.errors`.

>>> tokenize("x**2 + f(y)")[:5]
[('name', 'x', 0), ('op', '**', 1), ('num', '2', 3), ('op', '+', 5), ('name', 'f', 7)]
>>> tokenize("not a and 3")[-1]
('end', '', 11)
"""

from __future__ import annotations

import keyword
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import ParseError

__all__ = [
    "Lexicon",
    "EXPRESSION",
    "NUMBER",
    "NAME",
    "RESERVED_NAMES",
    "CONSTANT_NAMES",
    "check_name",
    "scan",
    "tokenize",
]

#: a number: ASCII digits, a fraction and an exponent (``1``, ``1.``, ``.5``, ``2.5e-3``)
NUMBER = r"(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)(?:[eE][+-]?[0-9]+)?"
#: a name: a run of word characters not starting with a digit (Unicode letters included, so
#: every name Symbol() accepts reads back: a symbol's name must be one such token)
NAME = r"[^\W\d]\w*"
_NAME = re.compile(NAME)

#: names the parser reads as something else, so no symbol may take them
RESERVED_NAMES = frozenset({"inf", "nan", "True", "False", "None", *keyword.kwlist})

#: names the parser reads as float64 constants, so no float64 symbol may take them (an int64 or
#: bool symbol may: a dimension called ``e`` is read back by ``parse(text, dtype="int64")``)
CONSTANT_NAMES = {"pi": math.pi, "e": math.e}


def check_name(name: Any) -> str:
    """``name`` when it can name a symbol (an identifier the parser reads back whole), else ValueError."""
    if not isinstance(name, str) or not name.isidentifier() or name in RESERVED_NAMES:
        raise ValueError(f"a symbol name must be an identifier that is not reserved, not {name!r}")
    if _NAME.fullmatch(name) is None:
        # an identifier with a combining mark or a connector the tokenizer does not read as a word
        # character (such as "e\u0301" or "a\u00b7b"): printed, it would not parse back as this name
        raise ValueError(
            f"the symbol name {name!r} would not read back from printed text: use letters, digits and '_' "
            "(for accented letters, the composed form: unicodedata.normalize('NFC', name))"
        )
    return name


Token = tuple[str, str, int]


@dataclass(frozen=True)
class Lexicon:
    """The tokens of one language.

    ``operators`` are the spellings of the ``op`` kind (longest match first, whatever the order
    given); ``words`` are names read as ``op`` tokens; ``kinds`` are the other token kinds, tried
    in order before the operators, as ``(kind, regular expression)`` pairs; ``error`` builds the
    exception of a stray character from ``(message, text, position)``.
    """

    operators: tuple[str, ...]
    words: frozenset[str] = frozenset()
    kinds: tuple[tuple[str, str], ...] = (("num", NUMBER), ("name", NAME))
    error: Callable[[str, str, int], Exception] = ParseError
    pattern: re.Pattern = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        spellings = sorted(self.operators, key=len, reverse=True)
        groups = [r"(?P<ws>\s+)", *(f"(?P<{kind}>{regex})" for kind, regex in self.kinds)]
        groups.append("(?P<op>" + "|".join(re.escape(s) for s in spellings) + ")")
        object.__setattr__(self, "pattern", re.compile("|".join(groups)))


#: the expression language (:mod:`.parsing`), also read by rule text and conditions
EXPRESSION = Lexicon(
    ("**", "//", "<=", ">=", "==", "!=", *"-+*/%@<>(),=[]"),
    words=frozenset({"and", "or", "not"}),
)


def scan(text: str, pattern: re.Pattern, fail: Callable[[str, int], Exception]) -> list[Token]:
    """``(group name, text, position)`` of each match of ``pattern``'s named groups, left to right.

    A ``ws`` group is dropped; a character no group matches raises ``fail(message, position)``.
    """
    tokens = []
    pos = 0
    n = len(text)
    match = pattern.match
    while pos < n:
        m = match(text, pos)
        if m is None:
            raise fail(f"unexpected character {text[pos]!r}", pos)
        kind = m.lastgroup or ""
        if kind != "ws":
            tokens.append((kind, m.group(), pos))
        pos = m.end()
    return tokens


def tokenize(text: str, lexicon: Lexicon = EXPRESSION) -> list[Token]:
    """Tokens ``(kind, text, position)`` of ``text`` in ``lexicon``'s language, and a final ``end``."""
    error = lexicon.error
    tokens = scan(text, lexicon.pattern, lambda message, pos: error(message, text, pos))
    words = lexicon.words
    if words:
        tokens = [("op", v, pos) if kind == "name" and v in words else (kind, v, pos) for kind, v, pos in tokens]
    tokens.append(("end", "", len(text)))
    return tokens
