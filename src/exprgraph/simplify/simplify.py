"""``simplify(term)``: one strategy, a canonical pass of the rule engine then bounded saturation.

The canonical pass is two passes of :func:`exprgraph.rules.rewrite` (bottom-up, memoised, to a
fixpoint): the canonical-form rules (:mod:`.canonical`), then the output-form rules
(:mod:`.output`); with ``unsafe`` also the polynomial forms (:mod:`.polynomial`, :mod:`.rational`).
The saturation stage lives a layer above (:mod:`exprgraph.egraph.strategy`, registered in
:data:`STRATEGY`). The result never has more distinct nodes than the input, constants included
(:func:`size`), nor a larger :func:`cost` (distinct nodes other than scalar constants, a node of
n > 2 operands counting as its n - 1 binary operations): else the input comes back, as SymPy's
``simplify`` returns its input when its result measures larger. A float sum never -0.0 where its
zero reaches a divisor stays never -0.0 (:func:`sign_sensitive`, :func:`never_minus_zero`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any, TypeVar

from ..core import Term, as_term, get_op, postorder, substitute
from ..core.dtypes import is_float
from ..errors import ExprgraphError, RewriteLimitError
from ..rules import RewriteProfile, RuleSet, rewrite
from .budget import DEFAULT_MAX_STEPS, SimplifyInfo, check_budget_args, deadline
from .canonical import CANONICAL_RULES, SAFE_ONLY, GuardedRule
from .forms import formed, forms_for, settled, small_integers
from .integers import simplify_integers
from .numbers import const_like, cost
from .output import OUTPUT_RULES
from .signed_zero import KeptSum, may_lose_its_zero, never_minus_zero, placeholder, same_minus_zero, sign_sensitive
from .steps import LogEntry, recording, step, with_reuses

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

T = TypeVar("T")

#: simplification methods other than the rule engine, by name: ``fn(term, *, unsafe) -> term``.
#: A layer above registers its own when imported (``exprgraph.egraph`` adds "egraph"; importing
#: exprgraph imports it).
METHODS: dict[str, Callable[..., Term]] = {}
#: the default strategy's stages from a layer above (``exprgraph.egraph`` registers them when imported):
#: "saturate" ``fn(term, run) -> term`` (the canonical pass, then bounded equality saturation) and
#: "explain" ``fn(term, result, log) -> Explanation`` (the chain of rewrites of ``simplify(explain=True)``)
STRATEGY: dict[str, Callable[..., Any]] = {}
#: e-nodes the saturation stage of the default strategy may grow to
DEFAULT_NODE_LIMIT = 3_000
#: rounds of the integer hand-off (dims' forms, then the rules) before simplify settles
_INTEGER_ROUNDS = 3
#: the largest input (by cost) that unsafe simplify also expands, factors and cancels as polynomials
_ALGEBRA_MAX_COST = 400
#: rounds of the polynomial forms, each from the best form of the last
_ALGEBRA_ROUNDS = 4
#: the polynomial forms are tried against a best form of this cost or more: one of cost 3 or less (an atom, or
#: one or two operations: ``x + 1``) that no form reshapes and whose constants are folded, a form of the input
#: beats only where the passes missed a respelling (none in 455 on the corpus; test_forms_gates.py checks it)
_ALGEBRA_MIN_COST = 4


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


def size(term: Term) -> int:
    """Distinct nodes of ``term``, constants included, the measure ``simplify`` never lets grow (cached)."""
    return term.size


def simplify(
    term: Term | float,
    *,
    unsafe: bool = False,
    profile: RewriteProfile | None = None,
    method: str = "auto",
    max_steps: int = DEFAULT_MAX_STEPS,
    time_limit: float | None = None,
    node_limit: int = DEFAULT_NODE_LIMIT,
    cost: Callable[[Term], float] | None = None,
    explain: bool = False,
    info: SimplifyInfo | None = None,
) -> Any:
    """A simplified, deterministic form of ``term`` with the same value, never larger than ``term``.

    Constants folded, like terms collected, identities removed, stable forms chosen (``log(1 + x) ->
    log1p(x)``), operands sorted; idempotent. ``method="auto"``: the canonical pass, then bounded
    saturation of its form with the algebra and the trig, hyperbolic, abs and min/max identities
    (:mod:`exprgraph.egraph.strategy`); ``"rules"``: the pass alone; ``"egraph"``: saturation alone.
    Never more distinct nodes (constants included) than ``term`` nor a larger :func:`cost`; ``cost``
    (a function of a term) chooses among the equal forms found. The default strength is *safe*:
    never less accurate at any input (nan and inf included), a zero's sign kept where a division
    reads it; ``unsafe=True`` adds rules exact for finite or non-zero values only (``x - x -> 0``)
    and the polynomial forms. Budget: ``max_steps`` rule applications per pass and ``time_limit``
    seconds (RewriteLimitError past either); saturation stops at ``node_limit`` e-nodes, at its
    iteration and match limits or at its share of ``time_limit``, its stop reason in ``info`` (a
    :class:`SimplifyInfo`); without ``time_limit`` nothing reads a clock, so the result never depends on
    load. ``explain=True`` returns an :class:`~exprgraph.egraph.Explanation`: the chain of rewrites to the
    result, each naming its rule.

    >>> from exprgraph import symbols
    >>> x, y = symbols("x y")
    >>> print(simplify(x*1 + 0 + x), simplify((x*y)/y + x*x*x), simplify((x*y)/y + x*x*x, unsafe=True))
    2*x x*(y/y) + x**3 x + x**3
    """
    term = as_term(term)
    check_budget_args(max_steps, time_limit)
    if node_limit.__class__ is bool or not isinstance(node_limit, int) or node_limit < 0:
        raise ValueError(f"node_limit must be an int >= 0, not {node_limit!r}")
    if method not in ("auto", "rules") and method not in METHODS:
        raise ValueError(f"method must be 'auto', 'rules' or one of {sorted(METHODS)}, not {method!r}")
    if method not in ("auto", "rules"):
        if explain:
            raise ValueError(f"explain=True explains method='auto' or 'rules', not {method!r}")
        out = METHODS[method](term, unsafe=unsafe)
        return out if no_larger(out, term) else term  # never larger, as the rule pass
    log: list[LogEntry] | None = [] if explain else None
    run = Run(unsafe, profile, max_steps, time_limit, node_limit, cost, info or SimplifyInfo(), log)
    out = _strategy(term, method, run)
    if explain:
        if "explain" not in STRATEGY:
            raise ValueError("simplify(explain=True) needs the e-graph layer: import exprgraph (or exprgraph.egraph)")
        return STRATEGY["explain"](term, out, log or [])
    return out


def _strategy(term: Term, method: str, run: Run) -> Term:
    """The rule pass, and with ``method="auto"`` the saturation stage; never larger than ``term``."""
    started = time.perf_counter()
    info = run.info
    info.size_before = size(term)
    strategy = STRATEGY.get("saturate") if method == "auto" else None
    core = _rules_core if strategy is None else strategy
    with deadline(run.time_limit):
        out = _protected(term, core, run)
    if size(out) > size(term) or term_cost(out) > term_cost(term):
        out = term  # never larger: the pieces were no larger each, but protection may add a zero
    if out is term:
        info.chosen = "input"
    elif info.chosen == "input":
        info.chosen = "rules"  # only the sums kept for a zero's sign changed
    info.size_after = size(out)
    info.seconds = time.perf_counter() - started
    return out


term_cost = cost


@dataclass
class Run:
    """The options of one ``simplify`` call, handed to its stages."""

    unsafe: bool
    profile: RewriteProfile | None
    max_steps: int
    time_limit: float | None
    node_limit: int
    cost: Callable[[Term], float] | None
    info: SimplifyInfo
    log: list[LogEntry] | None
    #: what the stages worked out for a term in this call, by (stage, term, ...): terms are interned and
    #: immutable, so a form met again (the algebra's forms of the input and of its canonical form often
    #: coincide; each round starts from the last's form) is not worked out again
    memo: dict[tuple, Any] = field(default_factory=dict)

    def once(self, key: tuple, make: Callable[[], T]) -> T:
        """``make()`` the first time ``key`` is asked for in this call, the same value after (None too)."""
        found = self.memo.get(key, _MISSING)
        if found is _MISSING:
            found = self.memo[key] = make()
        return found


#: what :meth:`Run.once` finds for a key not worked out yet
_MISSING: Any = object()


def better(a: Term, b: Term, run: Run) -> bool:
    """Whether ``a`` is strictly cheaper than ``b``: by ``run.cost`` if given, else by :func:`cost` (the DAG
    size, scalar constants free: ``cos(u)**2`` is no dearer than ``cos(u)*cos(u)``)."""
    if run.cost is not None:
        return run.cost(a) < run.cost(b)
    return term_cost(a) < term_cost(b)


def no_larger(a: Term, b: Term) -> bool:
    """Whether ``a`` has no more distinct nodes (constants included) than ``b``, nor a larger :func:`cost`."""
    return size(a) <= size(b) and term_cost(a) <= term_cost(b)


def rule_stage(term: Term, run: Run) -> Term:
    """The canonical pass (and, with ``unsafe``, the polynomial forms): the cheapest no larger than ``term``."""
    mark = None if run.log is None else len(run.log)
    out = passes(term, run.unsafe, run, run.log)
    if run.unsafe:
        out = _algebraic(term, out, run)
    if out is term or not no_larger(out, term) or (run.cost is not None and run.cost(out) > run.cost(term)):
        if run.log is not None:
            del run.log[mark:]  # the steps to a form not taken
        return term
    run.info.chosen = "rules" if run.info.chosen == "input" else run.info.chosen
    return out


def _rules_core(term: Term, run: Run) -> Term:
    run.info.stages.append("rules")
    return rule_stage(term, run)


def _algebraic(term: Term, best: Term, run: Run) -> Term:
    """With ``unsafe``: the input expanded, factored and cancelled as polynomials and rational
    functions over exact coefficients (:mod:`exprgraph.poly`), each put through the passes; the
    cheapest of those and ``best`` (``(x**2 - 1)/(x + 1) -> x - 1``, ``(x + 1)**2 - x**2 -> 2*x + 1``).
    Unsafe: a cancelled factor may be 0 (``x - 1`` at ``x = -1``), an expansion rounds differently."""
    if cost(term) > _ALGEBRA_MAX_COST:
        return best
    if run.cost is None and cost(best) < _ALGEBRA_MIN_COST and settled(best, _forms(best, run)):
        return best  # a form of the input beats so small a form only where the passes missed a respelling
    bases = [(b, _forms(b, run)) for b in ((term,) if best is term else (term, best)) if small_integers(b)]
    for _ in range(_ALGEBRA_ROUNDS):  # again from what improved, so that the result is a fixpoint
        found, name = _cheapest_form(bases, term, best, run)
        if found is None:
            break
        if run.log is not None:  # the form of an equal term (the input, or the best so far)
            run.log.append((f"{name} (unsafe)", best, found))
        best = found
        run.info.chosen = name
        bases = [(best, _forms(best, run))]
    return best


def _cheapest_form(bases: list[tuple[Term, tuple[str, ...]]], term: Term, best: Term, run: Run) -> tuple[Any, str]:
    """The cheapest form of ``bases`` through the passes cheaper than ``best`` and no larger than ``term``, and
    its name, or ``(None, "")``; a constant ends the search (no form is cheaper, and a constant has no forms)."""
    found, name = None, ""
    for base, forms in bases:
        for form in forms:  # those that may reshape the base
            candidate = _algebraic_form(form, base, run)
            if candidate is None:
                continue  # a budget or a limit of the polynomial algebra: that form is not tried
            if better(candidate, found or best, run) and no_larger(candidate, term) and small_integers(candidate):
                found, name = candidate, form
                if run.cost is None and cost(found) == 0:
                    return found, name
    return found, name


def _forms(term: Term, run: Run) -> tuple[str, ...]:
    """:func:`~.forms.forms_for` once per term in a call."""
    return run.once(("forms_for", term), lambda: forms_for(term))


def _algebraic_form(form: str, base: Term, run: Run) -> Term | None:
    """The form ``form`` of ``base`` (:mod:`.forms`) put through the unsafe passes, None past a limit of
    the polynomial algebra (once a call)."""

    def make() -> Term | None:
        try:
            return passes(formed(form, base, run.once), True, run)
        except (ExprgraphError, ValueError, ZeroDivisionError):
            return None

    return run.once(("form", form, base), make)


def passes(term: Term, unsafe: bool, run: Run, log: list[LogEntry] | None = None) -> Term:
    """:func:`_passes` within ``run``'s budget; without a log or a profile once per term and strength in a call."""
    if log is not None or run.profile is not None:
        return _passes(term, unsafe, run.profile, run.max_steps, run.time_limit, log)
    memos: tuple[dict[Term, Term], dict[Term, Term]] = run.once(("walks", unsafe), lambda: ({}, {}))
    return run.once(
        ("passes", term, unsafe), lambda: _passes(term, unsafe, None, run.max_steps, run.time_limit, None, memos)
    )


