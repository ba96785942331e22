"""The seed's miniKanren relation, shared by the rule and graph tests: matrix products distribute over sums."""

from __future__ import annotations

from etuples import etuple
from kanren import conso, eq, fact, heado, tailo
from kanren.assoccomm import assoc_flatten, associative
from kanren.core import lall
from kanren.graph import mapo

from exprgraph import add, matmul
from exprgraph.match.unify import lvars

fact(associative, add)


def dot_distributeo(in_lv, out_lv):
    """The relation A @ (a + b + ...) == A @ a + A @ b + ... (the seed's goal, on our ops)."""
    A_lv, add_term_lv, add_cdr_lv, dot_cdr_lv, add_flat_lv = lvars(5)
    return lall(
        eq(in_lv, etuple(matmul, A_lv, add_term_lv)),
        heado(add, add_term_lv),
        assoc_flatten(add_term_lv, add_flat_lv),
        tailo(add_cdr_lv, add_flat_lv),
        conso(add, dot_cdr_lv, out_lv),
        mapo(lambda a, b: conso(matmul, etuple(A_lv, a), b), add_cdr_lv, dot_cdr_lv),
    )
