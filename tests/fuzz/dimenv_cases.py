"""The oracle of the DimEnv fuzzer (test_fuzz_dimenv.py): cases, their points, random expressions and facts.

A case is a few names with small ranges (one open above: the box stops OPEN_SPAN values past its low end) and a
few facts; the box is enumerated once and each expression evaluated on all of its points at once (numpy object
arrays of Python integers, floor semantics, undefined where a divisor is 0). The points where every fact holds
are the oracle. Facts and expressions are drawn as terms and given to DimEnv as terms or as text in random
spellings (``Max(a, b)``, ``a ^ b``, ``FloorDiv``, ``floor(a/b)``, ``CeilToInt``, ``Eq(...)``...).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from hypothesis import strategies as st

from exprgraph.core.op import get_op
from exprgraph.core.term import Term
from exprgraph.core.traversal import postorder
from exprgraph.dims import BROADCAST, CEIL_DIV, dim_const, dim_name, unparse

INF = float("inf")
NAMES = ("a", "b", "c")
NAME_TERMS = [dim_name(n) for n in NAMES]
#: how far past its low end the box follows a name whose range is open above
OPEN_SPAN = 6
RELATIONS = ("lt", "le", "gt", "ge", "eq", "ne")
SYMBOL = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
SYMPY = {"lt": "Lt", "le": "Le", "gt": "Gt", "ge": "Ge", "eq": "Eq", "ne": "Ne"}
COMPARE = {"==": "eq", "<": "lt", "<=": "le", ">": "gt", ">=": "ge", "!=": "ne"}
BINARY = ("add", "sub", "mul", "floordiv", "mod", "ceil_div", "maximum", "minimum", "broadcast_dim")


def op_of(name: str) -> Any:
    return {"ceil_div": CEIL_DIV, "broadcast_dim": BROADCAST}.get(name) or get_op(name)


# -- the oracle: values of a term on every point of the box at once -----------------------------------


Values = tuple[np.ndarray, np.ndarray]  # (values, defined)


def relation_holds(op: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    out = {"lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y, "eq": x == y, "ne": x != y}[op]
    return np.asarray(out, dtype=bool)


def evaluate(term: Term, point: dict[str, np.ndarray]) -> Values:
    """The values of an int64 term at every point (Python integers) and where it is defined (no divisor 0)."""
    n = len(next(iter(point.values())))
    memo: dict[Term, Values] = {}
    for node in postorder(term):
        op = node.op.name
        if op == "symbol":
            memo[node] = (point[node.attr[0]], np.ones(n, dtype=bool))
            continue
        if op == "const":
            memo[node] = (np.full(n, int(node.attr), dtype=object), np.ones(n, dtype=bool))
            continue
        args = [memo[a] for a in node.args]
        ok = np.logical_and.reduce([d for _, d in args]) if args else np.ones(n, dtype=bool)
        v = [x for x, _ in args]
        if op == "add":
            out = sum(v[1:], v[0])
        elif op == "sub":
            out = v[0] - sum(v[2:], v[1])
        elif op == "mul":
            out = v[0]
            for x in v[1:]:
                out = out * x
        elif op == "neg":
            out = -v[0]
        elif op == "abs":
            out = np.abs(v[0])
        elif op in ("floordiv", "mod", "ceil_div"):
            zero = np.asarray(v[1] == 0, dtype=bool)
            ok = ok & ~zero
            safe = np.where(zero, 1, v[1])
            if op == "floordiv":
                out = v[0] // safe
            elif op == "mod":
                out = v[0] % safe
            else:
                out = -((-v[0]) // safe)
        elif op in ("maximum", "minimum"):
            out = v[0]
            for x in v[1:]:
                out = np.where(np.asarray(x > out if op == "maximum" else x < out, dtype=bool), x, out)
        elif op == "pow":
            k = np.asarray(v[1] >= 0, dtype=bool)
            ok = ok & k
            out = np.array([b**e if e >= 0 else 0 for b, e in zip(v[0], v[1], strict=True)], dtype=object)
        elif op == "broadcast_dim":
            a, b = v
            ok = ok & np.asarray((b == 1) | (a == b) | (a == 1), dtype=bool)
            out = np.where(np.asarray(b == 1, dtype=bool), a, b)
        else:
            raise AssertionError(f"the oracle does not evaluate {op!r} (in {unparse(term)})")
        memo[node] = (np.asarray(out, dtype=object), ok)
    return memo[term]


# -- cases -------------------------------------------------------------------------------------------


class Case:
    """Names' ranges, facts and the box of points that satisfy them (the oracle)."""

    def __init__(self, ranges: dict[str, tuple[int, int | None]], facts: list[tuple[Any, ...]]) -> None:
        self.ranges = ranges
        self.facts = facts
        box = {n: range(lo, (lo + OPEN_SPAN if hi is None else hi) + 1) for n, (lo, hi) in ranges.items()}
        self.bounded = all(hi is not None for _, hi in ranges.values())
        grids = np.meshgrid(*[np.array(list(r), dtype=object) for r in box.values()], indexing="ij")
        self.box = {n: g.ravel() for n, g in zip(box, grids, strict=True)}
        keep = np.ones(len(next(iter(self.box.values()))), dtype=bool)
        for fact in facts:
            keep &= self._fact_holds(fact)
        self.points = {n: v[keep] for n, v in self.box.items()}
        self.count = int(keep.sum())

    def _fact_holds(self, fact: tuple[Any, ...]) -> np.ndarray:
        if fact[0] == "range":
            _, name, lo, hi, _ = fact
            return np.asarray((self.box[name] >= lo) & (self.box[name] <= hi), dtype=bool)
        _, op, left, right, _ = fact
        (x, dx), (y, dy) = evaluate(left, self.box), evaluate(right, self.box)
        return dx & dy & relation_holds(op, x, y)

    def values(self, term: Term) -> Values:
        return evaluate(term, self.points)


