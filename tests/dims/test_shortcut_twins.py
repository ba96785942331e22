"""The switched shortcuts of dims against their general paths (``exprgraph.twins``), on random inputs.

Each shortcut has a switch, a module attribute that makes it decline so the general path runs:
the answers must be the same either way (the same polynomial in the same dict order, the same
range, the same answer to a query).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exprgraph import const, get_op
from exprgraph.dims import DimEnv, clear_caches, dim_name
from exprgraph.dims import combine as combine_module
from exprgraph.dims import regions as regions_module
from exprgraph.dims.combine import combine_terms
from exprgraph.dims.regions import to_poly
from exprgraph.dims.ring import p_add, p_scale

NAMES = [dim_name(n) for n in ("a", "b", "c", "d")]
_BINARY = ["add", "sub", "mul", "floordiv", "mod", "maximum", "minimum", "ceil_div"]
_leaves = st.one_of(st.sampled_from(NAMES), st.integers(-3, 9).map(const))


def _extend(children: Any) -> Any:
    binary = st.tuples(st.sampled_from(_BINARY), children, children).map(lambda t: get_op(t[0])(t[1], t[2]))
    return st.one_of(binary, binary, children.map(lambda t: -t))


expressions = st.recursive(_leaves, _extend, max_leaves=12)
_bound = st.one_of(st.integers(-5, 5), st.just(None))
ranges = st.fixed_dictionaries(
    {
        n: st.tuples(st.integers(-4, 6), _bound).map(lambda r: (r[0], None if r[1] is None else r[0] + abs(r[1])))
        for n in "abcd"
    }
)


@contextmanager
def switched_off(module: Any, attr: str) -> Iterator[None]:
    """The general path while the block runs."""
    assert getattr(module, attr) is True
    setattr(module, attr, False)
    try:
        yield
    finally:
        setattr(module, attr, True)


def _poly(term: Any, given_ranges: dict) -> object:
    """The polynomial of ``term`` on cold caches under the ranges, in its dict order (or the error)."""
    clear_caches()
    try:
        return list(to_poly(term, DimEnv(given_ranges).context).items())
    except Exception as err:  # the general path must fail alike
        return type(err)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions, ranges)
def test_the_quick_path_gives_the_walks_polynomial(term, given_ranges):
    """``regions._quick`` (switch ``regions.QUICK_PATH``) against the walk of the same root."""
    quick = _poly(term, given_ranges)
    with switched_off(regions_module, "QUICK_PATH"):
        walked = _poly(term, given_ranges)
    assert quick == walked


def _combined(parts: list, coefs: list, given_ranges: dict) -> object:
    """``combine_terms`` of a sum of normalised parts, on cold caches, in its dict order."""
    clear_caches()
    ctx = DimEnv(given_ranges).context
    try:
        p: dict = {}
        for part, k in zip(parts, coefs, strict=False):
            p = p_add(p, p_scale(to_poly(part, ctx), k))
        return list(ctx.unwrap(combine_terms(p, ctx)).items())
    except Exception as err:
        return type(err)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(expressions, min_size=1, max_size=4), st.lists(st.integers(-3, 3), min_size=4, max_size=4), ranges)
def test_the_combine_check_skips_only_what_the_rules_leave(parts, coefs, given_ranges):
    """``combine.may_combine`` (switch ``combine.COMBINE_CHECK``) against the rules run on every sum."""
    quick = _combined(parts, coefs, given_ranges)
    with switched_off(combine_module, "COMBINE_CHECK"):
        general = _combined(parts, coefs, given_ranges)
    assert quick == general
