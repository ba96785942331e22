"""The early exits of the canonical sum and product are exact: they skip only what would give the term itself.

The order checks work out the sort digests only where the kind and name tie (``in_sort_order``), for the
exits and for the two operands of a safe node kept binary: equal to comparing ``sort_key``, on random terms.

``_full_sum`` and ``_full_product`` (the bodies of ``collect_sum``/``cancel_sum`` on integer sums and of
the unsafe strength, likewise for products) first ask ``_canonical_sum`` / ``_canonical_product`` whether
the term is its own canonical form; ``_collect_sum`` / ``_collect_product`` are the bodies without the
exit. On random sums and products (built n-ary from operands chosen to meet each clause of the checks,
and every sum and product of the canonical forms of random terms), the rule with the exit gives the very
term the rule without it gives (a result equal to the input counts as no rewrite, as in the driver).
"""

from __future__ import annotations

import importlib
from functools import reduce

from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_forms_gates import _terms

import exprgraph as eg
from exprgraph import Symbol, const, get_op, postorder, simplify
from exprgraph.simplify.forms import FORMS, _forms_for, forms_for
from exprgraph.simplify.order import in_sort_order, sort_key
from exprgraph.simplify.products import _canonical_product, _collect_product, _full_product, _product_head
from exprgraph.simplify.simplify import canonical
from exprgraph.simplify.sums import _canonical_sum, _collect_sum, _full_sum, _sum_head

ADD, MUL, NEG = get_op("add"), get_op("mul"), get_op("neg")
x, y, z = Symbol("x"), Symbol("y"), Symbol("z")
i, j = Symbol("i", "int64"), Symbol("j", "int64")

#: factors meeting every clause of the product check: coefficients (0, 1, -1, -1.0, others), powers of one
#: base, a nested product, a sum, integer symbols
FACTORS = [x, y, z, i, j, x**2, x**-1, x**0.5, y**3, i**2, eg.sin(x), eg.exp(y), x * y, x + y]
FACTORS += [const(c) for c in (2, 3, 0, 1, -1, -1.0, 2.5, 0.0, 1.0)] + [eg.sqrt(const(2)), eg.sqrt(const(8))]
#: terms meeting every clause of the sum check: like terms with and without coefficients, multiples of
#: products and sums, quotients, constants (0, last or not)
TERMS = [x, y, z, i, j, x * y, x**2, eg.sin(x), i * j, x / 3, x + y, MUL(const(2), x), MUL(const(-1), x)]
TERMS += [MUL(const(2), x, y), MUL(const(3), MUL(x, y)), MUL(const(-1), ADD(x, y)), MUL(const(2), i)]
TERMS += [MUL(const(-1.5), x**2), const(1), const(0), const(-2.5), const(0.0), const(3), const(-0.0), 2.0 * z]


def _same(rule, slow, t) -> None:
    """The rule with its exit and without it rewrite ``t`` alike (None and ``t`` itself both mean no rewrite)."""
    for cancel in (True, False):
        fast, full = rule(t, cancel), slow(t, cancel)
        assert (t if fast is None else fast) is (t if full is None else full), (str(t), cancel, str(fast), str(full))


def _nary(op, pool):
    """``op`` of 2 to 6 operands drawn from ``pool``: flat or nested from the left (the safe form), as drawn
    or in the canonical form of either strength."""
    items = st.lists(st.sampled_from(pool), min_size=2, max_size=6)
    flat = items.map(lambda xs: op(*xs))
    nested = items.map(lambda xs: reduce(op, xs))
    built = st.one_of(flat, nested)
    return st.one_of(built, built.map(lambda t: canonical(t, unsafe=True)), built.map(canonical))


@settings(max_examples=400, deadline=None)
@given(_nary(MUL, FACTORS))
@example(eg.sqrt(const(2)) * eg.sqrt(const(8)) * x)  # two exact constants fold to 4: 4*x, not three factors
def test_the_product_exit_is_exact(t) -> None:
    if t.op is MUL:
        _same(_full_product, _collect_product, t)


