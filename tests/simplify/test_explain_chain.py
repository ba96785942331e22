"""``simplify(explain=True)``: the chain of rewrites always reaches the result, memoised reuses included."""

from __future__ import annotations

import pytest
from eg_strategies import X, Y, point_arrays, terms
from hypothesis import given, settings
from hypothesis import strategies as st
from test_simplify import values_agree

import exprgraph as eg
from exprgraph.core import substitute
from exprgraph.simplify import simplify
from exprgraph.simplify.steps import with_reuses

x, y = X, Y


def _assert_chain(t: eg.Term, unsafe: bool) -> None:
    """The explanation starts at ``t``, each step rewrites one subterm of the last, and it ends at the result."""
    e = simplify(t, unsafe=unsafe, explain=True)
    result = simplify(t, unsafe=unsafe)
    assert e.start is t and e.end is result, (str(t), str(e.end), str(result))
    previous = t
    for step in e:
        assert step.name and step.before is not step.after
        assert substitute(previous, {step.before: step.after}) is step.term, (str(t), step.name)
        previous = step.term
    assert previous is result


def test_a_rewrite_reused_from_the_memo_is_explained_again() -> None:
    # 2.0/x -> 2.0*x**-1.0 -> 2.0*x**-1, then x/x -> x*x**-1.0 meets x**-1.0 in the driver's memo
    t = x / x - 2.0 / x
    _assert_chain(t, unsafe=False)
    e = simplify(t, explain=True)
    assert [s.name for s in e].count("power_of_power") == 2
    values_agree(t, e.end, point_arrays(16, seed=1, lo=0.2, hi=2.0), finite_only=True)


@pytest.mark.parametrize("text", ["x/x - 2.0/x", "1.0/x + x/x + y/x", "(2.0/x)*(3.0/x) - x/x"])
@pytest.mark.parametrize("unsafe", [False, True])
def test_shared_reciprocals_explained(text: str, unsafe: bool) -> None:
    _assert_chain(eg.parse(text), unsafe)


_SHARED = "(log(exp(-1.5)) + maximum(-1.5, z)/(1.5 + sin(minimum(2.0, y))))**-2"
_SQUARED = "(-x*1 - ((((z*-1.5)/-1.5)**2)**3 + (0.015625 + z)))"


@pytest.mark.parametrize(
    "text",
    [
        # the e-graph's proof reaches 2/(x + 1.0) where the form chosen has 2.0/(x + 1.0): a last step respells it
        f"-{_SHARED}/(x + 1.0) - 2.0/(x + 1.0) - {_SHARED}",
        # an e-graph with explanations breaks a tie of costs the other way (1.0 + u vs u + 1.0)
        f"sqrt(1.0 + {_SQUARED}*{_SQUARED})*maximum(z, x % 3.98, z)*0.5",
    ],
)
def test_the_saturation_is_explained_up_to_the_result_it_chose(text: str) -> None:
    _assert_chain(eg.parse(text), unsafe=True)


def test_with_reuses_adds_the_memo_reuses_in_order() -> None:
    a, b = x**-1.0, x**-1
    entries = [("r1", 2.0 / x, 2.0 * a), ("r2", a, b), ("r3", x / x, x * a)]
    start = x / x - 2.0 / x
    assert with_reuses(start, entries) == [*entries, ("r2", a, b)]
    assert with_reuses(start, entries[:2]) == entries[:2]  # nothing reused
    # a term rebuilt from rewritten operands is a known one: --x -> x makes ----x the same --x
    twice = eg.neg(eg.neg(x))
    quad = eg.neg(eg.neg(twice))
    assert with_reuses(quad, [("double_neg", twice, x)]) == [("double_neg", twice, x)] * 2


@settings(max_examples=120, deadline=None)
@given(t=terms(max_depth=4, kind="any"), unsafe=st.booleans())
def test_explain_never_raises_and_ends_at_the_result(t: eg.Term, unsafe: bool) -> None:
    _assert_chain(t, unsafe)


@settings(max_examples=60, deadline=None)
@given(t=terms(max_depth=3, kind="continuous"), u=terms(max_depth=2, kind="continuous"), unsafe=st.booleans())
def test_explain_of_sums_sharing_subterms(t: eg.Term, u: eg.Term, unsafe: bool) -> None:
    _assert_chain(t / u - 2.0 / u + t * u, unsafe)
