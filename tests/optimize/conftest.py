import sys
from pathlib import Path

# the shared check (opt_checks) is imported by name from this directory; the OPF model from bench/
HERE = Path(__file__).resolve().parent
for path in (HERE, HERE.parents[1]):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
