"""Test-wide settings: under CI, hypothesis runs derandomized so a green run stays green."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from hypothesis import settings

# helpers shared by every directory's tests (time_limit) are imported by name from here
sys.path.insert(0, str(Path(__file__).parent))

# CI (and `make test` with CI=true) explores the same examples on every run; locally each run
# draws new examples, which is how new counterexamples are found.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
