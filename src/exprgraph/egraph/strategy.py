"""The default strategy of :func:`~exprgraph.simplify.simplify`: the canonical pass, then bounded saturation.

One round: the rule engine's canonical pass (:func:`~exprgraph.simplify.simplify.rule_stage`,
with ``unsafe`` also the expanded, factored and cancelled polynomial forms), then an e-graph of that
form saturated with the algebra and the trig and hyperbolic identities (:mod:`.identities`) within
an iteration, node and time budget, and the cheapest equal term extracted (by DAG size, constants
included). The e-graph's form replaces the canonical one only when strictly cheaper (by
:func:`~exprgraph.simplify.cost`, or the user's ``cost``) and no larger than the input; then rounds
go on from it until one changes nothing, so that ``simplify`` is idempotent. Terms without a function
the identities are about skip the saturation (the canonical pass has done their algebra); so do, at
the safe strength, terms no identity can reach (:mod:`.relevance`: a reachability check over op
names, which also leaves out of the saturation every rule that cannot match), and a saturation where
only the safe algebra acted ends without an extraction. Where a symbol carries assumptions, the safe
strength also saturates with the unsafe identities lifted under a proven condition
(``identities.LIFTED_TEXT``, decided by :mod:`exprgraph.simplify.strategy_lifts`).

Registered into ``simplify``'s strategy table when :mod:`exprgraph.egraph` is imported (the
simplifier sits below the e-graph layer), with the explanation builder of ``explain=True``.
"""

from __future__ import annotations

import math
from typing import Any

from ..core import Term, get_op, postorder, substitute
from ..errors import ExprgraphError
from ..rules import Rule
from ..simplify.simplify import STRATEGY, LogEntry, Run, better, no_larger, rule_stage, size
from ..simplify.strategy_lifts import has_assumptions
from .algebra import algebra_rules
from .egraph import EGraph
from .explain import Explanation, Step, explain
from .extract import extract
from .identities import MIRRORED, identity_rules
from .relevance import active_rules, term_ops
from .runner import saturate
from .saturation import binarize

__all__ = [
    "strategy",
    "explanation",
    "rules_for",
    "repeats",
    "ONE_OCCURRENCE_OPS",
    "ITER_LIMIT",
    "MAX_INPUT_SIZE",
    "ROUNDS",
    "IDENTITY_OPS",
]

#: iterations of one saturation, by strength: the safe identities are one respelling by the safe algebra
#: away from the canonical form (on the corpus 2 finds every form 4 did); the unsafe algebra regroups,
#: which takes more (``y - sin(z) - (1/x + y)`` needs 4 to reach ``-1/x - sin(z)``)
ITER_LIMIT = {False: 2, True: 4}
#: inputs with more distinct nodes skip the saturation (the canonical pass alone scales to millions)
MAX_INPUT_SIZE = 400
#: rounds of the strategy at most (each from the e-graph's form of the last)
ROUNDS = 8
#: share of the call's time limit one saturation may take. Without a time limit there is no clock: the
#: iteration, node and match limits bound a saturation, so that a result never depends on the machine's load
#: (a clock of 0.25 s cut a saturation short under load, and the next call found a cheaper form)
TIME_SHARE = 0.5
#: matches one iteration may hold (the corpus and the fuzzers' terms need at most about 4,000 under the
#: default node limit; this bounds a pathological input to a fraction of a second an iteration)
MATCH_LIMIT = 100_000

#: the functions the identities are about: without one, the canonical pass has done the algebra
IDENTITY_OPS = frozenset({"sin", "cos", "tan", "sinh", "cosh", "tanh", "exp", "abs", "sign", "maximum", "minimum"})
#: the functions with an identity that acts on one occurrence of its argument the canonical pass leaves
#: (``abs(x)*abs(y) -> abs(x*y)``, ``max(x + 1, x) -> x + 1``)
ONE_OCCURRENCE_OPS = frozenset({"abs", "sign", "maximum", "minimum"})
#: the op of constants (two scalar ones may fold into one: see repeats)
_CONST = get_op("const")
#: the ops whose presence lets the unsafe saturation find a cheaper form of a tree (see rules_for)
_REGROUPED_OPS = ONE_OCCURRENCE_OPS | {"neg", "log"}
#: the identity rules by (unsafe, lifted): the lifted ones only where a symbol carries assumptions
_RULES = {(u, lift): tuple(identity_rules(u, lift)) for u in (False, True) for lift in (False, True)}
#: the safe algebra's rule names: a saturation where none but these act is the canonical pass's algebra
_SAFE_ALGEBRA = frozenset(r.name for r in algebra_rules(False))


