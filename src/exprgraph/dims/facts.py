"""Dimension facts that relate names, as a DimEnv keeps them (for :mod:`.queries`).

A :class:`Facts` holds what a :class:`~.queries.DimEnv` was told beyond ranges:

- *substitutions*: an equality that can be solved for a name (coefficient 1 or -1, the name nowhere
  else) replaces that name everywhere (``batch == seq1 + seq2`` makes ``batch`` ``seq1+seq2``;
  ``d == 5`` makes ``d`` 5; ``a == b`` keeps one representative per class of equal names, as torch's
  replacements do), and ``x % k == r`` makes ``x`` ``k*(x//k) + r``;
- *relations* kept as facts ``h >= 0`` (``a >= b``, ``max(a, b) == c``...), which the queries
  combine with the ranges (see :mod:`.prove`).

:func:`add_fact` files a relation as one or the other, and raises DimContradictionError when no
value satisfies it together with what the environment knows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.term import Term
from ..core.traversal import substitute
from ..errors import DimContradictionError
from .context import Context
from .monomials import ONE
from .normal import top_term
from .prove import Hyp
from .ring import Poly, p_add_into, p_scale
from .terms import ADD, FLOORDIV, INT64_MAX, INT64_MIN, MOD, MUL, SUB, SYMBOL, dim_const, make_term

__all__ = ["Facts", "add_fact", "solve_for_name", "divisibility", "fold_back", "multiple_term"]


class Facts:
    """Substitutions of names and relations, as declared to one environment."""

    def __init__(self) -> None:
        #: name -> its replacement (in representatives only)
        self.subst: dict[Term, Term] = {}
        #: relations kept: ("ge", left, right) for left >= right, ("eq", left, right); raw terms
        self.relations: list[tuple[str, Term, Term, str]] = []
        #: (name, k, r): name == k*(name//k) + r
        self.folds: list[tuple[Term, int, int]] = []
        #: readable notes: name -> the text of the fact that replaced it
        self.notes: dict[Term, str] = {}

    def key(self) -> tuple:
        """A hashable key of these facts (part of the key of an environment's state)."""
        subst = tuple(sorted(((n.attr[0], t) for n, t in self.subst.items()), key=lambda x: x[0]))
        return (subst, tuple((r[0], r[1], r[2]) for r in self.relations))

    def copy(self) -> Facts:
        """An independent copy."""
        out = Facts()
        out.subst = dict(self.subst)
        out.relations = list(self.relations)
        out.folds = list(self.folds)
        out.notes = dict(self.notes)
        return out

    def substituted(self, term: Term) -> Term:
        """``term`` with every replaced name replaced (once: a replacement is never substituted again)."""
        subst = self.subst
        if not subst or subst.keys().isdisjoint(term.free_symbols):
            return term
        return substitute(term, subst)

    def hyps(self, poly: Callable[[Term], Poly]) -> list[Hyp]:
        """The relations as facts ``h >= 0`` with their notes (``poly``: a term's polynomial, substituted)."""
        out: list[Hyp] = []
        for op, left, right, note in self.relations:
            if op == "ne":
                continue  # (see unequal)
            h = poly(make_term(SUB, (left, right)))  # left - right >= 0 (== 0: both signs)
            out.append((h, note))
            if op == "eq":
                out.append((p_scale(h, -1), note))
        return out

    def unequal(self, poly: Callable[[Term], Poly]) -> list[Poly]:
        """The differences ``left - right`` of the relations ``left != right``."""
        return [poly(make_term(SUB, (left, right))) for op, left, right, _ in self.relations if op == "ne"]

    def replace(self, name: Term, rep: Term, note: str) -> None:
        """Replace ``name`` by ``rep`` from now on (in the replacements made before too)."""
        for k, v in list(self.subst.items()):
            if name in v.free_symbols:
                self.subst[k] = substitute(v, {name: rep})
        self.subst[name] = rep
        self.notes[name] = note


# -- solving an equality -------------------------------------------------------------------------------


def _name_key(t: Term) -> tuple[int, str]:
    name = t.attr[0]
    return (len(name), name)


def solve_for_name(d: Poly, prefer: list[Term]) -> tuple[Term, Term] | None:
    """``(name, replacement)`` with ``name == replacement`` whenever ``d == 0``, for a name with
    coefficient 1 or -1 found nowhere else in ``d`` (a name in ``prefer`` first, else the largest)."""
    counts: dict[Term, int] = {}
    buried: set[Term] = set()
    for m in d:
        for a, _ in m:
            counts[a] = counts.get(a, 0) + 1
            if a.op is not SYMBOL:
                buried.update(a.free_symbols)
    candidates: dict[Term, int] = {}
    for m, c in d.items():
        if len(m) == 1 and m[0][1] == 1 and c in (1, -1):
            a = m[0][0]
            if a.op is SYMBOL and counts[a] == 1 and a not in buried:
                candidates[a] = c
    if not candidates:
        return None
    chosen = next((n for n in prefer if n in candidates), None)
    if chosen is None:
        chosen = max(candidates, key=_name_key)
    c = candidates[chosen]
    rest = dict(d)
    del rest[((chosen, 1),)]
    # c*n + rest == 0, c = +-1:  n == -c*rest
    return chosen, top_term(p_scale(rest, -c))


def divisibility(d: Poly, ctx: Context) -> tuple[Term, int, int] | None:
    """``(name, k, r)`` when ``d == 0`` says ``name % k == r`` (``d`` is ``c*(name % k) + c0``), else None."""
    if len(d) > 2:
        return None
    atom = None
    coef = 0
    for m, c in d.items():
        if m and len(m) == 1 and m[0][1] == 1 and m[0][0].op is MOD:
            atom, coef = m[0][0], c
        elif m:
            return None
    if atom is None or atom not in ctx.atom_args:
        return None
    y, q = ctx.atom_args[atom]
    if len(q) != 1 or ONE not in q or q[ONE] <= 0 or len(y) != 1:
        return None
    ((my, cy),) = y.items()
    if cy != 1 or len(my) != 1 or my[0][1] != 1 or my[0][0].op is not SYMBOL:
        return None
    c0 = d.get(ONE, 0)
    # coef*(name % k) + c0 == 0:  name % k == -c0/coef
    if c0 % coef:
        return my[0][0], q[ONE], -1  # no integer remainder: a contradiction
    return my[0][0], q[ONE], -c0 // coef


def multiple_term(name: Term, k: int, r: int) -> Term:
    """The term ``k*(name//k) + r``."""
    t = make_term(MUL, (dim_const(k), make_term(FLOORDIV, (name, dim_const(k)))))
    return make_term(ADD, (t, dim_const(r))) if r else t


def fold_back(p: Poly, folds: list[tuple[Term, int, int]], ctx: Context) -> Poly:
    """``p`` with ``c*(name//k)`` written ``(c/k)*(name - r)`` where ``name == k*(name//k) + r`` is known."""
    out = p
    for name, k, r in folds:
        for m, c in list(out.items()):
            if len(m) != 1 or m[0][1] != 1 or m[0][0].op is not FLOORDIV or c % k:
                continue
            args = ctx.atom_args.get(m[0][0])
            if args is None or args[1] != {ONE: k} or args[0] != {((name, 1),): 1}:
                continue
            # k*(name//k) == name - r
            out = dict(out)
            del out[m]
            p_add_into(out, {((name, 1),): c // k, ONE: -(c // k) * r})
    return out


# -- declaring a fact ----------------------------------------------------------------------------------


def add_fact(env: Any, rel: tuple[str, Term, Term], note: str) -> None:
    """Keep the relation ``rel`` in ``env`` (a DimEnv): as a substitution when it solves for a name,
    else as a relation; DimContradictionError when no value satisfies it with what ``env`` knows."""
    op, left, right = rel
    if op == "ne":
        _declare_unequal(env, left, right, note)
        return
    d = env._poly(make_term(SUB, (left, right)))
    if op == "eq":
        if not d:
            return  # always true
        if len(d) == 1 and ONE in d:
            raise DimContradictionError(f"{note} never holds: its sides always differ by {d[ONE]}")
        names = sorted((t for t in (left, right) if t.op is SYMBOL), key=_name_key, reverse=True)
        solved = solve_for_name(d, names)
        if solved is not None:
            _replace(env, solved[0], solved[1], note)
            return
        div = divisibility(d, env.context)
        if div is not None:
            _declare_remainder(env, div, note)
            return
    answer = env._decide(op, left, right)
    if answer is False:
        raise DimContradictionError(f"{note} contradicts the ranges and facts declared before")
    if answer is True:
        return  # known already
    if op == "eq":
        kept = ("eq", left, right, note)
    elif op in ("ge", "gt"):
        kept = ("ge", left, right if op == "ge" else make_term(ADD, (right, dim_const(1))), note)
    else:  # left <= right is right >= left; left < right is right >= left + 1
        kept = ("ge", right, left if op == "le" else make_term(ADD, (left, dim_const(1))), note)
    facts = env._facts.copy() if env._facts is not None else Facts()
    facts.relations.append(kept)
    env._set_facts(facts)


def _declare_unequal(env: Any, left: Term, right: Term, note: str) -> None:
    """``left != right``: a name kept off the end of its range (``u != 0`` with ``u >= 0`` is ``u >= 1``),
    else a fact that the two are never equal."""
    answer = env._decide("eq", left, right)
    if answer is True:
        raise DimContradictionError(f"{note} never holds: the two sides are always equal")
    if answer is False:
        return  # known already
    solved = solve_for_name(env._poly(make_term(SUB, (left, right))), [])
    if solved is not None and solved[1].op.name == "const":
        name, value = solved[0].attr[0], int(solved[1].attr)
        lo, hi = env.range_of(name)
        if value in (lo, hi):
            # name != lo with name >= lo is name >= lo + 1 (and at the upper end alike)
            env._narrow(name, (lo + 1, hi) if value == lo else (lo, hi - 1))
            return
    facts = env._facts.copy() if env._facts is not None else Facts()
    facts.relations.append(("ne", left, right, note))
    env._set_facts(facts)


def _replace(env: Any, name: Term, rep: Term, note: str) -> None:
    """Replace ``name`` by ``rep`` in ``env``; the range of ``name`` becomes a fact on ``rep``."""
    lo, hi = env.range_of(name.attr[0])
    facts = env._facts.copy() if env._facts is not None else Facts()
    facts.replace(name, rep, note)
    env._set_facts(facts)
    for op, b in (("ge", lo), ("le", hi)):
        if type(b) is not int:
            continue  # an open end
        if not INT64_MIN <= b <= INT64_MAX:
            if (op == "ge") == (b > INT64_MAX):  # a lower end above int64 (an upper one below): no size is left
                end = f"{'>=' if op == 'ge' else '<='} {b}"
                raise DimContradictionError(f"{note} leaves {name.attr[0]} no int64 value: {end}")
            continue  # an end beyond int64 on the far side bounds nothing
        rel = (op, rep, dim_const(b))
        env._apply(rel)  # narrows the names of rep
        add_fact(env, rel, f"{name.attr[0]} {'>=' if op == 'ge' else '<='} {b}, and {note}")


def _declare_remainder(env: Any, div: tuple[Term, int, int], note: str) -> None:
    """``name % k == r``: ``name`` is ``k*(name//k) + r`` from now on, its range narrowed to such values."""
    name, k, r = div
    if not 0 <= r < k:
        raise DimContradictionError(f"{note} never holds: a remainder modulo {k} is in [0, {k - 1}]")
    lo, hi = env.range_of(name.attr[0])
    # the values of the range that are r modulo k
    new_lo = lo + (r - lo) % k if type(lo) is int else lo
    new_hi = hi - (hi - r) % k if type(hi) is int else hi
    env._narrow(name.attr[0], (new_lo, new_hi))
    facts = env._facts.copy() if env._facts is not None else Facts()
    facts.replace(name, multiple_term(name, k, r), note)
    facts.folds.append((name, k, r))
    env._set_facts(facts)
