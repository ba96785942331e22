"""Settings and strategies shared by the fuzzers.

A short run in the normal suite (:data:`EXAMPLES` examples per fuzzer); ``make fuzz`` sets
``$EXPRGRAPH_FUZZ_EXAMPLES`` for a long one. Inputs are token soups: random sequences of the
tokens a parser knows (and a few it does not), joined by random spacing, so that most inputs get
past the tokenizer and exercise the grammar, plus raw random text; and inputs over the size
limits (:func:`oversized`: deep nesting, long texts, long tokens).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from exprgraph.errors import SizeLimitError

#: examples per fuzzer: a short run unless the environment asks for more
EXAMPLES = int(os.environ.get("EXPRGRAPH_FUZZ_EXAMPLES", "60"))

FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
        HealthCheck.function_scoped_fixture,  # capsys is read and cleared in every example
    ],
)

SPACING = st.sampled_from(["", " ", " ", "  ", "\t", "\n"])


def token_soup(tokens: list[str], max_size: int = 24) -> st.SearchStrategy[str]:
    """Text made of ``tokens`` (and the odd random character), joined by random spacing."""
    piece = st.one_of(st.sampled_from(tokens), st.sampled_from(tokens), st.characters(codec="utf-8"))
    return st.lists(st.tuples(piece, SPACING), max_size=max_size).map(lambda parts: "".join(a + b for a, b in parts))


def inputs(tokens: list[str], max_size: int = 24) -> st.SearchStrategy[str]:
    """Mostly token soups, sometimes arbitrary text."""
    return st.one_of(token_soup(tokens, max_size), token_soup(tokens, max_size), st.text(max_size=40))


def fuzz_inputs(valid: st.SearchStrategy[str], tokens: list[str]) -> st.SearchStrategy[str]:
    """The usual mix: half the time a valid input with a few edits, else a token soup or raw text."""
    return st.one_of(mutated(valid, tokens), mutated(valid, tokens), inputs(tokens))


def parsed_or_none(parse: Callable[[str], Any], text: str, error: type[Exception]) -> Any:
    """``parse(text)``, or None when it raises ``error`` at a position inside the text (anything else is a bug)."""
    try:
        return parse(text)
    except error as exc:
        pos = getattr(exc, "pos", None)
        assert pos is not None and 0 <= pos <= len(text)
        return None


#: tokens of the infix expression language
EXPR_TOKENS = [
    *"xyz",
    "x1",
    "é",
    "_",
    "0",
    "1",
    "2",
    "2.5",
    ".5",
    "1e308",
    "1e-320",
    "9223372036854775808",
    *"()+-*/%@<>,=[]",
    "**",
    "//",
    "<=",
    ">=",
    "==",
    "!=",
    "and",
    "or",
    "not",
    "sin",
    "exp",
    "log",
    "sqrt",
    "abs",
    "maximum",
    "max",
    "where",
    "sum",
    "transpose",
    "dot",
    "axis",
    "axes",
    "None",
    "True",
    "False",
    "inf",
    "nan",
    "array",
    "lambda",
]


# -- grammar-based inputs, and mutations of them --------------------------------------------------


@st.composite
def mutated(draw: st.DrawFn, valid: st.SearchStrategy[str], tokens: list[str]) -> str:
    """A valid input, then 0..3 edits: a slice deleted or duplicated, a token inserted, a character replaced."""
    text = draw(valid)
    for _ in range(draw(st.integers(0, 3))):
        n = len(text)
        i = draw(st.integers(0, n))
        j = draw(st.integers(i, min(n, i + 6)))
        kind = draw(st.sampled_from(["delete", "insert", "duplicate", "replace"]))
        if kind == "delete":
            text = text[:i] + text[j:]
        elif kind == "insert":
            text = text[:i] + draw(st.sampled_from(tokens)) + text[i:]
        elif kind == "duplicate":
            text = text[:j] + text[i:j] + text[j:]
        elif n:
            text = text[:i] + draw(st.characters(codec="utf-8")) + text[i + 1 :]
    return text


def _expr(
    leaves: st.SearchStrategy[str], unary: list[str], binary: list[str], calls: list[str]
) -> st.SearchStrategy[str]:
    return st.recursive(
        leaves,
        lambda sub: st.one_of(
            st.tuples(sub, st.sampled_from(binary), sub).map(lambda p: f"{p[0]} {p[1]} {p[2]}"),
            st.tuples(st.sampled_from(unary), sub).map(lambda p: f"{p[0]}{p[1]}"),
            sub.map(lambda a: f"({a})"),
            st.tuples(st.sampled_from(calls), st.lists(sub, min_size=1, max_size=3)).map(
                lambda p: f"{p[0]}({', '.join(p[1])})"
            ),
        ),
        max_leaves=10,
    )


EXPRESSIONS = _expr(
    st.sampled_from(["x", "y", "z", "é", "0", "1", "2.5", "1e308", "-3", "inf", "nan", "True", "array([1.0, -2.0])"]),
    ["-", "not ", "+"],
    ["+", "-", "*", "/", "//", "%", "**", "@", "<", "==", "and", "or"],
    ["sin", "exp", "log", "sqrt", "abs", "maximum", "where", "sum", "transpose", "dot", "tanh", "sigmoid"],
)
#: rule texts: two expressions over variables (and runs) joined by an arrow, maybe with a condition
RULES = st.builds(
    lambda name, lhs, arrow, rhs, cond: f"{name}{lhs} {arrow} {rhs}{cond}",
    st.sampled_from(["", "", "r1: ", "my_rule: "]),
    st.one_of(EXPRESSIONS, st.sampled_from(["add(x, *r)", "mul(x, y, *rest)", "x * _", "_ + 0"])),
    st.sampled_from(["->", "->", "<->"]),
    st.one_of(EXPRESSIONS, st.sampled_from(["mul(x, *r)", "add(*rest)", "sqrt(*r)", "0", "x"])),
    st.sampled_from(["", "", " where x != 0", " where is_const(x) and x > 1", " where is_int(x, y)", " where"]),
)
DIM_EXPRESSIONS = _expr(
    st.sampled_from(["s0", "s1", "batch", "seq", "0", "1", "2", "8", "9223372036854775807"]),
    ["-"],
    ["+", "-", "*", "//", "%", "^", "&"],
    ["CeilToInt", "FloorDiv", "Max", "Min", "ModularIndexing", "f"],
)


@st.composite
def kernels(draw: st.DrawFn) -> str:
    """Kernel statements over declared tensors: ``A<2, 3>[i, j] = B<3, 4>[j, k] * 2.0 + log(C<2>[i]);``."""
    out = []
    for _ in range(draw(st.integers(1, 3))):
        target = draw(st.sampled_from(["A<4, 6>[i, j]", "A<4, 6>[i, j]", "D<8>[i]", "E<1>", "A[i + 1, j]"]))
        reads = st.sampled_from(
            [
                "B<6, 5>[j, k]",
                "C<4>[i]",
                "B[j, k]",
                "C[i]",
                "C[i // 2]",
                "C[2*i + 1]",
                "B[j - 1, k]",
                "alpha<1>",
                "B[k, j]",
            ]
        )
        rhs = draw(
            _expr(
                st.one_of(reads, st.sampled_from(["2.0", "1", "0"])),
                ["-"],
                ["+", "-", "*", "/", "//", "%"],
                ["exp", "log", "sqrt", "tanh", "max", "min"],
            )
        )
        out.append(f"{target} = {rhs};")
    return " ".join(out)


# -- over-long and deeply nested inputs -------------------------------------------------------------

#: the text limit the size fuzzers set (``$EXPRGRAPH_MAX_TEXT``): low, so that texts on both sides of
#: it are cheap to read
FUZZ_MAX_TEXT = 8_192


@st.composite
def oversized(draw: st.DrawFn, valid: st.SearchStrategy[str], template: str = "{}", joiner: str = " + ") -> str:
    """``template`` around ``valid`` nested in up to 4,000 brackets (a few left open or closed twice), or
    repeated (joined by ``joiner``) up to twice :data:`FUZZ_MAX_TEXT` characters, or holding a name or
    a number of hundreds of characters (around the tokenizer's MAX_TOKEN)."""
    text = draw(valid)
    kind = draw(st.sampled_from(["nested", "repeated", "long token"]))
    if kind == "nested":
        depth = draw(st.integers(0, 4_000))
        text = "(" * depth + text + ")" * max(0, depth + draw(st.integers(-2, 2)))
    elif kind == "repeated":
        copies = draw(st.integers(1, 2 * FUZZ_MAX_TEXT // (len(text) + len(joiner)) + 2))
        text = joiner.join([text] * copies)
    else:
        token = draw(st.sampled_from(["1", "9", "x", "s", "0"])) * draw(st.integers(400, 700))
        text = f"{text}{joiner}{token}"
    return template.format(text)


def read_within_limit(read: Callable[[str], Any], text: str, error: type[Exception]) -> Any:
    """``read(text)`` under the limit :data:`FUZZ_MAX_TEXT`: the result, or None for ``error`` at a position
    in the text, or for SizeLimitError exactly when the text is longer than the limit (anything else is a bug)."""
    try:
        result = read(text)
    except SizeLimitError as exc:
        assert len(text) > FUZZ_MAX_TEXT and (exc.size, exc.limit) == (len(text), FUZZ_MAX_TEXT)
        return None
    except error as exc:
        pos = getattr(exc, "pos", None)
        assert pos is None or 0 <= pos <= len(text)
        return None
    assert len(text) <= FUZZ_MAX_TEXT
    return result
