"""Pattern rewriting: exprgraph's rewrite driver vs matchpy and an Oryx-style combinator rewriter.

Part 1, rewriting. 300 random expressions (about 6,500 tree nodes in all) over five symbols
and the constants 0, 1, 2, full of redexes for the eleven rules of ``exprgraph.rules.algebra``
(``x + 0 -> x``, ``x * 1 -> x``, ``x - x -> 0``, ``x + x -> 2*x``...). Every contender rewrites
every expression to a normal form, and the normal forms are checked to be the same:

- ours: ``rewrite(term, ALGEBRA)`` (rules indexed by op, compiled matchers, memoised driver);
- matchpy ``ManyToOneReplacer.replace_post_order`` (its fastest mode) and ``replace_all``
  (add and mul declared commutative, as ours are);
- an Oryx-style rewriter written here in the seed's style: ``iterated(bottom_up(rule_list(...)))``
  over nested tuples with a small recursive matcher (commutative rules written in both orders,
  as a user of that library would).

Part 2, one big match: a pattern with a variable at every leaf of a balanced binary tree of
131,071 nodes, ours vs logical-unification's ``unify`` (nested tuples with logic variables).
``unify`` copies its substitution at each binding, so it is quadratic; it runs once, on a smaller
tree, and the row says so.

Run: ``python -m bench.bench_rewrite``.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable, Iterator
from functools import singledispatch
from typing import Any

from bench.common import best_of, fmt_seconds, print_table, ratio, skip
from exprgraph import Symbol, Term, const, get_op
from exprgraph.match import OpPattern, Var, match
from exprgraph.rules import rewrite
from exprgraph.rules.algebra import ALGEBRA

N_EXPRESSIONS = 300
SYMBOL_NAMES = "abcdg"  # not "e": parse reads e as the constant, so no float64 symbol takes the name

# -- the random expressions, in a neutral form: (op, *children), ("sym", name), ("num", value) --------

REDEXES = ("add_zero", "sub_zero", "sub_self", "mul_one", "mul_zero", "div_one", "neg_neg", "pow_one", "pow_zero",
           "add_self", "abs_neg")  # fmt: skip
PLAIN = ("add", "sub", "mul", "truediv")


def _leaf(rng: random.Random) -> tuple:
    if rng.random() < 0.8:
        return ("sym", rng.choice(SYMBOL_NAMES))
    return ("num", rng.choice((0, 1, 2)))


def _expr(rng: random.Random, depth: int) -> tuple:
    if depth <= 0 or rng.random() < 0.12:
        return _leaf(rng)
    if rng.random() < 0.35:
        kind = rng.choice(REDEXES)
        a = _expr(rng, depth - 1)
        swap = rng.random() < 0.5
        if kind == "add_zero":
            return ("add", ("num", 0), a) if swap else ("add", a, ("num", 0))
        if kind == "mul_one":
            return ("mul", ("num", 1), a) if swap else ("mul", a, ("num", 1))
        if kind == "mul_zero":
            return ("mul", ("num", 0), a) if swap else ("mul", a, ("num", 0))
        if kind == "sub_zero":
            return ("sub", a, ("num", 0))
        if kind == "sub_self":
            return ("sub", a, a)
        if kind == "add_self":
            return ("add", a, a)
        if kind == "div_one":
            return ("truediv", a, ("num", 1))
        if kind == "neg_neg":
            return ("neg", ("neg", a))
        if kind == "pow_one":
            return ("pow", a, ("num", 1))
        if kind == "pow_zero":
            return ("pow", a, ("num", 0))
        return ("abs", ("neg", a))
    return (rng.choice(PLAIN), _expr(rng, depth - 1), _expr(rng, depth - 1))


def _tree_size(e: tuple) -> int:
    n = 0
    stack = [e]
    while stack:
        node = stack.pop()
        n += 1
        if node[0] not in ("sym", "num"):
            stack.extend(node[1:])
    return n


def make_expressions(n: int = N_EXPRESSIONS, seed: int = 7) -> list[tuple]:
    """``n`` random expressions of depth up to 5."""
    rng = random.Random(seed)
    return [_expr(rng, 5) for _ in range(n)]


# -- conversions ----------------------------------------------------------------------------------------


def to_term(e: tuple) -> Term:
    """A neutral expression as an exprgraph term (symbols float64, integer constants)."""
    if e[0] == "sym":
        return Symbol(e[1])
    if e[0] == "num":
        return const(e[1])
    return get_op(e[0])(*(to_term(c) for c in e[1:]))


def _node(name: str, children: list) -> tuple:
    # matchpy sorts the operands of commutative operations: compare add/mul operands as multisets
    if name in ("add", "mul"):
        children = sorted(children, key=repr)
    return (name, *children)


def canon_term(t: Term) -> tuple:
    """A comparable normal form of a term: numbers as floats, add/mul operands sorted."""
    if t.op.name == "symbol":
        return ("sym", t.name)
    if t.op.name == "const":
        return ("num", float(t.value))
    return _node(t.op.name, [canon_term(a) for a in t.args])


# -- Oryx-style rewriters over nested tuples -----------------------------------------------------------
#
# Two anchors written here. The first follows the seed's design: a single-dispatch tree protocol
# (tree_map / tree_children), a generator-based matcher that yields bindings (so patterns could
# backtrack), rules as functions, and term_rewriter = iterated(bottom_up(rule_list(...))) with
# change detection by ==. The second is the same strategy stripped to plain recursion, as a
# lower bound for what such a rewriter costs in Python.


class PVar:
    """A pattern variable of the Oryx-style matchers."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


