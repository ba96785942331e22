"""simplify at the edges: exact integer exponents, overflow keeps the unsimplified form, no raw errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exprgraph.core import Symbol, Term, exp, postorder
from exprgraph.eval import evaluate
from exprgraph.simplify import simplify

x = Symbol("x")
#: bases whose integer powers are exact (until they overflow): signs, magnitude 1, zeros, infinities
BASES = np.array([-2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0, -np.inf, np.inf, np.nan])


def same_values(a: Term, b: Term) -> None:
    """Equal (nan where nan, to 4 ulps) at every base where ``a`` computes without over- or underflow.

    Where an intermediate of ``a`` overflows or underflows, the simplified form may well be right
    (``x * x**-1024`` is inf at 0.5, ``x/x**1024`` the exact 2**1023): those bases are not compared.
    """
    nodes = postorder(a)
    with np.errstate(all="ignore"):
        va, vb, *inner = (
            np.broadcast_to(np.asarray(v, dtype=np.float64), BASES.shape) for v in evaluate([a, b, *nodes], {x: BASES})
        )
    keep = np.ones(BASES.shape, dtype=bool)
    for v in inner:
        keep &= np.isnan(v) | ((v == 0) & np.isfinite(BASES)) | ((np.abs(v) >= 2.0**-1000) & (np.abs(v) <= 2.0**1000))
    keep |= ~np.isfinite(BASES)  # the infinities and nan themselves: no rounding involved
    va, vb = va[keep], vb[keep]
    assert np.array_equal(np.isnan(va), np.isnan(vb)), (str(a), str(b), va, vb)
    ok = np.isnan(va) | (va == vb) | np.isclose(va, vb, rtol=4 * 2.0**-52, atol=0)
    assert ok.all(), (str(a), str(b), va, vb)


@pytest.mark.parametrize("unsafe", [True, False])
def test_exponents_beyond_int64_stay_unmerged(unsafe: bool) -> None:
    # the finding: a raw OverflowError from x**(2**62) * x**(2**62); no int64 exponent holds 2**63, so
    # the equal factors become a power of the factor (f*f = f**2), never a product of 2**k equal factors
    t = x ** (2**62) * x ** (2**62)
    s = simplify(t, unsafe=unsafe)
    assert s is t  # (x**(2**62))**2 would be a node larger: simplify never returns a larger DAG
    same_values(t, s)
    for u in ((x ** (2**62)) ** 2, (x**3) ** (2**62), exp(x) ** (2**63 - 1) * exp(x), x ** (2.0**64) * x**3):
        same_values(u, simplify(u, unsafe=unsafe))


def test_odd_exponents_above_2_53_keep_their_sign() -> None:
    # x**(2**53 + 1) is odd: its sign is the base's, though the exponent as a float is even
    odd = x ** (2**53 + 1)
    assert float(evaluate(odd, {x: -1.0})) == -1.0
    assert float(evaluate(odd, {x: -2.0})) == -np.inf
    assert np.signbit(evaluate(odd, {x: -0.0}))
    merged = simplify(odd * x)
    assert str(merged) == "x**9007199254740994"
    same_values(odd * x, merged)
    # an integral float exponent merges exactly: 2**53 + 2 and 1 make 2**53 + 3, not 2**53 + 4
    s = simplify(x ** float(2**53 + 2) * x)
    assert str(s) == "x**9007199254740995"
    assert float(evaluate(s, {x: -1.0})) == -1.0


def test_float_exponents_merge_only_when_exact() -> None:
    assert str(simplify(x**0.5 * x**0.25, unsafe=True)) == "x**0.75"
    assert str(simplify(x**0.5 * x**0.25)) == "x**0.5*x**0.25"  # non-integer exponents merge in cancel_product (unsafe)
    s = simplify(x**0.1 * x**0.2, unsafe=True)  # 0.1 + 0.2 is not a float: no merged exponent
    assert all(a.op.name == "pow" for a in s.args) and len(s.args) == 2
    same_values(x**0.1 * x**0.2, s)


@pytest.mark.parametrize("unsafe", [True, False])
def test_folding_constants_never_overflows_a_finite_form(unsafe: bool) -> None:
    cases = [
        (x * 1e200 * 1e200, 1e-300),  # 1e200*1e200 would fold to inf
        (x * 1e-200 * 1e-200, 1e300),  # ... and 1e-200*1e-200 to 0.0
        (x + 1e308 + 1e308, -1e308),
        (1e308 * x + 1e308 * x, 0.5),  # the merged coefficient 2e308 overflows
    ]
    for t, at in cases:
        s = simplify(t, unsafe=unsafe)
        want = float(evaluate(t, {x: at}))
        assert np.isfinite(want)
        assert float(evaluate(s, {x: at})) == want, (str(t), str(s))


EXPONENTS = st.one_of(
    st.integers(-(2**63), 2**63 - 1),
    st.sampled_from([2**53 + 1, 2**62, -(2**53) - 1, 2**63 - 1, -(2**63), 3, -3, 0, 1]),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.sampled_from([0.5, 0.25, -0.5, 2.0**53, 2.0**60, 1e300, -1e300]),
)


@settings(max_examples=150, deadline=None)
@given(EXPONENTS, EXPONENTS, st.booleans())
def test_products_and_powers_of_powers_keep_values(a: int | float, b: int | float, unsafe: bool) -> None:
    for t in (x**a * x**b, (x**a) ** b, x**a * x**b * x):
        s = simplify(t, unsafe=unsafe)  # never a raw OverflowError
        if unsafe:
            continue  # unsafe merges may differ at 0, inf and nan
        same_values(t, s)


@pytest.mark.parametrize("base", [1, 2, -3])
def test_an_integer_reciprocal_is_not_made_a_quotient(base: int) -> None:
    # an int64 b**-1 is an evaluation error, and a/b a number: the safe output pass keeps the factor, and
    # the result is a fixed point (it once became a/1, which a second call folded: not idempotent)
    from exprgraph.core import const
    from exprgraph.errors import EvaluationError

    t = 2 / x * const(base) ** const(-1)
    with pytest.raises(EvaluationError):
        evaluate(t, {"x": 4.0})
    once = simplify(t)
    assert simplify(once) is once
    with pytest.raises(EvaluationError):
        evaluate(once, {"x": 4.0})
