"""The canonical pass's shortcuts give what the long way gives, term for term.

- :func:`~exprgraph.simplify.numbers.plain_value` folds ``a + b``, ``a - b``, ``a * b`` and ``-a`` of int64 and
  float64 constants in Python: the same constant as numpy's evaluation, or None (then numpy decides);
- :func:`~exprgraph.core.exact_radicals.own_spelling` spares :func:`fold_radicals` a sum or product already in
  its radical form: the value's form is then never smaller;
- :func:`~exprgraph.simplify.order.sorted_terms` sorts as ``sort_key`` does, with digests only on a tie;
- :func:`~exprgraph.simplify.canonical.unit_coefficient` spells a float negation as ``-1``, as a written one is;
- a rule with ``leaves=False`` (constant folding) is not tried on leaves, and the canonical pass skips them.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from exprgraph import Symbol, const, evaluate, get_op, parse, simplify
from exprgraph.core.dtypes import FLOAT64, INT64_MAX, INT64_MIN
from exprgraph.core.exact_radicals import _fold_value, clear_radical_caches, fold_radicals, own_spelling
from exprgraph.rules import Rule, RuleSet, rewrite
from exprgraph.rules.opindex import OpIndex
from exprgraph.simplify.canonical import fold_constants, unit_coefficient
from exprgraph.simplify.numbers import plain_value
from exprgraph.simplify.order import _attr_text, clear_digests, digest, sort_key, sorted_terms
from exprgraph.simplify.simplify import canonical_ruleset

ADD, SUB, MUL, NEG, SQRT = (get_op(n) for n in ("add", "sub", "mul", "neg", "sqrt"))

#: int64 operands: small, near 2**53 (exact as floats up to it) and near the int64 limits (numpy wraps)
_ints = st.one_of(
    st.integers(-20, 20),
    st.integers(2**53 - 2, 2**53 + 2),
    st.integers(INT64_MAX - 2, INT64_MAX),
    st.integers(INT64_MIN, INT64_MIN + 2),
    st.integers(INT64_MIN, INT64_MAX),
)
_floats = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 0.5, 1e308, -1e308, 5e-324, 2.0**-1022, 0.1]),
)
_constants = st.one_of(_ints.map(const), _floats.map(const))


def _numpy_fold(t):
    """The constant numpy's evaluation gives ``t`` (what the rules made before plain_value)."""
    with np.errstate(all="ignore"):
        return const(evaluate(t, {}), dtype=t.dtype)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from([ADD, SUB, MUL, NEG]), _constants, _constants)
@example(MUL, const(-1), const(0.0))  # -0.0: the int converts before the product
@example(ADD, const(2**53 + 1), const(0.5))  # past 2**53: numpy decides
@example(MUL, const(INT64_MAX), const(2))  # wraps in numpy: numpy decides
@example(NEG, const(INT64_MIN), const(0))  # -(-2**63) wraps
@example(ADD, const(1e308), const(1e308))  # inf: numpy decides
def test_plain_value_is_numpys_constant(op, a, b) -> None:
    t = op(a) if op is NEG else op(a, b)
    v = plain_value(t)
    if v is not None:
        assert const(v, dtype=t.dtype) is _numpy_fold(t)
        assert fold_constants(t) is _numpy_fold(t)
        assert not isinstance(v, float) or math.isfinite(v)


def test_plain_value_declines_what_it_does_not_compute() -> None:
    x = Symbol("x")
    assert plain_value(MUL(const(-1), const(2))) == -2 and plain_value(ADD(const(2), const(0.5))) == 2.5
    assert plain_value(ADD(x, const(1))) is None  # a symbol
    assert plain_value(ADD(const(1), const(2), const(3))) is None  # three operands
    assert plain_value(get_op("pow")(const(2.0), const(-1))) is None  # not one of the four ops
    assert plain_value(ADD(const(True), const(1))) is None  # a bool
    assert plain_value(ADD(const(1.5, dtype="float32"), const(1.0, dtype="float32"))) is None


def _spelled(pairs: list[tuple[int, int]], k0: int | None, shape: int = 0):
    """``((k_1*sqrt(m_1) + sqrt(m_2)) + ...) + k_0`` as radical_term spells a sum (a bare root for k = 1);
    ``shape`` 1: the same terms in one flat sum, 2: reversed and associated to the right."""
    parts = [SQRT(const(m)) if k == 1 else MUL(const(k), SQRT(const(m))) for k, m in pairs]
    if k0 is not None:
        parts.append(const(k0))
    if len(parts) > 1 and shape == 1:
        return ADD(*parts)
    if shape == 2:
        parts.reverse()
        out = parts[-1]
        for p in parts[-2::-1]:
            out = ADD(p, out)
        return out
    out = parts[0]
    for p in parts[1:]:
        out = ADD(out, p)
    return out


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(-4, 4), st.integers(0, 40)), min_size=1, max_size=5),
    st.one_of(st.none(), st.integers(-3, 3)),
    st.integers(0, 2),
)
@example([(2, 2)], None, 0)  # 2*sqrt(2): one constant for the coefficient and the radicand
@example([(1, 2)], 1, 0)  # sqrt(2) + 1
@example([(1, 4)], 1, 0)  # sqrt(4) + 1 -> 3.0: not its own spelling (4 is a square)
@example([(1, 3), (1, 2)], None, 0)  # radicands out of order
@example([(0, 2)], 1, 0)  # a zero coefficient
@example([(1, 2), (1, 2)], None, 1)  # a repeated term: sqrt(2) + sqrt(2) -> 2*sqrt(2)
@example([(1, 2), (3, 5)], 1, 2)  # 1 + (3*sqrt(5) + sqrt(2))
def test_own_spelling_folds_to_nothing_and_fold_radicals_agrees(pairs, k0, shape) -> None:
    t = _spelled(pairs, k0, shape)
    if t.op not in (ADD, MUL) or t.dtype != FLOAT64:
        return
    clear_radical_caches()
    computed = _fold_value(t)
    if own_spelling(t):
        assert computed is None
    clear_radical_caches()
    assert fold_radicals(t) is computed


