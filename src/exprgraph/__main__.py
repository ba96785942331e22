"""``python -m exprgraph``: the same command line as the ``exprgraph`` script."""

from __future__ import annotations

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
