import sys
from pathlib import Path

# the shared strategies and the exact evaluator (poly_helpers) are imported by name from this directory
sys.path.insert(0, str(Path(__file__).parent))
