"""The default rewrite database ``optdb`` and :func:`rewrite_graph`.

``optdb`` is a :class:`SequenceDB`:

======== ================ ============================================= ==========================
position name             what                                          tags
======== ================ ============================================= ==========================
0        ``merge1``       commutative merge                             fast_run, fast_compile, merge
1        ``canonicalize`` :class:`EquilibriumDB`: the normal form        fast_run, fast_compile
1.5      ``stabilize``    :class:`EquilibriumDB`: numerically stable    fast_run
2        ``specialize``   :class:`EquilibriumDB`: cheaper operations    fast_run
49       ``merge2``       commutative merge                             fast_run, fast_compile, merge
======== ================ ============================================= ==========================

**canonicalize** applies :func:`exprgraph.simplify.simplify` (constant folding, identities,
neg/sub/div normalisation, flattening, sorting, like-term collection, its output form) region
by region (:class:`~exprgraph.graph.region_rewrite.RegionNodeRewriter`), so the rule set is written
once and the graph never grows; a merge is its cleanup (equal terms are one already, and a
commutative merge would only fight the simplifier's operand order). A region root another region
divides by keeps the sign of its zero, as simplify keeps it inside a term (``keep_signed_zero``, see
:mod:`~exprgraph.graph.region_rewrite`). The variant that also uses
simplify's *unsafe* rules (``x*0 -> 0``, ``x - x -> 0``, ``(x*y)/y -> x``: exact only for finite
or non-zero values) carries only the tag ``unsafe``: ``include=("canonicalize", "unsafe")``.

**stabilize** turns unstable forms into stable ones (``1/(1 + exp(-x)) -> sigmoid(x)``,
``sqrt(x**2) -> abs(x)``, the exp ratio form of tanh; ``log(1 + x) -> log1p(x)``,
``log1p(exp(x)) -> softplus(x)`` and ``exp(x) - 1 -> expm1(x)`` when those ops are registered),
whatever else reads the nodes they match. **specialize** picks cheaper
operations (``x**2 -> x*x``, division by a power of two as a multiplication; ``x**0.5 ->
sqrt(x)`` is tagged unsafe: it differs at -0.0 and -inf).

The phases do not undo each other: stabilize matches canonicalize's output form, makes ops
canonicalize leaves alone and keeps its results in canonical order (the canonicalizer is part
of its equilibrium); specialize runs last.

**A second run changes nothing.** Canonicalize alone is a fixpoint, but a phase after it can
make canonicalize's next run differ: the region normaliser declines a canonical form larger than
its input (``(2.0/2.0 + (x + x))/2.0`` stays, ``0.5*(2*x + 1.0)`` is one node larger), and once
specialize has written ``/2.0`` as ``*0.5`` the same form is no larger and is taken; a region
normalised whole is left as it was when declined, so a changed neighbour can flip the operand
order of its parts. So :func:`rewrite_graph` runs the queried sequence again while a phase after
``canonicalize`` changed the graph, until a round leaves the outputs as they were (or nothing after
canonicalize changed them: its output is then canonicalize's fixpoint), at most
:data:`MAX_ROUNDS` rounds (the profile's ``stop_reason`` is ``"fixpoint"``, else
``"max_rounds"``). Each round keeps values and grows the graph no more than one run does
(canonicalize and specialize never grow it; stabilize may keep a shared node for another reader);
the region caches stay on the graph, so a round over regions already seen is cheap.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ..core import Term, const, get_op
from ..core.op import find_op
from ..errors import RewriteDatabaseError
from ..rules import Rule, rule
from ..simplify.simplify import simplify
from .db import EquilibriumDB, RewriteDatabaseQuery, SequenceDB
from .fgraph import FunctionGraph
from .merge import MergeOptimizer
from .pattern_rewriter import PatternNodeRewriter
from .profile import SequenceProfile
from .region_rewrite import RegionNodeRewriter
from .rewriters import GraphRewriter, NodeRewriter, Rewriter, node_rewriter

__all__ = [
    "optdb",
    "rewrite_graph",
    "register_canonicalize",
    "register_stabilize",
    "register_specialize",
    "canonicalize_db",
    "stabilize_db",
    "specialize_db",
    "make_optdb",
    "MAX_ROUNDS",
]

#: at most this many runs of the queried sequence in one :func:`rewrite_graph` call
MAX_ROUNDS = 6


def _normaliser(unsafe: bool) -> Any:
    """``simplify`` (with or without its unsafe rules): idempotent, so canonicalize is a fixpoint."""

    def normalise(t: Term) -> Term:
        return simplify(t, unsafe=unsafe)

    normalise.__name__ = "simplify_unsafe" if unsafe else "simplify"
    return normalise


def _rule_rewriter(name: str, text: str, *, allow_multiple_clients: bool = False, tag: str) -> PatternNodeRewriter:
    """A pattern rewriter reading the rule of ``text`` (``"x**2 -> x*x"``), tagged ``tag``."""
    found = rule(text, name=name, tag=tag)
    if not isinstance(found, Rule):  # pragma: no cover - the texts here are one-way rules
        raise TypeError(f"{text!r} is not a one-way rule")
    return PatternNodeRewriter(found, allow_multiple_clients=allow_multiple_clients)


def _register_rule(db: EquilibriumDB, rewriter: PatternNodeRewriter) -> None:
    """Register a rule's rewriter under its name: an unsafe rule carries only the tag ``unsafe``."""
    if rewriter.rule.unsafe:
        db.register(rewriter.name, rewriter, "unsafe", use_db_name_as_tag=False)
    else:
        db.register(rewriter.name, rewriter, "fast_run")


