"""Helpers every ``exprgraph`` sub-command shares: adding a command, reading values, files and standard input,
printing JSON, reporting errors.

This is the lowest layer (with :mod:`exprgraph.errors` and :mod:`exprgraph.progress`): it imports
only those and the standard library (numpy, a dependency of every layer, inside the functions that
build arrays), so any package's ``cli`` module may use it. A helper that needs terms (parsing an
expression, say) belongs in the sub-command that uses it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import stat
import sys
from collections.abc import Callable, Iterator
from typing import Any

from .errors import CommandError, ExprgraphError, ParseError

__all__ = [
    "EXIT_INPUT",
    "EXIT_PIPE",
    "DTYPES",
    "STDIN",
    "MAX_STDIN_LINE",
    "add_command",
    "parse_assignment",
    "format_value",
    "to_json",
    "print_json",
    "stdin_expressions",
    "read_text_file",
    "read_bounded",
    "NotRegularFileError",
    "report_error",
]

#: exit code for bad input (the same as argparse's usage errors)
EXIT_INPUT = 2

#: exit code when the reader of our output went away (``exprgraph ... | head``): 128 + SIGPIPE, the
#: status the shell reports for ``seq``, ``cat`` or ``yes`` in the same place
EXIT_PIPE = 141

#: the dtypes a command's ``--dtype`` offers for the symbols of its expression
DTYPES = ("float64", "float32", "int64", "bool")

#: the EXPR argument that reads the expressions from standard input, one a line
STDIN = "-"

#: the longest line read from standard input, in characters (the parsers' own text limit is lower)
MAX_STDIN_LINE = 1 << 26

_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*\Z")


def add_command(
    subparsers: Any,
    name: str,
    run: Callable[[argparse.Namespace], int],
    help_text: str,
    *,
    expr: str | None = None,
    json_output: bool = False,
) -> argparse.ArgumentParser:
    """Add sub-command ``name`` running ``run(args)``; ``expr="one"`` or ``"many"`` also adds EXPR and --dtype.

    ``help_text`` is what ``--help`` says: a summary line (listed by ``exprgraph --help``), a blank
    line, then the description. An EXPR of ``-`` reads the expressions from standard input, one a
    line (``expr="one"``: ``run`` runs once per expression). ``json_output`` adds ``--json``.
    """
    summary, _, description = help_text.partition("\n\n")
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name, help=summary, description=" ".join(description.split()) or summary
    )
    parser.set_defaults(func=run)
    if expr is not None:
        _add_expr_arguments(parser, many=expr == "many")
        parser.set_defaults(func=_each_expression(run) if expr == "one" else _with_stdin_expressions(run))
    if json_output:
        add_json_flag(parser)
    return parser


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    """The ``--json`` option: print one JSON object per result (one a line) instead of text."""
    parser.add_argument("--json", action="store_true", help="print each result as one line of JSON")


def _add_expr_arguments(parser: argparse.ArgumentParser, *, many: bool) -> None:
    """The positional expression argument(s) and the ``--dtype`` of their symbols."""
    if many:
        parser.add_argument(
            "exprs",
            nargs="+",
            metavar="EXPR",
            help="infix expressions (- reads them from standard input, one a line); put -- before one starting "
            "with '-'",
        )
    else:
        parser.add_argument(
            "expr",
            metavar="EXPR",
            help="an infix expression, or - to read expressions from standard input (one a line); put -- before "
            "one that starts with '-'",
        )
    parser.add_argument(
        "--dtype", default="float64", choices=DTYPES, help="dtype of the symbols the expression names (default float64)"
    )


def stdin_expressions() -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each expression on standard input: one a line, blank and ``#`` lines skipped."""
    number = 0
    stream = sys.stdin
    if stream is None:  # started with standard input closed (``<&-``)
        raise CommandError("standard input is closed: give the expression as an argument")
    while True:
        try:
            line = stream.readline(MAX_STDIN_LINE + 1)
        except OSError as e:  # a read error (or a stream that may not be read, as under a test runner)
            raise CommandError(f"cannot read line {number + 1} of standard input: {e}") from None
        if not line:
            return
        number += 1
        if len(line) > MAX_STDIN_LINE and not line.endswith("\n"):
            raise CommandError(f"line {number} of standard input is longer than {MAX_STDIN_LINE} characters")
        text = line.strip()
        if text and not text.startswith("#"):
            yield number, text


