"""Explanations: why two terms are equal, as a chain of rule applications (egg's proof forest).

With ``EGraph(explanations=True)`` every node id remembers the exact node it was added as (its
*original*: head and the ids of the operands it was built from), so each id stands for one term.
Every union is recorded as an edge of a *proof forest* between the two ids it joined, labelled with
its reason: a rule (and the direction it was used in), congruence (same head, operands proved
equal), constant folding, or a user :meth:`~exprgraph.egraph.EGraph.union`.

:func:`explain` walks the forest path between the two terms' ids. A rule edge is one rewrite at
the current position; a congruence edge is explained operand by operand at the positions below.
The result is an :class:`Explanation`: a list of :class:`Step`, each a whole term that differs
from the previous one by one rule application at one position. Traversals use explicit stacks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core import Term, as_term
from ..core.leaves import const_key
from ..errors import SizeLimitError
from ..eval import evaluate
from ..match import OpPattern, Var
from ..match.patterns import _DotType
from .enode import term_from_keys

if TYPE_CHECKING:
    from .egraph import EGraph

__all__ = [
    "Why",
    "CONGRUENCE",
    "FOLD",
    "UNION",
    "ProofForest",
    "Step",
    "Explanation",
    "explain",
    "check_step",
    "match_syntactic",
    "subterm_at",
]


class Why:
    """The reason of a union: a rule (``rule`` set), congruence, constant folding or a user union."""

    __slots__ = ("kind", "rule", "name")

    def __init__(self, kind: str, rule: Any = None, name: str | None = None) -> None:
        self.kind = kind
        self.rule = rule
        self.name = name or kind

    def __repr__(self) -> str:
        return f"Why({self.name!r})"


CONGRUENCE = Why("congruence")
FOLD = Why("constant folding")
UNION = Why("union")


class ProofForest:
    """The originals of the node ids and the labelled edges of the unions between them."""

    __slots__ = ("orig", "uncanon", "up", "why", "forward", "_terms")

    def __init__(self) -> None:
        #: id -> the node it was added as: ``(head, operand ids...)``
        self.orig: list[tuple] = []
        #: original node -> its id (an exact spelling is added once)
        self.uncanon: dict[tuple, int] = {}
        #: id -> its neighbour towards the root of its proof tree (itself at the root)
        self.up: list[int] = []
        self.why: list[Why | None] = []
        #: whether the edge id -> up[id] goes in the direction its rule was applied
        self.forward: list[bool] = []
        self._terms: dict[int, Term] = {}

    def add(self, nid: int, orig: tuple) -> None:
        """Record a new id (ids come in order) and the node it was added as."""
        if nid != len(self.orig):  # pragma: no cover - the e-graph allocates ids in order
            raise AssertionError("proof forest ids out of order")
        self.orig.append(orig)
        self.uncanon.setdefault(orig, nid)
        self.up.append(nid)
        self.why.append(None)
        self.forward.append(True)

    def union(self, a: int, b: int, why: Why) -> None:
        """Record the edge ``a -- b`` (``a`` rewritten to ``b``) for a union of their classes."""
        self._reroot(a)
        self.up[a] = b
        self.why[a] = why
        self.forward[a] = True

    def _reroot(self, a: int) -> None:
        """Make ``a`` the root of its proof tree by reversing the edges on its path to the root."""
        up, why, fwd = self.up, self.why, self.forward
        x, prev, prev_why, prev_fwd = a, a, None, True
        while True:
            nxt, w, f = up[x], why[x], fwd[x]
            if prev_why is None and x == a:
                up[x], why[x], fwd[x] = x, None, True
            else:
                up[x], why[x], fwd[x] = prev, prev_why, not prev_fwd
            if nxt == x:
                return
            prev, prev_why, prev_fwd, x = x, w, f, nxt

    def path(self, a: int, b: int) -> list[tuple[int, int, Why | None, bool]]:
        """The edges ``(from, to, why, forward)`` leading from ``a`` to ``b`` in the forest."""
        up = self.up
        chain = [a]
        where = {a: 0}
        while up[chain[-1]] != chain[-1]:
            chain.append(up[chain[-1]])
            where[chain[-1]] = len(chain) - 1
        tail = [b]
        while tail[-1] not in where:
            nxt = up[tail[-1]]
            if nxt == tail[-1]:
                raise ValueError("the two ids are not in one proof tree")
            tail.append(nxt)
        meet = where[tail[-1]]
        edges = [(x, up[x], self.why[x], self.forward[x]) for x in chain[:meet]]
        for y in reversed(tail[:-1]):
            edges.append((up[y], y, self.why[y], not self.forward[y]))
        return edges

    def term(self, nid: int) -> Term:
        """The term id ``nid`` stands for (built from the originals, children first)."""
        return term_from_keys(self.orig, nid, self._terms)


@dataclass(frozen=True)
class Step:
    """One rewrite of an explanation: the whole term after it, and where and how it happened."""

    #: the whole term after this step
    term: Term
    #: the rule's name ("constant folding", "union" for the other reasons)
    name: str
    #: the rule applied (None for folding and user unions)
    rule: Any
    #: True when the rule was used left to right, False when right to left
    forward: bool
    #: operand indexes leading from the root to the rewritten subterm
    position: tuple[int, ...]
    #: the subterm before and after the rewrite
    before: Term
    after: Term

    def __str__(self) -> str:
        arrow = "" if self.forward else " (backwards)"
        at = "root" if not self.position else "operand " + ".".join(str(i) for i in self.position)
        return f"= {self.term}    [{self.name}{arrow} at {at}]"


@dataclass(frozen=True)
class Explanation:
    """A proof that ``start == end``: each step rewrites the previous term once."""

    start: Term
    steps: list[Step] = field(default_factory=list)

    @property
    def end(self) -> Term:
        """The last term (``start`` when no step is needed)."""
        return self.steps[-1].term if self.steps else self.start

    def __len__(self) -> int:
        return len(self.steps)

    def __iter__(self):
        return iter(self.steps)

    def __str__(self) -> str:
        return "\n".join([f"  {self.start}", *(f"  {s}" for s in self.steps)])


def _replace_at(term: Term, position: tuple[int, ...], new: Term) -> Term:
    """``term`` with the subterm at ``position`` replaced by ``new`` (iterative)."""
    path = [term]
    for i in position:
        path.append(path[-1].args[i])
    out = new
    for node, i in zip(reversed(path[:-1]), reversed(position), strict=True):
        args = list(node.args)
        args[i] = out
        out = Term(node.op, tuple(args), node.attr)
    return out


def subterm_at(term: Term, position: tuple[int, ...]) -> Term:
    """The subterm of ``term`` at ``position``."""
    for i in position:
        term = term.args[i]
    return term


def explain(egraph: EGraph, t1: Any, t2: Any, *, max_steps: int = 100_000) -> Explanation:
    """The chain of rule applications by which ``egraph`` proved ``t1 == t2``."""
    proof = egraph.proof
    if proof is None:
        raise ValueError("explanations need an e-graph built with EGraph(explanations=True)")
    t1, t2 = as_term(t1), as_term(t2)
    egraph.rebuild()
    a = egraph._add_term(t1)
    egraph.rebuild()
    target = egraph.spellings(t2).get(egraph.find(a))  # constants by value: 1 finds 1.0
    if target is None:
        raise ValueError(f"the e-graph has not proved {t1} == {t2}")
    b = egraph._add_term(target)
    egraph.rebuild()
    raw: list[tuple[tuple[int, ...], Why, bool, int, int]] = []
    # a task's position is linked to its parent's, (index, parent) or None at the root: copying a
    # tuple per level made a proof at depth d cost d**2
    stack: list[tuple] = [("pair", a, b, None)]
    while stack:
        task = stack.pop()
        if task[0] == "pair":
            _, x, y, pos = task
            if x != y:
                stack.extend(("edge", *e, pos) for e in reversed(proof.path(x, y)))
            continue
        _, u, v, why, fwd, pos = task
        if why is CONGRUENCE:
            ou, ov = proof.orig[u], proof.orig[v]
            stack.extend(("pair", ou[i], ov[i], (i - 1, pos)) for i in range(len(ou) - 1, 0, -1))
            continue
        raw.append((_position(pos), why, fwd, u, v))
        if len(raw) > max_steps:
            raise SizeLimitError(
                f"the explanation has more than {max_steps} steps", size=len(raw), limit=max_steps, setting="max_steps"
            )
    current = proof.term(a)
    out = Explanation(current)
    for pos, why, fwd, u, v in raw:
        before, after = proof.term(u), proof.term(v)
        current = _replace_at(current, pos, after)
        out.steps.append(Step(current, why.name, why.rule, fwd, pos, before, after))
    return out


def _position(linked: tuple | None) -> tuple[int, ...]:
    """The operand indexes from the root of a position linked as ``(index, parent)``."""
    path = []
    while linked is not None:
        path.append(linked[0])
        linked = linked[1]
    return tuple(reversed(path))


# -- replaying steps --------------------------------------------------------------------------------------


def match_syntactic(pattern: Any, term: Term) -> dict[str, Term] | None:
    """Bindings making ``pattern`` equal to ``term`` with operands in the order written (constants by value)."""
    b: dict[str, Term] = {}
    stack = [(pattern, term)]
    while stack:
        p, t = stack.pop()
        cls = p.__class__
        if cls is Var:
            found = b.get(p.name)
            if found is None:
                b[p.name] = t
            elif found is not t:
                return None
        elif cls is _DotType:
            continue
        elif cls in (bool, int, float) or (cls is Term and not p.args and p.op.name == "const"):
            value = p if cls is not Term else p.attr
            if not (t.op.name == "const" and t.attr.__class__ in (bool, int, float) and t.attr == value):
                return None
        elif cls is Term and not p.args:
            if p is not t:
                return None
        elif cls is OpPattern or cls is Term:
            attr = (
                p.attr
                if cls is Term
                else (p.attr if p.attr is None else p.op.attr_key(p.attr) if p.op.attr_key else p.attr)
            )
            if t.op is not p.op or len(t.args) != len(p.args) or t.attr != attr:
                return None
            stack.extend(zip(p.args, t.args, strict=True))
        else:
            return None
    return b


def check_step(step: Step) -> bool:
    """Whether ``step`` replays: its rule rewrites ``before`` to ``after`` (or back), or folding computes it."""
    if step.name == FOLD.name:
        src, dst = (step.before, step.after) if step.forward else (step.after, step.before)
        if dst.op.name != "const":
            return False
        try:
            value = evaluate(src)
        except Exception:
            return False
        return _same_value(value, dst.attr)
    rule = step.rule
    if rule is None:
        return False
    src, dst = (step.before, step.after) if step.forward else (step.after, step.before)
    b = match_syntactic(rule.pattern, src)
    if b is None:
        return False
    out = rule.build(b, src)
    return out is dst


def _same_value(value: Any, attr: Any) -> bool:
    """Whether an evaluated ``value`` is the constant ``attr``: a nan folds to nan (nan != nan), -0.0 is not 0.0."""
    v = np.asarray(value)
    if v.shape == () and v.dtype.kind == "f" and isinstance(attr, float):
        return const_key(float(v)) == const_key(attr)  # a float's exact bits, any nan for nan
    return bool(np.asarray(v == attr).all())
