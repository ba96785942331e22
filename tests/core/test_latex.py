"""LaTeX printing and the notebook displays (LaTeX, SVG through Graphviz, IPython's pretty text)."""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from exprgraph import Symbol, const, evaluate, get_op, postorder, symbols, where
from exprgraph.core.latex import DISPLAY_LIMIT, latex, latex_name, pretty_text
from exprgraph.errors import EvaluationError

x, y, z = symbols("x y z")


@pytest.mark.parametrize(
    ("term", "text"),
    [
        ((x * y + 3) / (z - 2), r"\frac{x \cdot y + 3}{z - 2}"),
        (-(x**2), r"-x^{2}"),
        ((-x) ** 2, r"\left(-x\right)^{2}"),
        (const(-2) ** x, r"\left(-2\right)^{x}"),
        (x ** (y**z), r"x^{y^{z}}"),
        ((x**y) ** z, r"\left(x^{y}\right)^{z}"),
        (x - (y - z), r"x - \left(y - z\right)"),
        ((x - y) - z, r"x - y - z"),
        (x - -y, r"x - \left(-y\right)"),
        (x * (-x * y), r"x \cdot \left(-x \cdot y\right)"),
        (get_op("add")(x, y, z), r"x + y + z"),
        (get_op("exp")(x) ** 2, r"\left(e^{x}\right)^{2}"),
        (get_op("sqrt")(x + 1) + abs(x - y), r"\sqrt{x + 1} + \left|x - y\right|"),
        (x // y, r"\left\lfloor \frac{x}{y} \right\rfloor"),
        (
            where(x > 0, x, 0) * 2,
            r"\left(\begin{cases} x & \text{if } x > 0 \\ 0 & \text{otherwise} \end{cases}\right) \cdot 2",
        ),
        ((x < y) & (y <= z) | ~(x > z), r"x < y \land y \leq z \lor \lnot x > z"),
        (get_op("maximum")(x, y, 1), r"\max\left(x, y, 1\right)"),
        (const(1e-10) * x, r"10^{-10} \cdot x"),
        (const(2.5e-10) ** x, r"\left(2.5 \cdot 10^{-10}\right)^{x}"),
        (const(float("inf")) + const(float("nan")), r"\infty + \mathrm{NaN}"),
        (const([[1, 2], [3, 4]]), r"\begin{bmatrix} 1 & 2 \\ 3 & 4 \end{bmatrix}"),
        (get_op("transpose")(Symbol("A", shape=(2, 3))), r"A^{\mathsf{T}}"),
        (get_op("sum")(Symbol("A", shape=(2, 3))), r"\sum\left(A\right)"),
    ],
)
def test_latex_forms(term, text):
    assert latex(term) == text


def test_names():
    assert [latex_name(n) for n in ["x", "alpha", "x1", "alpha12", "x_max", "batch", "W_in_1"]] == [
        "x",
        r"\alpha",
        "x_{1}",
        r"\alpha_{12}",
        r"x_{max}",
        r"\mathit{batch}",
        r"W_{in,1}",
    ]


def test_ops_without_a_spelling_print_from_the_table():
    from exprgraph.dims import parse_expression

    assert latex(parse_expression("CeilToInt(n, 8)")) == r"\left\lceil \frac{n}{8} \right\rceil"
    from exprgraph.core.op import Op, register_op
    from exprgraph.core.term import REGISTRY

    register_op(Op("softsign", 1, lambda args, attr: ("float64", args[0].shape)))
    try:
        assert latex(get_op("softsign")(x) * 2) == r"\operatorname{softsign}\left(x\right) \cdot 2"
    finally:
        del REGISTRY["softsign"]


# a reader for the LaTeX this printer writes (only that): it turns the text into Python with the
# grouping the LaTeX shows, so evaluating it checks every parenthesis the printer put or left out
_WORDS = [
    (r"\left\lfloor \frac", "fdiv"), (r" \right\rfloor", ""), (r"\left|", "abs("), (r"\right|", ")"),
    (r"\left(", "("), (r"\right)", ")"), (r"\cdot", "*"), (r"\max", "maximum"), (r"\min", "minimum"),
    (r"\sin", "sin"), (r"\cos", "cos"), (r"\log", "log"), (r"\sqrt", "sqrt"), (r"\frac", "frac"),
]  # fmt: skip


def _python_of(text):
    out, frames, i = [], [], 0
    while i < len(text):
        if text.startswith("e^{", i):  # e^{x} is exp(x)
            out.append("exp(")
            frames.append("group")
            i += 3
            continue
        for word, python in _WORDS:
            if text.startswith(word, i):
                out.append(python)
                i += len(word)
                break
        else:
            ch = text[i]
            i += 1
            if ch == "{":
                last = out[-1] if out else ""
                kind = {")/(": "den", "),(": "den", "frac": "num", "fdiv": "fnum"}.get(last, "group")
                if kind in ("num", "fnum"):
                    out[-1] = "((" if kind == "num" else "fdiv(("  # floor of a fraction: numpy's //
                elif kind == "group":
                    out[-1:] = ["**(" if last == "^" else last + "("]
                frames.append(kind)
            elif ch == "}":
                out.append({"num": ")/(", "fnum": "),(", "den": "))", "group": ")"}[frames.pop()])
            else:
                out.append(ch)
    # numbers as numpy scalars, so that a power of a negative number is nan, not complex
    return re.sub(r"\d+\.\d+|\d+", lambda m: f"{'F' if '.' in m.group() else 'I'}({m.group()})", "".join(out))


_READABLE_UNARY = ["neg", "abs", "exp", "log", "sqrt", "sin", "cos"]
_READABLE_BINARY = ["add", "sub", "mul", "truediv", "pow", "maximum", "minimum", "floordiv"]


@st.composite
def readable_terms(draw, depth=4):
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from([x, y, z, const(2.0), const(-1.5), const(3), const(0.5)]))
    if draw(st.booleans()):
        return get_op(draw(st.sampled_from(_READABLE_UNARY)))(draw(readable_terms(depth - 1)))
    op = draw(st.sampled_from(_READABLE_BINARY))
    return get_op(op)(draw(readable_terms(depth - 1)), draw(readable_terms(depth - 1)))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(readable_terms())
