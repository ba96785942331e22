"""The ``exprgraph`` command line: one subcommand per entry of :data:`COMMANDS`.

Each entry names a module (optionally ``module:function``) whose ``add_parser(subparsers)``
adds one subparser and sets its ``func`` default to ``func(args) -> int``. A later layer adds a
command by appending one entry here and writing that function in its own module.

Errors of the input (bad syntax, unknown names, missing values) are printed to stderr as one
clear message and end with exit code 2, never with a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

from .errors import CommandError, ExprgraphError, ParseError

__all__ = ["main", "build_parser", "COMMANDS", "CommandError", "parse_assignment", "format_value", "draw_svg"]

#: (command name, "module" or "module:function") in the order ``exprgraph --help`` lists them;
#: the function (``add_parser`` by default) takes the subparsers object and returns its parser
COMMANDS: list[tuple[str, str]] = [
    ("eval", "exprgraph.cli:add_eval_parser"),
    ("print", "exprgraph.cli:add_print_parser"),
    ("demo", "exprgraph.demo"),
    ("dims", "exprgraph.dims.cli"),
    ("kernel", "exprgraph.tensor.cli"),
    ("diff", "exprgraph.diff.cli"),
    ("simplify", "exprgraph.simplify.cli"),
    ("rewrite", "exprgraph.graph.cli"),
    ("cache", "exprgraph.compile.cli"),
    ("saturate", "exprgraph.egraph.cli"),
]

#: exit code for bad input (the same as argparse's usage errors)
EXIT_INPUT = 2

_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*\Z")


# -- shared helpers for subcommands ------------------------------------------------------------------


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


def _parse_expr(text: str, dtype: str) -> Any:
    from .core import parse

    return parse(text, dtype=dtype)


def _add_expr_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("expr", metavar="EXPR", help="an infix expression; put -- before one that starts with '-'")
    parser.add_argument(
        "--dtype",
        default="float64",
        choices=("float64", "int64", "bool"),
        help="dtype of the symbols the expression names (default float64)",
    )


# -- eval ------------------------------------------------------------------------------------------


def add_eval_parser(subparsers: Any) -> argparse.ArgumentParser:
    """``exprgraph eval EXPR name=value ...``."""
    p = subparsers.add_parser(
        "eval",
        help="evaluate an expression at a point (or many points)",
        description="Evaluate EXPR with the given values. A value is an int, a float, True or False; "
        "a comma-separated list (x=1,2,3) is a vector, and the expression is evaluated at each entry.",
    )
    _add_expr_args(p)
    p.add_argument("values", nargs="*", metavar="name=value", help="a value for each symbol of EXPR")
    p.set_defaults(func=run_eval)
    return p


def run_eval(args: argparse.Namespace) -> int:
    """Parse, evaluate and print the result."""
    term = _parse_expr(args.expr, args.dtype)
    env: dict[str, Any] = {}
    for item in args.values:
        name, value = parse_assignment(item)
        if name in env:
            raise CommandError(f"{name!r} is given twice")
        env[name] = value
    names = {s.name for s in term.free_symbols}
    unused = sorted(set(env) - names)
    if unused:
        raise CommandError(f"the expression does not use {', '.join(map(repr, unused))}")
    from .eval import evaluate

    print(format_value(evaluate(term, env)))
    return 0


# -- print -----------------------------------------------------------------------------------------


def add_print_parser(subparsers: Any) -> argparse.ArgumentParser:
    """``exprgraph print EXPR [--tree|--dot|--svg|--repr]``."""
    p = subparsers.add_parser(
        "print",
        help="parse an expression and print it (as text, a DAG listing, Graphviz source or a picture)",
        description="Parse EXPR and print it: infix with minimal parentheses (default), "
        "a DAG listing (--tree), Graphviz source (--dot), an SVG picture of the DAG drawn by "
        "Graphviz's dot program, which must be installed (--svg), or the constructor form (--repr).",
    )
    _add_expr_args(p)
    how = p.add_mutually_exclusive_group()
    how.add_argument("--tree", dest="form", action="store_const", const="tree", help="DAG listing (dformat)")
    how.add_argument("--dot", dest="form", action="store_const", const="dot", help="Graphviz source (to_dot)")
    how.add_argument(
        "--svg", dest="form", action="store_const", const="svg", help="SVG drawn by Graphviz's dot (needs Graphviz)"
    )
    how.add_argument("--repr", dest="form", action="store_const", const="repr", help="constructor form (repr)")
    p.set_defaults(func=run_print, form="infix")
    return p


def run_print(args: argparse.Namespace) -> int:
    """Parse and print in the chosen form."""
    from .core import dformat, to_dot

    term = _parse_expr(args.expr, args.dtype)
    if args.form == "tree":
        print(dformat(term))
    elif args.form == "dot":
        print(to_dot(term))
    elif args.form == "svg":
        print(draw_svg(to_dot(term)))
    elif args.form == "repr":
        print(repr(term))
    else:
        print(str(term))
    return 0


def draw_svg(dot_source: str, *, timeout: float = 60.0) -> str:
    """SVG of Graphviz source, drawn by the ``dot`` program; a CommandError says what to install when it is missing."""
    dot = shutil.which("dot")
    if dot is None:
        raise CommandError(
            "drawing needs Graphviz's `dot` program, which is not on PATH: install Graphviz "
            "(Debian/Ubuntu: apt-get install graphviz; macOS: brew install graphviz), "
            "or print the Graphviz source with --dot and draw it elsewhere"
        )
    try:
        done = subprocess.run(
            [dot, "-Tsvg"], input=dot_source, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        raise CommandError(f"Graphviz's dot took more than {timeout:g} s; print the source with --dot") from None
    except OSError as exc:
        raise CommandError(f"cannot run Graphviz's dot ({dot}): {exc}") from None
    if done.returncode != 0:
        raise CommandError(f"Graphviz's dot failed: {done.stderr.strip() or f'exit status {done.returncode}'}")
    return done.stdout.rstrip("\n")


# -- driver ----------------------------------------------------------------------------------------


def _load(spec: str) -> Any:
    module, _, func = spec.partition(":")
    return getattr(importlib.import_module(module), func or "add_parser")


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with one subparser per entry of :data:`COMMANDS`."""
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="exprgraph",
        description="Symbolic expression graphs on the command line: evaluate, print, simplify and differentiate "
        "infix expressions, simplify dimension expressions, rewrite by the graph rewrite database or by "
        "equality saturation, generate C for tensor index kernels and their gradients, and manage the "
        "build cache of compiled code. `exprgraph demo` is a tour of the library; "
        "`exprgraph COMMAND --help` describes a command.",
        epilog="Pictures: `exprgraph print EXPR --svg > f.svg` draws the expression's DAG with Graphviz's dot "
        "program (install Graphviz for it); `--dot` prints the Graphviz source.",
    )
    parser.add_argument("--version", action="version", version=f"exprgraph {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, spec in COMMANDS:
        sub = _load(spec)(subparsers)
        if sub.get_default("func") is None:  # pragma: no cover - a programming error in a command module
            raise RuntimeError(f"command {name!r} ({spec}) did not set a func default")
    return parser


def _report(exc: BaseException) -> int:
    err = sys.stderr
    if isinstance(exc, ParseError):
        # ParseError's text already holds the position and the caret line
        print(f"exprgraph: syntax error: {exc}", file=err)
    else:
        print(f"exprgraph: error: {exc}", file=err)
    return EXIT_INPUT


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``exprgraph`` command with ``argv`` (default ``sys.argv[1:]``); return the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version and usage errors (argparse has printed them)
        return exc.code if isinstance(exc.code, int) else EXIT_INPUT
    try:
        return int(args.func(args))
    except (ExprgraphError, TypeError, ValueError, OverflowError) as exc:
        # input errors; TypeError/ValueError also come from building terms of mismatched operands
        return _report(exc)
    except RecursionError:  # pragma: no cover - our traversals are iterative; belt and braces
        print("exprgraph: error: the expression is too deeply nested", file=sys.stderr)
        return EXIT_INPUT


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
