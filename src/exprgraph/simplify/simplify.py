"""``simplify(term)``: a deterministic canonical form by the rule engine, printed back readably.

Two passes of :func:`exprgraph.rules.rewrite` (bottom-up, memoised, to a fixpoint): the
canonical-form rules (:mod:`.canonical`), then the output-form rules (:mod:`.output`). The
result never costs more than the input, counting distinct nodes other than scalar constants
(:func:`cost`; a scalar constant is an immediate operand, so ``x + x -> 2*x`` costs nothing, and
a node of n > 2 operands counts as its n - 1 binary operations):
when canonicalising would grow the DAG (flattening a sum that other terms share, say), the input
comes back unchanged, as SymPy's ``simplify`` returns its input when its result measures larger.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache

from ..core import Term, as_term, postorder
from ..errors import ExprgraphError, RewriteLimitError
from ..rules import RewriteProfile, RuleSet, rewrite
from .budget import DEFAULT_MAX_STEPS, check_budget_args, deadline
from .canonical import CANONICAL_RULES, SAFE_ONLY, GuardedRule
from .integers import simplify_integers
from .output import OUTPUT_RULES
from .polynomial import expand, factor
from .rational import cancel

__all__ = [
    "simplify",
    "canonical",
    "rules",
    "canonical_ruleset",
    "output_ruleset",
    "cost",
    "METHODS",
    "DEFAULT_MAX_STEPS",
]

#: simplification methods other than the rule engine, by name: ``fn(term, *, unsafe) -> term``.
#: A layer above registers its own when imported (``exprgraph.egraph`` adds "egraph"; importing
#: exprgraph imports it).
METHODS: dict[str, Callable[..., Term]] = {}
#: rounds of the integer hand-off (dims' forms, then the rules) before simplify settles
_INTEGER_ROUNDS = 3
#: the largest input (by cost) that unsafe simplify also expands, factors and cancels as polynomials
_ALGEBRA_MAX_COST = 400
#: rounds of the polynomial forms, each from the best form of the last
_ALGEBRA_ROUNDS = 4


def cost(term: Term) -> int:
    """Distinct nodes of ``term`` other than scalar constants (operations, symbols, array constants).

    A node of n > 2 operands counts n - 1, the binary operations it stands for, so a flat
    ``x + y + x`` (as parsed) costs what ``(x + y) + x`` does.
    """
    return sum(
        len(t.args) - 1 if len(t.args) > 2 else 1 for t in postorder(term) if not (t.op.name == "const" and not t.shape)
    )


def _used(rule: GuardedRule, unsafe: bool) -> bool:
    """Whether ``rule`` runs at the strength: the safe rules, and with ``unsafe`` the unsafe ones (but SAFE_ONLY)."""
    return rule.name not in SAFE_ONLY if unsafe else not rule.unsafe


@cache
def canonical_ruleset(unsafe: bool = False) -> RuleSet:
    """The canonical-form rules as a RuleSet (without the unsafe ones when ``unsafe`` is False)."""
    name = "canonical" if unsafe else "canonical-safe"
    return RuleSet([r for r in CANONICAL_RULES if _used(r, unsafe)], name=name)


@cache
def output_ruleset(unsafe: bool = False) -> RuleSet:
    """The output-form rules as a RuleSet (without the unsafe ones when ``unsafe`` is False)."""
    name = "output" if unsafe else "output-safe"
    return RuleSet([r for r in OUTPUT_RULES if unsafe or not r.unsafe], name=name)


def rules(unsafe: bool = False) -> list[GuardedRule]:
    """The rules ``simplify`` uses (with the unsafe ones when ``unsafe``), canonical then output form."""
    return [r for r in CANONICAL_RULES + OUTPUT_RULES if _used(r, unsafe)]


def canonical(term: Term, *, unsafe: bool = False, profile: RewriteProfile | None = None) -> Term:
    """The canonical form of ``term`` (sums of products of powers; see :mod:`.canonical`)."""
    return rewrite(as_term(term), canonical_ruleset(unsafe), profile=profile)


def simplify(
    term: Term | float,
    *,
    unsafe: bool = False,
    profile: RewriteProfile | None = None,
    method: str = "rules",
    max_steps: int = DEFAULT_MAX_STEPS,
    time_limit: float | None = None,
) -> Term:
    """A simplified, deterministic form of ``term`` with the same value.

    Constants are folded, like terms collected (``x + x -> 2*x``, ``x*x -> x**2``), identities
    removed (``x*1``, ``x + 0``, ``x**1``) and numerically stable forms chosen
    (``log(1 + x) -> log1p(x)``); operands are sorted. The result is canonical: ``simplify``
    returns it unchanged.

    Strength: the default is the *safe* rules, the default of every rewriter in exprgraph
    (:func:`~exprgraph.graph.rewrite_graph`'s canonicalize, the e-graph's): for every input (nan,
    inf, huge, tiny and subnormal values included) the result computes the same IEEE operations
    as the input, or replaces some by one rounding of their exact value, so it is never less
    accurate (up to the sign of a zero). A float sum or product is reassociated only where that
    holds: ``x + y - x -> y + (x - x)`` (exactly ``y``) but not ``(x + y) + z -> (x + z) + y``;
    ``x*x*x -> x**3`` but not ``x*y*x -> x**2*y`` (which overflows at x = 1e200, y = 1e-200).
    ``unsafe=True`` adds the rules that hold only for finite or non-zero values, and reassociates
    freely: ``x*0 -> 0``, ``x - x -> 0``, ``(x*y)/y -> x``, ``log(exp(x)) -> x``,
    ``exp(a)*exp(b) -> exp(a + b)``, ``-(a + b) -> -a - b``, flat sorted sums and products
    (``rewrite_graph(..., include=("canonicalize", "unsafe"))`` in a graph).
    Integer subterms take :mod:`exprgraph.dims`' canonical form where no larger (:mod:`.integers`):
    ``a + b - a -> b``; with ``unsafe``, symbolic divisors too (``2*n//n -> 2``, which is 0 at n = 0).

    Budget: each of the two passes (canonical, then output form) makes at most ``max_steps``
    rule applications, and the whole call takes at most ``time_limit`` seconds (None: no limit;
    checked at every sum and product); past either, :class:`~exprgraph.errors.RewriteLimitError`
    is raised (the input is unchanged, and it is always an equal form). Typical terms take about
    one step per node. Pass a :class:`~exprgraph.rules.RewriteProfile` to count rule applications.
    ``method="egraph"`` simplifies by equality saturation instead (see :mod:`exprgraph.egraph`,
    whose own limits apply).

    >>> from exprgraph import symbols
    >>> x, y = symbols("x y")
    >>> print(simplify(x*1 + 0 + x))
    2*x
    >>> print(simplify((x*y)/y + x*x))
    x*(y/y) + x**2
    >>> print(simplify((x*y)/y + x*x, unsafe=True))
    x + x**2
    """
    term = as_term(term)
    check_budget_args(max_steps, time_limit)
    if method != "rules":
        if method not in METHODS:
            raise ValueError(f"method must be 'rules' or one of {sorted(METHODS)}, not {method!r}")
        return METHODS[method](term, unsafe=unsafe)
    out = _passes(term, unsafe, profile, max_steps, time_limit)
    if unsafe:
        out = _algebraic(term, out, profile, max_steps, time_limit)
    if out is term or cost(out) > cost(term):
        return term
    return out


def _algebraic(
    term: Term, best: Term, profile: RewriteProfile | None, max_steps: int, time_limit: float | None
) -> Term:
    """With ``unsafe``: the input expanded, factored and cancelled as polynomials and rational
    functions over exact coefficients (:mod:`exprgraph.poly`), each put through the passes; the
    cheapest of those and ``best`` (``(x**2 - 1)/(x + 1) -> x - 1``, ``(x + 1)**2 - x**2 -> 2*x + 1``).
    Unsafe: a cancelled factor may be 0 (``x - 1`` at ``x = -1``), an expansion rounds differently."""
    if cost(term) > _ALGEBRA_MAX_COST:
        return best
    bases = [b for b in (term, best) if _small_integers(b)]
    for _ in range(_ALGEBRA_ROUNDS):  # again from what improved, so that the result is a fixpoint
        found = None
        for base in bases:
            for form in (expand, factor, cancel):
                try:
                    candidate = _passes(form(base), True, profile, max_steps, time_limit)
                except (ExprgraphError, ValueError, ZeroDivisionError):
                    continue  # a budget or a limit of the polynomial algebra: that form is not tried
                if cost(candidate) < cost(found or best) and _small_integers(candidate):
                    found = candidate
        if found is None:
            break
        best = found
        bases = [best]
    return best


def _small_integers(term: Term) -> bool:
    """Whether every scalar constant of ``term`` is an integer of at most 2**53 (exact as a float).

    The polynomial forms compute with exact coefficients: from floats such as 1e200 they make
    integers no float holds, whose written form then overflows or underflows where the input does not.
    """
    for t in postorder((term,)):
        if t.op.name == "const" and not t.shape:
            v = t.attr
            if isinstance(v, float) and not (math.isfinite(v) and v == int(v)):
                return False
            if abs(int(v)) > 2**53:
                return False
    return True


def _passes(term: Term, unsafe: bool, profile: RewriteProfile | None, max_steps: int, time_limit: float | None) -> Term:
    """The two passes; then, while that changes something, integer subterms in dims' canonical form
    (:mod:`.integers`) and the two passes again on what it gave (``abs(a - a) -> abs(0) -> 0``)."""
    out = _two_passes(term, unsafe, profile, max_steps, time_limit)
    for _ in range(_INTEGER_ROUNDS):
        ints = simplify_integers(out, unsafe=unsafe, cost=cost)
        if ints is out:
            break
        out = _two_passes(ints, unsafe, profile, max_steps, time_limit)
    return out


def _two_passes(
    term: Term, unsafe: bool, profile: RewriteProfile | None, max_steps: int, time_limit: float | None
) -> Term:
    """The canonical pass, then the output pass, within the budget (RewriteLimitError past it)."""
    try:
        with deadline(time_limit):
            inner = rewrite(term, canonical_ruleset(unsafe), max_steps=max_steps, profile=profile)
            return rewrite(inner, output_ruleset(unsafe), max_steps=max_steps, profile=profile)
    except RewriteLimitError as e:
        if e.steps <= max_steps:
            raise  # a cycle (a bug in the rules), or the time limit: the message says which
        raise RewriteLimitError(
            f"simplify did not finish within max_steps={max_steps} rule applications in a pass "
            f"(last rule applied: {e.rule!r}): pass a larger max_steps",
            e.rule,
            e.steps,
        ) from None