def _passes(
    term: Term,
    unsafe: bool,
    profile: RewriteProfile | None,
    max_steps: int,
    time_limit: float | None,
    log: list[LogEntry] | None,
    memos: tuple[dict[Term, Term], dict[Term, Term]] | None = None,
) -> Term:
    """The two passes; then, while that changes something, integer subterms in dims' canonical form
    (:mod:`.integers`) and the two passes again on what it gave (``abs(a - a) -> abs(0) -> 0``)."""
    out = _two_passes(term, unsafe, profile, max_steps, time_limit, log, memos)
    for _ in range(_INTEGER_ROUNDS):
        ints = simplify_integers(out, unsafe=unsafe, cost=cost)
        if ints is out:
            break
        if log is not None:
            log.append(("integers (exprgraph.dims)", out, ints))
        out = _two_passes(ints, unsafe, profile, max_steps, time_limit, log, memos)
    return out


def _two_passes(
    term: Term,
    unsafe: bool,
    profile: RewriteProfile | None,
    max_steps: int,
    time_limit: float | None,
    log: list[LogEntry] | None,
    memos: tuple[dict[Term, Term], dict[Term, Term]] | None = None,
) -> Term:
    """The canonical pass, then the output pass, within the budget (RewriteLimitError past it); ``memos``
    (each pass's normal forms, kept by the call; not with a log) spare the subterms met before a walk."""
    inner_rules, outer_rules = canonical_ruleset(unsafe), output_ruleset(unsafe)
    inner_memo, outer_memo = (None, None) if memos is None or log is not None else memos
    if log is not None:
        inner_rules, outer_rules = recording(inner_rules, log), recording(outer_rules, log)
    try:
        with deadline(time_limit):
            mark = None if log is None else len(log)
            inner = rewrite(term, inner_rules, max_steps=max_steps, profile=profile, memo=inner_memo)
            if log is not None:
                log[mark:] = with_reuses(term, log[mark:])
                mark = len(log)
            out = rewrite(inner, outer_rules, max_steps=max_steps, profile=profile, memo=outer_memo)
            if log is not None:
                log[mark:] = with_reuses(inner, log[mark:])
            return out
    except RewriteLimitError as e:
        if e.steps <= max_steps:
            raise  # a cycle (a bug in the rules), or the time limit: the message says which
        raise RewriteLimitError(
            f"simplify did not finish within max_steps={max_steps} rule applications in a pass "
            f"(last rule applied: {e.rule!r}): pass a larger max_steps",
            e.rule,
            e.steps,
        ) from None