@singledispatch
def o_tree_children(expr: Any) -> tuple:
    return ()


@o_tree_children.register
def _(expr: tuple) -> tuple:
    return expr[1:] if expr[0] not in ("sym", "num") else ()


@singledispatch
def o_tree_map(expr: Any, fn: Callable) -> Any:
    return expr


@o_tree_map.register
def _(expr: tuple, fn: Callable) -> Any:
    if expr[0] in ("sym", "num"):
        return expr
    return (expr[0], *(fn(c) for c in expr[1:]))


@singledispatch
def o_match(pattern: Any, expr: Any, bindings: dict) -> Iterator[dict]:
    """Literals match by ==."""
    if pattern == expr:
        yield bindings


@o_match.register
def _(pattern: PVar, expr: Any, bindings: dict) -> Iterator[dict]:
    if pattern.name in bindings:
        if bindings[pattern.name] == expr:
            yield bindings
        return
    yield {**bindings, pattern.name: expr}


@o_match.register
def _(pattern: tuple, expr: Any, bindings: dict) -> Iterator[dict]:
    if not isinstance(expr, tuple) or len(pattern) != len(expr):
        return
    yield from _o_match_seq(pattern, expr, 0, bindings)


def _o_match_seq(pattern: tuple, expr: tuple, i: int, bindings: dict) -> Iterator[dict]:
    if i == len(pattern):
        yield bindings
        return
    for b in o_match(pattern[i], expr[i], bindings):
        yield from _o_match_seq(pattern, expr, i + 1, b)


def o_make_rule(pattern: Any, handler: Callable[..., Any]) -> Callable[[Any], Any]:
    def rule(expr: Any) -> Any:
        b = next(o_match(pattern, expr, {}), None)
        return expr if b is None else handler(**b)

    return rule


def o_rule_list(*rules: Callable) -> Callable:
    def rule(expr: Any) -> Any:
        for r in rules:
            out = r(expr)
            if out != expr:
                return out
        return expr

    return rule


def o_bottom_up(rule: Callable) -> Callable:
    def rewrite_(expr: Any) -> Any:
        return rule(o_tree_map(expr, rewrite_))

    return rewrite_


def o_iterated(rule: Callable) -> Callable:
    def rewrite_(expr: Any) -> Any:
        while True:
            out = rule(expr)
            if out == expr:
                return expr
            expr = out

    return rewrite_


def o_term_rewriter(*rules: Callable) -> Callable:
    return o_iterated(o_bottom_up(o_rule_list(*rules)))