def rules_for(form: Term, unsafe: bool) -> tuple[Rule, ...]:
    """The rules that can act in an e-graph of ``form`` (:mod:`.relevance`), none for a form without a
    function the identities are about. At the safe strength also none when no identity can act but
    those the canonical pass applies itself (``identities.MIRRORED``): the safe algebra only respells
    (commutes, writes ``a - b`` as ``a + -b``), as the canonical pass does; the unsafe algebra
    regroups, which may share more (``x + (y + z)`` with ``x - (y + z)``). At the unsafe strength also none
    for a form where no node is an operand twice (a tree, constants included), with at most one scalar
    constant, without a negation, a log or a function of :data:`ONE_OCCURRENCE_OPS` (:func:`repeats`): the
    other identities the canonical pass leaves need an argument twice (``sin(u)**2 + cos(u)**2``,
    ``sin(u)/cos(u)``), and the unsafe algebra regroups to share or cancel an operand met twice
    (``sin(x + y + z) + sin(x - (z + y))``, ``y - (x + y)``), folds two constants into one
    (``0.5*(0.25*y)**2``), takes a negation into a constant (``-(sin(z) + 1/x) -> -1/x - sin(z)``) or
    writes ``exp(log(u))`` as ``u``. On the corpus of issue 30 that leaves out 98 of 159 saturations, none
    of which found a cheaper form (test_strategy.py checks the claim on random terms)."""
    ops = term_ops((form,))
    if not ops & IDENTITY_OPS or (unsafe and not ops & _REGROUPED_OPS and not repeats(form)):
        return ()
    lifted = not unsafe and has_assumptions(form.free_symbols)
    active = active_rules(_RULES[unsafe, lifted], ops)
    if unsafe:
        return active
    return active if any(r.name not in _SAFE_ALGEBRA and r.name not in MIRRORED for r in active) else ()


def repeats(form: Term) -> bool:
    """Whether a node of ``form`` is an operand twice (of two nodes, or twice of one), or two scalar
    constants occur (the unsafe algebra may fold them into one: ``0.5*(0.25*y)**2 -> 0.03125*y**2``)."""
    seen: set[Term] = set()
    constants = 0
    for node in postorder((form,)):
        for a in node.args:
            if a in seen:
                return True
            seen.add(a)
            if a.op is _CONST and not a.shape:
                constants += 1
                if constants > 1:
                    return True
    return False


def _rules_for(form: Term, run: Run) -> tuple[Rule, ...]:
    """:func:`rules_for` once per form in a call (the rounds after the first meet their form again)."""
    return run.once(("rules_for", form, run.unsafe), lambda: rules_for(form, run.unsafe))


def _saturated(term: Term, fast: Term, run: Run, rules: tuple[Rule, ...]) -> Term | None:
    """The cheapest form of the e-graph of ``fast`` (the canonical form of ``term``) if cheaper than
    ``fast`` and no larger than ``term``, else None. The e-graph starts from ``fast`` alone, so that
    a second call, which starts from the same form, finds what the first found: nothing new."""
    info = run.info
    egraph = EGraph()  # explanations apart (_log_steps): they add ids, which may break a tie of costs otherwise
    a = egraph.add(binarize(fast))
    seconds = math.inf if run.time_limit is None else TIME_SHARE * run.time_limit
    report = saturate(
        egraph,
        rules,
        iter_limit=ITER_LIMIT[run.unsafe],
        node_limit=run.node_limit,
        time_limit=seconds,
        match_limit=MATCH_LIMIT,
    )
    info.stop_reason = str(report.stop_reason)
    info.egraph_nodes = egraph.total_size()
    info.iterations += len(report.iterations)
    if not run.unsafe and not any(name not in _SAFE_ALGEBRA for it in report.iterations for name in it.applied):
        return None  # only the safe algebra acted: its forms are the canonical pass's own (see rules_for)
    found = _extracted(egraph, a)
    best = None
    for t in found:
        if t.dtype == term.dtype and t.shape == term.shape and better(t, best or fast, run) and no_larger(t, term):
            best = t
    if best is not None and run.log is not None:
        _log_steps(fast, best, run, rules, seconds)
    return best