def _at_line(exc: Exception, number: int) -> Exception:
    """``exc`` (an input error) saying which line of standard input it is about."""
    where = f"line {number} of standard input"
    if type(exc) is ParseError:
        return ParseError(f"{exc.msg} ({where})", exc.text or "", exc.pos)
    return CommandError(f"{where}: {exc}")


def _each_expression(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``run`` for one EXPR; for ``-``, once per expression of standard input (the worst exit status)."""

    def run_each(args: argparse.Namespace) -> int:
        if args.expr != STDIN:
            return run(args)
        status = 0
        args.from_stdin = True  # (eval: a value one of the expressions does not use is no error)
        for number, text in stdin_expressions():
            args.expr = text
            try:
                status = max(status, run(args))
            except (ExprgraphError, TypeError, ValueError) as exc:
                raise _at_line(exc, number) from exc
        return status

    return run_each


def _with_stdin_expressions(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``run`` for several EXPRs, a ``-`` among them standing for the expressions of standard input."""

    def run_all(args: argparse.Namespace) -> int:
        if STDIN in args.exprs:
            given = [text for _, text in stdin_expressions()]
            args.exprs = [e for item in args.exprs for e in (given if item == STDIN else [item])]
            if not args.exprs:
                raise CommandError("standard input holds no expression")
        return run(args)

    return run_all


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
    """Text of an evaluation result: a Python scalar, or a (nested) list for arrays (float32 in its shortest form)."""
    import numpy as np

    arr = _shortest_float32(np.asarray(value))
    if arr.ndim == 0:
        return repr(arr.item())
    return repr(arr.tolist())


def _shortest_float32(arr: Any) -> Any:
    """A float32 array as the float64 values of its shortest texts (0.1, not 0.10000000149011612); others as given."""
    import numpy as np

    if arr.dtype != np.float32:
        return arr
    return np.asarray([float(str(v)) for v in arr.ravel()], dtype=np.float64).reshape(arr.shape)


def to_json(value: Any) -> Any:
    """``value`` (numbers, numpy values, lists, dicts, terms) as plain JSON data.

    Terms become their infix text; nan and the infinities, which JSON has no numbers for, become
    the strings ``"nan"``, ``"inf"`` and ``"-inf"``; float32 values their shortest text's float.
    """
    import numpy as np

    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, (np.ndarray, np.generic)):
        return to_json(_shortest_float32(np.asarray(value)).tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def print_json(value: Any) -> None:
    """Print ``value`` (see :func:`to_json`) as one line of strict JSON."""
    print(json.dumps(to_json(value), allow_nan=False, ensure_ascii=False))


class NotRegularFileError(OSError):
    """The path names a FIFO, a device, a directory or a socket, not a regular file."""


def read_bounded(path: str | os.PathLike[str], max_bytes: int) -> bytes:
    """At most ``max_bytes + 1`` bytes of the regular file ``path`` (one more than allowed tells it is too long).

    Raises :class:`NotRegularFileError` for anything but a regular file, and ``OSError`` when it
    cannot be opened; a FIFO is opened without blocking, so the call never waits for a writer.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFileError(f"{str(path)!r} is not a regular file")
        return file.read(max_bytes + 1)


def read_text_file(path: str, what: str, max_bytes: int) -> str:
    """The UTF-8 text of ``path`` (at most ``max_bytes``); a CommandError naming ``what`` (``"rule file"``) if not."""
    try:
        data = read_bounded(path, max_bytes)  # a FIFO or a device is refused, not waited on or read forever
        if len(data) > max_bytes:
            raise CommandError(f"{path}: a {what} is at most {max_bytes} bytes")
        return data.decode("utf-8")
    except NotRegularFileError:
        raise CommandError(f"cannot read the {what} {path}: not a regular file") from None
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
