"""``simplify(term, method="egraph")``: simplification by equality saturation.

The term (with variadic sums and products split into binary ones, which the rules match) is
saturated with the :mod:`.algebra` rules under small limits, then the cheapest equal term is
extracted, costing each distinct node once and scalar constants nothing (the measure of
:func:`exprgraph.simplify.cost`). Like the rule-engine method, the result never costs more than
the input: when it would, the input comes back.
"""

from __future__ import annotations

import math
from typing import Any

from ..core import Term, as_term
from ..rules.combinators import bottom_up
from ..simplify.simplify import METHODS, cost
from .algebra import SAFE, UNSAFE
from .runner import saturate

__all__ = ["saturation_simplify", "binarize", "SIMPLIFY_COSTS"]

#: extraction costs of the simplifier: scalar constants are free, every other node costs one
SIMPLIFY_COSTS = {"const": 0.0}


def _binary(t: Term) -> Term:
    # a + b + c -> (a + b) + c: the e-graph rules match binary sums and products
    args = t.args
    if len(args) <= 2 or not t.op.associative or t.attr is not None:
        return t
    out = Term(t.op, args[:2])
    for a in args[2:]:
        out = Term(t.op, (out, a))
    return out


def binarize(term: Term) -> Term:
    """``term`` with every sum or product of more than two operands nested into binary ones (left first)."""
    return bottom_up(_binary)(term)


def saturation_simplify(
    term: Any,
    *,
    unsafe: bool = False,
    rules: Any = None,
    iter_limit: int = 8,
    node_limit: int = 5_000,
    time_limit: float | None = None,
    match_limit: int = 100_000,
) -> Term:
    """The cheapest term equal to ``term`` found by saturating ``rules`` (by default the safe algebra rules;
    ``unsafe=True`` adds the unsafe ones, as for :func:`~exprgraph.simplify.simplify`).

    Bounded by iterations, e-nodes and matches an iteration holds; by seconds only when ``time_limit`` is
    given, so that by default the result never depends on the machine's load."""
    term = as_term(term)
    report = saturate(
        binarize(term),
        (UNSAFE if unsafe else SAFE) if rules is None else rules,
        iter_limit=iter_limit,
        node_limit=node_limit,
        time_limit=math.inf if time_limit is None else time_limit,
        match_limit=match_limit,
    )
    out = report.extract(SIMPLIFY_COSTS, exact=False).term
    if out.dtype != term.dtype or cost(out) > cost(term) or (cost(out) == cost(term) and out.size >= term.size):
        return term
    return out


METHODS["egraph"] = saturation_simplify
