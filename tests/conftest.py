"""Test-wide settings: under CI, hypothesis runs derandomized so a green run stays green."""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

from hypothesis import settings

# helpers shared by every directory's tests (time_limit) are imported by name from here
sys.path.insert(0, str(Path(__file__).parent))

import package_ops  # noqa: F401 - the package's op table, recorded before a test module adds to it

# CI (and `make test` with CI=true) explores the same examples on every run; locally each run
# draws new examples, which is how new counterexamples are found.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


def pytest_collection_finish(session: object) -> None:
    """Freeze the heap the collection built (the test modules and every library they import) out of the
    collector's reach: the tests that call `gc.collect()` to check what is freed then walk their own
    objects, not the whole interpreter (440,000 objects after collecting: a full collection took 0.4 s)."""
    gc.collect()
    gc.freeze()
