"""Helpers every ``exprgraph`` sub-command shares: adding a command, reading values and files, reporting errors.

This is the lowest layer (with :mod:`exprgraph.errors` and :mod:`exprgraph.progress`): it imports
only those and the standard library (numpy, a dependency of every layer, inside the functions that
build arrays), so any package's ``cli`` module may use it. A helper that needs terms (parsing an
expression, say) belongs in the sub-command that uses it.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import CommandError, ParseError

__all__ = [
    "EXIT_INPUT",
    "DTYPES",
    "add_command",
    "parse_assignment",
    "format_value",
    "read_text_file",
    "report_error",
]

#: exit code for bad input (the same as argparse's usage errors)
EXIT_INPUT = 2

#: the dtypes a command's ``--dtype`` offers for the symbols of its expression
DTYPES = ("float64", "int64", "bool")

_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*\Z")


def add_command(
    subparsers: Any,
    name: str,
    run: Callable[[argparse.Namespace], int],
    help_text: str,
    *,
    expr: str | None = None,
) -> argparse.ArgumentParser:
    """Add sub-command ``name`` running ``run(args)``; ``expr="one"`` or ``"many"`` also adds EXPR and --dtype.

    ``help_text`` is what ``--help`` says: a summary line (listed by ``exprgraph --help``), a blank
    line, then the description.
    """
    summary, _, description = help_text.partition("\n\n")
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name, help=summary, description=" ".join(description.split()) or summary
    )
    parser.set_defaults(func=run)
    if expr is not None:
        _add_expr_arguments(parser, many=expr == "many")
    return parser


def _add_expr_arguments(parser: argparse.ArgumentParser, *, many: bool) -> None:
    """The positional expression argument(s) and the ``--dtype`` of their symbols."""
    if many:
        parser.add_argument(
            "exprs", nargs="+", metavar="EXPR", help="infix expressions; put -- before one starting with '-'"
        )
    else:
        parser.add_argument("expr", metavar="EXPR", help="an infix expression; put -- before one that starts with '-'")
    parser.add_argument(
        "--dtype", default="float64", choices=DTYPES, help="dtype of the symbols the expression names (default float64)"
    )


def _scalar(text: str, where: str) -> int | float | bool:
    """A Python number literal read without eval: int, float (inf/nan too), True or False."""
    text = text.strip()
    if text in ("True", "False"):
        return text == "True"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise CommandError(f"{where}: {text!r} is not a number (use an int, a float, True or False)") from None


def parse_assignment(item: str) -> tuple[str, Any]:
    """Read ``name=value`` (a number) or ``name=v1,v2,...`` (a numpy vector of numbers)."""
    import numpy as np

    name, sep, text = item.partition("=")
    name = name.strip()
    if not sep or not _NAME.match(name):
        raise CommandError(f"expected name=value, got {item!r}")
    if not text.strip():
        raise CommandError(f"{item!r}: missing value after '='")
    if "," not in text:
        return name, _scalar(text, item)
    values = [_scalar(part, item) for part in text.split(",")]
    if all(isinstance(v, bool) for v in values):
        return name, np.array(values, dtype=np.bool_)
    if all(isinstance(v, int) for v in values):
        try:
            return name, np.array(values, dtype=np.int64)
        except OverflowError:
            raise CommandError(f"{item!r}: integers do not fit in int64") from None
    return name, np.array(values, dtype=np.float64)


def format_value(value: Any) -> str:
    """Text of an evaluation result: a Python scalar, or a (nested) list for arrays."""
    import numpy as np

    arr = np.asarray(value)
    if arr.ndim == 0:
        return repr(arr.item())
    return repr(arr.tolist())


def read_text_file(path: str, what: str, max_bytes: int) -> str:
    """The UTF-8 text of ``path`` (at most ``max_bytes``); a CommandError naming ``what`` (``"rule file"``) if not."""
    file = Path(path)
    try:
        if file.stat().st_size > max_bytes:
            raise CommandError(f"{path}: a {what} is at most {max_bytes} bytes")
        return file.read_text(encoding="utf-8")
    except OSError as exc:
        raise CommandError(f"cannot read the {what} {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise CommandError(f"{path} is not UTF-8 text") from None


def report_error(exc: BaseException) -> int:
    """Print an input error to stderr as one line (a syntax error with its caret line); return EXIT_INPUT."""
    if isinstance(exc, ParseError):
        # ParseError's text already holds the position and the caret line
        print(f"exprgraph: syntax error: {exc}", file=sys.stderr)
    else:
        print(f"exprgraph: error: {exc}", file=sys.stderr)
    return EXIT_INPUT