def test_latex_groups_as_the_term_does(t):
    source = _python_of(latex(t))
    env = {"x": np.linspace(0.3, 2.9, 7), "y": np.linspace(-2.1, 1.7, 7), "z": np.linspace(1.1, 3.3, 7)}
    names = {**env, "F": np.float64, "I": np.int64, "exp": np.exp, "fdiv": np.floor_divide, "abs": np.abs}
    names.update(sqrt=np.sqrt, sin=np.sin, cos=np.cos, log=np.log)
    names.update(maximum=lambda *a: np.maximum.reduce(np.broadcast_arrays(*a)))
    names.update(minimum=lambda *a: np.minimum.reduce(np.broadcast_arrays(*a)))
    with np.errstate(all="ignore"):
        try:
            values = [np.broadcast_to(np.asarray(v, dtype=float), (7,)) for v in evaluate(postorder(t), env)]
        except EvaluationError:  # an int to a negative int power
            assume(False)
        got = np.broadcast_to(eval(source, {"__builtins__": {}}, names), (7,))  # our own output, never a user's
    # compared where every subterm is finite (floor(inf/2) is inf to LaTeX, inf // 2 is nan to numpy)
    finite = np.all([np.isfinite(v) for v in values], axis=0)
    np.testing.assert_allclose(got[finite], values[-1][finite], rtol=1e-9, err_msg=f"{latex(t)}\n{source}")


def test_deep_chains_and_shared_nodes():
    chain = x
    for _ in range(100_000):
        chain = chain + 1
    text = latex(chain)
    assert text.startswith("x + 1 + 1") and text.count("+") == 100_000
    shared = x
    for _ in range(40):
        shared = shared + shared  # 2**40 leaves as a tree
    from exprgraph.errors import TermTooLargeError

    with pytest.raises(TermTooLargeError):
        latex(shared)


def test_notebook_latex_and_pretty_text():
    f = (x * y + 3) / (z - 2)
    assert f._repr_latex_() == r"$\frac{x \cdot y + 3}{z - 2}$"
    big = x
    for _ in range(DISPLAY_LIMIT + 1):
        big = big * 1.5 + 1
    assert big._repr_latex_() is None  # too big for a notebook cell: shown as text
    assert pretty_text(f) == "(x*y + 3)/(z - 2)"
    shared = x
    for _ in range(60):
        shared = shared + shared
    assert pretty_text(shared) == "<add term: 61 distinct nodes, depth 60; dprint() lists it>"
    ipython_pretty = pytest.importorskip("IPython.lib.pretty")
    assert ipython_pretty.pretty([f, x]) == "[(x*y + 3)/(z - 2), x]"


def test_svg_when_graphviz_is_there_and_none_otherwise(monkeypatch):
    f = get_op("sin")(x * y) + x
    if shutil.which("dot") is not None:
        svg = f._repr_svg_()
        assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
        assert "sin float64" in svg and "mul float64" in svg
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert f._repr_svg_() is None
