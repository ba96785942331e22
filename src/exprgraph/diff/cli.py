"""``exprgraph diff EXPR [--wrt x,y] [--order N] [--at x=1 ...]``: symbolic derivatives on the command line."""

from __future__ import annotations

import argparse
import itertools
from typing import Any

from ..console import add_command, format_value, parse_assignment, print_json
from ..errors import CommandError

__all__ = ["add_parser", "run", "MAX_ORDER"]

#: the highest order the command computes (the number of partials grows combinatorially)
MAX_ORDER = 8


#: what ``exprgraph diff --help`` says: a summary line, then the description
HELP = """differentiate an expression symbolically

Print the partial derivatives of EXPR (simplified unless --raw). With --order N, every partial of
order N over the chosen variables (d2f/dxdy, ...). With --at, also their values. --json prints one
object per expression: its text and the list of derivatives (variables, text, value)."""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """The ``exprgraph diff`` subcommand."""
    p = add_command(subparsers, "diff", run, HELP, expr="one", json_output=True)
    p.add_argument(
        "--wrt",
        action="append",
        metavar="NAMES",
        help="variables to differentiate by, comma-separated or repeated (default: every symbol of EXPR)",
    )
    p.add_argument("--order", type=int, default=1, help=f"order of the derivatives, 1 to {MAX_ORDER} (default 1)")
    p.add_argument("--raw", action="store_true", help="print the derivatives as reverse mode builds them")
    p.add_argument(
        "--unsafe", action="store_true", help="simplify with the rules that need finite values too (x - x -> 0)"
    )
    p.add_argument("--safe", action="store_true", help="simplify with the safe rules only (the default)")
    p.add_argument("--at", nargs="+", metavar="name=value", default=[], help="also print the values at this point")
    return p


def _names(args: argparse.Namespace, free: list[str]) -> list[str]:
    if not args.wrt:
        return free
    names: list[str] = []
    for item in args.wrt:
        for part in item.split(","):
            name = part.strip()
            if not name.isidentifier():
                raise CommandError(f"--wrt: {part!r} is not a variable name")
            if name not in names:
                names.append(name)
    return names


def run(args: argparse.Namespace) -> int:
    """Parse, differentiate, simplify and print one line per partial derivative."""
    from ..core import Symbol, parse
    from ..eval import evaluate
    from ..simplify import simplify
    from .reverse import grad

    if not 1 <= args.order <= MAX_ORDER:
        raise CommandError(f"--order must be between 1 and {MAX_ORDER}, not {args.order}")
    f = parse(args.expr, dtype=args.dtype)
    if f.shape:
        raise CommandError("diff needs a scalar expression")
    symbols = {s.name: s for s in f.free_symbols}
    names = _names(args, sorted(symbols))
    if not names:
        raise CommandError("the expression has no variables to differentiate by")
    variables = [symbols.get(n) or Symbol(n, args.dtype) for n in names]
    env: dict[str, Any] = {}
    for item in args.at:
        name, value = parse_assignment(item)
        env[name] = value
    derivatives: dict[tuple[int, ...], Any] = {(): f}
    found: list[dict[str, Any]] = []
    for combo in itertools.combinations_with_replacement(range(len(variables)), args.order):
        for k in range(1, len(combo) + 1):  # d^k f along the prefix, each computed once
            prefix = combo[:k]
            if prefix not in derivatives:
                derivatives[prefix] = grad(derivatives[prefix[:-1]], variables[prefix[-1]])
        d = derivatives[combo]
        shown = d if args.raw else simplify(d, unsafe=args.unsafe and not args.safe)
        label = ("df" if args.order == 1 else f"d{args.order}f") + "/" + "".join(f"d{names[i]}" for i in combo)
        # a derivative may no longer use every symbol of f that --at gives
        value = evaluate(d, env, on_unused_input="ignore") if env else None
        if args.json:
            found.append({"wrt": [names[i] for i in combo], "derivative": str(shown), "value": value})
        else:
            print(f"{label} = {shown}" + (f" = {format_value(value)}" if env else ""))
    if args.json:
        print_json({"expr": str(f), "order": args.order, "derivatives": found})
    return 0