def lean_match(pattern: Any, expr: Any, bindings: dict) -> dict | None:
    """The lean variant's matcher: direct recursion, first match only."""
    if pattern.__class__ is PVar:
        if pattern.name in bindings:
            return bindings if bindings[pattern.name] == expr else None
        return {**bindings, pattern.name: expr}
    if pattern.__class__ is tuple:
        if expr.__class__ is not tuple or len(pattern) != len(expr):
            return None
        for p, e in zip(pattern, expr, strict=True):
            bindings = lean_match(p, e, bindings)
            if bindings is None:
                return None
        return bindings
    return bindings if pattern == expr else None


def lean_make_rule(pattern: Any, handler: Callable[..., Any]) -> Callable[[Any], Any]:
    def rule(expr: Any) -> Any:
        b = lean_match(pattern, expr, {})
        return expr if b is None else handler(**b)

    return rule


def lean_bottom_up(rule: Callable) -> Callable:
    def rewrite_(expr: Any) -> Any:
        if expr[0] not in ("sym", "num"):
            expr = (expr[0], *(rewrite_(c) for c in expr[1:]))
        return rule(expr)

    return rewrite_


def _oryx_rule_table(make_rule: Callable) -> list[Callable]:
    """The eleven algebra rules (commutative ones in both orders, as the seed's users write them)."""
    x = PVar("x")
    zero, one, two = ("num", 0), ("num", 1), ("num", 2)
    ident = lambda x: x
    return [
        make_rule(("add", x, zero), ident),  # x + 0 -> x
        make_rule(("add", zero, x), ident),
        make_rule(("sub", x, zero), ident),  # x - 0 -> x
        make_rule(("sub", x, x), lambda x: zero),  # x - x -> 0
        make_rule(("mul", x, one), ident),  # x * 1 -> x
        make_rule(("mul", one, x), ident),
        make_rule(("mul", x, zero), lambda x: zero),  # x * 0 -> 0
        make_rule(("mul", zero, x), lambda x: zero),
        make_rule(("truediv", x, one), ident),  # x / 1 -> x
        make_rule(("neg", ("neg", x)), ident),  # -(-x) -> x
        make_rule(("pow", x, one), ident),  # x ** 1 -> x
        make_rule(("pow", x, zero), lambda x: one),  # x ** 0 -> 1
        make_rule(("add", x, x), lambda x: ("mul", two, x)),  # x + x -> 2 * x
        make_rule(("abs", ("neg", x)), lambda x: ("abs", x)),  # |-x| -> |x|
    ]


def oryx_rules() -> Callable:
    """The Oryx-style term rewriter of the eleven rules (seed design)."""
    return o_term_rewriter(*_oryx_rule_table(o_make_rule))


def lean_rules() -> Callable:
    """The same strategy with plain recursion: a lower bound for a Python combinator rewriter."""
    return o_iterated(lean_bottom_up(o_rule_list(*_oryx_rule_table(lean_make_rule))))


def canon_tuple(e: tuple) -> tuple:
    if e[0] == "sym":
        return e
    if e[0] == "num":
        return ("num", float(e[1]))
    return _node(e[0], [canon_tuple(c) for c in e[1:]])


# -- matchpy -----------------------------------------------------------------------------------------------


