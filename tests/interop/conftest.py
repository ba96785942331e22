import sys
from pathlib import Path

# the shared strategies module (interop_strategies) is imported by name from this directory
sys.path.insert(0, str(Path(__file__).parent))
