"""Term normalisers applied to a graph region by region, so the graph never grows.

A term-level simplifier (``simplify``, a rule set) sees a tree: flattening ``(a + b) + c`` into
``a + b + c`` is a win on a tree, but in a graph where ``a + b`` has other users it adds a node,
since ``a + b`` must stay for them. :class:`RegionNodeRewriter` therefore applies a normaliser to
the *region* a node owns: the node and, below it, every compound node used only once (by the
region). Nodes with other users are region boundaries; the normaliser sees each as an opaque
placeholder symbol, and they are put back afterwards. A region's nodes are freed when it is
replaced, so a result with no more new nodes than the region had can only shrink the graph; a
larger one is declined.

Placeholders are named by a structural digest of the boundary node
(:func:`exprgraph.simplify.order.digest`), so a region's normal form depends on structure only:
normalising a normal graph again changes nothing, in this run or the next. Normal forms are
remembered per graph by region term, so a region met again is not normalised again.

The sign of a zero (``keep_signed_zero=True``, for the safe simplifier): ``simplify`` keeps the
sign of a zero where a division *inside its term* reads it, but a region root read by another
region is cut from its readers (``(y + 0.0) + z`` alone is ``y + z``, -0.0 at ``y = z = -0.0``,
where ``2.0/((y + 0.0) + z)`` is inf, not -inf). So a float root whose zero a division in another
region reads (followed up through sums, products, negations...: up to :data:`READER_BUDGET`
readers, past which the answer is yes), and whose region holds a sum simplify would keep never
-0.0 under a division, is normalised as the divisor of a placeholder, ``d/region``; a result
``d/u`` gives ``u`` (``(y + z) + 0.0``), any other form leaves the region as it is. Which sums and
which readers count is simplify's own table (:func:`exprgraph.simplify.simplify.sign_sensitive`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..core import Symbol, Term, get_op, substitute
from ..core.dtypes import is_float
from ..core.walk import postorder_until
from ..simplify.order import digest
from ..simplify.signed_zero import SIGNLESS_OPS, sign_sensitive, zero_reaches
from .features import Feature
from .fgraph import OUTPUT
from .interface import NodeRewriter

if TYPE_CHECKING:
    from .fgraph import FunctionGraph

__all__ = ["RegionNodeRewriter", "RegionCache"]

_TRUEDIV = get_op("truediv")
#: readers visited to decide whether a division reads a root's zero (past it: assumed to)
READER_BUDGET = 256

#: entries kept per graph before the caches are cleared
CACHE_LIMIT = 200_000


class RegionCache(Feature):
    """Per-graph memory of a :class:`RegionNodeRewriter`: placeholders and normal forms."""

    transient = True  # a cache: not pickled with the graph

    def __init__(self, owner: RegionNodeRewriter, taken: Iterable[str] = ()) -> None:
        self.owner = owner
        names = list(taken)
        prefix = "_region_"
        while any(n.startswith(prefix) for n in names):  # never the name of a graph input
            prefix = "_" + prefix
        self.prefix = prefix
        self.placeholders: dict[Term, Term] = {}
        #: region term (with placeholders) -> its normal form (the same term when already normal)
        self.normal: dict[Term, Term] = {}
        #: whether a stronger region rewriter works on this graph (decided on first use)
        self.superseded: bool | None = None
        #: region term -> its probe ``d/term`` when it holds a sum whose zero's sign simplify keeps, else None
        self.probes: dict[Term, Term | None] = {}

    def placeholder(self, t: Term) -> Term:
        """The placeholder symbol of the boundary node ``t`` (named by its structural digest)."""
        p = self.placeholders.get(t)
        if p is None:
            p = self.placeholders[t] = Symbol(f"{self.prefix}{digest(t).hex()}", t.dtype, t.shape)
        return p

    def probe(self, term: Term) -> Term | None:
        """``d/term`` (``d`` a placeholder) when ``term`` holds a float sum under a division (simplify may keep it)."""
        if term in self.probes:
            return self.probes[term]
        found = None
        if is_float(term.dtype):
            probe = Term(_TRUEDIV, (Symbol(f"{self.prefix}dividend", term.dtype), term))
            # the float sums simplify may keep where a division reads their zero's sign (exprgraph.simplify.simplify)
            for s in sign_sensitive(probe):
                if s.op.name in ("add", "sub") and is_float(s.dtype):
                    found = probe
                    break
        self.probes[term] = found
        return found

    def trim(self) -> None:
        """Forget everything when the caches grow too large."""
        if len(self.placeholders) + len(self.normal) + len(self.probes) > CACHE_LIMIT:
            self.placeholders.clear()
            self.normal.clear()
            self.probes.clear()


class RegionNodeRewriter(NodeRewriter):
    """Apply ``normalize(term) -> term`` to the region each node owns (see the module docstring).

    Only region roots are rewritten (nodes used in several places or as an output); a node with
    a single parent belongs to its parent's region. ``allow_growth=True`` accepts results with
    more new nodes than the region frees. Normal forms are remembered per graph by region term.
    ``keep_signed_zero=True`` normalises a root read by other regions as a divisor (its zero's sign kept).
    """

    def __init__(
        self,
        normalize: Callable[[Term], Term],
        name: str,
        *,
        allow_growth: bool = False,
        superseded_by: RegionNodeRewriter | None = None,
        keep_signed_zero: bool = False,
    ) -> None:
        super().__init__(name)
        self.normalize = normalize
        self.allow_growth = allow_growth
        #: a root read by other regions is normalised as a divisor (see the module docstring)
        self.keep_signed_zero = keep_signed_zero
        #: a stronger region rewriter: when it works on the same graph, this one stands aside
        self.superseded_by = superseded_by

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        """A :class:`RegionCache` for this rewriter."""
        if self.cache_of(fgraph) is None:
            fgraph.attach_feature(RegionCache(self, (t.name for t in fgraph.inputs)))

    def cache_of(self, fgraph: FunctionGraph) -> RegionCache | None:
        """This rewriter's cache on ``fgraph`` (None before ``add_requirements``)."""
        for f in fgraph._features:
            if f.__class__ is RegionCache and f.owner is self:
                return f
        return None

    def region(self, fgraph: FunctionGraph, node: Term) -> tuple[list[Term], list[Term]]:
        """The nodes of ``node``'s region (root first) and its boundary nodes (compound nodes used elsewhere)."""
        internal = [node]
        boundary: list[Term] = []
        seen: set[Term] = set()
        count = fgraph.client_count
        stack = [node]
        while stack:
            t = stack.pop()
            for a in t.args:
                if not a.args or a in seen:
                    continue
                seen.add(a)
                if count(a) == 1:
                    internal.append(a)
                    stack.append(a)
                else:
                    boundary.append(a)
        return internal, boundary

    def transform(self, fgraph: FunctionGraph, node: Term) -> Any:
        """The normalised region, when it differs and does not grow the graph."""
        sole = fgraph.single_client(node)
        if sole is not None and sole is not OUTPUT:
            return False  # not a region root: the parent's region holds this node
        cache = self.cache_of(fgraph)
        if cache is None:  # used without add_requirements: a throw-away cache
            cache = RegionCache(self, (t.name for t in fgraph.inputs))
        else:
            if cache.superseded is None:
                stronger = self.superseded_by
                cache.superseded = stronger is not None and stronger.cache_of(fgraph) is not None
            if cache.superseded:
                return False
            cache.trim()
        internal, boundary = self.region(fgraph, node)
        mapping = {b: cache.placeholder(b) for b in boundary}
        term = substitute(node, mapping) if mapping else node
        probe = self._divisor_probe(cache, fgraph, node, term) if self.keep_signed_zero else None
        out = self._normal(cache, term if probe is None else probe)
        if probe is not None:
            # d/region -> d/u: u is the region's form with its zero's sign kept; another form is declined
            ok = out.op is _TRUEDIV and out.args[0] is probe.args[0] and probe.args[0] not in out.args[1].free_symbols
            out = out.args[1] if ok else term
        if out is term:
            return False
        if mapping:
            out = substitute(out, {p: b for b, p in mapping.items()})
        if out is node:
            return False
        if not self.allow_growth and self._grows(fgraph, internal, out):
            return False
        return [out]

    def _normal(self, cache: RegionCache, term: Term) -> Term:
        """The normaliser's form of ``term`` (``term`` itself when normal or declined), remembered."""
        out = cache.normal.get(term)
        if out is None:
            out = self.normalize(term)
            if out.__class__ is not Term or out.dtype != term.dtype or out.shape != term.shape:
                out = term
            cache.normal[term] = out
            if out is not term:
                cache.normal.setdefault(out, out)
        return out

    @staticmethod
    def _divisor_probe(cache: RegionCache, fgraph: FunctionGraph, node: Term, term: Term) -> Term | None:
        """``d/term`` when a sum in ``term`` keeps its zero's sign and a division in another region reads ``node``."""
        probe = cache.probe(term)
        return probe if probe is not None and _zero_read_by_division(fgraph, node) else None

    @staticmethod
    def _grows(fgraph: FunctionGraph, internal: list[Term], out: Term) -> bool:
        live = fgraph._clients
        inside = set(internal)
        new = 0
        kept: list[Term] = []
        for t in postorder_until((out,), live.__contains__):
            if t.args:
                new += 1
            for a in t.args:
                if a in inside:
                    kept.append(a)
        if out in inside:
            kept.append(out)
        # region nodes reused by the result stay, with the region nodes below them
        stay: set[Term] = set()
        while kept:
            t = kept.pop()
            if t in stay:
                continue
            stay.add(t)
            kept.extend(a for a in t.args if a in inside)
        return new > len(inside) - len(stay)


def _zero_read_by_division(fgraph: FunctionGraph, node: Term) -> bool:
    """Whether a division in ``fgraph`` reads ``node``'s zero, through sums, products, negations...

    Readers are followed up to :data:`READER_BUDGET` nodes; past it the answer is yes (the safe one).
    """
    seen = {node}
    stack = [node]
    clients = fgraph._clients
    while stack:
        for c, i in clients.get(stack.pop()) or ():
            if c is OUTPUT:
                continue
            if zero_reaches(c, i):  # a divisor, a power's base under a negative odd or symbolic exponent, atan2
                return True
            if c in seen or c.op.name in SIGNLESS_OPS:  # abs, exp, comparisons...: the sign goes no further
                continue
            if len(seen) >= READER_BUDGET:
                return True
            seen.add(c)
            stack.append(c)
    return False
