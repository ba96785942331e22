"""``exprgraph simplify EXPR [--safe] [--stats]``: the simplified form of an expression."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """The ``exprgraph simplify`` subcommand."""
    p = subparsers.add_parser(
        "simplify",
        help="simplify an expression",
        description="Print the simplified form of EXPR: constants folded, like terms collected, "
        "identities removed, quotients cancelled. --safe leaves out the rules that hold for finite "
        "(or non-zero) values only, such as x*0 -> 0 and (x*y)/y -> x.",
    )
    p.add_argument("expr", metavar="EXPR", help="an infix expression; put -- before one that starts with '-'")
    p.add_argument("--safe", action="store_true", help="only rules exact for every value (nan and inf too)")
    p.add_argument("--stats", action="store_true", help="also print the cost before and after, and the rules used")
    p.add_argument(
        "--dtype", default="float64", choices=("float64", "int64", "bool"), help="dtype of the symbols (float64)"
    )
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Parse, simplify and print."""
    from ..cli import _parse_expr
    from ..rules import RewriteProfile
    from .simplify import cost, simplify

    term = _parse_expr(args.expr, args.dtype)
    profile = RewriteProfile() if args.stats else None
    out = simplify(term, unsafe=not args.safe, profile=profile)
    print(out)
    if profile is not None:
        used = sorted((name for name, st in profile.rules.items() if st.rewrites), key=str)
        print(
            f"# cost {cost(term)} -> {cost(out)} (distinct nodes other than scalar constants, n - 1 for n > 2 operands)"
        )
        print(f"# rules applied: {', '.join(used) if used else 'none'}")
    return 0
