import sys
from pathlib import Path

# the shared strategies module (eg_strategies) is imported by name from this directory
sys.path.insert(0, str(Path(__file__).parent.parent / "diff"))
# and test_simplify's value check (values_agree) by the float32 tests next to it
sys.path.insert(0, str(Path(__file__).parent))
