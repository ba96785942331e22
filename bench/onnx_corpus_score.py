"""Scoring shape answers against the corpus truth: each dim is correct, wrong or undecided.

An engine's answer for a value is a shape: None (unknown), or a tuple whose dims are an int, a
dimension term of :mod:`exprgraph.dims` (ours, or an anchor's ``dim_param`` text parsed by our
dims parser), or None. A dim is **decided** when it is an int or an expression of the model's input
dims only: it is then evaluated at each truth size's bindings and is **correct** when it equals the
true size at all three sizes, **wrong** otherwise (a rank that differs from the truth makes every dim
of the value wrong). A dim naming anything else (``unk__3``, one of our fresh dims, an opaque
function) is **undecided**, but it still claims that every dim carrying the same expression is
equal: dims grouped by expression whose true sizes differ are a false merge, and all of a group
but its largest subgroup of equal true sizes count as wrong.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from exprgraph.core import postorder
from exprgraph.dims import DimExpressionError, evaluate_expression, parse_expression

OK, WRONG, UNDECIDED = "ok", "wrong", "undecided"
_POWER = re.compile(r"([A-Za-z_]\w*)\*\*(\d+)")


@dataclass
class Score:
    """Counts of one engine on one model (or a total)."""

    dims: int = 0
    dynamic: int = 0
    ok: int = 0
    ok_dynamic: int = 0
    wrong: int = 0
    wrong_dynamic: int = 0
    merged_wrong: int = 0  # wrong by a false merge (part of ``wrong``)
    unparsed: int = 0  # dim_param texts our parser could not read (counted undecided)

    def add(self, other: Score) -> None:
        """Add ``other``'s counts to this one."""
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


@dataclass
class Scored:
    """One engine on one model: its counts and every value's per-dim verdicts."""

    score: Score
    verdicts: dict[str, list[str]] = field(default_factory=dict)
    dynamic: dict[str, list[bool]] = field(default_factory=dict)
    no_shape: set[str] = field(default_factory=set)  # values the engine gave no shape (even 0-d ones)


@dataclass(frozen=True)
class Unparsed:
    """A ``dim_param`` text our dims parser does not read (undecided, but still a merge claim)."""

    text: str


@dataclass(frozen=True)
class Rational:
    """sympy text with true division (``floor(H/2 - 1/2) + 1``), which our integer dims parser refuses.

    onnxruntime's tool prints sympy expressions; their rational steps are evaluated here exactly
    (fractions), with no ``eval``: ``names`` are the dims it names, ``value(bindings)`` its size.
    """

    text: str
    names: frozenset[str]
    tokens: tuple[str, ...]

    def value(self, bindings: Mapping[str, int]) -> Fraction:
        """The expression's exact value with each name bound."""
        out, end = _expr(self.tokens, 0, bindings)
        if end != len(self.tokens):
            raise ValueError(f"unexpected {self.tokens[end]!r} in {self.text!r}")
        return out


_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_]\w*)|(\*\*|[-+*/(),]))")
_FUNCS = {
    "floor": lambda a: Fraction(math.floor(a[0])),
    "ceiling": lambda a: Fraction(math.ceil(a[0])),
    "Max": max,
    "Min": min,
    "Mod": lambda a: a[0] - a[1] * math.floor(a[0] / a[1]),
    "Abs": lambda a: abs(a[0]),
}


def _tokens(text: str) -> tuple[str, ...] | None:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            return None
        out.append(m.group(0).strip())
        pos = m.end()
    return tuple(out)


def _expr(toks: tuple[str, ...], i: int, env: Mapping[str, int]) -> tuple[Fraction, int]:
    value, i = _term(toks, i, env)
    while i < len(toks) and toks[i] in "+-":
        rhs, j = _term(toks, i + 1, env)
        value, i = (value + rhs if toks[i] == "+" else value - rhs), j
    return value, i


def _term(toks: tuple[str, ...], i: int, env: Mapping[str, int]) -> tuple[Fraction, int]:
    value, i = _unary(toks, i, env)
    while i < len(toks) and toks[i] in ("*", "/"):
        rhs, j = _unary(toks, i + 1, env)
        value, i = (value * rhs if toks[i] == "*" else value / rhs), j
    return value, i


def _unary(toks: tuple[str, ...], i: int, env: Mapping[str, int]) -> tuple[Fraction, int]:
    if toks[i] == "-":
        value, i = _unary(toks, i + 1, env)
        return -value, i
    value, i = _atom(toks, i, env)
    if i < len(toks) and toks[i] == "**":
        power, i = _unary(toks, i + 1, env)
        value = value ** int(power)
    return value, i