def matchpy_setup() -> dict[str, Any] | None:
    """Operations, converters and the two rewriters of matchpy (None if it is not installed)."""
    try:
        from matchpy import Arity, ManyToOneReplacer, Operation, Pattern, ReplacementRule, Symbol, Wildcard
        from matchpy import replace_all as mp_replace_all
    except ImportError:
        return None
    ops = {
        "add": Operation.new("add", Arity.binary, "MAdd", commutative=True),
        "mul": Operation.new("mul", Arity.binary, "MMul", commutative=True),
        "sub": Operation.new("sub", Arity.binary, "MSub"),
        "truediv": Operation.new("truediv", Arity.binary, "MDiv"),
        "pow": Operation.new("pow", Arity.binary, "MPow"),
        "neg": Operation.new("neg", Arity.unary, "MNeg"),
        "abs": Operation.new("abs", Arity.unary, "MAbs"),
    }
    names = {cls: name for name, cls in ops.items()}
    zero, one, two = Symbol("0"), Symbol("1"), Symbol("2")
    x_ = Wildcard.dot("x")
    A, S, M, D, Pw, N, Ab = (ops[k] for k in ("add", "sub", "mul", "truediv", "pow", "neg", "abs"))

    def ident(x: Any) -> Any:
        return x

    rules = [
        ReplacementRule(Pattern(A(x_, zero)), ident),  # x + 0 -> x
        ReplacementRule(Pattern(S(x_, zero)), ident),  # x - 0 -> x
        ReplacementRule(Pattern(S(x_, x_)), lambda x: zero),  # x - x -> 0
        ReplacementRule(Pattern(M(x_, one)), ident),  # x * 1 -> x
        ReplacementRule(Pattern(M(x_, zero)), lambda x: zero),  # x * 0 -> 0
        ReplacementRule(Pattern(D(x_, one)), ident),  # x / 1 -> x
        ReplacementRule(Pattern(N(N(x_))), ident),  # -(-x) -> x
        ReplacementRule(Pattern(Pw(x_, one)), ident),  # x ** 1 -> x
        ReplacementRule(Pattern(Pw(x_, zero)), lambda x: one),  # x ** 0 -> 1
        ReplacementRule(Pattern(A(x_, x_)), lambda x: M(two, x)),  # x + x -> 2 * x
        ReplacementRule(Pattern(Ab(N(x_))), lambda x: Ab(x)),  # |-x| -> |x|
    ]

    def convert(e: tuple) -> Any:
        if e[0] == "sym":
            return Symbol(e[1])
        if e[0] == "num":
            return Symbol(str(e[1]))
        return ops[e[0]](*(convert(c) for c in e[1:]))

    def canon(m: Any) -> tuple:
        cls = type(m)
        if cls in names:
            return _node(names[cls], [canon(o) for o in m.operands])
        if m.name in ("0", "1", "2"):
            return ("num", float(m.name))
        return ("sym", m.name)

    return {
        "replacer": ManyToOneReplacer(*rules),
        "rules": [(r.pattern, r.replacement) for r in rules],
        "replace_all": mp_replace_all,
        "convert": convert,
        "canon": canon,
    }


# -- part 1 ---------------------------------------------------------------------------------------------------


def bench_rewriting() -> None:
    exprs = make_expressions()
    nodes = sum(_tree_size(e) for e in exprs)
    terms = [to_term(e) for e in exprs]
    oryx = oryx_rules()
    lean = lean_rules()
    mp = matchpy_setup()

    def ours() -> list:
        return [rewrite(t, ALGEBRA) for t in terms]

    def oryx_style() -> list:
        return [oryx(e) for e in exprs]

    def lean_style() -> list:
        return [lean(e) for e in exprs]

    reference = [canon_term(t) for t in ours()]
    o_name, l_name = "Oryx-style term_rewriter (seed design)", "Oryx-style, lean (plain recursion)"
    contenders: dict[str, Callable[[], Any]] = {"exprgraph rewrite": ours, o_name: oryx_style, l_name: lean_style}
    same = {
        o_name: [canon_tuple(r) for r in oryx_style()] == reference,
        l_name: [canon_tuple(r) for r in lean_style()] == reference,
    }
    repeat: dict[str, int] = {"exprgraph rewrite": 9, o_name: 3, l_name: 5}
    if mp is not None:
        mexprs = [mp["convert"](e) for e in exprs]
        replacer = mp["replacer"]

        def matchpy_post_order() -> list:
            return [replacer.replace_post_order(m) for m in mexprs]

        def matchpy_replace_all() -> list:
            return [mp["replace_all"](m, mp["rules"]) for m in mexprs]

        contenders["matchpy ManyToOneReplacer.replace_post_order"] = matchpy_post_order
        contenders["matchpy replace_all"] = matchpy_replace_all
        repeat["matchpy ManyToOneReplacer.replace_post_order"] = 5
        repeat["matchpy replace_all"] = 2
        same["matchpy ManyToOneReplacer.replace_post_order"] = [
            mp["canon"](r) for r in matchpy_post_order()
        ] == reference
        same["matchpy replace_all"] = [mp["canon"](r) for r in matchpy_replace_all()] == reference
    best = best_of(contenders, repeat=repeat)
    out_nodes = sum(_tree_size(r) for r in reference)
    ours_t = best["exprgraph rewrite"]
    rows = [["exprgraph `rewrite(t, ALGEBRA)`", fmt_seconds(ours_t), "1.00x", "-"]]
    for name in contenders:
        if name == "exprgraph rewrite":
            continue
        rows.append([name, fmt_seconds(best[name]), ratio(ours_t, best[name]), "yes" if same[name] else "NO"])
    print_table(
        f"Rewriting {len(exprs)} expressions ({nodes} nodes -> {out_nodes}) with 11 algebra rules",
        ["contender", "best time", "ours/anchor", "same normal forms"],
        rows,
    )
    if mp is None:
        skip("matchpy rows", "matchpy is not installed (pip install -e '.[bench]')")


