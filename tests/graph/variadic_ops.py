"""Test ops taking any number of operands (PyTensor's test graphs use such ops), registered once by name."""

from __future__ import annotations

from exprgraph import Op, get_op, register_op


def variadic(name: str) -> Op:
    """The float64 op ``name`` taking any number of operands (registered on first use)."""
    try:
        return get_op(name)
    except KeyError:
        return register_op(Op(name, (0, None), lambda args, attr: ("float64", ())))