def _atom(toks: tuple[str, ...], i: int, env: Mapping[str, int]) -> tuple[Fraction, int]:
    tok = toks[i]
    if tok == "(":
        value, i = _expr(toks, i + 1, env)
        return value, i + 1
    if tok.isdigit():
        return Fraction(int(tok)), i + 1
    if i + 1 < len(toks) and toks[i + 1] == "(":
        args, i = [], i + 2
        while True:
            arg, i = _expr(toks, i, env)
            args.append(arg)
            i += 1
            if toks[i - 1] == ")":
                break
        return Fraction(_FUNCS[tok](args)), i
    return Fraction(env[tok]), i + 1


def parse_param(text: str) -> Any:
    """An anchor's ``dim_param``: a dims term, a :class:`Rational` (sympy's true division), or :class:`Unparsed`."""
    try:
        return parse_expression(_POWER.sub(lambda m: "*".join([m.group(1)] * int(m.group(2))), text))
    except (DimExpressionError, ValueError, OverflowError):
        pass
    toks = _tokens(text)
    if toks is None:
        return Unparsed(text)
    after = (*toks[1:], "")
    names = frozenset(t for t, nxt in zip(toks, after, strict=True) if (t[0].isalpha() or t[0] == "_") and nxt != "(")
    rational = Rational(text, names, toks)
    try:  # a syntax check: unknown functions, unbalanced brackets
        rational.value(dict.fromkeys(names, 7))
    except ZeroDivisionError:
        pass
    except (IndexError, KeyError, ValueError, TypeError):
        return Unparsed(text)
    return rational


def proto_shapes(model: Any) -> dict[str, tuple | None]:
    """Shapes an inferred onnx model records (value_info, outputs, inputs), dims as int, term, Unparsed or None."""
    out: dict[str, tuple | None] = {}
    graph = model.graph
    for info in [*graph.input, *graph.value_info, *graph.output]:
        tt = info.type.tensor_type if info.type.HasField("tensor_type") else None
        if tt is None or not tt.HasField("shape"):
            out.setdefault(info.name, None)
            continue
        dims = []
        for d in tt.shape.dim:
            if d.HasField("dim_value"):
                dims.append(int(d.dim_value))
            elif d.HasField("dim_param") and d.dim_param:
                dims.append(parse_param(d.dim_param))
            else:
                dims.append(None)
        out[info.name] = tuple(dims)
    return out


def _names_and_opaque(term: Any) -> tuple[set[str], bool]:
    names, opaque = set(), False
    for node in postorder(term):
        if node.is_symbol:
            names.add(node.name)
        elif node.op.name == "dim_fn":
            opaque = True
    return names, opaque


def _dim_verdict(d: Any, vec: tuple[int, ...], bindings: list[dict[str, int]]) -> tuple[str, str | None]:
    """(verdict, merge key): the key is set for an undecided dim that still claims equality with its peers."""
    if d is None:
        return UNDECIDED, None
    if isinstance(d, Unparsed):
        return UNDECIDED, d.text
    if isinstance(d, int):
        return (OK if all(v == d for v in vec) else WRONG), None
    if isinstance(d, Rational):
        if not d.names <= bindings[0].keys():
            return UNDECIDED, d.text
        try:
            rational = tuple(d.value(b) for b in bindings)
        except Exception:  # an expression that cannot be evaluated at a size the model runs at
            return WRONG, None
        return (OK if rational == vec else WRONG), None
    names, opaque = _names_and_opaque(d)
    if opaque or not names <= bindings[0].keys():
        return UNDECIDED, str(d)
    try:
        values = tuple(evaluate_expression(d, b) for b in bindings)
    except Exception:  # division by zero or no broadcast at a size the model runs at: not its size
        return WRONG, None
    return (OK if values == vec else WRONG), None