# -- text in random spellings -------------------------------------------------------------------------


def spelled(term: Term, rnd: random.Random) -> str:
    """``term`` as dimension text, each node in a spelling drawn from ``rnd`` (fully bracketed)."""
    out: dict[Term, str] = {}
    for node in postorder(term):
        op = node.op.name
        if op == "symbol":
            out[node] = node.attr[0]
            continue
        if op == "const":
            v = int(node.attr)
            out[node] = f"({v})" if v < 0 else str(v)
            continue
        a = [out[x] for x in node.args]
        pick = rnd.choice
        if op == "add":
            out[node] = "(" + pick([" + ", "+"]).join(a) + ")"
        elif op == "sub":
            out[node] = "(" + " - ".join(a) + ")"
        elif op == "mul":
            out[node] = "(" + pick([" * ", "*"]).join(a) + ")"
        elif op == "neg":
            out[node] = f"(-{a[0]})"
        elif op == "abs":
            out[node] = f"abs({a[0]})"
        elif op == "broadcast_dim":
            out[node] = f"broadcast({a[0]}, {a[1]})"
        elif op == "floordiv":
            out[node] = pick([f"({a[0]} // {a[1]})", f"FloorDiv({a[0]}, {a[1]})", f"floor({a[0]}/{a[1]})"])
        elif op == "mod":
            out[node] = pick([f"({a[0]} % {a[1]})", f"PythonMod({a[0]}, {a[1]})"])
        elif op == "ceil_div":
            out[node] = pick([f"CeilToInt({a[0]}, {a[1]})", f"CeilDiv({a[0]},{a[1]})", f"ceiling({a[0]}/{a[1]})"])
        elif op == "maximum":
            out[node] = pick([f"Max({', '.join(a)})", f"max({','.join(a)})", "(" + " ^ ".join(a) + ")"])
        elif op == "minimum":
            out[node] = pick([f"Min({', '.join(a)})", f"min({','.join(a)})", "(" + " & ".join(a) + ")"])
        else:
            raise AssertionError(op)
    return out[term]


# -- strategies ---------------------------------------------------------------------------------------

_divisors = st.one_of(st.integers(1, 6), st.integers(-4, -1), st.sampled_from([8, 12, 16, 64]))
_leaf = st.one_of(st.sampled_from(NAME_TERMS), st.sampled_from(NAME_TERMS), st.integers(-3, 8).map(dim_const))


def _grow(children: st.SearchStrategy[Term]) -> st.SearchStrategy[Term]:
    binary = st.tuples(st.sampled_from(BINARY), children, children).map(lambda t: op_of(t[0])(t[1], t[2]))
    by_const = st.tuples(st.sampled_from(["floordiv", "mod", "ceil_div", "mul"]), children, _divisors).map(
        lambda t: op_of(t[0])(t[1], dim_const(t[2]))
    )
    unary = st.tuples(st.sampled_from(["neg", "neg", "abs"]), children).map(lambda t: op_of(t[0])(t[1]))
    return st.one_of(binary, binary, by_const, unary)


def expressions(max_leaves: int = 6) -> st.SearchStrategy[Term]:
    """Random dimension terms over the names and small constants."""
    return st.recursive(_leaf, _grow, max_leaves=max_leaves)


