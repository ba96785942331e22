"""The fast path for text (polyparse, polyprint) against the general path (parse, walk, print).

``simplify_expression`` on a string reads the text straight into its polynomial and prints the
polynomial without building the canonical term. These tests check, on random texts with random
spacing, brackets, signs, calls and repeated subexpressions, that it gives what parsing and
simplifying the term gives: the same polynomial (in the same dict order where atoms are involved,
since the rules across terms visit terms in that order), the same text, the same errors.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import exprgraph.dims.ring as ring
from exprgraph.core.term import REGISTRY
from exprgraph.dims import clear_caches, dim_name, parse_expression, simplify_expression, simplify_term, unparse
from exprgraph.dims.canonicalize import to_poly
from exprgraph.dims.context import context
from exprgraph.dims.normal import atom_key, inner_term, inner_text, top_term
from exprgraph.dims.parse import split_tokens
from exprgraph.dims.polyparse import _ATOM_TOKENS, MAX_TOKENS, read_polynomial
from exprgraph.dims.polyprint import poly_text, poly_value
from exprgraph.dims.ranges import r_add, r_mul, r_pow, r_scale
from exprgraph.dims.ring import Budget, p_mul, p_product
from exprgraph.dims.unparse import precedence
from exprgraph.errors import DimExpressionError, TermTooLargeError

_CONST = REGISTRY["const"]

# -- random texts ---------------------------------------------------------------------------------------

_names = st.sampled_from(["a", "b", "c", "seq"])
_ints = st.one_of(st.integers(0, 12), st.sampled_from([16, 64, 2**62, 2**63 - 1, 2**63]))
_leaves = st.one_of(_names, _names, _ints.map(str))
_space = st.sampled_from(["", "", " "])


def _extend(children):
    binary = st.tuples(children, _space, st.sampled_from(["+", "-", "*", "*", "//", "%", "^", "&"]), _space, children)
    call = st.tuples(st.sampled_from(["Max", "max", "Min", "min"]), st.lists(children, min_size=1, max_size=3))
    small = children.filter(lambda s: len(s) < 40)  # written twice, texts would grow exponentially
    return st.one_of(
        binary.map("".join),
        binary.map("".join),
        st.tuples(st.sampled_from(["-", "+", "- ", "--"]), children).map("".join),
        children.map(lambda s: f"({s})"),
        call.map(lambda t: f"{t[0]}({', '.join(t[1])})"),
        st.tuples(children, children).map(lambda t: f"CeilToInt({t[0]}, {t[1]})"),
        small.map(lambda s: f"({s})+({s})"),  # a subexpression written twice is one shared node
        small.map(lambda s: f"{s}*{s}"),
    )


texts = st.recursive(_leaves, _extend, max_leaves=12)
# flat sums of products, the commonest shape expressions (read without the operator loop)
_flat_terms = st.tuples(
    st.sampled_from(["", "-", "+", "- -"]),
    st.sampled_from(["", "2*", "-1*", "9223372036854775807*", "0*"]),
    st.lists(st.one_of(_names, _ints.map(str)), min_size=1, max_size=3).map("*".join),
).map("".join)
flat_texts = st.tuples(_flat_terms, st.lists(st.tuples(st.sampled_from([" + ", "-", " - ", "+"]), _flat_terms))).map(
    lambda t: t[0] + "".join(op + term for op, term in t[1])
)
any_texts = st.one_of(texts, flat_texts)


def _light(text: str) -> bool:
    """Text without atoms: the fast path gives the polynomial up to the order of its terms."""
    tokens = split_tokens(text)
    return tokens is not None and _ATOM_TOKENS.isdisjoint(tokens)


def _general_poly(text: str, positive: bool):
    try:
        return to_poly(parse_expression(text), context(positive))
    except (DimExpressionError, TermTooLargeError, OverflowError):
        return None


def _outcome(fn, text: str, positive: bool):
    try:
        return ("value", fn(text, positive))
    except (TermTooLargeError, OverflowError) as err:
        return ("raises", type(err))


def _general_result(text: str, positive: bool):
    try:
        term = parse_expression(text)
    except DimExpressionError:
        return text
    top = simplify_term(term, positive=positive)
    return int(top.attr) if top.op is _CONST else unparse(top)


def _fast_result(text: str, positive: bool):
    return simplify_expression(text, positive=positive)


# -- the polynomial --------------------------------------------------------------------------------------


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(any_texts, st.booleans())
def test_fast_path_reads_the_general_walks_polynomial(text, positive):
    clear_caches()
    want = _general_poly(text, positive)  # kept alive: its atoms stay the same interned terms
    clear_caches()
    got = read_polynomial(text, context(positive))
    if got is None:
        return  # declined: the general path answers (checked below)
    assert want is not None, text  # the fast path never finishes what the general walk cannot
    if _light(text):
        assert got == want, text
    else:
        assert list(got.items()) == list(want.items()), text  # the same terms in the same order


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(any_texts, st.booleans())
def test_simplify_expression_gives_what_the_general_path_gives(text, positive):
    clear_caches()
    want = _outcome(_general_result, text, positive)
    clear_caches()
    assert _outcome(_fast_result, text, positive) == want, text
    assert _outcome(_fast_result, text, positive) == want, text  # and again, from the cache of texts


# -- printing --------------------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_printing_a_polynomial_is_unparse_of_its_canonical_term(text):
    clear_caches()
    p = _general_poly(text, False)
    if p is None:
        return
    for args in context(False).atom_args.values():
        for arg in args:  # the arguments of atoms (inner_term succeeded on them when they were built)
            term = inner_term(arg)
            assert inner_text(arg) == (unparse(term), precedence(term))
    try:
        want = unparse(top_term(p))
    except OverflowError:
        with pytest.raises(OverflowError):
            poly_value(p)
        return
    if p and not (len(p) == 1 and () in p):
        assert poly_text(p) == want


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_remembered_atom_texts_are_their_unparse(text):
    # atoms built from polynomials print from them (normal.defer_key): the text must be unparse's
    clear_caches()
    p = read_polynomial(text, context(False))
    if p is None:
        return
    atoms = {a for m in p for a, _ in m} | set(context(False).atom_args)
    for atom in atoms:
        assert atom_key(atom) == unparse(atom)


# -- the algebra the fast path leans on ------------------------------------------------------------------


def _reference_range(p, ctx):
    acc = (0, 0)
    for m, c in p.items():
        if not m:
            acc = r_add(acc, (c, c))
            continue
        r = None
        for a, e in m:
            ra = r_pow(ctx.atom_range(a), e)
            r = ra if r is None else r_mul(r, ra)
        acc = r_add(acc, r_scale(r, c))
    return acc


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts, st.booleans())
def test_range_of_is_the_sum_of_the_ranges_of_the_terms(text, positive):
    clear_caches()
    ctx = context(positive)
    p = _general_poly(text, positive)
    if p is None:
        return
    for q in [p, *(a for args in ctx.atom_args.values() for a in args)]:
        assert ctx.range_of(q) == _reference_range(q, ctx)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(texts.filter(lambda t: len(t) < 40), st.integers(0, 2)), min_size=1, max_size=4))
def test_p_product_is_the_product(factors):
    polys = []
    for text, e in factors:
        p = _general_poly(text, False)
        if p is None:
            return
        polys.append((p, e))
    want = {(): 1}
    for p, e in polys:
        for _ in range(e):
            want = p_mul(want, p)
    try:
        got = p_product(polys, Budget())
    except TermTooLargeError:
        return
    assert got == want


# -- declines, limits and edge cases -------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "2*batch//batch",
        "(seq+7)//8*8",
        "CeilToInt(s,8)",
        "max(a,b)+min(a,b)",
        "batch*chan*dim + 4*width + dim + -1*width*batch*s4 + -6",
        "(s0+width)*batch//16",
        "batch*chan*s4//(batch*chan)+2",
        "a*b*c//(a*b)",  # a shared product node of single terms: merged, harmlessly
        "x%8 + (x//8)*8",
    ],
)
def test_typical_expressions_take_the_fast_path(text):
    clear_caches()
    assert read_polynomial(text, context(False)) is not None


@pytest.mark.parametrize(
    "text",
    [
        "(a//2+b)+(a//2+b)",  # a shared sum merged into a sum: the general walk keeps it apart
        "max(a,b)^max(a,b)",
        "a +",
        "(a",
        "a)",
        "a, b",
        "f(a)",
        "Max()",
        "CeilToInt(a)",
        "a ** 2",
        "a / 2",
        "None + 1",
        "2a",
        "a$b + 1",  # one piece of the quick split that is no token
        "a - 9223372036854775808",  # a binary minus does not make the literal negative
        "",
    ],
)
def test_fast_path_declines_and_the_general_path_answers(text):
    clear_caches()
    assert read_polynomial(text, context(False)) is None
    clear_caches()
    assert _outcome(_fast_result, text, False) == _outcome(_general_result, text, False)


def test_decimal_digits_of_any_script_read_as_the_parser_reads_them():
    # the fast reader reads the parser's tokens: ٣ is the number 3 for both
    clear_caches()
    fast = read_polynomial("٣ + a", context(False))
    assert fast == to_poly(parse_expression("3 + a"), context(False))
    assert simplify_expression("٣*a + ٣٣") == "3*a+33"


def test_long_text_takes_the_general_path():
    text = "(" + "+".join(["x"] * MAX_TOKENS) + ")"
    assert read_polynomial(text, context(False)) is None
    assert simplify_expression(text) == f"{MAX_TOKENS}*x"


def test_a_long_flat_sum_is_read_in_one_scan():
    # a flat sum is its own polynomial, whatever its length: read without the general walk
    text = "+".join(["x"] * MAX_TOKENS) + " - " + " - ".join(f"{k}*y{k}" for k in range(5000))
    clear_caches()
    got = read_polynomial(text, context(False))
    assert got is not None
    clear_caches()
    assert got == _general_poly(text, False)
    assert (
        simplify_expression(
            "+".join(f"x{k}" for k in range(10_000)) + "-" + "-".join(f"x{k}" for k in range(1, 10_000))
        )
        == "x0"
    )


def test_literals_at_the_int64_bounds_as_the_parser_reads_them():
    for text in [
        "-9223372036854775808*a",
        "a + -9223372036854775808",
        "- -9223372036854775808",
        "+-9223372036854775808",
    ]:
        clear_caches()
        assert _outcome(_fast_result, text, False) == _outcome(_general_result, text, False), text
    assert simplify_expression("a - 9223372036854775808") == "a - 9223372036854775808"  # does not parse
    with pytest.raises(OverflowError):
        simplify_expression("a*9223372036854775807*2")  # the coefficient leaves int64, as in the general path


def test_light_reader_stands_aside_when_the_budget_is_lowered(monkeypatch):
    monkeypatch.setattr(ring, "MAX_WORK", 1000)
    clear_caches()
    want = _general_poly("(a+b)*c - a*c", False)
    clear_caches()
    got = read_polynomial("(a+b)*c - a*c", context(False))
    assert list(got.items()) == list(want.items())  # read by the exact reader: same order too


def test_results_are_cached_per_text_and_assumption():
    clear_caches()
    assert simplify_expression("max(a, 1)") == "1^a"
    assert simplify_expression("max(a, 1)", positive=True) == "a"
    assert simplify_expression("max(a, 1)") == "1^a"
    assert context(False).texts["max(a, 1)"] == "1^a"
    clear_caches()
    assert not context(False).texts


def test_names_keep_their_atoms_across_cleared_caches():
    clear_caches()
    p = read_polynomial("seq*2", context(False))
    assert p == {((dim_name("seq"), 1),): 2}
