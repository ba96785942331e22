"""The quick path of ``to_poly`` (sums, products of names, opaque ops and max/min nests, without the
walk) against the walk: the same polynomial, in the same dict order, for every node it takes.

The walk is forced by a root the quick path declines at once (a power ``(t//1)**2``): the walk
then normalises ``t`` as a region of its own (its parent, a floor division, is of another kind),
and ``ctx.vals[t]`` is what the walk made of it. A fresh context reads ``t`` alone, through the quick path when it can.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exprgraph.core.term import Term
from exprgraph.dims import clear_caches, dim_const, parse_expression
from exprgraph.dims.context import Context
from exprgraph.dims.regions import to_poly
from exprgraph.dims.terms import FLOORDIV, POW

_names = st.sampled_from(["a", "b", "c", "a", "b"])
_leaves = st.one_of(_names, _names, st.integers(0, 9).map(str))


def _extend(children):
    binary = st.tuples(children, st.sampled_from([" + ", " - ", "*", "//", "%"]), children)
    calls = st.tuples(
        st.sampled_from(["Max", "Min", "FloorDiv", "CeilDiv", "PythonMod", "f"]),
        st.lists(children, min_size=2, max_size=4),
    )
    return st.one_of(
        binary.map("".join),
        binary.map("".join),
        calls.map(lambda t: f"{t[0]}({', '.join(t[1] if t[0] in ('Max', 'Min', 'f') else t[1][:2])})"),
        children.map(lambda s: f"({s} + 1)*({s} - 1)"),  # a node shared inside one region
    )


texts = st.recursive(_leaves, _extend, max_leaves=10)


def _walked(t: Term, ctx: Context) -> object:
    """``ctx.vals[t]`` after the walk of ``(t//1)**2``, or the error it raised."""
    try:
        to_poly(Term(POW, (Term(FLOORDIV, (t, dim_const(1))), dim_const(2))), ctx)
    except Exception as err:  # the quick path must fail alike
        return type(err)
    return ctx.vals[t]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_quick_path_gives_the_walks_polynomial(text: str) -> None:
    """The quick path gives the polynomial the walk makes of ``t`` (a region of its own), in the same order."""
    clear_caches()
    t = parse_expression(text)
    if not t.args:
        return
    walked = _walked(t, Context(False))
    try:
        quick: object = to_poly(t, Context(False))
    except Exception as err:
        quick = type(err)
    if isinstance(walked, dict):
        assert isinstance(quick, dict)
        assert list(quick.items()) == list(walked.items())
    else:
        assert quick is walked


def test_quick_path_takes_nested_divisions_and_max_of_sums() -> None:
    """The shapes a compiler asks about most are read without the walk, and give the walk's polynomial."""
    for text in (
        "FloorDiv(FloorDiv(H + 2 - 2 - 1, 4) + 1 + 0 - 2 - 1, 1) + 1",
        "FloorDiv(s0*s1 + s1*s2 + s2*s0, s0)",
        "Max(s0 + s1, s1 + s2, s2 + s0) + CeilDiv(s0, 3)",
        "PythonMod(FloorDiv(x, 4), 8) + 2*Min(x, y + 1)",
    ):
        clear_caches()
        t = parse_expression(text)
        walked = _walked(t, Context(False))
        assert isinstance(walked, dict)
        assert list(to_poly(t, Context(False)).items()) == list(walked.items())
