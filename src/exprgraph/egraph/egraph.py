"""The e-graph: hashconsed e-nodes, a union-find over them, and deferred rebuilding.

Every e-node gets an integer id when it is first added; an e-class is a set of ids joined by the
union-find, named by its root id. Three tables hold the structure (egg's design, kept flat for
Python's sake):

- ``memo`` maps each canonical e-node tuple (``(head, child_class, ...)``, see :mod:`.enode`) to
  the id of the node, so an equal node is never stored twice (hashconsing);
- ``parent`` is the union-find: ``find(id)`` is the class of a node;
- ``uses[c]`` lists the ids of the nodes that have class ``c`` as an operand.

:meth:`EGraph.union` only links two classes and queues the users of the absorbed one.
:meth:`EGraph.rebuild` restores the invariants afterwards: each queued node is re-keyed under its
canonical children, and a node that now equals another one makes their classes equal too
(congruence closure), until nothing is queued. Matching and extraction read a rebuilt e-graph.

Constant folding is built in: a class whose node evaluates on constant operands (through the op
table's numpy evaluation) holds that constant, gains the constant leaf, and is *pruned*: it shows
only its leaves to e-matching and extraction, as egg's math example does. A user
:class:`~exprgraph.egraph.analysis.Analysis` (intervals, signs, ...) rides along with its own
``make``/``merge``/``modify``.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from ..core import Term, as_term, postorder
from ..core.walk import postorder_until
from .analysis import Analysis, fold_node, infer_dtype
from .enode import head_of
from .explain import CONGRUENCE, FOLD, UNION, ProofForest
from .queries import Queries

__all__ = ["EGraph"]


class EGraph(Queries):
    """An e-graph over exprgraph terms (``EGraph(); eg.add(term)``; see the module docstring).

    ``fold`` turns the built-in constant folding on (the default), ``prune`` keeps only the
    constant in a folded class, ``analysis`` adds a user analysis, ``explanations`` records why
    classes merged so that :meth:`explain` can prove an equality step by step (slower).
    """

    def __init__(
        self,
        *,
        fold: bool = True,
        prune: bool = True,
        analysis: Analysis | None = None,
        explanations: bool = False,
        fold_nonfinite: bool = False,
    ) -> None:
        self.parent: list[int] = []
        self.keys: list[tuple | None] = []
        self.memo: dict[tuple, int] = {}
        self.uses: list[list[int] | None] = []
        #: per id: its dtype, or (until asked for) the node it was created as: see :meth:`dtype`
        self.dtypes: list[Any] = []
        self.fold = fold
        self.prune = prune and fold
        self.fold_nonfinite = fold_nonfinite
        #: per id: the constant of a folded class (read at the class's root); None when unknown
        self.consts: list[Term | None] = []
        self.analysis = analysis
        #: per id: the user analysis data (read at the class's root)
        self.data: list[Any] = []
        self.pending: list[int] = []
        self.analysis_pending: list[int] = []
        self.proof: ProofForest | None = ProofForest() if explanations else None
        #: no folding, no analysis, no explanations: the fast path of :meth:`_new`
        self._plain = not fold and analysis is None and not explanations
        #: folds whose constant disagreed with one the class already held (kept the first)
        self.conflicts = 0
        self._n_classes = 0
        self._version = 0
        self._index_cache: tuple[int, dict, dict] | None = None
        self._fold_cache: dict[tuple, Term | None] = {}
        self._dtype_cache: dict[tuple, str] = {}
        self._placeholders: dict[Term, int] = {}
        #: per-version memo of root-independent extraction results (see :mod:`.extract`)
        self.extraction_cache: dict[Any, Any] = {}
        #: seconds a rebuild takes per queued node and an index build per e-node (the last large ones
        #: measured, else a guess): what :meth:`upkeep_seconds` estimates with
        self.rebuild_rate = 5e-6
        self.index_rate = 1e-6

    # -- union-find -------------------------------------------------------------------------------

    def find(self, x: int) -> int:
        """The class (root id) of node or class ``x``."""
        parent = self.parent
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:  # path compression
            nxt = parent[x]
            parent[x] = root
            x = nxt
        return root

    # -- adding ------------------------------------------------------------------------------------

    def add(self, term: Any) -> int:
        """Add ``term`` (and every subterm) and return its class id."""
        return self.find(self._add_term(as_term(term)))

    def add_many(self, terms: Iterable[Any]) -> list[int]:
        """Add several terms (sharing their common subterms); returns their class ids."""
        return [self.add(t) for t in terms]

    def _add_term(self, term: Term, bind: dict[Term, int] | None = None) -> int:
        """Add ``term``; subterms found in ``bind`` stand for those classes. Returns a node id."""
        ids: dict[Term, int] = {}
        explain = self.proof is not None
        for node in postorder((term,)) if bind is None else _postorder_bound(term, bind):
            if bind is not None:
                found = bind.get(node)
                if found is not None:
                    ids[node] = found
                    continue
            if node.args:
                children = [ids[a] for a in node.args]
                key = (head_of(node), *children)
            else:
                key = (node,)
            if explain:
                ids[node] = self._add_original(key, node.dtype)
            else:
                ids[node] = self._add_key(key, node.dtype)
        return ids[term]

    def _canonical(self, key: tuple) -> tuple:
        """``key`` with every child replaced by its class."""
        n = len(key)
        if n == 1:
            return key
        parent = self.parent
        if n == 2:
            a = key[1]
            return key if parent[a] == a else (key[0], self.find(a))
        if n == 3:
            a, b = key[1], key[2]
            if parent[a] == a and parent[b] == b:
                return key
            return (key[0], self.find(a), self.find(b))
        find = self.find
        return (key[0], *[find(c) for c in key[1:]])

    def _add_key(self, key: tuple, dtype: str | None = None) -> int:
        """Add an e-node (children need not be canonical); returns its class."""
        key = self._canonical(key)
        nid = self.memo.get(key)
        if nid is not None:
            return self.find(nid)
        return self._new(key, dtype)

    def _add_original(self, orig: tuple, dtype: str | None = None) -> int:
        """Explanation mode: add the node exactly as given and return the id standing for it."""
        proof = self.proof
        assert proof is not None
        nid = proof.uncanon.get(orig)
        if nid is not None:
            return nid
        key = self._canonical(orig)
        existing = self.memo.get(key)
        if existing is None:
            nid = self._new(key, dtype, orig)
            return nid
        # an equal node is stored already: a new id stands for this spelling, congruent to it
        nid = len(self.parent)
        root = self.find(existing)
        self.parent.append(nid)
        self.keys.append(None)
        self.uses.append([])
        self.dtypes.append(self._dtype_of(root))
        self.consts.append(None)
        if self.analysis is not None:
            self.data.append(None)
        self._n_classes += 1
        proof.add(nid, orig)
        self._union(existing, nid, CONGRUENCE)
        return nid

    def _new(self, key: tuple, dtype: str | None = None, orig: tuple | None = None) -> int:
        """Store a new canonical e-node in a class of its own; returns its id."""
        parent = self.parent
        nid = len(parent)
        parent.append(nid)
        self.keys.append(key)
        self.memo[key] = nid
        uses = self.uses
        uses.append([])
        n = len(key)
        if n == 3:
            uses[key[1]].append(nid)
            uses[key[2]].append(nid)
        elif n == 2:
            uses[key[1]].append(nid)
        elif n > 3:
            for c in key[1:]:
                uses[c].append(nid)
        # the dtype is worked out when asked for, from the node's operands as they were created
        self.dtypes.append(key if dtype is None else dtype)
        self._n_classes += 1
        self._version += 1
        if self._plain:
            self.consts.append(None)
            return nid
        if self.proof is not None:
            self.proof.add(nid, orig if orig is not None else key)
        if self.analysis is not None:
            self.data.append(self.analysis.make(self, self.enode(key)))
        if self.fold:
            k = self._fold_key(key)
            self.consts.append(k)
            if k is not None and len(key) > 1:
                self._fold_union(nid, key, k)
        else:
            self.consts.append(None)
        if self.analysis is not None:
            self.analysis.modify(self, self.find(nid))
        return nid

    def _dtype_of(self, nid: int) -> str:
        """The dtype of node ``nid``, inferred from the nodes it was created over (older ids: no cycles)."""
        dtypes = self.dtypes
        if dtypes[nid].__class__ is str:
            return dtypes[nid]
        stack = [nid]
        while stack:
            x = stack[-1]
            key = dtypes[x]
            if key.__class__ is str:
                stack.pop()
                continue
            missing = [c for c in key[1:] if dtypes[c].__class__ is not str]
            if missing:
                stack.extend(missing)
                continue
            stack.pop()
            ck = (key[0], *[dtypes[c] for c in key[1:]])
            found = self._dtype_cache.get(ck)
            if found is None:
                found = self._dtype_cache[ck] = infer_dtype(key[0], ck[1:])
            dtypes[x] = found
        return dtypes[nid]

    # -- constant folding ---------------------------------------------------------------------------

    def _fold_key(self, key: tuple) -> Term | None:
        """The constant ``key`` evaluates to, when all its operands are known constants."""
        head = key[0]
        if len(key) == 1:
            return head if head.__class__ is Term and head.op.name == "const" and not head.shape else None
        consts, find = self.consts, self.find
        args = []
        for c in key[1:]:
            k = consts[find(c)]
            if k is None:
                return None
            args.append(k)
        ck = (head, *args)
        cache = self._fold_cache
        if ck in cache:
            return cache[ck]
        out = cache[ck] = fold_node(head, tuple(args), self.fold_nonfinite)
        return out

    def _fold_union(self, nid: int, key: tuple, k: Term) -> None:
        """Join the class of ``nid`` (whose node ``key`` folds to ``k``) with the constant leaf."""
        if self.proof is None:
            leaf = self._add_key((k,), k.dtype)
            self._union(nid, leaf, FOLD)
            return
        # explanation mode: the proof goes through the node with constant operands
        leaves = [self._add_original((self.consts[self.find(c)],)) for c in key[1:]]
        lhs = self._add_original((key[0], *leaves))
        leaf = self._add_original((k,), k.dtype)
        self._union(lhs, leaf, FOLD)

    # -- union and rebuild --------------------------------------------------------------------------

    def union(self, a: int, b: int) -> bool:
        """Assert that classes ``a`` and ``b`` are equal; False when they already were. Call :meth:`rebuild` after."""
        return self._union(a, b, UNION)

    def _union(self, a: int, b: int, why: Any) -> bool:
        ra = self.find(a)
        rb = self.find(b)
        if ra == rb:
            return False
        if self.proof is not None:
            self.proof.union(a, b, why)
        uses = self.uses
        ua = uses[ra]
        ub = uses[rb]
        assert ua is not None and ub is not None  # a class root keeps its users
        if len(ua) < len(ub):  # the class with fewer users is absorbed: fewer nodes to re-key
            ra, rb, ua, ub = rb, ra, ub, ua
        self.parent[rb] = ra
        self.pending.extend(ub)
        self._n_classes -= 1
        self._version += 1
        if self.fold:
            consts = self.consts
            ka, kb = consts[ra], consts[rb]
            if ka is None:
                if kb is not None:
                    consts[ra] = kb
                    self.analysis_pending.extend(ua)
            elif kb is None:
                self.analysis_pending.extend(ub)
            elif ka is not kb:
                self.conflicts += 1
        if self.analysis is not None:
            data = self.data
            da, db = data[ra], data[rb]
            merged = self.analysis.merge(da, db)
            if not _same(merged, da):
                self.analysis_pending.extend(ua)
            if not _same(merged, db):
                self.analysis_pending.extend(ub)
            data[ra] = merged
        ua.extend(ub)
        uses[rb] = None
        if self.analysis is not None:
            self.analysis.modify(self, ra)
        return True

    def rebuild(self) -> int:
        """Restore the hashcons and congruence invariants after unions; returns the unions it made."""
        pending, apending = self.pending, self.analysis_pending
        if not pending and not apending:
            return 0
        memo, keys, parent, find = self.memo, self.keys, self.parent, self.find
        union = self._union
        n = 0
        queued = len(pending) + len(apending)
        start = time.perf_counter()
        while pending or apending:
            while pending:
                nid = pending.pop()
                key = keys[nid]
                if key is None:
                    continue
                if len(key) == 3:
                    a, b = key[1], key[2]
                    if parent[a] == a and parent[b] == b:
                        continue
                    new = (key[0], find(a), find(b))
                else:
                    new = self._canonical(key)
                    if new == key:
                        continue
                del memo[key]
                other = memo.get(new)
                if other is None:
                    memo[new] = nid
                    keys[nid] = new
                else:  # congruent to a node already stored: one node, one class
                    keys[nid] = None
                    if union(other, nid, CONGRUENCE):
                        n += 1
            while apending and not pending:
                nid = apending.pop()
                key = keys[nid]
                if key is None:
                    continue
                c = find(nid)
                if self.fold and self.consts[c] is None:
                    k = self._fold_key(key)
                    if k is not None:
                        self.consts[c] = k
                        apending.extend(self.uses[c] or ())
                        self._fold_union(nid, key, k)
                if self.analysis is not None:
                    c = find(nid)
                    made = self.analysis.make(self, self.enode(key))
                    old = self.data[c]
                    merged = self.analysis.merge(old, made)
                    if not _same(merged, old):
                        self.data[c] = merged
                        apending.extend(self.uses[c] or ())
                        self.analysis.modify(self, c)
        self._version += 1
        if queued >= _TIMED:
            self.rebuild_rate = (time.perf_counter() - start) / queued
        return n

    def upkeep_seconds(self) -> float:
        """An estimate of the seconds before searches can run: the rebuild of what is queued, then the index."""
        seconds = (len(self.pending) + len(self.analysis_pending)) * self.rebuild_rate
        cached = self._index_cache
        if cached is None or cached[0] != self._version or self.pending or self.analysis_pending:
            seconds += len(self.memo) * self.index_rate
        return seconds

    # -- queries ------------------------------------------------------------------------------------

    def number_of_classes(self) -> int:
        """How many e-classes there are."""
        return self._n_classes

    def number_of_nodes(self) -> int:
        """How many e-nodes the classes hold (after :meth:`rebuild`; pruned nodes not counted)."""
        if not self.prune:
            return len(self.memo)
        return sum(len(nodes) for table in self._index()[0].values() for nodes in table.values())

    def total_size(self) -> int:
        """Stored e-nodes, pruned ones included (cheap; what the node limit counts)."""
        return len(self.memo)

    def __len__(self) -> int:
        return self._n_classes

    def __repr__(self) -> str:
        return f"<EGraph: {self._n_classes} classes, {len(self.memo)} nodes>"

    # -- the index e-matching reads -------------------------------------------------------------------

    def _index(self) -> tuple[dict, dict]:
        """``({head: {class: [node keys]}}, {class: leaf keys})`` of the rebuilt e-graph (cached)."""
        cached = self._index_cache
        if cached is not None and cached[0] == self._version:
            return cached[1], cached[2]
        if self.pending or self.analysis_pending:
            self.rebuild()
        start = time.perf_counter()
        index: dict[Any, dict[int, list[tuple]]] = {}
        leaves: dict[int, list[tuple]] = {}
        parent, find = self.parent, self.find
        consts = self.consts if self.prune else None
        for key, nid in self.memo.items():
            c = parent[nid]
            if parent[c] != c:
                c = find(c)
            if len(key) == 1:
                lst = leaves.get(c)
                if lst is None:
                    leaves[c] = [key]
                else:
                    lst.append(key)
            elif consts is not None and consts[c] is not None:
                continue  # a folded class shows only its constant
            head = key[0]
            table = index.get(head)
            if table is None:
                index[head] = {c: [key]}
            else:
                lst = table.get(c)
                if lst is None:
                    table[c] = [key]
                else:
                    lst.append(key)
        self._index_cache = (self._version, index, leaves)
        if len(self.memo) >= _TIMED:
            self.index_rate = (time.perf_counter() - start) / len(self.memo)
        return index, leaves


#: rebuilds and index builds over at least this many nodes are timed (to estimate the next ones)
_TIMED = 1000


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception:
        return False


def _postorder_bound(term: Term, bind: dict[Term, int]) -> list[Term]:
    """Postorder of ``term`` that does not enter the subterms bound to classes."""
    out = postorder_until((term,), lambda t: t in bind)
    if term in bind:
        return [term]
    # the bound nodes themselves must be listed before their users
    extra = {a for t in out for a in t.args if a in bind}
    return [*extra, *out]
