"""The shortcuts of the query path give exactly what the longer way gives.

- ``may_combine`` says False only where ``combine_terms`` (and the unwrapping of lone sum atoms
  after it) would give the polynomial back unchanged, so a query may skip the rules;
- the walk of a sum follows a chain of sums with names on the right without its stack, in the
  order the stack would take them: the polynomial is the same, dict order included;
- the range of a product of atoms is the one the interval arithmetic (``r_mul`` of the factors,
  then ``r_scale``) works out;
- a difference is written ``p_sub(p, q)``, with the terms in the order ``p_add(p, p_scale(q, -1))``
  gives them, and ``mono_div`` by one atom keeps the order of the other factors;
- the parser reads names and numbers met before from one table, and the relational queries keep
  the ranges they worked out: the answers are those of the longer way.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exprgraph import const, get_op
from exprgraph.dims import DimEnv, clear_caches, dim_name, parse_expression, unparse
from exprgraph.dims.combine import combine_terms, may_combine
from exprgraph.dims.context import Context
from exprgraph.dims.monomials import mono_div
from exprgraph.dims.ranges import INF, r_mul, r_pow, r_scale
from exprgraph.dims.regions import to_poly
from exprgraph.dims.ring import p_add, p_scale, p_sub

NAMES = [dim_name(n) for n in ("a", "b", "c", "d")]
_BINARY = ["add", "sub", "mul", "floordiv", "mod", "maximum", "minimum", "ceil_div"]
_leaves = st.one_of(st.sampled_from(NAMES), st.integers(-3, 9).map(const))


def _extend(children):
    binary = st.tuples(st.sampled_from(_BINARY), children, children).map(lambda t: get_op(t[0])(t[1], t[2]))
    return st.one_of(binary, binary, children.map(lambda t: -t))


expressions = st.recursive(_leaves, _extend, max_leaves=12)
_bound = st.one_of(st.integers(-5, 5), st.just(None))
ranges = st.fixed_dictionaries(
    {
        n: st.tuples(st.integers(-4, 6), _bound).map(lambda r: (r[0], None if r[1] is None else r[0] + abs(r[1])))
        for n in "abcd"
    }
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(expressions, min_size=1, max_size=4), st.lists(st.integers(-3, 3), min_size=4, max_size=4), ranges)
def test_may_combine_false_means_combine_changes_nothing(parts, coefs, given_ranges):
    # sums of normalised parts (with their atoms, sum atoms among them) under random ranges
    clear_caches()
    ctx = DimEnv(given_ranges).context
    p: dict = {}
    for part, k in zip(parts, coefs, strict=False):
        p = p_add(p, p_scale(to_poly(part, ctx), k))
    before = dict(p)
    if not may_combine(p, ctx):
        assert ctx.unwrap(combine_terms(p, ctx)) == before
        assert list(ctx.unwrap(combine_terms(dict(before), ctx))) == list(before)


def _reference_linear(term):
    """The polynomial of a tree of + - (unary too) and k*x over names and constants, leaves taken
    right to left as an explicit stack takes them (the order the simplifier's dicts have)."""
    acc: dict = {}
    stack = [(term, 1)]
    while stack:
        node, k = stack.pop()
        name = node.op.name
        if name == "symbol":
            m = ((node, 1),)
            acc[m] = acc.get(m, 0) + k
            if not acc[m]:
                del acc[m]
        elif name == "const":
            acc[()] = acc.get((), 0) + k * node.value
            if not acc[()]:
                del acc[()]
        elif name == "add":
            stack.extend((a, k) for a in node.args)
        elif name == "sub":
            stack.extend([(node.args[0], k), (node.args[1], -k)])
        elif name == "neg":
            stack.append((node.args[0], -k))
        else:  # mul by a constant
            x, c = node.args if node.args[1].op.name == "const" else node.args[::-1]
            stack.append((x, k * c.value))
    return acc


_sum_leaves = st.one_of(st.sampled_from(NAMES), st.integers(-3, 9).map(const))


def _sum_extend(children):
    pick = st.sampled_from(["add", "add", "sub", "neg", "scale"])
    return st.tuples(pick, children, children, st.integers(-3, 3)).map(
        lambda t: (
            get_op(t[0])(t[1], t[2])
            if t[0] in ("add", "sub")
            else -t[1]
            if t[0] == "neg"
            else get_op("mul")(const(t[3]), t[1])
        )
    )


sums = st.recursive(_sum_leaves, _sum_extend, max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(sums)
def test_sum_walk_gives_the_stack_order(term):
    clear_caches()
    ctx = Context(False)
    p = to_poly(term, ctx)
    want = _reference_linear(term)
    assert p == want
    # dict order included (when no node of the sum is shared, as in a chain written out)
    if len({id(n) for n in _nodes(term)}) == len(_nodes(term)):
        assert list(p) == list(want), unparse(term)


def _nodes(term):
    out, stack = [], [term]
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(n.args)
    return [n for n in out if n.args]


def test_long_chains_of_names():
    names = [dim_name(f"s{i}") for i in range(300)]
    text = " + ".join(f"s{i}" for i in range(300)) + " - s7 - s300 + 5"
    p = to_poly(parse_expression(text), Context(False))
    assert ((names[7], 1),) not in p and p[()] == 5 and p[((dim_name("s300"), 1),)] == -1
    assert list(p)[:3] == [(), ((dim_name("s300"), 1),), ((names[299], 1),)]  # right to left


def _general_range(ctx, m, c):
    a, e = m[0]
    r = r_pow(ctx.atom_range(a), e)
    for a, e in m[1:]:
        r = r_mul(r, r_pow(ctx.atom_range(a), e))
    return r_scale(r, c)


_lo = st.integers(0, 6)
product_ranges = st.lists(st.tuples(_lo, st.one_of(st.integers(0, 5), st.just(None))), min_size=2, max_size=4)


@settings(max_examples=300, deadline=None)
@given(product_ranges, st.integers(-7, 7).filter(bool))
def test_product_ranges_in_one_pass(bounds, c):
    names = NAMES[: len(bounds)]
    given = {n: (lo, INF if w is None else lo + w) for n, (lo, w) in zip(names, bounds, strict=True)}
    ctx = Context(False, given)
    m = tuple(sorted(((n, 1) for n in names), key=lambda ae: id(ae[0])))
    assert ctx.range_of({m: c}) == _general_range(ctx, m, c)
    assert ctx.range_of({m: c, (): 3}) == tuple(x if isinstance(x, float) else x + 3 for x in _general_range(ctx, m, c))


_polys = st.dictionaries(
    st.sampled_from([(), ((NAMES[0], 1),), ((NAMES[1], 1),), ((NAMES[0], 1), (NAMES[1], 2))]),
    st.integers(-3, 3).filter(bool),
    max_size=4,
)


@given(_polys, _polys)
def test_p_sub_is_p_add_of_the_negation(p, q):
    assert list(p_sub(p, q).items()) == list(p_add(p, p_scale(q, -1)).items())


@given(
    st.lists(st.tuples(st.sampled_from(NAMES), st.integers(1, 3)), unique_by=lambda t: t[0], max_size=4),
    st.sampled_from(NAMES),
    st.integers(1, 3),
)
def test_mono_div_by_one_atom_keeps_the_order(factors, atom, power):
    m = tuple(sorted(factors, key=lambda ae: id(ae[0])))
    want = dict(m)
    left = want.get(atom, 0) - power
    if left < 0:
        assert mono_div(m, ((atom, power),)) is None
        return
    if left:
        want[atom] = left
    else:
        del want[atom]
    assert mono_div(m, ((atom, power),)) == tuple(want.items())


def test_names_and_numbers_met_before_parse_the_same():
    clear_caches()
    first = parse_expression("s0*12 + s1 - 12")
    again = parse_expression("12 + s0 - s1*12")  # the operands come from the table now
    assert unparse(first) == "s0*12+s1-12" and unparse(again) == "12+s0-s1*12"
    assert again.args[0].args[1] is dim_name("s0") and again.args[0].args[0].value == 12


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions, expressions, ranges)
def test_relations_agree_with_compare(e1, e2, given_ranges):
    """statically_known (quick range first, kept when the rules change nothing) agrees with compare()
    (the rules first, then the tight range): where compare finds a strict order, so do the relations."""
    clear_caches()
    env = DimEnv(given_ranges)
    ge, gt, le = env.statically_known(e1 >= e2), env.statically_known(e1 > e2), env.statically_known(e1 <= e2)
    strongest = DimEnv(given_ranges).compare(e1, e2)
    if strongest == ">":
        assert (ge, gt, le) == (True, True, False)
    if strongest == "<":
        assert (ge, gt, le) == (False, False, True)
    if strongest == ">=":
        assert ge is True
    if strongest == "<=":
        assert le is True
