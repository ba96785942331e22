"""``exprgraph simplify EXPR [--unsafe] [--stats]``: the simplified form of an expression."""

from __future__ import annotations

import argparse
from typing import Any

from ..console import add_command

__all__ = ["add_parser", "run"]


#: what ``exprgraph simplify --help`` says: a summary line, then the description
HELP = """simplify an expression

Print the simplified form of EXPR: constants folded, like terms collected, identities removed,
stable forms chosen. By default only rules exact for every value run (nan and inf too); --unsafe
adds those that hold for finite (or non-zero) values only, such as x*0 -> 0, x - x -> 0 and (x*y)/y
-> x."""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """The ``exprgraph simplify`` subcommand."""
    p = add_command(subparsers, "simplify", run, HELP, expr="one")
    strength = p.add_mutually_exclusive_group()
    strength.add_argument("--unsafe", action="store_true", help="also the rules exact for finite values only")
    strength.add_argument("--safe", action="store_true", help="only rules exact for every value (the default)")
    p.add_argument("--stats", action="store_true", help="also print the cost before and after, and the rules used")
    return p


def run(args: argparse.Namespace) -> int:
    """Parse, simplify and print."""
    from ..core import parse
    from ..rules import RewriteProfile
    from .simplify import cost, simplify

    term = parse(args.expr, dtype=args.dtype)
    profile = RewriteProfile() if args.stats else None
    out = simplify(term, unsafe=args.unsafe, profile=profile)
    print(out)
    if profile is not None:
        used = sorted((name for name, st in profile.rules.items() if st.rewrites), key=str)
        print(
            f"# cost {cost(term)} -> {cost(out)} (distinct nodes other than scalar constants, n - 1 for n > 2 operands)"
        )
        print(f"# rules applied: {', '.join(used) if used else 'none'}")
    return 0
