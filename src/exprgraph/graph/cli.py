"""``exprgraph rewrite EXPR [EXPR ...] [--include TAG ...] [--exclude TAG ...] [--profile]``."""

from __future__ import annotations

import argparse
import io
import sys
from typing import Any

from ..console import add_command, print_json

__all__ = ["add_parser", "run_rewrite"]


#: what ``exprgraph rewrite --help`` says: a summary line, then the description
HELP = """rewrite expressions with the graph rewrite database (canonicalize by default)

Put EXPRs (one graph: shared subexpressions are rewritten once) through the rewriters of optdb
selected by the tags: --include canonicalize (default), stabilize, specialize, fast_run, unsafe,
...; print the results one per line. The default, canonicalize, uses the safe rules only, as
simplify does. EXPR - reads expressions from standard input, one a line. --json prints one object
(the outputs, and the graph and profile texts when asked for)."""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``rewrite`` command to an argparse subparsers object."""
    p = add_command(subparsers, "rewrite", run_rewrite, HELP, expr="many", json_output=True)
    p.add_argument(
        "--include", action="append", metavar="TAG", help="a tag to include (repeatable; default: canonicalize)"
    )
    p.add_argument("--exclude", action="append", default=[], metavar="TAG", help="a tag to exclude (repeatable)")
    p.add_argument("--require", action="append", default=[], metavar="TAG", help="a tag every rewriter must have")
    p.add_argument("--graph", action="store_true", help="print the FunctionGraph form (shared nodes tagged *k)")
    p.add_argument("--profile", action="store_true", help="print the rewrite profile after the result")
    return p


def run_rewrite(args: argparse.Namespace) -> int:
    """Parse, rewrite and print."""
    from ..core import parse
    from .fgraph import FunctionGraph
    from .optdb import rewrite_graph

    terms = [parse(text, dtype=args.dtype) for text in args.exprs]
    include = tuple(args.include) if args.include else ("canonicalize",)
    fg = FunctionGraph(outputs=terms)
    fg, prof = rewrite_graph(
        fg, include=include, exclude=tuple(args.exclude), require=tuple(args.require), return_profile=True
    )
    if args.json:
        result: dict[str, Any] = {"exprs": [str(t) for t in terms], "outputs": [str(t) for t in fg.outputs]}
        if args.graph:
            result["graph"] = repr(fg)
        if args.profile:
            text = io.StringIO()
            prof.print_profile(file=text)
            result["profile"] = text.getvalue()
        print_json(result)
        return 0
    if args.graph:
        print(repr(fg))
    else:
        for t in fg.outputs:
            print(str(t))
    if args.profile:
        prof.print_profile(file=sys.stdout)
    return 0