@node_rewriter(["truediv"], name="div_by_power_of_two")
def _div_by_power_of_two(fgraph: FunctionGraph, node: Term) -> Any:
    # x / c -> x * (1/c) when c is a power of two (the reciprocal is exact, so is the product)
    x, c = node.args
    if not c.is_const or c.attr.__class__ not in (int, float) or c.attr.__class__ is bool:
        return False
    v = float(c.attr)
    if v == 0 or not math.isfinite(v) or math.frexp(abs(v))[0] != 0.5:
        return False
    r = 1.0 / v
    if not math.isfinite(r):
        return False
    return [get_op("mul")(x, const(r))] if x.dtype == "float64" else False


def make_optdb() -> tuple[SequenceDB, EquilibriumDB, EquilibriumDB, EquilibriumDB]:
    """A fresh default database and its three phases (``optdb`` is one made at import)."""
    canon, stab, spec = _canonicalize_db(), _stabilize_db(), _specialize_db()
    db = SequenceDB("optdb")
    db.register(
        "merge1", MergeOptimizer(commutative=True, name="merge1"), "fast_run", "fast_compile", "merge", position=0
    )
    db.register("canonicalize", canon, "fast_run", "fast_compile", position=1)
    db.register("stabilize", stab, "fast_run", position=1.5)
    db.register("specialize", spec, "fast_run", position=2)
    db.register(
        "merge2", MergeOptimizer(commutative=True, name="merge2"), "fast_run", "fast_compile", "merge", position=49
    )
    return db, canon, stab, spec


def _canonicalize_db() -> EquilibriumDB:
    """The simplifier's rules, region by region (never grows the graph); a merge as cleanup.

    With the unsafe variant selected too, the safe one stands aside.
    """
    canon = EquilibriumDB("canonicalize")
    unsafe_regions = RegionNodeRewriter(_normaliser(True), "simplify_regions_unsafe")
    safe_regions = RegionNodeRewriter(
        _normaliser(False), "simplify_regions", superseded_by=unsafe_regions, keep_signed_zero=True
    )
    canon.register("simplify_regions_unsafe", unsafe_regions, "unsafe", use_db_name_as_tag=False)
    canon.register("simplify_regions", safe_regions, "fast_run", "fast_compile")
    canon.register(
        "merge_cleanup",
        MergeOptimizer(name="merge_cleanup"),
        "fast_run",
        "fast_compile",
        cleanup=True,
    )
    return canon