@settings(max_examples=400, deadline=None)
@given(_nary(ADD, TERMS))
def test_the_sum_exit_is_exact(t) -> None:
    if t.op is ADD:
        _same(_full_sum, _collect_sum, t)


@settings(max_examples=200, deadline=None)
@given(_terms(), st.booleans())
def test_the_exits_are_exact_on_canonical_forms(t, unsafe) -> None:
    for node in postorder((t, canonical(t, unsafe=unsafe))):
        if node.op is MUL:
            _same(_full_product, _collect_product, node)
        elif node.op is ADD:
            _same(_full_sum, _collect_sum, node)


def test_the_exits_take_canonical_terms_and_leave_the_rest() -> None:
    # they fire on the forms the pass makes (else they would save nothing) and not where the body rewrites
    assert _canonical_product(canonical(2 * x * y**2 * eg.sin(x), unsafe=True))
    assert _canonical_sum(canonical(2 * x + y * x + 3.0, unsafe=True))
    assert _canonical_product(MUL(const(-1), x)) and not _canonical_product(MUL(const(-1.0), x))
    assert not _canonical_product(MUL(x, x**2)) and not _canonical_product(MUL(const(1), x))
    assert not _canonical_sum(ADD(MUL(const(2), x, y), MUL(x, y))) and not _canonical_sum(ADD(x, const(0)))
    assert not _canonical_sum(ADD(const(1), x)) and not _canonical_sum(ADD(MUL(const(2), ADD(x, y)), x))


@settings(max_examples=300, deadline=None)
@given(_terms(), _terms())
def test_the_lazy_order_is_the_sort_key_order(a, b) -> None:
    for u, v in ((a, b), (b, a), (a, a), (canonical(a), canonical(b, unsafe=True))):
        assert in_sort_order(u, v) is (sort_key(u) <= sort_key(v))
        for head in (_sum_head, _product_head):  # binary_form swaps exactly where the (head, sort_key) order says
            swaps = not (head(u) < head(v) or (head(u) == head(v) and in_sort_order(u, v)))
            assert swaps is ((head(v), sort_key(v)) < (head(u), sort_key(u)))


#: leaves with lone negations of atoms, alone and inside atoms (``-cos(2*x)``, ``exp(-x)``), for the forms gate
NEGATED = [x, y, const(2), -x, -eg.cos(2 * x), eg.exp(-x), eg.sin(-y), -eg.exp(x + 1)]


@settings(max_examples=150, deadline=None)
@given(_terms(NEGATED))
@example(-eg.cos(2 * x))
@example(eg.exp(-x) * eg.exp(x))
@example(-x + x)
@example((-x) ** 2 - x**2)
def test_the_forms_gate_on_lone_negations_changes_no_result(t) -> None:
    # forms_for reads -a (a an atom, alone or inside atoms) as the monomial it is: unsafe simplify gives the very
    # term it gave when every form was tried on any negation
    module = importlib.import_module("exprgraph.simplify.simplify")
    fast = simplify(t, unsafe=True)
    saved = module.forms_for
    module.forms_for = lambda u: _forms_for(u, False)
    try:
        slow = simplify(t, unsafe=True)
    finally:
        module.forms_for = saved
    assert fast is slow, (str(t), str(fast), str(slow))


def test_the_forms_gate_reads_lone_negations() -> None:
    assert forms_for(-eg.cos(2 * x)) == () and forms_for(eg.exp(-x)) == () and forms_for(-x) == ()
    assert forms_for(-x + x) == FORMS and forms_for((-x) ** 2) == FORMS and forms_for(NEG(NEG(x))) == FORMS
    assert forms_for(-(x * y)) == FORMS and forms_for(eg.exp(-x) + eg.exp(-x)) == FORMS
