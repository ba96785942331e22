"""E-matching: patterns of :mod:`exprgraph.match` compiled into searches over an e-graph.

A pattern (the left-hand side of a rule) is first normalised into a small tree of four kinds of
nodes: an *op atom* (an e-node head and its operand patterns), a variable (a class, bound once,
compared when it appears again), a leaf (a constant, matched by value, or a symbol) and nothing
else. Constants match by value as in term rewriting (``x*1`` fires on ``x*1.0``); operands match in
the order written (commutativity is a rule of its own in equality saturation).

Two machines run the same normalised pattern over the e-graph's op index (``{head: {class:
[nodes]}}``, rebuilt once per iteration):

- ``"compiled"`` (the default): the pattern becomes one Python function of nested loops, one loop
  per op atom, with the variable bindings, equality tests and leaf tests inlined in the loop that
  first sees them (the generated text holds only our own identifiers; heads and leaf classes are
  passed in as arguments, never spelled into the source);
- ``"vm"``: a small backtracking machine interprets the same atom list (egg's design, without
  code generation).

The compiled form was measured about 25% faster on egglog's micro-benchmark and level with the
machine on egg's math suite (see bench/bench_egraph.py), hence the default; both return the same
matches, which a test checks. Patterns of more than :data:`MAX_COMPILED_ATOMS` op atoms run on
the machine (Python limits nested loops).
A match is a tuple ``(root class, class of variable 0, class of variable 1, ...)``.

Both machines read the clock every :data:`~.budget.CHECK_STEPS` steps (a loop over a class's nodes
for the compiled form, a node for the machine), and stop at the deadline of the run in progress,
or once they hold the matches its iteration has left (see :mod:`.budget`); outside a run they
search to the end.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core import Term, const
from ..errors import PatternError
from ..match import OpPattern, Pattern, Var, Where
from ..match.patterns import _DotType
from .budget import CHECK_STEPS, active_budget
from .enode import CONST, head_for, head_of, op_of

if TYPE_CHECKING:
    from .egraph import EGraph

__all__ = ["EPattern", "compile_pattern", "normalize", "MACHINES", "const_candidates"]

#: the e-matching machines (see the module docstring)
MACHINES = ("compiled", "vm")
#: patterns with more op atoms than this run on the virtual machine (nested loops have a limit)
MAX_COMPILED_ATOMS = 16

_NUMBERS = (bool, int, float)


# -- normal form -------------------------------------------------------------------------------------
#
# ("op", head, arity, children) | ("var", name) | ("leaf", (term, ...), hidden name); a Where adds a test


def const_candidates(value: Any) -> tuple[Term, ...]:
    """The constant terms a pattern literal ``value`` matches: the same value as an int or a float."""
    out = []
    if value.__class__ is bool:
        return (const(value),)
    if isinstance(value, float) and value != value:
        return (const(value),)
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        out = [const(int(value)), const(value)]
    elif isinstance(value, int):
        out = [const(value)]
        if abs(value) < 2**53:
            out.append(const(float(value)))
    else:
        out = [const(value)]
    if value == 0:
        out.append(const(-0.0))
    return tuple(out)


def normalize(pattern: Any) -> tuple[Any, list[Callable[[dict], bool]], dict[str, tuple]]:
    """The normal form of ``pattern``, its Where tests and the restrictions of its variables."""
    tests: list[Callable[[dict], bool]] = []
    restrictions: dict[str, tuple] = {}
    n_anon = [0]

    def leaf_or_node(p: Any) -> Any:
        cls = p.__class__
        while cls is Where:
            tests.append(p.test)
            p = p.pattern
            cls = p.__class__
        if cls is Var:
            if p.restrictions:
                restrictions[p.name] = restrictions.get(p.name, ()) + p.restrictions
            return ("var", p.name)
        if cls is _DotType:
            n_anon[0] += 1
            return ("var", f"_{n_anon[0]}")
        if cls in _NUMBERS:
            n_anon[0] += 1
            return ("leaf", const_candidates(p), f"_{n_anon[0]}")
        if cls is Term:
            if not p.args:
                n_anon[0] += 1
                if p.op is CONST and p.attr.__class__ in _NUMBERS:
                    return ("leaf", const_candidates(p.attr), f"_{n_anon[0]}")
                return ("leaf", (p,), f"_{n_anon[0]}")
            return ["op", head_of(p), p.args]
        if cls is OpPattern:
            if isinstance(p.attr, Pattern):
                raise PatternError("e-matching needs a literal attribute, not a pattern, in " + repr(p))
            if p.has_star:
                raise PatternError(f"e-matching does not support segments or stars: {p!r}")
            return ["op", head_for(p.op, p.attr), p.args]
        if isinstance(p, Pattern):
            raise PatternError(f"e-matching supports variables, _, op patterns and literals, not {p!r}")
        raise PatternError(f"cannot use {p!r} in an e-matching pattern")

    root = leaf_or_node(pattern)
    stack = [root] if isinstance(root, list) else []
    while stack:  # expand op nodes in place, children first found by an explicit stack
        node = stack.pop()
        kids = [leaf_or_node(a) for a in node[2]]
        node[2] = kids
        stack.extend(k for k in kids if isinstance(k, list))
    return _freeze(root), tests, restrictions


def _freeze(root: Any) -> Any:
    """Lists (op nodes being built) to tuples ``("op", head, arity, children)``, iteratively."""
    if not isinstance(root, list):
        return root
    done: dict[int, tuple] = {}
    stack = [root]
    while stack:
        node = stack[-1]
        pending = [k for k in node[2] if isinstance(k, list) and id(k) not in done]
        if pending:
            stack.extend(pending)
            continue
        stack.pop()
        kids = tuple(done[id(k)] if isinstance(k, list) else k for k in node[2])
        done[id(node)] = ("op", node[1], len(kids), kids)
    return done[id(root)]


# -- the atom list shared by both machines ---------------------------------------------------------------


class _Atom:
    """One op node of the pattern: where its class comes from and what to check on its operands."""

    __slots__ = ("head", "arity", "variadic", "source", "checks")

    def __init__(self, head: Any, arity: int, variadic: bool, source: tuple[int, int] | None) -> None:
        self.head = head
        self.arity = arity
        self.variadic = variadic
        #: (atom index, operand position) whose class this atom's node must be in (None: the root)
        self.source = source
        #: per operand: ("bind", slot) | ("same", slot) | ("leaf", leaf index) | ("open",)
        self.checks: list[tuple] = []


def _is_variadic(head: Any) -> bool:
    lo, hi = op_of(head).arity
    return hi is None or lo != hi


class EPattern:
    """A pattern compiled for e-matching: ``search(egraph, limit)`` returns the list of matches."""

    def __init__(self, pattern: Any, machine: str = "compiled") -> None:
        if machine not in MACHINES:
            raise ValueError(f"machine must be one of {MACHINES}, not {machine!r}")
        self.pattern = pattern
        self.machine = machine
        self.tree, self.tests, self.restrictions = normalize(pattern)
        #: variable names in slot order (a match holds the root class, then one class per name)
        self.names: list[str] = []
        #: leaf candidates, one tuple of constant/symbol terms per leaf of the pattern
        self.leaves: list[tuple] = []
        self.atoms: list[_Atom] = []
        self.heads: list[Any] = []
        self.root_kind, self.root_arg = self._plan()
        # Python allows 20 nested blocks: a pattern of more op atoms runs on the machine instead
        if machine == "compiled" and len(self.atoms) > MAX_COMPILED_ATOMS:
            self.machine = "vm"
        self._search = self._generate() if self.machine == "compiled" else self._run_vm

    # planning: a depth-first list of atoms, each knowing its operand checks
    def _slot(self, name: str, checks: list, pos: int) -> None:
        if name in self.names:
            checks.append(("same", pos, self.names.index(name)))
        else:
            self.names.append(name)
            checks.append(("bind", pos, len(self.names) - 1))

    def _plan(self) -> tuple[str, Any]:
        tree = self.tree
        if tree[0] == "var":
            self.names.append(tree[1])
            return "var", 0
        if tree[0] == "leaf":
            self.leaves.append(tree[1])
            return "leaf", 0
        stack: list[tuple[tuple, tuple[int, int] | None]] = [(tree, None)]
        while stack:
            node, source = stack.pop()
            _, head, arity, kids = node
            atom = _Atom(head, arity, _is_variadic(head), source)
            index = len(self.atoms)
            self.atoms.append(atom)
            if head not in self.heads:
                self.heads.append(head)
            opened = []
            for pos, kid in enumerate(kids, 1):
                if kid[0] == "var":
                    self._slot(kid[1], atom.checks, pos)
                elif kid[0] == "leaf":  # checked, and bound to a hidden slot (explanations use it)
                    self.leaves.append(kid[1])
                    atom.checks.append(("leaf", pos, len(self.leaves) - 1))
                    self._slot(kid[2], atom.checks, pos)
                else:
                    opened.append((kid, (index, pos)))
            stack.extend(reversed(opened))
        return "op", 0

    # -- inputs of a search ----------------------------------------------------------------------

    def _leaf_classes(self, egraph: EGraph) -> list[frozenset] | None:
        """Per leaf, the classes holding one of its terms (None when a leaf is absent: no match)."""
        memo, find = egraph.memo, egraph.find
        out = []
        for cands in self.leaves:
            found = frozenset(find(memo[(t,)]) for t in cands if (t,) in memo)
            if not found:
                return None
            out.append(found)
        return out

    def search(self, egraph: EGraph, limit: int | None = None) -> list[tuple]:
        """Every match in the rebuilt ``egraph`` (at most ``limit``, when given).

        During a run, only those found before its deadline, and at most as many as its iteration
        may still hold (see :mod:`.budget`).
        """
        index, _leaves = egraph._index()
        out: list[tuple] = []
        if self.root_kind == "op" and any(h not in index for h in self.heads):
            return out  # an op the pattern needs has no e-node: no match (cheap rejection before any work)
        leaf_classes = self._leaf_classes(egraph)
        if leaf_classes is None:
            return out
        cap = -1 if limit is None else limit
        deadline = math.inf
        budget = active_budget()
        if budget is not None:
            deadline = budget.deadline
            if budget.matches >= 0 and (cap < 0 or budget.matches < cap):
                cap = budget.matches
        if cap != 0:
            self._search(egraph, index, leaf_classes, out, cap, deadline)
        return out

    # -- the compiled machine --------------------------------------------------------------------

    def _generate(self) -> Callable[..., None]:
        """Python source of nested loops for this pattern, compiled once."""
        n_names = len(self.names)
        lines = ["def search(egraph, index, K, out, limit, deadline):", "    EMPTY = {}", "    left = 1"]
        for i, _h in enumerate(self.heads):
            lines.append(f"    t{i} = index.get(H[{i}], EMPTY)")
        for j in range(len(self.leaves)):
            lines.append(f"    k{j} = K[{j}]")
        match = "(" + ", ".join(["c0", *[f"v{s}" for s in range(n_names)]]) + ",)"
        emit = [f"out.append({match})", "if len(out) == limit:", "    return"]
        tick = _TICK
        if self.root_kind == "var":
            body = ["for c0 in egraph.class_ids():", *("    " + ln for ln in tick), "    v0 = c0"]
            lines.extend("    " + ln for ln in body)
            lines.extend("        " + ln for ln in emit)
        elif self.root_kind == "leaf":
            lines.append("    for c0 in k0:")
            lines.extend("        " + ln for ln in [*tick, *emit])
        else:
            depth = 1
            for a, atom in enumerate(self.atoms):
                ind = "    " * depth
                t = f"t{self.heads.index(atom.head)}"
                if atom.source is None:
                    lines.append(f"{ind}for c0, ns0 in {t}.items():")
                    lines.extend(f"{ind}    {ln}" for ln in tick)
                    lines.append(f"{ind}    for n0 in ns0:")
                    depth += 2
                else:
                    src_atom, pos = atom.source
                    lines.append(f"{ind}ns{a} = {t}.get(n{src_atom}[{pos}])")
                    lines.append(f"{ind}if ns{a} is None:")
                    lines.append(f"{ind}    continue" if a > 0 else f"{ind}    return")
                    lines.extend(f"{ind}{ln}" for ln in tick)
                    lines.append(f"{ind}for n{a} in ns{a}:")
                    depth += 1
                lines.extend(_check_lines(atom, a, "    " * depth))
            ind = "    " * depth
            lines.extend(ind + ln for ln in emit)
        source = "\n".join(lines) + "\n"
        env: dict[str, Any] = {"H": tuple(self.heads), "CHECK": CHECK_STEPS, "clock": time.perf_counter}
        # the source holds only identifiers we generate; heads reach it as the tuple H, never as text
        exec(compile(source, f"<e-matcher {len(self.atoms)} atoms>", "exec"), env)
        self.source = source
        return env["search"]

    # -- the virtual machine ---------------------------------------------------------------------

    def _run_vm(self, egraph: EGraph, index: dict, leaf_classes: list, out: list, limit: int, deadline: float) -> None:
        """Backtracking over the atom list with an explicit stack of node iterators."""
        if self.root_kind != "op":
            self._vm_roots(egraph, leaf_classes, out, limit, deadline)
            return
        names = [0] * len(self.names)
        clock = time.perf_counter
        left = 1  # nodes until the clock is read
        atoms = self.atoms
        last = len(atoms) - 1
        tables = [index.get(a.head, {}) for a in atoms]
        nodes: list[tuple] = [()] * len(atoms)
        root_classes: list[int] = [0]
        iters: list[Any] = []

        def root_iter():
            for c, ns in tables[0].items():
                root_classes[0] = c
                yield from ns

        iters.append(root_iter())
        level = 0
        while level >= 0:
            node = next(iters[level], None)
            if node is None:
                iters.pop()
                level -= 1
                continue
            left -= 1
            if not left:
                left = CHECK_STEPS
                if clock() > deadline:
                    return
            if not _vm_passes(atoms[level], node, names, leaf_classes):
                continue
            nodes[level] = node
            if level == last:
                out.append((root_classes[0], *names))
                if len(out) == limit:
                    return
                continue
            nxt = atoms[level + 1]
            assert nxt.source is not None  # every atom after the first joins an earlier one
            src_atom, pos = nxt.source
            found = tables[level + 1].get(nodes[src_atom][pos])
            iters.append(iter(found if found is not None else ()))
            level += 1

    def _vm_roots(self, egraph: EGraph, leaf_classes: list, out: list, limit: int, deadline: float) -> None:
        """The machine on a pattern that is a variable (every class) or a leaf (the classes holding it)."""
        clock = time.perf_counter
        left = 1
        for c in egraph.class_ids() if self.root_kind == "var" else leaf_classes[0]:
            left -= 1
            if not left:
                left = CHECK_STEPS
                if clock() > deadline:
                    return
            out.append((c, c) if self.root_kind == "var" else (c,))
            if len(out) == limit:
                return


def _vm_passes(atom: _Atom, node: tuple, names: list[int], leaf_classes: list) -> bool:
    """Whether ``node`` passes ``atom``'s tests (its arity, then its operands), binding variables in ``names``."""
    if atom.variadic and len(node) != atom.arity + 1:
        return False
    for kind, pos, arg in atom.checks:
        if kind == "bind":
            names[arg] = node[pos]
        elif kind == "same":
            if node[pos] != names[arg]:
                return False
        elif node[pos] not in leaf_classes[arg]:
            return False
    return True


#: before each loop over a class's nodes: count it, and read the clock every CHECK loops (so the
#: work between two readings is at most CHECK loops over one class's nodes, a few milliseconds)
_TICK = ["left -= 1", "if not left:", "    left = CHECK", "    if clock() > deadline:", "        return"]


def _check_lines(atom: _Atom, a: int, ind: str) -> list[str]:
    """The tests of the node ``n{a}`` of ``atom`` (its arity when variadic, then its operands), indented."""
    lines = [f"{ind}if len(n{a}) != {atom.arity + 1}:", f"{ind}    continue"] if atom.variadic else []
    for kind, pos, arg in atom.checks:
        if kind == "bind":
            lines.append(f"{ind}v{arg} = n{a}[{pos}]")
        elif kind == "same":
            lines.append(f"{ind}if n{a}[{pos}] != v{arg}:")
            lines.append(f"{ind}    continue")
        else:
            lines.append(f"{ind}if n{a}[{pos}] not in k{arg}:")
            lines.append(f"{ind}    continue")
    return lines


def compile_pattern(pattern: Any, machine: str = "compiled") -> EPattern:
    """``pattern`` (a match pattern, a term, or a number) compiled for e-matching."""
    return EPattern(pattern, machine)
