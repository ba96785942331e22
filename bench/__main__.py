"""``python -m bench``: run every ``bench/bench_*.py`` module's ``main()`` in name order."""

from __future__ import annotations

import importlib
import sys
import traceback
from pathlib import Path


def main() -> None:
    """Run each benchmark module in turn; one that fails to import is reported and skipped."""
    names = sorted(p.stem for p in Path(__file__).parent.glob("bench_*.py"))
    failed = False
    for name in names:
        print(f"## {name}\n", flush=True)
        try:
            module = importlib.import_module(f"bench.{name}")
        except Exception as exc:  # an anchor or a layer that is not there yet
            print(f"(skipped {name}: import failed: {type(exc).__name__}: {exc})\n", flush=True)
            continue
        try:
            module.main()
        except Exception:
            failed = True
            traceback.print_exc()
        sys.stdout.flush()
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