_range = st.tuples(st.integers(-3, 4), st.one_of(st.integers(0, 6), st.none())).map(
    lambda r: (r[0], None if r[1] is None else r[0] + r[1])
)
#: the names' ranges; sometimes every name open above from one low end (the "default" environment's case)
ranges_st = st.one_of(
    st.fixed_dictionaries({n: _range for n in NAMES}),
    st.fixed_dictionaries({n: _range for n in NAMES}),
    st.integers(-2, 2).map(lambda lo: {n: (lo, None) for n in NAMES}),
)


FACT_KINDS = ("names", "subst", "remainder", "exprs", "maxmin", "unequal", "range", "scaled", "product", "divides")


@st.composite
def facts_st(draw: st.DrawFn, rnd: random.Random) -> tuple[Any, ...]:
    """One fact: ``("range", name, lo, hi, text)`` or ``("rel", op, left, right, given)`` (given: text or a term)."""
    name = draw(st.sampled_from(NAME_TERMS))
    other = draw(st.sampled_from([t for t in NAME_TERMS if t is not name]))
    kind = draw(st.sampled_from([*FACT_KINDS, "subst", "names"]))
    if kind == "range":
        lo = draw(st.integers(-3, 6))
        hi = lo + draw(st.integers(-1, 5))
        return ("range", name.attr[0], lo, hi, f"{name.attr[0]} in [{lo}, {hi}]")
    op = draw(st.sampled_from(RELATIONS))
    if kind == "names":  # a OP b + k
        left, right = name, other if draw(st.booleans()) else op_of("add")(other, dim_const(draw(st.integers(-2, 2))))
    elif kind == "subst":  # a == an expression of the others (maybe solvable for a)
        op = "eq"
        left, right = name, draw(expressions(3).filter(lambda t: name not in t.free_symbols))
        if draw(st.booleans()):
            left, right = right, left
    elif kind == "remainder":  # a % k == r
        k = draw(st.integers(2, 4))
        op, left, right = "eq", op_of("mod")(name, dim_const(k)), dim_const(draw(st.integers(0, k)))
    elif kind == "maxmin":
        which = draw(st.sampled_from(["maximum", "minimum"]))
        left, right = (
            op_of(which)(name, other),
            draw(st.sampled_from([*NAME_TERMS, dim_const(draw(st.integers(0, 4)))])),
        )
    elif kind == "unequal":
        op, left, right = "ne", name, draw(st.one_of(st.integers(-3, 8).map(dim_const), st.sampled_from(NAME_TERMS)))
    elif kind == "scaled":  # k1*a OP k2*b + k3 (an equality not solvable for a name when |k1|, |k2| > 1)
        k1, k2, k3 = draw(st.integers(-3, 3)), draw(st.integers(-3, 3)), draw(st.integers(-3, 3))
        left = op_of("mul")(dim_const(k1), name)
        right = op_of("add")(op_of("mul")(dim_const(k2), other), dim_const(k3))
    elif kind == "product":  # a*b OP c, a OP b*c
        third = next(t for t in NAME_TERMS if t is not name and t is not other)
        left, right = op_of("mul")(name, other), third
        if draw(st.booleans()):
            left, right = right, left
    elif kind == "divides":  # a % b == 0, a // k == b, a % k == b
        k = draw(st.one_of(st.integers(1, 4).map(dim_const), st.just(other)))
        left = op_of(draw(st.sampled_from(["mod", "floordiv", "ceil_div"])))(name, k)
        right = draw(st.one_of(st.integers(0, 3).map(dim_const), st.sampled_from(NAME_TERMS)))
    else:
        left, right = draw(expressions(3)), draw(expressions(3))
    form = draw(st.sampled_from(["text", "text", "sympy", "term"]))
    if form == "term":
        given = op_of(op)(left, right)
    elif form == "sympy":
        given = f"{SYMPY[op]}({spelled(left, rnd)}, {spelled(right, rnd)})"
    else:
        given = f"{spelled(left, rnd)} {SYMBOL[op]} {spelled(right, rnd)}"
    return ("rel", op, left, right, given)


@st.composite
def cases(draw: st.DrawFn, max_facts: int = 4) -> tuple[Case, random.Random]:
    """Ranges and facts (the box of points that satisfy them), and the random spellings' source."""
    rnd = draw(st.randoms(use_true_random=False))
    facts = draw(st.lists(facts_st(rnd), min_size=1, max_size=max_facts))
    return Case(draw(ranges_st), facts), rnd
