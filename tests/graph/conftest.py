"""Shared helpers: the ``identity`` op of the standard table (the seed's RemovalNodeRewriter example needs one)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# seed_rewriters.py is imported by name from this directory; the seed's kanren relation
# (kanren_examples.py) is shared with the rule tests
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "rules"))

from exprgraph import Op, get_op


def identity_op() -> Op:
    """The standard ``identity`` op (one operand in, the same value out)."""
    return get_op("identity")


@pytest.fixture
def identity() -> Op:
    """The ``identity`` op."""
    return identity_op()
