"""The one tokenizer of the text languages: expressions, rule text and kernels.

A language is a :class:`Lexicon`, a small table: its operator and bracket spellings, its words
that are operators (``and``, ``or``, ``not``), and the regular expressions of its other token
kinds (numbers and names by default). :func:`tokenize` turns text into ``(kind, text, position)``
tuples ending with an ``end`` token, whitespace dropped; a character no kind matches raises the
lexicon's error (a :class:`~exprgraph.errors.ParseError` unless the language says otherwise) at
its position, with the caret line. Imports only :mod:`exprgraph.errors`.

Every parser reads its text through :func:`scan` (or, for the dimension reader's quick split,
calls :func:`check_text_size` itself), so one limit bounds them all: a text longer than
:func:`max_text` characters (``$EXPRGRAPH_MAX_TEXT``, default a million) raises
:class:`~exprgraph.errors.SizeLimitError` before any work is done on it.

>>> tokenize("x**2 + f(y)")[:5]
[('name', 'x', 0), ('op', '**', 1), ('num', '2', 3), ('op', '+', 5), ('name', 'f', 7)]
>>> tokenize("not a and 3")[-1]
('end', '', 11)
"""

from __future__ import annotations

import keyword
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ..errors import ParseError, SettingError, SizeLimitError

__all__ = [
    "Lexicon",
    "EXPRESSION",
    "NUMBER",
    "NAME",
    "RESERVED_NAMES",
    "CONSTANT_NAMES",
    "QUOTED_NAME",
    "QUOTE",
    "check_name",
    "name_text",
    "quoted_name",
    "scan",
    "tokenize",
    "DEFAULT_MAX_TEXT",
    "ENV_MAX_TEXT",
    "SHORT_TEXT",
    "MAX_TOKEN",
    "max_text",
    "check_text_size",
]

#: a number: ASCII digits, a fraction and an exponent (``1``, ``1.``, ``.5``, ``2.5e-3``)
NUMBER = r"(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)(?:[eE][+-]?[0-9]+)?"
#: a name: a run of word characters not starting with a digit (Unicode letters included, so
#: every name Symbol() accepts reads back: a symbol's name must be one such token)
NAME = r"[^\W\d]\w*"
_NAME = re.compile(NAME)

#: names the parser reads as something else, so no symbol may take them
RESERVED_NAMES = frozenset({"inf", "nan", "True", "False", "None", *keyword.kwlist})

#: names the parser reads as float64 constants: a symbol of such a name is printed quoted (`` `e` ``),
#: and an int64 or bool parse still reads the bare name as a symbol
CONSTANT_NAMES = {"pi": math.pi, "e": math.e}

#: the quote of a quoted name: `` `e` `` is the symbol named ``e`` wherever the bare ``e`` is Euler's number
QUOTE = "`"
#: a quoted name token: a backquote, any characters but a backquote or a line break, the closing backquote
#: (missing at the end of the text: the parser then says what is wrong, with the position)
QUOTED_NAME = r"`[^`\n]*`?"


@lru_cache(maxsize=65536)
def name_text(name: str) -> str:
    """A symbol's name as the expression language spells it: bare, or quoted where the bare name reads otherwise.

    The one table of the printer and the parser: a name the parser reads as a constant
    (:data:`CONSTANT_NAMES`), as a literal or keyword (:data:`RESERVED_NAMES`), or not as one name
    token is written `` `name` ``, which the parser reads as the symbol of that name only.
    """
    if name in CONSTANT_NAMES or name in RESERVED_NAMES or _NAME.fullmatch(name) is None:
        return f"{QUOTE}{name}{QUOTE}"
    return name


def quoted_name(token: str) -> str | None:
    """The name inside a quoted name token (`` `e` `` gives ``e``), or None when the closing quote is missing."""
    if len(token) < 2 or not token.endswith(QUOTE):
        return None
    return token[1:-1]