def score(shapes: Mapping[str, Any] | None, truth: Mapping[str, list], bindings: list[dict[str, int]]) -> Scored:
    """Score an engine's shapes (None: it failed) against ``truth`` (value -> shape at each size)."""
    result = Scored(Score())
    s = result.score
    groups: dict[str, list[tuple[str, int, tuple[int, ...]]]] = defaultdict(list)
    for name, sizes in truth.items():
        if any(t is None for t in sizes) or len({len(t) for t in sizes}) != 1:
            continue  # not a tensor, or a rank that changes with the size: not scored
        vecs = [tuple(t[i] for t in sizes) for i in range(len(sizes[0]))]
        dyn = [len(set(v)) > 1 for v in vecs]
        s.dims += len(vecs)
        s.dynamic += sum(dyn)
        result.dynamic[name] = dyn
        shape = None if shapes is None else shapes.get(name)
        if shape is None:
            result.verdicts[name] = [UNDECIDED] * len(vecs)
            result.no_shape.add(name)
            continue
        if len(shape) != len(vecs):
            result.verdicts[name] = [WRONG] * len(vecs)
            continue
        verdicts = []
        for i, (d, vec) in enumerate(zip(shape, vecs, strict=True)):
            verdict, key = _dim_verdict(d, vec, bindings)
            s.unparsed += isinstance(d, Unparsed)
            if key is not None:
                groups[key].append((name, i, vec))
            verdicts.append(verdict)
        result.verdicts[name] = verdicts
    for members in groups.values():
        counts = Counter(vec for _, _, vec in members)
        keep = counts.most_common(1)[0][0]
        for name, i, vec in members:
            if vec != keep:  # a false merge: this dim's size is not its peers'
                result.verdicts[name][i] = WRONG
                s.merged_wrong += 1
    for name, verdicts in result.verdicts.items():
        for verdict, dyn in zip(verdicts, result.dynamic[name], strict=True):
            s.ok += verdict == OK
            s.ok_dynamic += verdict == OK and dyn
            s.wrong += verdict == WRONG
            s.wrong_dynamic += verdict == WRONG and dyn
    return result


def self_check() -> None:
    """Score a toy model whose shapes are known: raises AssertionError if the scoring is off."""
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", "s"])
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Concat", ["x", "x"], ["c"], axis=1),
        helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
        helper.make_node("Shape", ["x"], ["sh"]),
    ]
    model = helper.make_model(helper.make_graph(nodes, "toy", [x], []))
    bindings = [{"b": 1, "s": 5}, {"b": 2, "s": 8}, {"b": 3, "s": 13}]
    truth = {"r": [[1, 5], [2, 8], [3, 13]], "c": [[1, 10], [2, 16], [3, 26]], "t": [[5, 1], [8, 2], [13, 3]],
             "sh": [[2], [2], [2]]}  # fmt: skip
    b, s, u = parse_expression("b"), parse_expression("s"), parse_param("unk__1")
    # all correct: 7 dims, 6 dynamic
    perfect = score({"r": (b, s), "c": (b, parse_param("2*s")), "t": (s, b), "sh": (2,)}, truth, bindings).score
    assert (perfect.dims, perfect.dynamic, perfect.ok, perfect.ok_dynamic, perfect.wrong) == (7, 6, 7, 6, 0), perfect
    # r wrong (s+1), c's dim 1 and t's dim 0 share unk__1 but differ (one false merge), sh unknown
    bad = score({"r": (b, parse_param("s + 1")), "c": (b, u), "t": (u, b), "sh": None}, truth, bindings)
    assert (bad.score.ok, bad.score.wrong, bad.score.merged_wrong) == (3, 2, 1), bad.score
    assert bad.verdicts["sh"] == [UNDECIDED] and bad.verdicts["r"] == [OK, WRONG], bad.verdicts
    # a wrong rank makes every dim wrong; an int right at all sizes is correct; an unknown-only name undecided
    odd = score({"r": (b,), "c": (b, 16), "t": (parse_param("foo"), b), "sh": (2,)}, truth, bindings).score
    assert (odd.ok, odd.wrong) == (3, 3), odd
    # sympy's rational text is evaluated exactly: floor(s/2 - 1/2) + 1 == (s - 1)//2 + 1
    half = parse_param("floor(s/2 - 1/2) + 1")
    assert isinstance(half, Rational) and [half.value(x) for x in bindings] == [3, 4, 7], half
    assert parse_param("Mod(-s, 3) + Max(b, 2)**2").value({"s": 5, "b": 3}) == 10
    assert isinstance(parse_param("Piecewise((1, s > 2))"), Unparsed)
    # the anchors' text goes through proto_shapes: an inferred model's value_info
    inferred = onnx.shape_inference.infer_shapes(model)
    got = score(proto_shapes(inferred), truth, bindings).score
    assert got.wrong == 0 and got.ok >= 3, got


if __name__ == "__main__":
    self_check()
    print("scoring self-check passed")
