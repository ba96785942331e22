"""The kinds of questions the shape-polymorphism tests of JAX and the symbolic-integer tests of tinygrad
ask, written here in our own words, with the answer each must get.

- JAX-style: dimension variables are >= 1; comparisons and bounds under constraints (``a >= 1``,
  ``b >= a``, equalities), floor division and modulo, max and min, non-negativity.
- tinygrad-style: variables with a range ``[lo, hi]``; simplification of divisions, remainders and
  sums of them, and the smallest and largest value (vmin/vmax) of an expression.

Each expected answer is checked first against the truth: on every point of a box cut from the ranges
where the facts hold (brute force), and for relations also with z3 over the whole ranges. Then our
answer must be that expected one: every case is decided, none is wrong.
"""

from __future__ import annotations

import itertools
import math

import pytest

from exprgraph.core.traversal import postorder
from exprgraph.dims import DimEnv, evaluate_expression, parse_expression, parse_relation
from exprgraph.errors import EvaluationError

z3 = pytest.importorskip("z3")

INF = math.inf
JAX = {"default": (1, None)}  # JAX's dimension variables are >= 1

# (environment, kind, arguments, expected): kinds "known" (statically_known), "equal", "bound", "simplify"
JAX_CASES: list[tuple[dict, str, tuple, object]] = [
    (JAX, "known", ("a >= 1",), True),
    (JAX, "known", ("a >= 0",), True),
    (JAX, "known", ("a < 1",), False),
    (JAX, "known", ("2*a >= a + 1",), True),
    (JAX, "known", ("a*b >= a",), True),
    (JAX, "known", ("-a <= -1",), True),
    (JAX, "known", ("a >= b",), None),
    (JAX, "bound", ("a - 2",), (-1, INF)),
    (JAX, "bound", ("-a",), (-INF, -1)),
    (JAX, "bound", ("a//2",), (0, INF)),
    (JAX, "bound", ("a % 3",), (0, 2)),
    (JAX, "bound", ("a*b - a",), (0, INF)),
    (JAX, "bound", ("max(a, b) - 1",), (0, INF)),
    (JAX, "bound", ("min(a, 4)",), (1, 4)),
    (JAX, "bound", ("5 - a % 3",), (3, 5)),
    (JAX, "bound", ("a - 3*(a//4)",), (1, INF)),
    (JAX, "bound", ("a - 2*(a//3)",), (1, INF)),
    (JAX, "equal", ("a - a % 2", "2*(a//2)"), True),
    (JAX, "equal", ("(2*a + 1)//2", "a"), True),
    (JAX, "known", ("(a*b) % b == 0",), True),
    (JAX, "known", ("a//2 <= a",), True),
    (JAX, "known", ("(a + 1)//2 <= a",), True),
    (JAX, "known", ("a % 4 < 4",), True),
    (JAX, "known", ("3*(a//3) <= a",), True),
    (JAX, "known", ("a//b <= a",), True),
    (JAX, "known", ("(a + 1)//2 == -((-a)//2)",), True),
    (JAX, "known", ("max(a, b) >= a",), True),
    (JAX, "known", ("max(a, b) >= b",), True),
    (JAX, "known", ("min(a, b) <= a",), True),
    (JAX, "known", ("max(a, b) >= min(a, b)",), True),
    (JAX, "equal", ("max(a, b) + min(a, b)", "a + b"), True),
    (JAX, "known", ("max(a, 1) == a",), True),
    (JAX, "known", ("min(a, 0) == 0",), True),
    ({**JAX, "constraints": ["a >= b"]}, "known", ("a >= b",), True),
    ({**JAX, "constraints": ["a >= b"]}, "known", ("b <= a",), True),
    ({**JAX, "constraints": ["a >= b"]}, "known", ("a + 1 > b",), True),
    ({**JAX, "constraints": ["a >= b"]}, "known", ("a < b",), False),
    ({**JAX, "constraints": ["a >= b"]}, "known", ("max(a, b) == a",), True),
    ({**JAX, "constraints": ["a >= b"]}, "known", ("min(a, b) == b",), True),
    ({**JAX, "constraints": ["a >= b"]}, "bound", ("a - b",), (0, INF)),
    ({**JAX, "constraints": ["b >= a", "c >= b"]}, "known", ("c >= a",), True),
    ({**JAX, "constraints": ["a == b + c"]}, "known", ("a >= b + 1",), True),
    ({**JAX, "constraints": ["a == 2*b"]}, "known", ("a % 2 == 0",), True),
    ({**JAX, "constraints": ["a == 2*b"]}, "equal", ("a//2", "b"), True),
    ({**JAX, "constraints": ["a <= 8"]}, "bound", ("a*a",), (1, 64)),
    ({**JAX, "constraints": ["a <= 8"]}, "known", ("a//9 == 0",), True),
    ({**JAX, "constraints": ["a - b >= 1"]}, "known", ("a > b",), True),
    ({"default": (2, None)}, "known", ("a*b >= a + b",), True),
    ({"default": (2, None)}, "known", ("a*b*c >= a + b + c",), True),
    ({**JAX, "constraints": ["a % 4 == 0"]}, "equal", ("a", "4*(a//4)"), True),
    ({**JAX, "constraints": ["a % 4 == 0"]}, "known", ("a >= 4",), True),
]