def _log_steps(fast: Term, best: Term, run: Run, rules: tuple[Rule, ...], seconds: float) -> None:
    """Log the e-graph's proof of ``fast == best``: an e-graph with explanations saturated with the same
    rules until it proves them equal (the plain e-graph chose ``best``, so the result is the one
    ``simplify`` gives without ``explain``), within the plain run's limits, four times over."""
    assert run.log is not None
    start = binarize(fast)
    egraph = EGraph(explanations=True)
    egraph.add(start)
    nodes, limit = 4 * run.node_limit, ITER_LIMIT[run.unsafe]
    saturate(
        egraph,
        rules,
        iter_limit=limit,
        node_limit=nodes,
        time_limit=4 * seconds,
        match_limit=4 * MATCH_LIMIT,
        goals=[(start, best)],
    )
    try:
        steps = explain(egraph, start, best)
    except ValueError:
        raise ExprgraphError(
            f"simplify's explanation could not prove {fast} == {best} within its limits: "
            "pass a larger node_limit or time_limit"
        ) from None
    if start is not fast:
        run.log.append(("binary sums and products", fast, start))
    previous = start
    for step in steps:
        run.log.append((step.name if step.forward else f"{step.name} (backwards)", previous, step.term))
        previous = step.term
    if previous is not best:  # the proof reached a spelling of ``best`` with equal constants (2 for 2.0)
        run.log.append(("the same constants by value", previous, best))


def _extracted(egraph: EGraph, root: int) -> list[Term]:
    """The cheapest term of ``root``'s class by DAG size (none when extraction fails)."""
    found = egraph_extract(egraph, root, "dag_size")
    return [] if found is None else [found]


def egraph_extract(egraph: EGraph, root: int, cost: Any) -> Term | None:
    """The cheapest term of class ``root`` under ``cost``, None when extraction fails (a cycle)."""
    try:
        return extract(egraph, root, cost).term
    except ValueError:
        return None


def strategy(term: Term, run: Run) -> Term:
    """The default ``simplify``: rounds of the canonical pass and bounded saturation (see the module)."""
    info = run.info
    current = term
    for _ in range(ROUNDS):
        info.stages.append("rules")
        fast = rule_stage(current, run)
        found = None
        too_large = size(current) > MAX_INPUT_SIZE
        rules = () if too_large else _rules_for(fast, run)
        if too_large:
            info.stop_reason = "skipped: input over MAX_INPUT_SIZE"
        elif not rules:
            info.stop_reason = "skipped: no identity applies"
        elif ("nothing saturated", fast) not in run.memo:
            # (else this form's saturation found nothing cheaper in an earlier round, from a term no
            # smaller than this round's: nothing again; the stop reason stays that saturation's)
            info.stages.append("egraph")
            try:
                found = _saturated(current, fast, run, rules)
            except ExprgraphError:
                pass  # a limit of the e-graph: the canonical form stands
            if found is None:
                run.memo["nothing saturated", fast] = True
        if found is None:
            if not run.unsafe or fast is current:
                return fast
            current = fast  # the polynomial forms of that form may go further (unsafe): another round
            continue
        info.chosen = "egraph"
        current = found
    return current


def explanation(term: Term, result: Term, log: list[LogEntry]) -> Explanation:
    """The chain of rewrites from ``term`` to ``result`` made of ``log`` (each entry one rule's rewrite)."""
    out = Explanation(term)
    if result is term:
        return out
    current = term
    for name, before, after in log:
        new = after if before is current else substitute(current, {before: after})
        if new is current:
            continue
        out.steps.append(Step(new, name, None, True, _position(current, before), before, after))
        current = new
    if current is not result:
        raise ExprgraphError(f"simplify's explanation ends at {current}, not at its result {result}: please report")
    return out


def _position(term: Term, sub: Term) -> tuple[int, ...]:
    """The operand indexes of the first occurrence of ``sub`` in ``term`` (depth first; () at the root)."""
    stack: list[tuple[Term, tuple[int, ...]]] = [(term, ())]
    seen: set[Term] = set()
    while stack:
        t, at = stack.pop()
        if t is sub:
            return at
        if t in seen:
            continue
        seen.add(t)
        stack.extend((a, (*at, i)) for i, a in reversed(list(enumerate(t.args))))
    return ()


STRATEGY["saturate"] = strategy
STRATEGY["explain"] = explanation
