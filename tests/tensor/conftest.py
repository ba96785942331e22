import sys
from pathlib import Path

# the shared index-term strategy (index_strategies) is imported by name from this directory
sys.path.insert(0, str(Path(__file__).parent))