def check_name(name: Any) -> str:
    """``name`` when it can name a symbol (an identifier the parser reads back whole), else ValueError."""
    if not isinstance(name, str) or not name.isidentifier() or name in RESERVED_NAMES:
        raise ValueError(f"a symbol name must be an identifier that is not reserved, not {name!r}")
    if len(name) > MAX_TOKEN:  # printed, it would be a token the parsers refuse
        raise ValueError(f"a symbol name is at most {MAX_TOKEN} characters, not {len(name):,}")
    if not name.isascii() and _NAME.fullmatch(name) is None:
        # (an ASCII identifier is one NAME token) an identifier with a combining mark or a connector the tokenizer
        # does not read as a word character (such as "e\u0301" or "a\u00b7b"): printed, it would not parse back
        raise ValueError(
            f"the symbol name {name!r} would not read back from printed text: use letters, digits and '_' "
            "(for accented letters, the composed form: unicodedata.normalize('NFC', name))"
        )
    return name


Token = tuple[str, str, int]

#: the longest text (in characters) a parser reads unless ``$EXPRGRAPH_MAX_TEXT`` says otherwise: the
#: worst texts measured at this length take at most 550 MB (a rule of a million minus signs; nested
#: brackets 170-280 MB, a sum of names 180 MB); ten million characters took 1.9 GB, a hundred
#: million failed with a MemoryError
DEFAULT_MAX_TEXT = 1_000_000
#: the environment variable that sets the limit of every parser
ENV_MAX_TEXT = "EXPRGRAPH_MAX_TEXT"
#: a text of at most this many characters is always read (the limit cannot be set lower), so the
#: check of a usual text is one comparison and reads no environment
SHORT_TEXT = 1024
#: the longest name or number token: below the fewest digits Python may be set to convert to an int
#: (640), so no literal reaches int() only to fail there, and no integer conversion is slow
MAX_TOKEN = 512


def max_text() -> int:
    """The longest text the parsers read: ``$EXPRGRAPH_MAX_TEXT`` when set, else :data:`DEFAULT_MAX_TEXT`."""
    value = os.environ.get(ENV_MAX_TEXT, "").strip()
    if not value:
        return DEFAULT_MAX_TEXT
    try:
        limit = int(value.replace("_", ""))
    except ValueError:
        limit = -1
    if limit < SHORT_TEXT:
        raise SettingError(
            f"${ENV_MAX_TEXT} must be an integer of at least {SHORT_TEXT}, not {value!r}", setting=f"${ENV_MAX_TEXT}"
        )
    return limit


def check_text_size(text: str) -> None:
    """Raise SizeLimitError when ``text`` is longer than :func:`max_text` characters (before any work on it)."""
    size = len(text)
    if size <= SHORT_TEXT:
        return
    limit = max_text()
    if size > limit:
        raise SizeLimitError(
            f"the text is {size:,} characters long, more than the limit of {limit:,} characters a parser reads: "
            f"set ${ENV_MAX_TEXT}=N to allow more",
            size=size,
            limit=limit,
            setting=f"${ENV_MAX_TEXT}",
        )


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
    kinds=(("num", NUMBER), ("name", NAME), ("qname", QUOTED_NAME)),
)


def scan(text: str, pattern: re.Pattern, fail: Callable[[str, int], Exception]) -> list[Token]:
    """``(group name, text, position)`` of each match of ``pattern``'s named groups, left to right.

    A ``ws`` group is dropped; a character no group matches, or a token of more than
    :data:`MAX_TOKEN` characters, raises ``fail(message, position)``; a text longer than
    :func:`max_text` raises SizeLimitError first.
    """
    check_text_size(text)
    tokens = []
    pos = 0
    n = len(text)
    match = pattern.match
    while pos < n:
        m = match(text, pos)
        if m is None:
            raise fail(f"unexpected character {text[pos]!r}", pos)
        end = m.end()
        kind = m.lastgroup or ""
        if kind != "ws":
            if end - pos > MAX_TOKEN:
                raise fail(f"a token of {end - pos:,} characters: a name or a number is at most {MAX_TOKEN}", pos)
            tokens.append((kind, m.group(), pos))
        pos = end
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
