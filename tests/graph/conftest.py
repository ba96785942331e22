"""Shared helpers: an ``identity`` op (the seed's RemovalNodeRewriter example needs one)."""

from __future__ import annotations

import pytest

from exprgraph import Op, get_op, register_op


def _identity_infer(args: tuple, attr: object) -> tuple[str, tuple]:
    return args[0].dtype, args[0].shape


def identity_op() -> Op:
    """The ``identity`` op, registered on first use (one operand in, the same value out)."""
    try:
        return get_op("identity")
    except KeyError:
        return register_op(
            Op(
                "identity",
                1,
                _identity_infer,
                impl=lambda v: v,
                c_render="({0})",
                grad=lambda node, g: (g,),
                doc="The value itself (an op that rewrites remove).",
            )
        )


@pytest.fixture
def identity() -> Op:
    """The ``identity`` op."""
    return identity_op()
