"""``exprgraph cache info|clear``: what the build cache holds, and emptying it."""

from __future__ import annotations

import argparse
from typing import Any

from ..console import add_command, print_json

__all__ = ["add_parser", "run"]


#: what ``exprgraph cache --help`` says: a summary line, then the description
HELP = """show or clear the build cache of compiled C libraries

The build cache keeps compiled C libraries (compile(..., backend='c') and tensor kernels) under
$EXPRGRAPH_CACHE (default ~/.cache/exprgraph), private to you and capped by $EXPRGRAPH_CACHE_SIZE
(default 1G). 'info' shows where it is, how much it holds and whether it passes the security checks;
'clear' removes every library in it. --json prints the same as one JSON object."""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """The ``exprgraph cache`` subcommand."""
    p = add_command(subparsers, "cache", run, HELP, json_output=True)
    p.add_argument("action", choices=("info", "clear"), help="info: show the cache; clear: empty it")
    return p


def run(args: argparse.Namespace) -> int:
    """Print the cache's state, or clear it."""
    from .cache import cache_info, clear_cache

    if args.action == "info":
        info = cache_info()
        if args.json:
            print_json(
                {
                    "directory": str(info.directory),
                    "libraries": info.libraries,
                    "bytes": info.bytes,
                    "cap": info.cap,
                    "problem": info.problem,
                }
            )
        else:
            print(info)
        return 0
    removed = clear_cache()
    if args.json:
        print_json({"removed": removed})
    else:
        print(f"removed {removed} librar{'y' if removed == 1 else 'ies'}")
    return 0