def test_own_spelling_examples() -> None:
    assert own_spelling(_spelled([(2, 2)], None)) and own_spelling(_spelled([(1, 2), (-1, 3)], 5))
    assert not own_spelling(_spelled([(1, 8)], 1))  # 8 is not square-free: 2*sqrt(2) + 1
    assert own_spelling(ADD(const(1), SQRT(const(2)))) and own_spelling(_spelled([(1, 3), (2, 2)], 1, 1))
    assert not own_spelling(ADD(SQRT(const(2)), SQRT(const(2))))  # sqrt(2) + sqrt(2) -> 2*sqrt(2)
    assert not own_spelling(ADD(const(1), const(2), SQRT(const(2))))  # two constants
    assert not own_spelling(_spelled([(1, 2)], 0))  # + 0


def test_a_leafless_rule_is_not_tried_on_leaves() -> None:
    x, y = Symbol("x"), Symbol("y")
    for leaves, expected in ((True, ["add", "symbol", "symbol"]), (False, ["add"])):
        seen: list[str] = []

        def note(t, seen: list[str] = seen) -> None:  # declines everywhere: it only notes where it is tried
            seen.append(t.op.name)

        rule = Rule.of_function(note, name="seen", leaves=leaves)
        index = RuleSet([rule]).index()
        assert index.reaches_leaves is leaves
        rewrite(x + y, RuleSet([rule]))
        assert sorted(seen) == expected
    entry = ("e", None)
    assert not OpIndex([(entry, None)], leafless=[entry]).reaches_leaves
    assert OpIndex([(entry, None), (("f", None), None)], leafless=[entry]).reaches_leaves


def test_the_canonical_pass_skips_the_leaves() -> None:
    for unsafe in (False, True):
        assert not canonical_ruleset(unsafe).index().reaches_leaves
        x = Symbol("x")
        assert rewrite(x, canonical_ruleset(unsafe)) is x and rewrite(const(2), canonical_ruleset(unsafe)) is const(2)


_x, _y = Symbol("x"), Symbol("y")
#: operands of sums and products: constants, symbols, and compound terms several of one op (ties on the head)
_OPERANDS = [const(2), const(0.5), const(-1), _x, _y, Symbol("z")] + [
    f for a in (_x, _y, _x + _y) for f in (a**2, a**3, 2 * a, get_op("sin")(a), get_op("cos")(a), a + 1)
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_OPERANDS), max_size=8))
@example([_x**2, _y**2, _x, const(2)])
@example([_x, _x, _y])  # equal terms keep their order (a stable sort)
def test_sorted_terms_is_the_sort_by_sort_key(items) -> None:
    clear_digests()
    assert sorted_terms(items) == sorted(items, key=sort_key)


def _reference_digest(t) -> bytes:
    """The digest as first defined: BLAKE2 (12 bytes) fed the op name, a zero byte, the attribute text and
    the operands' digests, one update each (a recursion: the test terms are shallow)."""
    h = hashlib.blake2b(digest_size=12)
    h.update(t.op.name.encode())
    h.update(b"\0")
    h.update(_attr_text(t).encode())
    for a in t.args:
        h.update(_reference_digest(a))
    return h.digest()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(_OPERANDS), min_size=1, max_size=4), st.booleans())
def test_digest_is_the_blake2_of_its_parts(items, warm) -> None:
    t = ADD(*items) if len(items) > 1 else items[0]
    clear_digests()
    if warm:
        digest(items[0])  # part of the term known before: the walk reads it from the cache
    assert digest(t) == _reference_digest(t) and digest(t) is digest(t)


_float_leaves = st.sampled_from([Symbol("x"), Symbol("y"), const(2.5), const(-0.0), const(float("inf"))])
_unit_operands = st.lists(st.one_of(_float_leaves, st.sampled_from([Symbol("n", "int64"), const(3)])), min_size=1)


@settings(max_examples=150, deadline=None)
@given(_unit_operands, st.sampled_from([-1.0, 1.0, -2.0]), st.floats(-1e300, 1e300), st.floats(-1e300, 1e300))
def test_unit_coefficient_keeps_value_and_dtype(rest, c, x, y) -> None:
    # -1.0*a*b -> (-1)*a*b only for float64 a, b: the same dtype and the same bits at any point
    t = MUL(const(c), *rest)
    out = unit_coefficient(t)
    if c != -1.0 or any(a.dtype != FLOAT64 for a in rest):
        assert out is None
        return
    assert out is not None and out.dtype == t.dtype and out.args[0] is const(-1)
    env = {"x": x, "y": y, "n": 7}
    assert np.array_equal(np.float64(evaluate(out, env)), np.float64(evaluate(t, env)), equal_nan=True)
    assert math.copysign(1.0, float(evaluate(out, env))) == math.copysign(1.0, float(evaluate(t, env)))


def test_a_negation_spelt_with_a_float_is_simplified_once() -> None:
    # x/-1 folds to a -1.0 coefficient, a written negation to -1: one spelling, so the sum's order is the same
    # when the result is simplified again (it was -((2*sqrt(2))*x) - x/x, then -(x/x) - (2*sqrt(2))*x)
    once = simplify(parse("x/x*-1 + sqrt(8)*x/-1"))
    assert simplify(once) is once
    unsafe = simplify(parse("x/x*-1 + sqrt(8)*x/-1"), unsafe=True)
    assert simplify(unsafe, unsafe=True) is unsafe
