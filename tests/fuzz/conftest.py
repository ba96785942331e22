"""The fuzzers' shared settings and strategies (fuzz_support) are imported by name from this directory;
the simplify fuzzer also reads the simplify tests' value checks and the shared term strategies."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(1, str(Path(__file__).parent.parent / "simplify"))
sys.path.insert(2, str(Path(__file__).parent.parent / "diff"))
