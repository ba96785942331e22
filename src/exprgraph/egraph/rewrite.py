"""Rules on e-graphs: the same :class:`~exprgraph.rules.Rule` objects, searched and applied to classes.

:class:`ERule` is a rule compiled for equality saturation (it reads the Rule, and is no rule class
of its own). Its left-hand side is compiled for e-matching (:mod:`.ematch`); its right-hand side
is instantiated once per match and its class is unioned with the matched one:

- a *template* (``"x*1 -> x"``, ``V.x * 1 >> V.x``) is compiled, like the matcher, into one Python
  function that looks each new e-node up in the hashcons (adding it only when absent);
- a *Python applier* (a handler ``fn(**bindings) -> term or None``) is called with a
  representative term per variable (see below); the term it returns is added, with the
  representatives standing for their classes.

Conditions (``where=`` strings or callables, :mod:`.conditions`, variable restrictions, ``Where``
patterns) are the term-level conditions of the rule language. They are asked at apply time about
one *representative* term per bound class: the class's constant if constant folding found one,
else a symbol the class holds, else a placeholder leaf (op ``eclass``, same dtype) standing for the class. So
``where="y != 0"`` holds for a class folded to a non-zero constant, and ``is_symbol(x)`` for a
class holding a symbol, exactly as they would on terms.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..core import Term, as_term, const
from ..errors import PatternError
from ..match import OpPattern, Pattern, Var
from ..rules import Rule, RuleSet, parse_rules, rule
from ..rules.template import literal_for
from .ematch import EPattern
from .enode import head_for, head_of
from .explain import Why

if TYPE_CHECKING:
    from .egraph import EGraph

__all__ = ["ERule", "as_rules", "compile_rules"]


def _rhs_tree(source: Any, names: list[str]) -> Any:
    """The right-hand side in normal form: ("var", slot) | ("leaf", term) | ("op", head, kids) | ("lit", value)."""
    if source.__class__ in (bool, int, float):
        return ("lit", source)
    out: dict[int, Any] = {}
    stack: list[tuple[Any, bool]] = [(source, False)]
    while stack:
        node, expanded = stack.pop()
        cls = node.__class__
        if cls is Var:
            if node.name not in names:
                raise PatternError(f"{node.name!r} on the right-hand side is not bound by the left-hand side")
            out[id(node)] = ("var", names.index(node.name))
        elif cls in (bool, int, float):
            out[id(node)] = ("leaf", const(node))
        elif cls is Term and not node.args:
            out[id(node)] = ("leaf", node)
        elif cls is Term or cls is OpPattern:
            if cls is OpPattern and isinstance(node.attr, Pattern):
                raise PatternError("an attribute on the right-hand side of an e-graph rule must be a value")
            if expanded:
                head = head_of(node) if cls is Term else head_for(node.op, node.attr)
                out[id(node)] = ("op", head, tuple(out[id(a)] for a in node.args))
            else:
                stack.append((node, True))
                stack.extend((a, False) for a in node.args if id(a) not in out)
        else:
            raise PatternError(f"cannot use {node!r} on the right-hand side of an e-graph rule")
    return out[id(source)]


class ERule:
    """A :class:`~exprgraph.rules.Rule` compiled for equality saturation (see the module docstring).

    Not another kind of rule: the e-graph's compiled form of the one rule class, as
    :class:`~exprgraph.match.compile.CompiledPattern` is the matcher's. ``rule`` is the Rule read.
    """

    def __init__(self, rule: Rule, machine: str = "compiled") -> None:
        if not isinstance(rule, Rule):
            raise TypeError(f"ERule takes a Rule, not {type(rule).__name__}")
        if rule.pattern is None:
            raise TypeError(f"an e-graph rule needs a pattern; {rule.name!r} is a function of the whole term")
        self.rule = rule
        self.name: str = rule.name
        self.why = Why("rule", rule, rule.name)
        self.lhs = EPattern(rule.pattern, machine)
        #: the heads an e-node must have for the rule to match (None: a pattern rooted at a variable or a
        #: leaf); the runner skips the rule in an iteration whose e-graph lacks one of them
        self.heads: frozenset | None = frozenset(self.lhs.heads) if self.lhs.root_kind == "op" else None
        names = self.lhs.names
        #: user variable names (anonymous slots of ``_`` and leaves are left out of bindings)
        self.user = [(i, n) for i, n in enumerate(names) if not n.startswith("_")]
        #: the rule's own condition on the bindings (its ``where``, parsed once by the Rule)
        self.where: Callable[[dict], bool] | None = rule.condition
        self.tests = self.lhs.tests
        self.restrictions = self.lhs.restrictions
        self.conditional = self.where is not None or bool(self.tests) or bool(self.restrictions)
        self.handler = rule.handler
        self.rhs = None if rule.template is None else _rhs_tree(rule.template.source, names)
        self._fast = None if self.rhs is None else _generate_apply(self.rhs, len(names))

    def __repr__(self) -> str:
        return f"ERule({self.name!r})"

    # -- search ----------------------------------------------------------------------------------

    def search(self, egraph: EGraph, limit: int | None = None) -> list[tuple]:
        """The matches of the left-hand side in the rebuilt e-graph."""
        return self.lhs.search(egraph, limit)

    # -- conditions ------------------------------------------------------------------------------

    def bindings(self, egraph: EGraph, match: tuple) -> dict[str, Term]:
        """The representative term of each variable's class (what conditions and appliers see)."""
        rep = egraph.representative
        return {n: rep(match[i + 1]) for i, n in self.user}

    def holds(self, egraph: EGraph, match: tuple) -> bool:
        """Whether the rule's conditions hold for this match."""
        b = self.bindings(egraph, match)
        for name, fns in self.restrictions.items():
            for fn in fns:
                if not fn(b[name]):
                    return False
        for test in self.tests:
            if not test(b):
                return False
        return self.where is None or bool(self.where(b))

    # -- apply -----------------------------------------------------------------------------------

    def apply(self, egraph: EGraph, matches: list[tuple]) -> int:
        """Add each match's right-hand side and union it with the matched class; returns the unions made."""
        if not matches:
            return 0
        if self.conditional:
            holds = self.holds
            matches = [m for m in matches if holds(egraph, m)]
        if egraph.proof is not None:
            return self._apply_explained(egraph, matches)
        if self._fast is not None:
            leaves = [egraph._add_key((t,), t.dtype) for t in _rhs_leaves(self.rhs)]
            return self._fast(egraph, matches, self.why, leaves, self._root_literal)
        return self._apply_handler(egraph, matches)

    def _root_literal(self, egraph: EGraph, c: int) -> int:
        rhs = self.rhs
        assert rhs is not None  # only a literal right-hand side calls this
        k = literal_for(rhs[1], egraph.dtype(c))
        return egraph._add_key((k,), k.dtype)

    def _apply_handler(self, egraph: EGraph, matches: list[tuple], explained: bool = False) -> int:
        n = 0
        handler = self.handler
        assert handler is not None  # a rule without a template has a handler
        for m in matches:
            b = self.bindings(egraph, m)
            out = handler(**b)
            if out is None:
                continue
            rid = egraph._add_term(as_term(out), egraph.bind_of(b.values()))
            lhs = self._instantiate(egraph, self.lhs.tree, m) if explained else m[0]
            if egraph._union(lhs, rid, self.why):
                n += 1
        return n

    def _apply_explained(self, egraph: EGraph, matches: list[tuple]) -> int:
        if self.rhs is None:
            return self._apply_handler(egraph, matches, explained=True)
        n = 0
        for m in matches:
            lhs = self._instantiate(egraph, self.lhs.tree, m)
            rhs = self._instantiate(egraph, self.rhs, m, root=m[0])
            if egraph._union(lhs, rhs, self.why):
                n += 1
        return n

    def _instantiate(self, egraph: EGraph, tree: Any, m: tuple, root: int | None = None) -> int:
        """Explanation mode: add the pattern filled in with the match, exactly as spelled; returns its id."""
        names = self.lhs.names
        if tree[0] == "lit":
            k = literal_for(tree[1], egraph.dtype(m[0] if root is None else root))
            return egraph._add_original((k,), k.dtype)
        done: dict[int, int] = {}
        stack: list[tuple[Any, bool]] = [(tree, False)]
        while stack:
            node, expanded = stack.pop()
            kind = node[0]
            if kind == "var":
                slot = node[1] if isinstance(node[1], int) else names.index(node[1])
                done[id(node)] = m[slot + 1]
            elif kind == "leaf":
                if len(node) == 2:  # a right-hand side literal
                    cls = None
                else:  # a left-hand side leaf: bound to a hidden slot, or the root class itself
                    cls = m[names.index(node[2]) + 1] if node[2] in names else m[0]
                done[id(node)] = egraph._add_original((_pick_leaf(egraph, node[1], cls),))
            elif expanded:
                kids = node[3] if len(node) == 4 else node[2]
                done[id(node)] = egraph._add_original((node[1], *[done[id(k)] for k in kids]))
            else:
                stack.append((node, True))
                kids = node[3] if len(node) == 4 else node[2]
                stack.extend((k, False) for k in kids)
        return done[id(tree)]