# -- part 2 ---------------------------------------------------------------------------------------------------


def balanced(depth: int, op_name: str) -> tuple[Term, Any]:
    """A balanced tree of ``2**(depth+1) - 1`` nodes and the pattern with a variable at each leaf."""
    op = get_op(op_name)
    leaves: list[Any] = [Symbol(f"s{i}") for i in range(2**depth)]
    pats: list[Any] = [Var(f"v{i}") for i in range(2**depth)]
    while len(leaves) > 1:
        leaves = [op(leaves[i], leaves[i + 1]) for i in range(0, len(leaves), 2)]
        pats = [OpPattern(op, (pats[i], pats[i + 1])) for i in range(0, len(pats), 2)]
    return leaves[0], pats[0]


def balanced_tuples(depth: int) -> tuple[Any, Any]:
    """The same tree and pattern as nested tuples with logic variables, for ``unify``."""
    from unification import var

    leaves: list[Any] = [f"s{i}" for i in range(2**depth)]
    pats: list[Any] = [var(f"v{i}") for i in range(2**depth)]
    while len(leaves) > 1:
        leaves = [("sub", leaves[i], leaves[i + 1]) for i in range(0, len(leaves), 2)]
        pats = [("sub", pats[i], pats[i + 1]) for i in range(0, len(pats), 2)]
    return leaves[0], pats[0]


def bench_big_match(full_depth: int = 16, anchor_depth: int = 12) -> None:
    rows = []
    for op_name in ("sub", "add"):
        tree, pattern = balanced(full_depth, op_name)
        start = time.perf_counter()
        found = match(pattern, tree)  # the first call also compiles (analyses) the pattern
        first = time.perf_counter() - start
        assert len(found) == 2**full_depth
        best = best_of({"ours": lambda p=pattern, t=tree: match(p, t)}, repeat=5)["ours"]
        kind = "ordered" if op_name == "sub" else "commutative (both operand orders allowed)"
        rows.append([f"ours, {op_name} tree, {kind}", tree.size, fmt_seconds(best), fmt_seconds(first), "-"])
    try:
        from unification import unify
    except ImportError:
        skip("the unify rows", "logical-unification is not installed")
    else:
        small_tree, small_pattern = balanced(anchor_depth, "sub")
        ours_small = best_of({"ours": lambda: match(small_pattern, small_tree)}, repeat=5)["ours"]
        tup_tree, tup_pattern = balanced_tuples(anchor_depth)
        start = time.perf_counter()
        s = unify(tup_pattern, tup_tree, {})
        anchor = time.perf_counter() - start
        assert len(s) == 2**anchor_depth
        size = 2 ** (anchor_depth + 1) - 1
        rows.append(["ours, sub tree (the size unify was run at)", size, fmt_seconds(ours_small), "-",
                     ratio(ours_small, anchor)])  # fmt: skip
        rows.append(["logical-unification `unify`, one run", size, fmt_seconds(anchor), "-", "1.00x"])
    print_table(
        f"Matching a pattern with a variable at every leaf (full tree: {2 ** (full_depth + 1) - 1} nodes)",
        ["contender", "nodes", "best time", "first call (with compile)", "ours/unify"],
        rows,
    )
    print(
        f"(unify copies its substitution at every binding, so its time grows quadratically: it runs once, on "
        f"{2 ** (anchor_depth + 1) - 1} nodes)\n"
    )


def main() -> None:
    """Run both parts and print their tables."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))  # the recursive anchors need it
    bench_rewriting()
    bench_big_match()


if __name__ == "__main__":
    main()
