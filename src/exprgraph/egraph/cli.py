"""``exprgraph saturate EXPR [--rules FILE]``: equality saturation from the command line.

Prints the cheapest form of EXPR found, then the run's report (stop reason, sizes, and one row per
iteration). ``--rules`` reads a rule file (one ``[name:] lhs -> rhs [where cond]`` or ``<->`` rule
per line; the conditions of :mod:`exprgraph.egraph.conditions` are available by name); without it
the algebra rules are used. ``--op NAME:ARITY`` declares an uninterpreted op (``--op d:2``) so
that terms and rules can use it by name.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..console import add_command, print_json, read_text_file
from ..core import Op, get_op, parse, register_op
from ..core.stdops import real
from ..core.tokens import max_text
from ..errors import CommandError
from ..rules import parse_rules
from .algebra import SAFE, UNSAFE
from .conditions import FUNCTIONS
from .runner import saturate

__all__ = ["add_parser", "run", "declare_op"]


#: what ``exprgraph saturate --help`` says: a summary line, then the description
HELP = """equality saturation: the cheapest equal form of an expression

Saturate EXPR with the rules of FILE (default: the safe algebra rules; --unsafe adds the others) and
print the cheapest equal form found, then the report: why the run stopped, and per iteration the
e-nodes, e-classes, matches, applications and seconds in search, apply and rebuild."""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """The ``exprgraph saturate`` subcommand."""
    p = add_command(subparsers, "saturate", run, HELP, expr="one", json_output=True)
    p.add_argument("--rules", metavar="FILE", help="a rule file (one rule per line, # comments)")
    p.add_argument("--unsafe", action="store_true", help="with the default rules: also x*0 -> 0, x - x -> 0, ...")
    p.add_argument("--op", action="append", default=[], metavar="NAME:ARITY", help="declare an uninterpreted op")
    p.add_argument("--iter-limit", type=int, default=30, help="iterations (30)")
    p.add_argument("--node-limit", type=int, default=10_000, help="e-nodes (10000)")
    p.add_argument("--time-limit", type=float, default=5.0, help="seconds (5)")
    p.add_argument("--match-limit", type=int, default=1_000_000, help="matches held by one iteration (1000000)")
    p.add_argument("--scheduler", choices=("backoff", "simple"), default="backoff", help="rule scheduler (backoff)")
    p.add_argument("--cost", choices=("size", "depth", "dag_size"), default="size", help="extraction cost (size)")
    p.add_argument("--exact", action="store_true", help="DAG-optimal extraction (integer programming, HiGHS)")
    p.add_argument("--no-fold", action="store_true", help="no constant folding")
    p.add_argument("--dot", action="store_true", help="print the e-graph as Graphviz source at the end")
    return p


def declare_op(spec: str) -> Op:
    """Register an uninterpreted op from ``NAME:ARITY`` (an op of that name and arity may exist already)."""
    name, sep, arity_text = spec.partition(":")
    name = name.strip()
    if not sep or not name.isidentifier() or not arity_text.strip().isdigit():
        raise CommandError(f"--op takes NAME:ARITY (like d:2), not {spec!r}")
    arity = int(arity_text)
    if not 1 <= arity <= 8:
        raise CommandError(f"--op {spec}: the arity must be between 1 and 8")
    try:
        op = get_op(name)
    except KeyError:
        return register_op(
            Op(name, arity, real, notation="call", doc="An uninterpreted op declared on the command line.")
        )
    if op.arity != (arity, arity):
        raise CommandError(f"--op {spec}: {name!r} is already an op taking {op.arity[0]}.. operands")
    return op


def _read_rules(path: str) -> list:
    # the parsers' text limit bounds the file (in characters; a UTF-8 character takes at most 4 bytes)
    rules = parse_rules(read_text_file(path, "rule file", 4 * max_text()), functions=FUNCTIONS)
    if not rules:
        raise CommandError(f"{path} holds no rules")
    return rules


def run(args: argparse.Namespace) -> int:
    """Parse, saturate, print the best form and the report."""
    for spec in args.op:
        declare_op(spec)
    if args.iter_limit < 0 or args.node_limit < 0 or not args.time_limit >= 0 or args.match_limit < 1:
        raise CommandError("limits must not be negative or nan (and --match-limit at least 1)")
    rules = _read_rules(args.rules) if args.rules else (UNSAFE if args.unsafe else SAFE)
    term = parse(args.expr, dtype=args.dtype)
    report = saturate(
        term,
        rules,
        iter_limit=args.iter_limit,
        node_limit=args.node_limit,
        time_limit=args.time_limit,
        match_limit=args.match_limit,
        scheduler=args.scheduler,
        fold=not args.no_fold,
    )
    best = report.extract(args.cost, exact=args.exact)
    if args.json:
        print_json(_as_json(args, term, best, report))
        return 0
    print(best.term)
    print(f"# cost ({args.cost}{', exact' if args.exact else ''}): {best.cost:g}")
    print(f"# {report.summary()}")
    print(report.table())
    if args.dot:
        print(report.egraph.to_dot())
    return 0


def _as_json(args: argparse.Namespace, term: Any, best: Any, report: Any) -> dict[str, Any]:
    """What ``saturate --json`` prints: the best form, its cost, why the run stopped and its iterations."""
    eg = report.egraph
    result: dict[str, Any] = {
        "expr": str(term),
        "best": str(best.term),
        "cost": best.cost,
        "cost_kind": args.cost,
        "exact": args.exact,
        "stop": str(report.stop_reason),
        "enodes": eg.number_of_nodes(),
        "eclasses": eg.number_of_classes(),
        "seconds": report.time,
        "iterations": [
            {
                "index": it.index,
                "enodes": it.nodes,
                "eclasses": it.classes,
                "matches": it.n_matches,
                "applied": it.n_applied,
            }
            for it in report.iterations
        ],
    }
    if args.dot:
        result["dot"] = eg.to_dot()
    return result
