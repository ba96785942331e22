"""Op domains: values drawn inside an op's declared domain give finite values and checkable gradients."""

from __future__ import annotations

import math

import numpy as np
import pytest

from exprgraph.core import Symbol, get_op, ops
from exprgraph.core.op import NONZERO, POSITIVE, domain_within, operand_domain
from exprgraph.diff import grad
from exprgraph.eval import evaluate

#: the vector ops (core/ops_index.py, the reductions of ops_tensor.py): checked in tests/core/test_ops_index.py
VECTOR_OPS = ("amax", "amin", "prod", "mean", "slice_axis", "take", "scatter_add", "concat", "reshape", "broadcast_to")
#: einsum, topk and arange (core/ops_einsum.py, ops_sort.py, ops_range.py): checked in tests/core/test_ops_einsum.py
VECTOR_OPS += ("einsum", "topk_indices", "take_along", "scatter_along", "arange")
FLOAT_OPS = [
    op
    for op in ops()
    if op.notation in ("infix", "prefix", "call")
    and op.grad is not None
    and not op.relational
    and op.name
    not in ("dot", "matmul", "sum", "logsumexp", "transpose", "where", "logical_and", "logical_or", "logical_not")
    and op.name not in VECTOR_OPS
    and (op.impl is not None or op.ufunc is not None)
]


def _draw(domain, rng: np.random.Generator, n: int) -> np.ndarray:
    parts = domain_within(domain, -10.0, 10.0)
    widths = np.array([hi - lo for lo, hi in parts])
    which = rng.choice(len(parts), n, p=widths / widths.sum())
    lo = np.array([p[0] for p in parts])[which]
    hi = np.array([p[1] for p in parts])[which]
    return lo + rng.uniform(0, 1, n) * (hi - lo)


def test_the_standard_domains() -> None:
    assert operand_domain(get_op("log"), 0) == POSITIVE and operand_domain(get_op("sqrt"), 0) == POSITIVE
    assert operand_domain(get_op("truediv"), 0) is None and operand_domain(get_op("truediv"), 1) == NONZERO
    assert operand_domain(get_op("pow"), 0) == POSITIVE and operand_domain(get_op("pow"), 1) is None
    assert operand_domain(get_op("sin"), 0) is None and operand_domain(get_op("add"), 5) is None
    lo, hi = operand_domain(get_op("tan"), 0)[0]
    assert lo == -math.pi / 2 and hi == math.pi / 2


def test_domain_within_keeps_clear_of_the_ends() -> None:
    assert domain_within(POSITIVE, -10, 10) == [(1.0, 10)]
    assert domain_within(NONZERO, -10, 10) == [(-10, -1.0), (1.0, 10)]
    assert domain_within(None, -10, 10) == [(-10, 10)]
    assert domain_within(((20.0, 30.0),), -10, 10) == []
    (lo, hi) = domain_within(operand_domain(get_op("tan"), 0), -10, 10)[0]
    assert -math.pi / 2 < lo < -0.5 and lo == -hi


@pytest.mark.parametrize("op", FLOAT_OPS, ids=[op.name for op in FLOAT_OPS])
def test_gradients_check_inside_each_domain(op) -> None:
    # inputs drawn inside the op's domain: finite values, and the gradient rule matches central
    # finite differences (outside, log(-1) is nan and the check would compare nan with a number)
    rng = np.random.default_rng(7)
    n = op.arity[0]
    syms = [Symbol(f"a{i}") for i in range(n)]
    values = [_draw(operand_domain(op, i), rng, 64) for i in range(n)]
    term = op(*syms)
    env = dict(zip(syms, values, strict=True))
    assert np.isfinite(evaluate(term, env)).all()
    grads = grad(term, syms)
    h = 1e-6
    for i, s in enumerate(syms):
        plus = dict(env)
        minus = dict(env)
        plus[s] = values[i] + h
        minus[s] = values[i] - h
        fd = (np.asarray(evaluate(term, plus)) - np.asarray(evaluate(term, minus))) / (2 * h)
        got = np.broadcast_to(np.asarray(evaluate(grads[i], env), dtype=np.float64), fd.shape)
        smooth = np.ones(fd.shape, bool)
        if op.name in ("floordiv", "mod"):  # jumps at multiples of the divisor
            smooth = np.abs(np.asarray(evaluate(term, plus)) - np.asarray(evaluate(term, minus))) < 1e-3
        if op.name in ("maximum", "minimum"):  # kinks where the operands are equal
            smooth = np.abs(values[0] - values[1]) > 1e-3
        assert np.allclose(got[smooth], fd[smooth], rtol=1e-5, atol=1e-6), (op.name, i)