def _pick_leaf(egraph: EGraph, leaf: Any, cls: int | None) -> Term:
    """The term of a leaf (a right-hand side literal, or the left-hand side candidate in class ``cls``)."""
    if leaf.__class__ is Term:
        return leaf
    memo, find = egraph.memo, egraph.find
    for t in leaf:
        nid = memo.get((t,))
        if nid is not None and (cls is None or find(nid) == find(cls)):
            return t
    return leaf[0]


def _rhs_leaves(tree: Any) -> list[Term]:
    """The leaf terms of a right-hand side, in the order the generated applier numbers them."""
    out: list[Term] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if node[0] == "leaf":
            if node[1] not in out:
                out.append(node[1])
        elif node[0] == "op":
            stack.extend(reversed(node[2]))
    return out


def _rhs_code(tree: Any, leaves: list[Term]) -> tuple[list[str], list[Any], str]:
    """Lines adding the right-hand side's nodes bottom-up, the heads they use, and the result's name."""
    if tree[0] == "var":
        return [], [], f"v{tree[1]}"
    if tree[0] == "lit":
        return [], [], "rootlit(egraph, c0)"
    if tree[0] == "leaf":
        return [], [], f"L[{leaves.index(tree[1])}]"
    heads: list[Any] = []
    body: list[str] = []
    refs: dict[int, str] = {}
    stack: list[tuple[Any, bool]] = [(tree, False)]
    while stack:
        node, expanded = stack.pop()
        if node[0] == "var":
            refs[id(node)] = f"v{node[1]}"
        elif node[0] == "leaf":
            refs[id(node)] = f"L[{leaves.index(node[1])}]"
        elif expanded:
            if node[1] not in heads:
                heads.append(node[1])
            i = len(refs) + 1
            # operands by their current class (an earlier union may have merged one away)
            kids = ", ".join(f"({x} if parent[{x}] == {x} else find({x}))" for x in (refs[id(k)] for k in node[2]))
            body.append(f"k{i} = (H[{heads.index(node[1])}], {kids})")
            body.append(f"i{i} = memo.get(k{i})")
            body.append(f"if i{i} is None:")
            body.append(f"    i{i} = new(k{i})")
            refs[id(node)] = f"i{i}"
        else:
            stack.append((node, True))
            stack.extend((k, False) for k in reversed(node[2]))
    return body, heads, refs[id(tree)]