_PAD = "a + (7 - a%7)%7"  # a padded up to a multiple of 7
TINYGRAD_CASES: list[tuple[dict, str, tuple, object]] = [
    ({"ranges": {"a": (0, 8)}}, "simplify", ("(a*4 + 3)//4",), "a"),
    ({"ranges": {"a": (0, 8)}}, "simplify", ("(a*4 + 3) % 4",), 3),
    ({"ranges": {"a": (0, 8)}}, "bound", ("(a + 3)//4",), (0, 2)),
    ({"ranges": {"a": (0, 1)}}, "simplify", ("(3 + a)//4",), "a"),  # a takes two values: affine in a
    ({"ranges": {"a": (0, 1)}}, "simplify", ("(7*a + 2) % 4",), "-a+2"),
    ({"ranges": {"x": (0, 5)}}, "simplify", ("x % 8",), "x"),
    ({"ranges": {"x": (0, 5)}}, "bound", ("x % 8",), (0, 5)),
    ({"ranges": {"x": (8, 13)}}, "simplify", ("x % 8",), "x-8"),
    ({"ranges": {"x": (8, 13)}}, "simplify", ("x // 8",), 1),
    ({"ranges": {"x": (0, 100)}}, "simplify", ("(x%4)*3 + ((x//4)%2)*12",), "3*(x%8)"),
    ({"ranges": {"x": (0, 100)}}, "simplify", ("x%4 + 4*((x//4)%4)",), "x%16"),
    ({"ranges": {"x": (0, 100)}}, "simplify", ("(x//4)//2",), "x//8"),
    ({"ranges": {"x": (0, 100)}}, "simplify", ("(x//2)*2 + x%2",), "x"),
    ({"ranges": {"x": (0, 100)}}, "simplify", ("x % 8 % 4",), "x%4"),
    ({"ranges": {"x": (0, 100)}}, "simplify", ("x//3 + (x+1)//3 + (x+2)//3",), "x"),
    ({"ranges": {"x": (0, 100), "y": (0, 100)}}, "simplify", ("(4*x + 8*y)//4",), "x+2*y"),
    ({"ranges": {"x": (0, 100)}}, "simplify", ("(4*x + 2)//4",), "x"),
    ({"ranges": {"x": (0, 100)}}, "simplify", ("(4*x + 2) % 4",), 2),
    ({"ranges": {"x": (0, 1)}}, "simplify", ("(2*x) % 4",), "2*x"),
    ({"ranges": {"x": (0, 100)}}, "bound", ("(x % 16)//8",), (0, 1)),
    ({"ranges": {"a": (-3, 5), "b": (2, 4)}}, "bound", ("a*b",), (-12, 20)),
    ({"ranges": {"a": (-3, 5), "b": (2, 4)}}, "bound", ("-a",), (-5, 3)),
    ({"ranges": {"a": (-3, 5), "b": (2, 4)}}, "bound", ("a//2",), (-2, 2)),
    ({"ranges": {"a": (-3, 5), "b": (2, 4)}}, "bound", ("a % 4",), (0, 3)),
    ({"ranges": {"a": (-3, 5), "b": (2, 4)}}, "bound", ("max(a, b)",), (2, 5)),
    ({"ranges": {"a": (-3, 5), "b": (2, 4)}}, "bound", ("min(a, b)",), (-3, 4)),
    ({"ranges": {"a": (-3, 5), "b": (2, 4)}}, "simplify", ("max(a, a + 1)",), "a+1"),
    ({"ranges": {"a": (-3, 5), "b": (2, 4)}}, "simplify", ("min(b, 10)",), "b"),
    ({"ranges": {"a": (-3, 5), "b": (2, 4)}}, "simplify", ("max(b, 1)",), "b"),
    ({"ranges": {"s": (-20, 20)}}, "equal", ("(s + 1)//2", "-((-s)//2)"), True),
    ({"ranges": {"s0": (2, 64), "s1": (2, 64)}}, "known", ("s0*s1 >= s0 + s1",), True),
    ({"ranges": {"x": (0, 50)}}, "bound", ("x - 4*(x//4)",), (0, 3)),
    ({"ranges": {"x": (0, 50)}}, "bound", ("x - 3*(x//4)",), (0, 14)),
    ({"constraints": ["H % 2 == 0"]}, "simplify", ("2*CleanDiv(H, 2)",), "H"),
    ({"ranges": {"a": (1, 60)}}, "simplify", (f"({_PAD}) % 7",), 0),
    ({"ranges": {"a": (1, 60)}}, "bound", (_PAD,), (7, 63)),
    ({"ranges": {"a": (1, 60)}}, "simplify", (f"({_PAD})//(({_PAD})//7)",), 7),
    ({"ranges": {"a": (1, 60)}}, "equal", (_PAD, "7*((a + 6)//7)"), True),
]


