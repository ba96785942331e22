"""``exprgraph dims simplify EXPR`` and ``exprgraph dims eval EXPR name=value ...``."""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from ..console import add_command, add_json_flag, print_json, report_error
from ..errors import CommandError, DimExpressionError, EvaluationError, SizeLimitError
from .canonicalize import simplify_term
from .evaluate import evaluate_expression
from .parse import parse_expression
from .unparse import unparse

__all__ = ["add_parser", "run_simplify", "run_eval"]

_ASSIGN = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*([-+]?\d+)\s*\Z")


#: what ``exprgraph dims --help`` says: a summary line, then the description
HELP = """simplify or evaluate a dimension expression

Dimension expressions: integers, names, + - * // %, ^ (max), & (min), calls: CeilToInt(n, d),
Max(...), Min(...), torch's FloorDiv, CeilDiv, ModularIndexing, PythonMod..., sympy's floor(a/b),
ceiling(a/b); any other NAME(args) is an opaque function."""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``dims`` command (with ``simplify`` and ``eval``) to an argparse subparsers object."""
    p = add_command(subparsers, "dims", _need_action, HELP)
    sub = p.add_subparsers(dest="dims_command", metavar="ACTION", required=True)
    s = sub.add_parser("simplify", help="print the canonical form", description="Print the simplified EXPR.")
    s.add_argument("expr", metavar="EXPR", help="a dimension expression, e.g. '(seq+7)//8*8'")
    s.add_argument("--positive", action="store_true", help="assume every name is >= 1 (default: >= 0)")
    add_json_flag(s)
    s.set_defaults(func=run_simplify)
    e = sub.add_parser("eval", help="evaluate with integer values", description="Evaluate EXPR at the given values.")
    e.add_argument("expr", metavar="EXPR", help="a dimension expression")
    e.add_argument("values", nargs="*", metavar="name=value", help="an integer for each name of EXPR")
    add_json_flag(e)
    e.set_defaults(func=run_eval)
    return p


def _need_action(args: argparse.Namespace) -> int:
    raise CommandError("dims needs an action: simplify or eval")  # pragma: no cover - argparse requires one


def run_simplify(args: argparse.Namespace) -> int:
    """Print the simplified expression (an error with a caret line for bad syntax)."""
    term = parse_expression(args.expr)
    text = unparse(simplify_term(term, positive=args.positive))
    if args.json:
        print_json({"expr": args.expr, "simplified": text})
    else:
        print(text)
    return 0


def run_eval(args: argparse.Namespace) -> int:
    """Print the value of the expression at the given integer values."""
    values: dict[str, int] = {}
    for item in args.values:
        m = _ASSIGN.match(item)
        if m is None:
            raise EvaluationError(f"expected name=integer, got {item!r}")
        if m.group(1) in values:
            raise EvaluationError(f"{m.group(1)!r} is given twice")
        values[m.group(1)] = int(m.group(2))
    value = evaluate_expression(parse_expression(args.expr), values)
    if args.json:
        print_json({"expr": args.expr, "value": value})
    else:
        print(value)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the ``dims`` command on its own (``python -m exprgraph.dims.cli simplify EXPR``)."""
    parser = argparse.ArgumentParser(prog="exprgraph")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["dims", *(sys.argv[1:] if argv is None else argv)])
    try:
        return args.func(args)
    except (DimExpressionError, EvaluationError, SizeLimitError, OverflowError) as exc:
        return report_error(exc)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