def _stabilize_db() -> EquilibriumDB:
    """Numerically stable forms of canonical expressions, put back in canonical order.

    Each rule fires whatever else reads the nodes it matches (a subterm shared with another output
    stays for that output): accuracy is worth the extra node, and a graph must not be less stable
    than each of its outputs simplified alone.
    """
    stab = EquilibriumDB("stabilize")
    stable = [
        # 1/(1 + exp(-x)) -> sigmoid(x): no overflow of exp(-x) for very negative x
        ("sigmoid_reciprocal", "1/(1 + exp(-x)) -> sigmoid(x)"),
        # exp(x)/(1 + exp(x)) -> sigmoid(x): no inf/inf for large x
        ("sigmoid_exp_ratio", "exp(x)/(1 + exp(x)) -> sigmoid(x)"),
        # (exp(x) - exp(-x))/(exp(x) + exp(-x)) -> tanh(x): no inf/inf for large |x|
        ("tanh_exp_ratio", "(exp(x) - exp(-x))/(exp(x) + exp(-x)) -> tanh(x)"),
        # sqrt(x**2) -> abs(x): x**2 overflows for |x| > 1e154
        ("abs_sqrt_square", "sqrt(x**2) -> abs(x)"),
    ]
    if find_op("log1p") is not None:
        # log(1 + x) -> log1p(x): exact for tiny x
        stable.append(("log1p", "log(1 + x) -> log1p(x)"))
        if find_op("softplus") is not None:
            # log1p(exp(x)) -> softplus(x): no overflow of exp(x) above 709
            stable.append(("softplus", "log1p(exp(x)) -> softplus(x)"))
    if find_op("expm1") is not None:
        # exp(x) - 1 -> expm1(x): exact for tiny x
        stable.append(("expm1", "exp(x) - 1 -> expm1(x)"))
    for name, text in stable:
        _register_rule(stab, _rule_rewriter(name, text, allow_multiple_clients=True, tag="stabilize"))
    # stable forms are put back in canonical order, so canonicalize has nothing to redo on them
    regions = RegionNodeRewriter(_normaliser(False), "simplify_regions", keep_signed_zero=True)
    stab.register("simplify_regions", regions, "fast_run")
    return stab


def _specialize_db() -> EquilibriumDB:
    """Cheaper operations for the same value."""
    spec = EquilibriumDB("specialize")
    _register_rule(spec, _rule_rewriter("square_to_mul", "x**2 -> x*x", tag="specialize"))  # x**2 -> x*x
    spec.register("div_by_power_of_two", _div_by_power_of_two, "fast_run")  # x/4 -> x*0.25
    # x**0.5 -> sqrt(x), not at -0.0 or -inf
    _register_rule(spec, _rule_rewriter("sqrt_from_pow_half", "x**0.5 -> sqrt(x)", tag="unsafe"))
    return spec


#: the default database (see the module docstring)
optdb, canonicalize_db, stabilize_db, specialize_db = make_optdb()


def _registrar(db: EquilibriumDB, default_tags: tuple[str, ...]) -> Any:
    def register(rewriter: Any = None, *tags: str, name: str | None = None, **kwargs: Any) -> Any:
        if isinstance(rewriter, str) or rewriter is None:  # used as @register_x("tag", ...)
            extra = () if rewriter is None else (rewriter,)

            def deco(r: Rewriter) -> Rewriter:
                return register(r, *extra, *tags, name=name, **kwargs)

            return deco
        if not isinstance(rewriter, (NodeRewriter, GraphRewriter)):
            raise RewriteDatabaseError(f"expected a node or graph rewriter, not {rewriter!r}")
        db.register(name or rewriter.name, rewriter, *default_tags, *tags, **kwargs)
        return rewriter

    register.__doc__ = f"Register a rewriter in ``{db.name}`` (tags {default_tags} added); usable as a decorator."
    return register