# -- the sign of a zero (simplify/signed_zero.py) ---------------------------------------------------
# A float sum never -0.0 whose zero can reach a division is simplified alone and kept never -0.0.

_ADD = get_op("add")


def _protected(term: Term, core: Callable[[Term, Run], Term], run: Run) -> Term:
    """``core(term)``, except that a float sum never -0.0 where its zero reaches a divisor stays never -0.0.

    Each such sum whose simplified form may be -0.0 is simplified alone and written ``s + 0.0``
    (its +0.0 is the input's zero: exact), standing for a fresh symbol while the rest is simplified.
    A sum that may be -0.0 whose simplified form is -0.0 at other points (``x - (x - x)``, -0.0 at
    x = -0.0, and ``x + (x - x)``, never) stands for a symbol too, written back as it was. The sums
    kept inside a sum stand for their symbols while it is simplified alone, as they do for
    the rest. Not with ``unsafe``, whose rules do not keep the sign of a zero (``-(a + b) -> -a - b``).
    """
    if run.unsafe:
        return core(term, run)
    before = _kept_sums(term, run)
    out = _protected_once(term, before, core, run)
    for _ in range(_SETTLE_ROUNDS):
        # a second call takes a sum ``u + 0.0`` of the result (the rules' own, or one kept) for a kept sum,
        # and simplifies a sum kept here that no divisor reads in the result any more (``(x + 0)**y**0 ->
        # x + 0.0 -> x``: y**0 is 1.0, no power reads its zero): the form the call settles to
        kept = {} if out is term else _kept_sums(out, run)
        if out is term or not (kept or before):
            break
        again = _protected_once(out, kept, core, run)
        if again is out:
            break
        out, before = again, kept
    return out


