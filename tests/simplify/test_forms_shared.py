"""Work unsafe simplify's polynomial forms and the kept sums of the default strength no longer repeat.

A canonical pass that leaves its input as it is gives one base to the forms, not the same base twice; a
float sum under a division that the passes leave as it is is checked for -0.0 once, not twice. Both are
exact (the repeated work gave the same answers), so the results stay the same.
"""

from __future__ import annotations

import sys

from hypothesis import example, given, settings
from test_forms_gates import _terms

from exprgraph.core import parse, sin, symbols
from exprgraph.simplify import simplify

S = sys.modules["exprgraph.simplify.simplify"]


def test_a_base_left_alone_by_the_passes_is_formed_once(monkeypatch):
    calls = []
    real = S._algebraic_form

    def counted(form, base, run):
        calls.append((form, base))
        return real(form, base, run)

    monkeypatch.setattr(S, "_algebraic_form", counted)
    t = parse("(x + 3)**2")  # the passes leave it: the input is the best form, one base
    assert simplify(t, unsafe=True) is t
    assert sorted(form for form, _ in calls) == ["cancel", "expand", "factor"]


def test_a_sum_left_alone_is_checked_for_minus_zero_once(monkeypatch):
    seen = []
    real = S.never_minus_zero

    def counted(t):
        seen.append(t)
        return real(t)

    monkeypatch.setattr(S, "never_minus_zero", counted)
    a, b = symbols("a b")
    s = sin(a) + 1.5
    t = b / s  # a sum under a division, never -0.0, which the passes leave as it is
    assert simplify(t) is t
    assert seen.count(s) == 1


@settings(max_examples=200, deadline=None)
@given(_terms())
@example(parse("x**2 + 6*x + 9"))
@example(parse("(x*y + x)/(y + 1)"))
def test_unsafe_simplify_is_idempotent_on_its_forms(t):
    # one base where the passes leave the input: simplify of a result (whose passes leave it) changes nothing
    once = simplify(t, unsafe=True)
    assert simplify(once, unsafe=True) is once
