"""The gates of unsafe simplify's polynomial forms, and the exact shortcuts of the polynomial algebra.

``forms_for`` leaves out a form only where it cannot reshape a term: checked on random terms (the form
left out, put through the unsafe passes, is never cheaper than the passes of the term itself) and on
textbook cases. Quadratics are split by their discriminant, linear factors kept whole, atoms ordered by
a cached key: each checked against the general algorithm's answer or sympy's.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from exprgraph.core import const, exp, maximum, parse, sin, symbols
from exprgraph.poly import p_factor, to_poly
from exprgraph.poly.dense import d_mul
from exprgraph.poly.factor_univariate import d_factor, factor_squarefree
from exprgraph.poly.gcd import atom_order
from exprgraph.simplify import cost
from exprgraph.simplify.budget import SimplifyInfo
from exprgraph.simplify.forms import FORMS, formed, forms_for, settled, small_integers
from exprgraph.simplify.simplify import _ALGEBRA_MIN_COST, DEFAULT_MAX_STEPS, Run, _passes, simplify

x, y = symbols("x y")
LEAVES = [x, y, const(1), const(2), const(-3)]
#: leaves with exact roots and float constants (the passes may leave a root unfolded: sqrt(3))
ROOT_LEAVES = [x, y, parse("sqrt(2)"), parse("sqrt(3)"), const(1.0), const(2.0), const(-3.0)]


def _terms(leaves=LEAVES):
    """Random terms of sums, products, quotients, small powers, negations and a few functions."""

    def extend(children):
        pair = st.tuples(children, children)
        return st.one_of(
            pair.map(lambda p: p[0] + p[1]),
            pair.map(lambda p: p[0] - p[1]),
            pair.map(lambda p: p[0] * p[1]),
            pair.map(lambda p: p[0] / p[1]),
            children.map(lambda c: -c),
            children.map(lambda c: c**2),
            children.map(lambda c: c**-1),
            children.map(sin),
            children.map(exp),
            pair.map(lambda p: maximum(p[0], p[1])),
        )

    return st.recursive(st.sampled_from(leaves), extend, max_leaves=10)


@pytest.mark.parametrize(
    ("text", "forms"),
    [
        ("max(x + 1, x)", ()),  # a sum of atoms inside an atom
        ("2*sin(x)*cos(x)", ()),  # a product of distinct atoms
        ("exp(x)/exp(y)", ()),  # a quotient of distinct atoms
        ("sin(x)**2 + cos(x)**2", ("factor",)),  # a sum of monomials: expanded already, no quotient
        ("x**2/y + y", ("factor", "cancel")),  # a quotient: cancel writes one fraction
        ("x**2 - 1", ("factor",)),
        ("(x + 1)**2 - x**2", FORMS),  # a power of a sum
        ("(x*y)**2/x**2", FORMS),  # a power of a product, an atom above and below
        ("x*y/x", FORMS),
        ("(x + 1)/2", FORMS),  # a quotient of a sum
        ("sin((x + 1)*(x - 1))", FORMS),  # inside an atom too
        ("-(x + 1)*y", FORMS),  # a negation
        ("sin(-(x*2))", FORMS),
    ],
)
def test_forms_for_textbook_cases(text, forms):
    assert forms_for(parse(text)) == forms


@settings(max_examples=300, deadline=None)
@given(_terms())
def test_a_form_left_out_is_never_cheaper(t):
    # the claim behind the gate: a form forms_for leaves out, put through the unsafe passes, is no
    # cheaper than the unsafe passes of the term itself (so skipping it loses nothing)
    kept = forms_for(t)
    alone = _unsafe_passes(t)
    for name in FORMS:
        if name in kept:
            continue
        try:
            form = formed(name, t)
        except (ArithmeticError, ValueError):
            continue
        assert cost(_unsafe_passes(form)) >= cost(alone), (name, str(t), str(form))


@settings(max_examples=300, deadline=None)
@given(_terms())
def test_no_form_beats_a_passes_result_below_the_cost_gate(t):
    # the claim behind _ALGEBRA_MIN_COST: where the unsafe passes reach a form of cost 3 or less that no form
    # reshapes, its constants folded (``(-1)**-1`` of integers stays: numpy raises on it), no form of
    # the term or of that result, put through the passes, is cheaper (so unsafe simplify skips the forms)
    _no_form_beats_a_settled_result(t)


@settings(max_examples=300, deadline=None)
@given(_terms(ROOT_LEAVES))
# an exact root the passes leave (sqrt(3)) is settled: the forms read it as an atom
@example(parse("1/(2 + sqrt(3))"))
@example(parse("sqrt(2)/(sqrt(2) + sqrt(6))"))
def test_no_form_beats_a_settled_passes_result_with_exact_roots(t):
    # the same claim where the passes leave exact roots (sqrt(3), an operation on constants alone that no
    # fold simplifies, settled all the same), over float constants
    _no_form_beats_a_settled_result(t)


def _no_form_beats_a_settled_result(t):
    alone = _unsafe_passes(t)
    if cost(alone) >= _ALGEBRA_MIN_COST or not settled(alone):
        return
    for base in (t, alone):
        for name in FORMS:
            try:
                done = _unsafe_passes(formed(name, base))
            except (ArithmeticError, ValueError):
                continue
            # (a form folded to a float that is not an integer is refused, as simplify refuses it)
            assert cost(done) >= cost(alone) or not small_integers(done), (name, str(t), str(alone), str(done))


def test_run_once_works_each_key_out_once():
    run = Run(True, None, DEFAULT_MAX_STEPS, None, 0, None, SimplifyInfo(), None)
    calls = []
    t = parse("(x + 1)**2 - x**2")

    def make():
        calls.append(t)
        return forms_for(t)

    assert run.once(("forms_for", t), make) == run.once(("forms_for", t), make) == FORMS
    assert run.once(("none", t), lambda: calls.append(None)) is None  # a None is kept too
    assert run.once(("none", t), lambda: calls.append(None)) is None
    assert calls == [t, None]
    # the rational function of a term is read once a call, by factor and cancel alike
    seen = []

    def once(key, make):
        seen.append(key[0])
        return run.once(key, make)

    assert formed("factor", t, once) is formed("factor", t, once)
    formed("cancel", t, once)
    assert seen.count("ratio") == 3 and len({k for k in run.memo if k[0] == "ratio"}) == 1


def _unsafe_passes(t):
    """The unsafe passes ``simplify`` puts a form through (no never-larger guard: the forms compete after)."""
    return _passes(t, True, None, DEFAULT_MAX_STEPS, None, None)


def test_unsafe_simplify_still_reaches_the_forms():
    # the gate keeps every form where one reshapes: expansion, factoring, cancellation
    assert str(simplify(parse("(x + 1)*(x + 1) - x*x"), unsafe=True)) == "2*x + 1"
    assert str(simplify(parse("(x**2 - 1)/(x + 1)"), unsafe=True)) == "x - 1"
    assert str(simplify(parse("(x*y)**2/x**2"), unsafe=True)) == "y**2"


def _product(factors):
    out = [1]
    for f in factors:
        out = d_mul(out, f)
    return out


@settings(max_examples=300, deadline=None)
@given(st.integers(-9, 9), st.integers(1, 9), st.integers(-9, 9), st.integers(1, 9))
def test_quadratic_split_multiplies_back(a, b, c, d):
    # (b*x + a)*(d*x + c), made primitive and square-free, splits into its two linear factors
    f = _product([[a, b], [c, d]])
    if f[0] == 0 or len(set(map(tuple, ([a, b], [c, d])))) == 1:
        return
    out = d_factor(f)
    assert [k * out[0][0] for k in _product([g for g, e in out[1] for _ in range(e)])] == f
    assert all(len(g) == 2 for g, _ in out[1])  # linear factors only


def test_quadratic_without_rational_roots_stays_whole():
    for f in ([1, 0, 1], [-2, 0, 1], [1, 1, 1], [-1, 3, 2]):  # x**2 + 1, x**2 - 2, ..., 2*x**2 + 3*x - 1
        assert factor_squarefree(f) == [f]


def test_quadratic_split_agrees_with_sympy():
    sympy = pytest.importorskip("sympy")
    t = sympy.Symbol("t")
    rng = random.Random(12)
    for _ in range(200):
        f = [rng.randint(-20, 20), rng.randint(-20, 20), rng.randint(1, 20)]
        if f[0] == 0:
            continue
        ours = sorted(len(g) - 1 for g, e in d_factor(f)[1] for _ in range(e))
        listed = sympy.factor_list(sum(c * t**k for k, c in enumerate(f)))[1]
        theirs = sorted(sympy.degree(g, t) for g, e in listed for _ in range(e))
        assert ours == theirs, f


def test_linear_factors_are_kept_whole():
    for text in ("2*x + 4*y + 6", "x - y", "3*x", "sin(x) + y + 1"):
        _, parts = p_factor(to_poly(parse(text)))
        assert len(parts) == 1 and parts[0][1] == 1
        assert len(parts[0][0]) == len(to_poly(parse(text)))  # one linear factor: the primitive part


def test_atom_order_is_by_name_then_printed_text():
    atoms = [sin(y), y, exp(x), x, sin(x)]
    want = sorted(atoms, key=lambda a: (0, a.attr[0]) if a.op.name == "symbol" else (1, str(a)))
    assert atom_order(atoms) == want
    assert atom_order(list(reversed(atoms))) == want  # the cached keys give the same order again