def _generate_apply(tree: Any, n_names: int) -> Callable[..., int]:
    """One Python function instantiating the right-hand side for each match (our own text only)."""
    body, heads, result = _rhs_code(tree, _rhs_leaves(tree))
    lines = [
        "def apply(egraph, matches, why, L, rootlit):",
        "    parent = egraph.parent",
        "    memo = egraph.memo",
        "    find = egraph.find",
        "    new = egraph._new",
        "    union = egraph._union",
        "    n = 0",
        "    for m in matches:",
        "        " + ", ".join(["c0", *[f"v{s}" for s in range(n_names)]]) + ", = m",
        *("        " + ln for ln in body),
        # most matches find their right-hand side in the matched class already: test before union
        f"        r = {result}",
        "        a = c0",
        "        while parent[a] != a:",
        "            a = parent[a]",
        "        while parent[r] != r:",
        "            r = parent[r]",
        "        if a != r and union(a, r, why):",
        "            n += 1",
        "    return n",
    ]
    source = "\n".join(lines) + "\n"
    env: dict[str, Any] = {"H": tuple(heads)}
    # the source holds only identifiers we generate; heads reach it as the tuple H, never as text
    exec(compile(source, "<e-graph applier>", "exec"), env)
    fn = env["apply"]
    fn.source = source
    return fn


# -- rule collections ----------------------------------------------------------------------------------


def as_rules(rules: Any) -> list[Rule]:
    """A flat list of Rule objects from rules, rule strings, rule files' text, tuples and rule sets."""
    out: list[Rule] = []
    stack = [rules]
    while stack:
        item = stack.pop()
        if isinstance(item, Rule):
            out.append(item)
        elif isinstance(item, ERule):
            out.append(item.rule)
        elif isinstance(item, str):
            parsed = parse_rules(item) if "\n" in item.strip() else rule(item)
            stack.append(parsed)
        elif isinstance(item, (RuleSet, list, tuple)) or _iterable(item):
            stack.extend(reversed(list(item)))
        else:
            raise TypeError(f"expected rules (Rule, rule text, or lists of them), not {item!r}")
    return out


def _iterable(x: Any) -> bool:
    return isinstance(x, Iterable) and not isinstance(x, (str, bytes, Term))


_CACHE: dict[tuple[int, str], tuple[Rule, ERule]] = {}
_CACHE_SIZE = 4096


def compile_rules(rules: Any, machine: str = "compiled") -> list[ERule]:
    """Each rule compiled for e-matching (compiled forms are cached per rule object)."""
    out = []
    for r in as_rules(rules):
        key = (id(r), machine)
        found = _CACHE.get(key)
        if found is None or found[0] is not r:
            if len(_CACHE) >= _CACHE_SIZE:
                _CACHE.clear()
            found = _CACHE[key] = (r, ERule(r, machine))
        out.append(found[1])
    return out
