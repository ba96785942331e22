"""The ``exprgraph`` command line: one subcommand per entry of :data:`COMMANDS`.

Each entry names a module (optionally ``module:function``) whose ``add_parser(subparsers)``
adds one subparser and sets its ``func`` default to ``func(args) -> int``. A later layer adds a
command by appending one entry here and writing that function in its own module; the helpers
the commands share (:func:`~exprgraph.console.add_command`, ``name=value`` reading, error
reporting) are in :mod:`exprgraph.console`, which every layer may import.

Errors of the input (bad syntax, unknown names, missing values) are printed to stderr as one
clear message and end with exit code 2, never with a traceback. When the reader of the output goes
away (``exprgraph ... | head``) the command stops quietly with exit code 141, as ``seq`` or
``cat`` would (128 + SIGPIPE).
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

from .console import EXIT_INPUT, EXIT_PIPE, add_command, format_value, parse_assignment, print_json, report_error
from .errors import CommandError, ExprgraphError

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


def _parse_expr(text: str, dtype: str) -> Any:
    """The term of an EXPR argument (core is imported when a command runs, not at start-up)."""
    from .core import parse

    return parse(text, dtype=dtype)


# -- eval ------------------------------------------------------------------------------------------


#: what ``exprgraph eval --help`` says: a summary line, then the description
EVAL_HELP = """evaluate an expression at a point (or many points)

Evaluate EXPR with the given values. A value is an int, a float, True or False; a comma-separated
list (x=1,2,3) is a vector, and the expression is evaluated at each entry. EXPR - reads the
expressions from standard input, one a line, and prints one result a line (a value one of them
does not use is then no error)."""


def add_eval_parser(subparsers: Any) -> argparse.ArgumentParser:
    """``exprgraph eval EXPR name=value ... [--json]``."""
    p = add_command(subparsers, "eval", run_eval, EVAL_HELP, expr="one", json_output=True)
    p.add_argument("values", nargs="*", metavar="name=value", help="a value for each symbol of EXPR")
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
    if unused and not getattr(args, "from_stdin", False):
        raise CommandError(f"the expression does not use {', '.join(map(repr, unused))}")
    from .eval import evaluate

    value = evaluate(term, env, on_unused_input="ignore")  # (checked above)
    if args.json:
        print_json({"expr": str(term), "dtype": term.dtype, "value": value})
    else:
        print(format_value(value))
    return 0


# -- print -----------------------------------------------------------------------------------------


#: what ``exprgraph print --help`` says: a summary line, then the description
PRINT_HELP = """parse an expression and print it (as text, a DAG listing, Graphviz source or a picture)

Parse EXPR and print it: infix with minimal parentheses (default), a DAG listing (--tree), Graphviz
source (--dot), an SVG picture of the DAG drawn by Graphviz's dot program, which must be installed
(--svg), or the constructor form (--repr). --json prints an object with the infix text, the repr, dtype,
shape, size, depth and symbols (and the chosen form's text)."""


def add_print_parser(subparsers: Any) -> argparse.ArgumentParser:
    """``exprgraph print EXPR [--tree|--dot|--svg|--repr] [--json]``."""
    p = add_command(subparsers, "print", run_print, PRINT_HELP, expr="one", json_output=True)
    how = p.add_mutually_exclusive_group()
    how.add_argument("--tree", dest="form", action="store_const", const="tree", help="DAG listing (dformat)")
    how.add_argument("--dot", dest="form", action="store_const", const="dot", help="Graphviz source (to_dot)")
    how.add_argument(
        "--svg", dest="form", action="store_const", const="svg", help="SVG drawn by Graphviz's dot (needs Graphviz)"
    )
    how.add_argument("--repr", dest="form", action="store_const", const="repr", help="constructor form (repr)")
    p.set_defaults(form="infix")
    return p


def run_print(args: argparse.Namespace) -> int:
    """Parse and print in the chosen form."""
    from .core import dformat, to_dot

    term = _parse_expr(args.expr, args.dtype)
    if args.form == "tree":
        text = dformat(term)
    elif args.form == "dot":
        text = to_dot(term)
    elif args.form == "svg":
        text = draw_svg(to_dot(term))
    elif args.form == "repr":
        text = repr(term)
    else:
        text = str(term)
    if not args.json:
        print(text)
        return 0
    described = {
        "expr": str(term),
        "repr": repr(term),
        "dtype": term.dtype,
        "shape": list(term.shape),
        "size": term.size,
        "depth": term.depth,
        "symbols": sorted(s.name for s in term.free_symbols),
    }
    if args.form in ("tree", "dot", "svg"):
        described[args.form] = text
    print_json(described)
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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``exprgraph`` command with ``argv`` (default ``sys.argv[1:]``); return the exit code."""
    try:
        return _main(argv)
    except BrokenPipeError:
        return _reader_gone()


def _reader_gone() -> int:
    """The reader of standard output went away (``| head``): stop quietly with EXIT_PIPE.

    Standard output is pointed at the null device, so the interpreter's last flush of what is left
    in its buffer does not fail again with a traceback at exit.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # not a file (a StringIO, say): nothing is flushed at exit
        pass
    return EXIT_PIPE


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version and usage errors (argparse has printed them)
        sys.stdout.flush()
        return exc.code if isinstance(exc.code, int) else EXIT_INPUT
    try:
        status = int(args.func(args))
        sys.stdout.flush()  # a reader that went away is found here, not at exit
        return status
    except (ExprgraphError, TypeError, ValueError, OverflowError) as exc:
        # input errors; TypeError/ValueError also come from building terms of mismatched operands
        return report_error(exc)
    except RecursionError:  # pragma: no cover - our traversals are iterative; belt and braces
        print("exprgraph: error: the expression is too deeply nested", file=sys.stderr)
        return EXIT_INPUT


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
