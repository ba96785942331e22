"""Why a dimension relation holds: the facts, ranges and identities behind an answer of a DimEnv.

``DimEnv.explain(rel)`` answers as ``statically_known(rel)`` does and says how: the substitutions the
facts made, the difference of the sides after simplification, the ranges that bound it, or the facts
and identities of atoms whose nonnegative combination leaves a part whose range decides (see
:mod:`.facts`). It is what a compiler's user asks of a guard: why does it hold?
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from ..core.term import Term
from .decide import decide, difference
from .normal import top_term
from .prove import has_product, lower_of, shifted_range
from .ranges import Range
from .relations import parse_relation, tight_range
from .ring import Poly
from .terms import SYMBOL
from .unparse import unparse

__all__ = ["Explanation", "explain_relation"]

_SYMBOLS: Final = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


@dataclass(frozen=True)
class Explanation:
    """An answer (True, False or None, as ``statically_known`` gives it) and the reasons for it."""

    query: str
    answer: bool | None
    reasons: tuple[str, ...]

    def __str__(self) -> str:
        head = {True: "always holds", False: "never holds", None: "undecided"}[self.answer]
        return "\n".join([f"{self.query}: {head}", *[f"  - {r}" for r in self.reasons]])


def _text(p: Poly) -> str:
    return unparse(top_term(p))


def _range_text(r: Range) -> str:
    lo = "-inf" if type(r[0]) is float else str(r[0])
    hi = "inf" if type(r[1]) is float else str(r[1])
    return f"[{lo}, {hi}]"


def _names(p: Poly) -> list[Term]:
    """The names ``p`` reads (inside its atoms too), sorted."""
    found: set[Term] = set()
    for m in p:
        for a, _ in m:
            found.update(a.free_symbols)
    return sorted((t for t in found if t.op is SYMBOL), key=lambda t: t.attr[0])


def explain_relation(env: Any, rel: str | Term) -> Explanation:
    """The answer of ``env`` (a DimEnv) to the relation ``rel``, with the reasons for it."""
    op, left, right = parse_relation(rel)
    query = f"{unparse(left)} {_SYMBOLS[op]} {unparse(right)}"
    reasons: list[str] = []
    facts = env._facts
    if facts is not None:
        for name in sorted(left.free_symbols | right.free_symbols, key=lambda t: t.attr[0]):
            if name in facts.subst:
                reasons.append(f"{name.attr[0]} is {unparse(facts.subst[name])} (given: {facts.notes[name]})")
    ctx = env.context
    lp, rp = env._poly_of(left), env._poly_of(right)
    d = difference(lp, rp, ctx)
    reasons.append(f"left - right simplifies to {_text(d)}")
    answer = decide(op, lp, rp, ctx)
    if answer is not None:
        if not d:
            reasons.append("the two sides are the same expression")
        else:
            reasons.append(f"{_text(d)} lies in {_range_text(tight_range(d, ctx))}")
            ranges = [f"{n.attr[0]} in {_range_text(ctx.atom_range(n))}" for n in _names(d)]
            if ranges:
                reasons.append("from the ranges " + ", ".join(ranges))
        return Explanation(query, answer, tuple(reasons))
    trace: list = []
    answer = env._deduce(op, d, trace)
    if answer is not None and not trace:
        reasons.append("a fact left != right says the two sides differ")
    for entry in trace:
        if entry[0] == "settle":
            reasons.append(f"{unparse(entry[1])} is {_text(entry[2])}: the facts put that argument beyond the others")
            continue
        goal, steps, residual, den = entry
        reasons.append(f"to show {_text(goal)} >= 0:")
        for lam, (h, note) in steps:
            reasons.append(f"  take {lam} * ({_text(h)}) >= 0: {note}")
        over = "" if den == 1 else f" (times {den})"
        shifted = shifted_range(residual, ctx) if has_product(residual) else None
        how = ", with each name written as its lower bound plus a part >= 0" if shifted is not None else ""
        reasons.append(f"  what is left{over}, {_text(residual)}, is at least {lower_of(residual, ctx)}{how}")
    if answer is None:
        reasons.append("neither the ranges nor the facts decide it")
    return Explanation(query, answer, tuple(reasons))