#: rounds of ``_protected`` on its own result, while that changes it (a second call then changes nothing)
_SETTLE_ROUNDS = 2


def _protected_once(term: Term, kept: dict[Term, KeptSum], core: Callable[[Term, Run], Term], run: Run) -> Term:
    """``core(term)`` with the sums in ``kept`` standing for their symbols, then written as kept."""
    if not kept:
        return core(term, run)
    run.info.protected = len(kept)
    mark = None if run.log is None else len(run.log)
    names = {s: k.symbol for s, k in kept.items()}
    start = substitute(term, names)
    out = core(start, run)
    written = {k.symbol: k.written for k in kept.values()}
    if mark is not None:
        _log_kept_sums(term, start, kept, written, run, mark)
    return substitute(out, written)


def _kept_sums(term: Term, run: Run) -> dict[Term, KeptSum]:
    """The float sums (and abs, exp, powers: :func:`may_lose_its_zero`) of ``term`` under a division that are
    never -0.0 but their simplified forms may be, and sums maybe -0.0 whose forms are -0.0 elsewhere (kept)."""
    reach = sign_sensitive(term)
    kept: dict[Term, KeptSum] = {}
    if not reach:
        return kept  # no zero's sign reaches a divisor: nothing to keep
    names: dict[Term, Term] = {}
    written: dict[Term, Term] = {}
    for s in postorder((term,)):  # operands first: an inner sum is settled before the one using it
        if s not in reach or not may_lose_its_zero(s) or not is_float(s.dtype):
            continue
        # the sums kept inside are opaque here, as they are to the rest: a second call, which meets
        # their ``u + 0.0``, sees this sum as this call did (it never drops their +0.0: idempotent)
        inner = substitute(s, names) if names else s
        if not never_minus_zero(s):
            # a sum maybe -0.0 whose simplified form is -0.0 elsewhere stays as written: -(x - x) is
            # -0.0 at every finite x, its spread form x - x is +0.0 (x - (x - x) -> x + (x - x))
            alone = passes(inner, False, run)
            if alone is not inner and not same_minus_zero(inner, alone):
                full = substitute(inner, written) if written else inner
                names[s] = p = placeholder(full, s)
                written[p] = full
                kept[s] = KeptSum(inner, inner, inner, full, p)
            continue
        zero = const_like(0.0, s)
        if zero is None:
            continue
        # ``u + 0.0`` with ``u`` maybe -0.0 is a form this function wrote: it stays (idempotence)
        ours = inner.op.name == "add" and len(inner.args) == 2 and inner.args[1] is zero
        start = inner.args[0] if ours else inner
        alone = passes(start, False, run)
        full = substitute(alone, written) if written else alone
        if full is s or never_minus_zero(full) or not no_larger(alone, inner):  # (s is never -0.0: checked above)
            continue
        form, full = Term(_ADD, (alone, zero)), Term(_ADD, (full, zero))
        # a placeholder named after the form it stands for: a second call, which finds the same forms,
        # sorts the rest exactly as the first did (simplify is idempotent)
        names[s] = p = placeholder(full, s)
        written[p] = full
        kept[s] = KeptSum(inner, start, form, full, p)
    return kept


