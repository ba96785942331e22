import sys
from pathlib import Path

# egraph_helpers.py is imported by name from this directory
sys.path.insert(0, str(Path(__file__).parent))
