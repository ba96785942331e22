"""The fuzzers' shared settings and strategies (fuzz_support) are imported by name from this directory."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