#: register a node rewriter in canonicalize (tags fast_run, fast_compile); also a decorator
register_canonicalize = _registrar(canonicalize_db, ("fast_run", "fast_compile"))
#: register a node rewriter in stabilize (tag fast_run); also a decorator
register_stabilize = _registrar(stabilize_db, ("fast_run",))
#: register a node rewriter in specialize (tag fast_run); also a decorator
register_specialize = _registrar(specialize_db, ("fast_run",))


def _changed_after_canonicalize(seq: Any) -> bool:
    """Whether a phase after ``canonicalize`` in one run of the sequence changed the graph."""
    children = getattr(seq, "children", ())
    after = False
    for _, p in children:
        if after and p.changed:
            return True
        after = after or p.name == "canonicalize"
    return False


def _run_to_fixpoint(rewriter: GraphRewriter, fg: FunctionGraph, prof: SequenceProfile) -> str:
    """Run ``rewriter`` on ``fg`` until a run changes nothing canonicalize would redo (see the module docstring)."""
    for i in range(MAX_ROUNDS):
        before = fg.outputs
        seq = rewriter.rewrite(fg)
        prof.children.append((i, seq))
        # a round that moved no output, or left canonicalize's fixpoint as it was, is a fixpoint
        if fg.outputs == before or not _changed_after_canonicalize(seq):
            return "fixpoint"
    return "max_rounds"


def rewrite_graph(
    graph: Term | Iterable[Term] | FunctionGraph,
    include: Iterable[str] = ("canonicalize",),
    exclude: Iterable[str] = (),
    custom_rewrite: GraphRewriter | None = None,
    *,
    require: Iterable[str] = (),
    db: SequenceDB | None = None,
    clone: bool | None = None,
    return_profile: bool = False,
) -> Any:
    """Rewrite a term (or terms, or a FunctionGraph in place) with the rewriters a query selects.

    ``include``/``exclude``/``require`` query ``db`` (default :data:`optdb`); ``custom_rewrite``
    runs afterwards. Returns a term for a term, a list for a list, the graph for a graph; with
    ``return_profile=True`` a pair ``(result, profile)``: one child per run of the sequence (it runs
    again while a phase after canonicalize changed the graph, so that a second call changes nothing;
    ``stop_reason`` says whether that fixpoint was reached), then ``custom_rewrite``'s. ``clone`` is
    accepted for PyTensor compatibility and ignored: terms are immutable, so there is nothing to clone.

    Strength: the default query (``include=("canonicalize",)``) uses the *safe* rules, the default
    strength of every rewriter in exprgraph, as :func:`~exprgraph.simplify.simplify` does; include
    ``"unsafe"`` too for the rules exact only for finite or non-zero values (``x*0 -> 0``, ...),
    the strength of ``simplify(t, unsafe=True)``.
    """
    del clone
    if isinstance(graph, FunctionGraph):
        fg, single, given = graph, False, True
    else:
        given = False
        single = graph.__class__ is Term
        fg = FunctionGraph(outputs=[graph] if single else list(graph))
    query = RewriteDatabaseQuery(include=tuple(include), require=tuple(require), exclude=tuple(exclude))
    rewriter = (db if db is not None else optdb).query(query)
    if custom_rewrite is not None and not isinstance(custom_rewrite, GraphRewriter):
        raise TypeError(f"custom_rewrite must be a graph rewriter, not {custom_rewrite!r}")
    prof = SequenceProfile("rewrite_graph", "rewrite_graph", nodes_before=fg.node_count)
    prof.stop_reason = _run_to_fixpoint(rewriter, fg, prof)
    if custom_rewrite is not None:
        prof.children.append((len(prof.children), custom_rewrite.rewrite(fg)))
    prof.nodes_after = fg.node_count
    prof.time = sum(p.time for _, p in prof.children)
    result: Any = fg if given else (fg.outputs[0] if single else fg.outputs)
    return (result, prof) if return_profile else result
