"""Shared helpers: the ``identity`` op of the standard table (the seed's RemovalNodeRewriter example needs one)."""

from __future__ import annotations

import pytest

from exprgraph import Op, get_op


def identity_op() -> Op:
    """The standard ``identity`` op (one operand in, the same value out)."""
    return get_op("identity")


@pytest.fixture
def identity() -> Op:
    """The ``identity`` op."""
    return identity_op()
