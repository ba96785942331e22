import sys
from pathlib import Path

# kanren_examples.py is imported by name from this directory (by the graph tests too)
sys.path.insert(0, str(Path(__file__).parent))