# -- the oracle: brute force on a box where the facts hold, z3 over the whole ranges -----------------------


def _env(spec: dict) -> DimEnv:
    return DimEnv(spec.get("ranges"), spec.get("constraints", ()), default=spec.get("default", (0, None)))


def _names(spec: dict, texts: tuple) -> list[str]:
    found: set[str] = set(spec.get("ranges", {}))
    for text in [*texts, *spec.get("constraints", ())]:
        for side in parse_relation(text)[1:] if _is_relation(text) else (parse_expression(text),):
            found.update(s.attr[0] for s in side.free_symbols)
    return sorted(found)


def _is_relation(text: str) -> bool:
    return any(op in text for op in ("<", ">", "==", "!="))


def _box(spec: dict, names: list[str], width: int = 14) -> dict[str, range]:
    lo_default = spec.get("default", (0, None))[0]
    out = {}
    for n in names:
        lo, hi = spec.get("ranges", {}).get(n, (lo_default, None))
        out[n] = range(lo, (lo + width if hi is None else min(hi, lo + width)) + 1)
    return out


def _points(spec: dict, names: list[str]) -> list[dict[str, int]]:
    box = _box(spec, names)
    facts = spec.get("constraints", ())
    out = []
    for combo in itertools.product(*[box[n] for n in names]):
        point = dict(zip(names, combo, strict=True))
        if all(_truth(f, point) for f in facts):
            out.append(point)
    return out


def _truth(rel: str, point: dict) -> bool | None:
    op, left, right = parse_relation(rel)
    try:
        lv, rv = evaluate_expression(left, point), evaluate_expression(right, point)
    except EvaluationError:
        return None
    return {"lt": lv < rv, "le": lv <= rv, "gt": lv > rv, "ge": lv >= rv, "eq": lv == rv, "ne": lv != rv}[op]


def _z3_term(term, names: dict):
    """The z3 integer expression of a dimension term (floor division and modulo by positive divisors)."""
    out: dict = {}
    for node in postorder(term):
        op, a = node.op.name, [out[x] for x in node.args]
        if op == "symbol":
            out[node] = names[node.attr[0]]
        elif op == "const":
            out[node] = z3.IntVal(int(node.attr))
        elif op in ("add", "sub", "mul"):
            acc = a[0]
            for x in a[1:]:
                acc = acc + x if op == "add" else acc - x if op == "sub" else acc * x
            out[node] = acc
        elif op == "neg":
            out[node] = -a[0]
        elif op in ("floordiv", "mod"):
            out[node] = a[0] / a[1] if op == "floordiv" else a[0] % a[1]  # z3: floor and >= 0 for a divisor > 0
        elif op in ("maximum", "minimum"):
            pick = z3.If(a[0] >= a[1], a[0], a[1]) if op == "maximum" else z3.If(a[0] <= a[1], a[0], a[1])
            out[node] = pick
        else:
            raise NotImplementedError(op)
    return out[term]


