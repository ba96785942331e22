"""The ops exprgraph registers itself, recorded before any test module registers one of its own.

``conftest.py`` imports this module first, so tests that walk the whole op table (``test_op_agreement``)
see the package's table whatever order the test modules are collected in.
"""

from __future__ import annotations

import exprgraph  # noqa: F401 - registers the standard table and every subpackage's ops
from exprgraph.core.op import ops

#: the names of the ops registered by the package
PACKAGE_OPS = frozenset(op.name for op in ops())
