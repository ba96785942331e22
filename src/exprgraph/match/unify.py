"""Unification interop: exprgraph terms inside logical-unification, etuples, cons and kanren.

Importing this module registers terms with those packages (their dispatchers are global):

- ``car(term)`` is the op and ``cdr(term)`` an etuple of the operands (plus a ``KwdPair`` for
  the attr of ops such as ``sum(x, axis=0)``), so ``cons(op_lv, args_lv)`` unifies with a term
  and ``etuplize(term)`` turns it into nested etuples. Leaves (symbols, constants) are atoms.
- ``unify(term, etuple(add, x, y_lv))`` unifies a term with an expression tuple; two terms unify
  when they are the same term (interned terms: structurally equal).
- ``reify(etuple(add, y_lv, y_lv), s).evaled_obj`` builds the term; :func:`to_term` does the
  same for any mix of etuples, cons pairs and ``[op, *args]`` lists, without recursion.

So kanren goals (``eq``, ``conso``, ``heado``, ``tailo``, ``mapo``...) run on terms directly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cons.core import ConsError, ConsPair, _car, _cdr, car, cdr, cons
from etuples import etuple, etuplize
from etuples.core import ExpressionTuple, KwdPair
from unification import isvar, reify, unify, var
from unification import vars as lvars
from unification.core import _unify
from unification.variable import Var as LogicVar

from ..core import Op, Term

__all__ = [
    "unify",
    "reify",
    "var",
    "lvars",
    "isvar",
    "etuple",
    "etuplize",
    "car",
    "cdr",
    "cons",
    "term_etuple",
    "to_term",
    "ConsError",
]


def term_etuple(t: Term) -> ExpressionTuple:
    """The one-level expression tuple ``e(op, *args[, KwdPair(attr)])`` of a compound term."""
    if not t.args:
        raise ConsError(f"{t} is an atom (a {t.op.name}), not a cons pair")
    if t.attr is None:
        return etuple(t.op, *t.args, evaled_obj=t)
    return etuple(t.op, *t.args, KwdPair(t.op.attr_name or "attr", t.attr), evaled_obj=t)


def _term_car(t: Term) -> Op:
    if not t.args:
        raise ConsError(f"{t} is an atom (a {t.op.name}), not a cons pair")
    return t.op


def _term_cdr(t: Term) -> ExpressionTuple:
    return term_etuple(t)[1:]


_car.add((Term,), _term_car)
_cdr.add((Term,), _term_cdr)


def _unify_term_etuple(u: Any, v: Any, s: Mapping) -> Any:
    if u.__class__ is Term:
        if not u.args:
            yield False
            return
        u = term_etuple(u)
    if v.__class__ is Term:
        if not v.args:
            yield False
            return
        v = term_etuple(v)
    yield _unify(u, v, s)


_unify.add((Term, ExpressionTuple, Mapping), _unify_term_etuple)
_unify.add((ExpressionTuple, Term, Mapping), _unify_term_etuple)


def _is_lvar(x: Any) -> bool:
    # by type only: ``isvar`` hashes its argument, which recurses through deep etuples
    return issubclass(type(x), LogicVar)


def _is_pair(x: Any) -> bool:
    # a real cons pair (``isinstance`` would also accept any non-empty sequence)
    return issubclass(type(x), ConsPair)


def _head_op(x: Any) -> Any:
    if isinstance(x, (ExpressionTuple, list, tuple)):
        return x[0] if len(x) else None
    if _is_pair(x):
        return x.car
    return None


def _parts(x: Any) -> list:
    if _is_pair(x):
        items = []
        while _is_pair(x):
            items.append(x.car)
            x = x.cdr
        if _is_lvar(x):
            raise ValueError("an unfinished cons list (its tail is a logic variable) is not a term")
        items.extend(x)
        return items
    return list(x)


def to_term(x: Any) -> Any:
    """Build terms from etuples, cons pairs and ``[op, *args]`` lists headed by an Op (iteratively).

    Anything else is returned as it is; a logic variable anywhere raises ``ValueError``.
    """
    done: dict[int, Any] = {}
    keep: list[Any] = []
    stack: list[tuple[Any, bool]] = [(x, False)]
    while stack:
        node, expanded = stack.pop()
        if id(node) in done and not expanded:
            continue
        if _is_lvar(node):
            raise ValueError(f"cannot build a term: {node!r} is an unbound logic variable")
        if node.__class__ is Term or not isinstance(_head_op(node), Op):
            done[id(node)] = node
            keep.append(node)
            continue
        parts = _parts(node)
        if not expanded:
            keep.append(node)
            stack.append((node, True))
            stack.extend((p, False) for p in parts[1:] if not isinstance(p, KwdPair))
            stack.extend((p.value, False) for p in parts[1:] if isinstance(p, KwdPair))
            continue
        op = parts[0]
        args = []
        attr = None
        for p in parts[1:]:
            if isinstance(p, KwdPair):
                attr = done[id(p.value)]
            else:
                args.append(done[id(p)])
        done[id(node)] = op(*args, attr=attr)
    return done[id(x)]