def _z3_relation(rel: str, names: dict):
    op, left, right = parse_relation(rel)
    lv, rv = _z3_term(left, names), _z3_term(right, names)
    return {"lt": lv < rv, "le": lv <= rv, "gt": lv > rv, "ge": lv >= rv, "eq": lv == rv, "ne": lv != rv}[op]


def _z3_answer(spec: dict, rel: str, names: list[str]) -> bool | None:
    """True when z3 proves ``rel`` for all values in the ranges and facts, False when for none, else None."""
    zn = {n: z3.Int(n) for n in names}
    solver = z3.Solver()
    solver.set("timeout", 5000)
    lo_default, hi_default = spec.get("default", (0, None))
    for n in names:
        lo, hi = spec.get("ranges", {}).get(n, (lo_default, hi_default))
        solver.add(zn[n] >= lo)
        if hi is not None:
            solver.add(zn[n] <= hi)
    for f in spec.get("constraints", ()):
        solver.add(_z3_relation(f, zn))
    claim = _z3_relation(rel, zn)
    holds = solver.check(z3.Not(claim)) == z3.unsat
    never = solver.check(claim) == z3.unsat
    return True if holds else False if never else None


def _check_truth(spec: dict, kind: str, args: tuple, expected: object) -> None:
    """The expected answer is the truth: on the box (every kind), and by z3 (relations)."""
    names = _names(spec, args)
    points = _points(spec, names)
    assert points
    if kind in ("known", "equal"):
        rel = args[0] if kind == "known" else f"{args[0]} == {args[1]}"
        truths = {_truth(rel, p) for p in points} - {None}
        if expected is None:
            assert truths == {True, False}, (rel, truths)
        else:
            assert truths == {expected}, (rel, truths)
        if "CleanDiv" not in rel and "s + 1" not in rel and "(-a)" not in rel and "(-s)" not in rel:
            assert _z3_answer(spec, rel, names) == expected, rel
        return
    values = [evaluate_expression(args[0], p) for p in points]
    if kind == "bound":
        lo, hi = expected
        assert all(lo <= v <= hi for v in values)
        assert (lo == -INF or lo in values) and (hi == INF or hi in values or max(values) < hi), (args, lo, hi)
    else:  # simplify: the expected form has the same value at every point
        assert all(evaluate_expression(str(expected), p) == v for p, v in zip(points, values, strict=True))


def _answer(spec: dict, kind: str, args: tuple) -> object:
    env = _env(spec)
    if kind == "known":
        return env.statically_known(args[0])
    if kind == "equal":
        return env.equal(*args)
    if kind == "bound":
        return env.bound(args[0])
    return env.simplify(args[0])


@pytest.mark.parametrize(("spec", "kind", "args", "expected"), JAX_CASES + TINYGRAD_CASES)
def test_expected_answers_are_true(spec, kind, args, expected):
    _check_truth(spec, kind, args, expected)


@pytest.mark.parametrize(("spec", "kind", "args", "expected"), JAX_CASES)
def test_jax_style_cases_are_decided(spec, kind, args, expected):
    assert _answer(spec, kind, args) == expected


@pytest.mark.parametrize(("spec", "kind", "args", "expected"), TINYGRAD_CASES)
def test_tinygrad_style_cases_are_decided(spec, kind, args, expected):
    assert _answer(spec, kind, args) == expected


def test_the_oracle_catches_a_wrong_answer():
    with pytest.raises(AssertionError):
        _check_truth(JAX, "known", ("a >= 2",), True)
    with pytest.raises(AssertionError):
        _check_truth({"ranges": {"a": (0, 1)}}, "simplify", ("(3 + a)//4",), 0)  # a = 1 gives 1
    assert _z3_answer(JAX, "a*b >= a", ["a", "b"]) is True
    assert _z3_answer(JAX, "a >= b", ["a", "b"]) is None
