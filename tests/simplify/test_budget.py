"""simplify's work: polynomial in the DAG, within a step and time budget, a named error past it.

Issue 26: ``simplify(grad(x squared 80 times))`` doubled its work with every squaring past the
63rd, when the exponent no longer fits int64 and equal factors were kept apart: flattening a
product of a product of ... held 2**k equal factors. Equal operands that cannot merge into one
exponent (coefficient) now become one power (multiple) of the operand.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import exprgraph as eg
from exprgraph.core import Term, postorder
from exprgraph.diff import grad
from exprgraph.errors import RewriteLimitError
from exprgraph.rules import RewriteProfile
from exprgraph.simplify import DEFAULT_MAX_STEPS, canonical, cost, simplify

x, y = eg.symbols("x y")

#: points where x**(2**n) and its gradient are exact or saturate (0, inf), and where they are nan
POINTS = np.array([1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 0.0, np.inf, -np.inf, np.nan])


def operands(t: Term) -> int:
    """The operand slots of ``t``'s distinct nodes: a product of 2**k equal factors counts 2**k."""
    return sum(len(n.args) for n in postorder(t))


def squared(n: int, by_product: bool) -> Term:
    """x squared ``n`` times: ``f = f*f`` or ``f = f**2``."""
    f = x
    for _ in range(n):
        f = f * f if by_product else f**2
    return f


def same_values(a: Term, b: Term) -> None:
    with np.errstate(all="ignore"):
        va, vb = (
            np.broadcast_to(np.asarray(v, dtype=np.float64), POINTS.shape) for v in eg.evaluate([a, b], {x: POINTS})
        )
    assert np.array_equal(va, vb, equal_nan=True), (va, vb)


@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
@pytest.mark.parametrize("by_product", [True, False], ids=["f*f", "f**2"])
@pytest.mark.parametrize("n", [10, 62, 63, 64, 70, 74, 80])
def test_the_gradient_of_repeated_squaring_takes_polynomial_work(n: int, by_product: bool, unsafe: bool) -> None:
    g = grad(squared(n, by_product))[x]
    profile = RewriteProfile()
    # the default step budget; the time limit only bounds a regression (it takes milliseconds)
    s = simplify(g, unsafe=unsafe, profile=profile, time_limit=60)
    assert profile.steps <= 4 * g.size
    assert operands(canonical(g, unsafe=unsafe)) <= 8 * operands(g)  # was 2**(n - 62) equal factors
    assert cost(s) <= cost(g)
    same_values(g, s)
    assert simplify(s, unsafe=unsafe) is s


@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
def test_a_sum_doubling_past_the_float_range_stays_small(unsafe: bool) -> None:
    # 1.5*x + 1.5*x -> 3.0*x up to 1.5*2**1022*x; from there the float coefficient overflows: t + t -> 2*t
    # keeps one term (it held 2**k equal terms, 131074 operands after 1040 doublings)
    f = 1.5 * x
    for _ in range(1040):
        f = f + f
    s = simplify(f, unsafe=unsafe, time_limit=60)
    assert operands(s) <= 4 * 1040
    for v in (1e-300, -3e-308, 5e-324, 0.0, 1.0, np.inf, np.nan):
        with np.errstate(all="ignore"):
            before, got = float(eg.evaluate(f, {x: v})), float(eg.evaluate(s, {x: v}))
        if not np.isfinite(v):
            assert before == got or (np.isnan(before) and np.isnan(got)), (v, before, got)
            continue
        exact = Fraction(1.5) * Fraction(v) * 2**1040  # at 5e-324 the input rounds 1.5*x, the sum of terms does not
        if abs(exact) > Fraction(np.finfo(np.float64).max):
            assert got == before == np.copysign(np.inf, v), (v, before, got)
        else:
            assert abs(Fraction(got) - exact) <= abs(Fraction(before) - exact), (v, before, got)


def test_the_step_budget_raises_a_named_error() -> None:
    t = x
    for _ in range(200):
        t = eg.sin(t) * 1 + y * 1
    with pytest.raises(RewriteLimitError, match="max_steps=50") as info:
        simplify(t, max_steps=50)
    assert info.value.steps == 51 and info.value.rule
    assert isinstance(info.value, RuntimeError)
    profile = RewriteProfile()
    assert simplify(t, profile=profile) is simplify(t, max_steps=profile.steps)  # enough for both passes


def test_the_time_budget_raises_a_named_error() -> None:
    # a long flat sum: the unsafe strength flattens it at every level (quadratic work)
    xs = [eg.Symbol(f"x{i}") for i in range(3000)]
    s = xs[0]
    for v in xs[1:]:
        s = s + v
    with pytest.raises(RewriteLimitError, match=r"time limit of 0\.05 s") as info:
        simplify(s, unsafe=True, time_limit=0.05)
    assert info.value.rule == "time_limit"
    assert simplify(2 * x + 3 * x, time_limit=5.0) is 5 * x  # a limit that is not reached changes nothing


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"max_steps": -1}, ValueError),
        ({"max_steps": 1.5}, TypeError),
        ({"max_steps": True}, TypeError),
        ({"time_limit": 0}, ValueError),
        ({"time_limit": float("nan")}, ValueError),
        ({"time_limit": "1"}, TypeError),
    ],
)
def test_a_malformed_budget_is_refused(kwargs: dict, error: type) -> None:
    with pytest.raises(error):
        simplify(x + x, **kwargs)


def test_the_default_budget_is_documented() -> None:
    import inspect

    params = inspect.signature(simplify).parameters
    assert params["max_steps"].default == DEFAULT_MAX_STEPS > 0
    assert params["time_limit"].default is None
