"""``exprgraph simplify EXPR [--unsafe] [--stats] [--max-steps N] [--time-limit S]``: the simplified form."""

from __future__ import annotations

import argparse
from typing import Any

from ..console import add_command, print_json
from .budget import DEFAULT_MAX_STEPS

__all__ = ["add_parser", "run"]


#: what ``exprgraph simplify --help`` says: a summary line, then the description
HELP = """simplify an expression

Print the simplified form of EXPR: constants folded, like terms collected, identities removed,
stable forms chosen. By default only rules never less accurate than EXPR run, at any value (nan,
inf, huge and tiny ones too); --unsafe adds those that hold for finite (or non-zero) values only,
such as x*0 -> 0, x - x -> 0 and (x*y)/y -> x, and reorders sums and products. The work is
bounded by --max-steps (rule applications per pass) and --time-limit (seconds). --json prints
one object per expression (with --stats, the costs and rules too)."""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """The ``exprgraph simplify`` subcommand."""
    p = add_command(subparsers, "simplify", run, HELP, expr="one", json_output=True)
    strength = p.add_mutually_exclusive_group()
    strength.add_argument("--unsafe", action="store_true", help="also the rules exact for finite values only")
    strength.add_argument(
        "--safe", action="store_true", help="only rules never less accurate at any value (the default)"
    )
    p.add_argument("--stats", action="store_true", help="also print the cost before and after, and the rules used")
    p.add_argument(
        "--max-steps",
        type=int,
        default=DEFAULT_MAX_STEPS,
        metavar="N",
        help=f"rule applications allowed in each pass (default {DEFAULT_MAX_STEPS})",
    )
    p.add_argument("--time-limit", type=float, default=None, metavar="SECONDS", help="give up after SECONDS")
    return p


def run(args: argparse.Namespace) -> int:
    """Parse, simplify and print."""
    from ..core import parse
    from ..rules import RewriteProfile
    from .simplify import cost, simplify

    term = parse(args.expr, dtype=args.dtype)
    profile = RewriteProfile() if args.stats else None
    out = simplify(term, unsafe=args.unsafe, profile=profile, max_steps=args.max_steps, time_limit=args.time_limit)
    used = [] if profile is None else sorted((name for name, st in profile.rules.items() if st.rewrites), key=str)
    if args.json:
        result: dict[str, Any] = {"expr": str(term), "simplified": str(out)}
        if profile is not None:
            result.update(cost=[cost(term), cost(out)], rules=[str(name) for name in used])
        print_json(result)
        return 0
    print(out)
    if profile is not None:
        print(
            f"# cost {cost(term)} -> {cost(out)} (distinct nodes other than scalar constants, n - 1 for n > 2 operands)"
        )
        print(f"# rules applied: {', '.join(used) if used else 'none'}")
    return 0