def _log_kept_sums(
    term: Term, start: Term, kept: dict[Term, KeptSum], written: dict[Term, Term], run: Run, mark: int
) -> None:
    """The explanation's log from ``mark`` on: each kept sum's own steps, the innermost first, each a step
    of the whole term (a sum's form may occur elsewhere too: ``x``); then the rest's steps (logged from
    ``start``, the sums standing for their symbols), each a step of the whole term over the sums as kept
    (a rewrite of ``x**1`` outside a kept sum leaves the ``x**1`` inside it alone)."""
    assert run.log is not None
    rest: list[LogEntry] = []
    at = start
    for entry in run.log[mark:]:
        new = step(at, entry)
        if new is not at:
            rest.append((entry[0], substitute(at, written), substitute(new, written)))
            at = new
    del run.log[mark:]
    current = term
    for k in kept.values():  # the innermost first: the sums inside a sum are then as kept
        at = substitute(k.inner, written)
        if k.form is k.inner or at not in postorder((current,)):  # a sum kept as written: no steps
            continue  # only inside a sum whose steps removed it
        template = substitute(current, {at: k.symbol})
        steps: list[LogEntry] = []
        _passes(k.start, False, run.profile, run.max_steps, run.time_limit, steps)
        steps.append(("keep_signed_zero: s -> s + 0.0 (s is never -0.0)", k.inner, k.form))
        form = k.inner
        for name, a, b in steps:
            new = k.form if b is k.form else b if a is form else substitute(form, {a: b})
            if new is not form:
                after = substitute(template, {k.symbol: substitute(new, written)})
                run.log.append((name, current, after))
                form, current = new, after
    run.log.extend(rest)
