"""LaTeX printing, and the notebook displays of a term (LaTeX, SVG through Graphviz, IPython text).

``latex(term)`` writes a term the way a paper would: fractions, powers as superscripts, ``\\sin``
and ``\\sqrt``, ``\\max``, cases for ``where``. Parentheses follow the op table's precedence and
associativity, the same table the infix printer and the parser use; an op's LaTeX spelling is a
template whose operand slots say how tightly an operand must bind to go without parentheses. An
op without a spelling here prints from its table entry (its infix symbol, or ``\\operatorname``
with its name). The printer is iterative (a stack of text pieces), so deep chains print at the
default recursion limit.

>>> from exprgraph import symbols, sin, sqrt
>>> x, y = symbols("x y")
>>> print(latex((x*y + 3)/(y - 2) + sin(x)**2 - sqrt(y)))
\\frac{x \\cdot y + 3}{y - 2} + \\sin\\left(x\\right)^{2} - \\sqrt{y}
"""

from __future__ import annotations

import math
import shutil
import subprocess
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import TermTooLargeError
from . import stdops as _stdops  # noqa: F401 - the op table the spellings read
from .exact import ExactName, Rational, exact_latex
from .notation import operand_need
from .op import PREC_ADD, PREC_ATOM, PREC_MUL, PREC_UNARY, Op, get_op
from .printing import MAX_PRINT_NODES, check_tree_size, emit, single_text, to_dot, to_infix
from .term import Term, hooks

__all__ = ["latex", "latex_name", "repr_latex", "repr_svg", "pretty_text", "DISPLAY_LIMIT", "SVG_LIMIT"]

#: terms with more distinct nodes than this show as text in notebooks, not as LaTeX
DISPLAY_LIMIT = 2_000
#: terms with more distinct nodes than this are not drawn (Graphviz layout grows fast with size)
SVG_LIMIT = 400
#: longest tree (shared nodes expanded) the IPython text shows in full
PRETTY_LIMIT = 20_000

_GREEK = frozenset(
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi pi rho sigma tau upsilon phi chi psi "
    "omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega varepsilon vartheta varpi varrho varsigma "
    "varphi".split()
)


@dataclass(frozen=True)
class Form:
    """How an op prints: a template with operand slots ``{0}``, ``{1}``... (``{*}`` joins all operands).

    ``need[i]`` is the precedence operand ``i`` must have to go without parentheses (the last entry
    serves the remaining operands, and ``{*}``); ``prec`` is how tightly the printed form binds;
    with ``signed``, an operand after the first that prints with a leading minus gets parentheses
    (``x - \\left(-y\\right)``). ``joiner`` separates the operands of ``{*}`` and of a variadic chain.
    """

    template: str
    prec: int
    need: tuple[int, ...] = (0,)
    signed: bool = False
    joiner: str = ", "


def _infix(symbol: str, op: Op | str, signed: bool = False) -> Form:
    """``symbol`` between two operands, binding as ``op`` (an op or its name) does in the op table.

    The parentheses follow the infix printer's rule (:func:`~exprgraph.core.notation.operand_need`):
    a left-associative op writes ``a - b - c`` bare and ``a - (b - c)`` bracketed.
    """
    entry = get_op(op) if isinstance(op, str) else op
    p, assoc = entry.precedence, entry.assoc
    need = (operand_need(p, assoc, 0), operand_need(p, assoc, 1))
    joiner = f" {symbol} " if symbol else " "
    return Form("{0}" + joiner + "{1}", p, need, signed, joiner)


def _prefix(spelling: str, op: Op | str, bracket_same: bool = False) -> Form:
    """``spelling`` before the operand, binding as ``op`` does (``bracket_same``: bracket an operand as loose)."""
    entry = get_op(op) if isinstance(op, str) else op
    return Form(spelling + "{0}", entry.precedence, (entry.precedence + bracket_same,))


def _call(name: str) -> Form:
    return Form(name + "\\left({*}\\right)", PREC_ATOM)


_POW = get_op("pow")

# the LaTeX spelling of the standard ops; anything else prints from its table entry (see _form)
FORMS: dict[str, Form] = {
    "add": _infix("+", "add", signed=True),
    "sub": _infix("-", "sub", signed=True),
    "mul": _infix("\\cdot", "mul", signed=True),
    "mod": _infix("\\bmod", "mod", signed=True),
    "matmul": _infix("", "matmul", signed=True),  # A B
    # a dot product binds as a product
    "dot": _infix("\\cdot", "mul", signed=True),
    # a fraction needs no parentheses inside; outside it binds like a unary operand
    "truediv": Form("\\frac{{0}}{{1}}", PREC_UNARY, (0, 0)),
    "floordiv": Form("\\left\\lfloor \\frac{{0}}{{1}} \\right\\rfloor", PREC_ATOM, (0, 0)),
    "ceil_div": Form("\\left\\lceil \\frac{{0}}{{1}} \\right\\rceil", PREC_ATOM, (0, 0)),
    # the exponent sits in braces; the base needs parentheses unless it is an atom
    "pow": Form("{0}^{{1}}", _POW.precedence, (operand_need(_POW.precedence, _POW.assoc, 0), 0)),
    "lt": _infix("<", "lt"),
    "le": _infix("\\leq", "le"),
    "gt": _infix(">", "gt"),
    "ge": _infix("\\geq", "ge"),
    "eq": _infix("=", "eq"),
    "ne": _infix("\\neq", "ne"),
    "logical_and": _infix("\\land", "logical_and"),
    "logical_or": _infix("\\lor", "logical_or"),
    "logical_not": _prefix("\\lnot ", "logical_not"),
    # a sign after a sign is bracketed: -\\left(-x\\right)
    "neg": _prefix("-", "neg", bracket_same=True),
    "abs": Form("\\left|{0}\\right|", PREC_ATOM),
    "exp": Form("e^{{0}}", _POW.precedence),
    "log": _call("\\log"),
    "sqrt": Form("\\sqrt{{0}}", PREC_ATOM),
    "sin": _call("\\sin"),
    "cos": _call("\\cos"),
    "tan": _call("\\tan"),
    "tanh": _call("\\tanh"),
    "sigmoid": _call("\\sigma"),
    "log_sigmoid": _call("\\log\\sigma"),
    "maximum": _call("\\max"),
    "minimum": _call("\\min"),
    # a brace of cases reads as one block in a sum; inside a product it gets parentheses
    "where": Form(
        "\\begin{cases} {1} & \\text{if } {0} \\\\ {2} & \\text{otherwise} \\end{cases}", PREC_ADD, (0, 0, 0)
    ),
    "transpose": Form("{0}^{\\mathsf{T}}", _POW.precedence, (operand_need(_POW.precedence, _POW.assoc, 0),)),
    "sum": Form("\\sum\\left({0}\\right)", PREC_ATOM),
}


def _escape(text: str) -> str:
    """Text with LaTeX's special characters escaped."""
    out = []
    for ch in text:
        if ch in "_%$&#{}":
            out.append("\\" + ch)
        elif ch in "\\^~":
            out.append({"\\": "\\textbackslash{}", "^": "\\^{}", "~": "\\~{}"}[ch])
        else:
            out.append(ch)
    return "".join(out)


def _base_name(base: str) -> str:
    if base in _GREEK:
        return "\\" + base
    if len(base) == 1:
        return base
    return "\\mathit{" + _escape(base) + "}"


def latex_name(name: str) -> str:
    """A symbol name in LaTeX: ``alpha`` -> ``\\alpha``, ``x1`` -> ``x_{1}``, ``x_max`` -> ``x_{max}``."""
    if "_" in name.strip("_"):
        base, sub = name.strip("_").split("_", 1)
        return _base_name(base) + "_{" + _escape(sub.replace("_", ",")) + "}"
    stem = name.rstrip("0123456789")
    if stem and stem != name:
        return _base_name(stem) + "_{" + name[len(stem) :] + "}"
    return _base_name(name) if name.isidentifier() else _escape(name)


def _float(value: float) -> str:
    if value != value:
        return "\\mathrm{NaN}"
    if math.isinf(value):
        return "\\infty" if value > 0 else "-\\infty"
    text = single_text(value) if isinstance(value, np.float32) else repr(value)
    if "e" in text:
        mantissa, exponent = text.split("e")
        power = f"10^{{{int(exponent)}}}"
        return power if mantissa == "1" else f"{mantissa} \\cdot {power}"
    return text


def _scalar(value: Any) -> str:
    cls = value.__class__
    if cls is bool:
        return "\\mathrm{" + str(value) + "}"
    if cls is float or cls is np.float32:
        return _float(value)
    return str(value)


def _const(value: Any) -> str:
    if value.__class__ in (Rational, ExactName):
        return exact_latex(value)
    if not hasattr(value, "array"):
        return _scalar(value)
    array = value.array
    if array.ndim > 2 or array.size > 64:
        shape = " \\times ".join(str(d) for d in array.shape)
        return "\\mathrm{array}_{" + shape + "}"
    rows = [array.tolist()] if array.ndim == 1 else array.tolist()
    body = " \\\\ ".join(" & ".join(_scalar(v) for v in row) for row in rows)
    return "\\begin{bmatrix} " + body + " \\end{bmatrix}"


def _negative(node: Term) -> bool:
    if node.op.name != "const":
        return node.op.name == "neg"
    value = node.attr
    cls = value.__class__
    if cls is float or cls is np.float32:
        return math.copysign(1.0, value) < 0 and value == value
    return (cls is int or cls is Rational) and value < 0


def _form(node: Term) -> Form:
    """The spelling of ``node``'s op: its entry in FORMS, else one made from the op table."""
    op = node.op
    form = FORMS.get(op.name)
    if form is not None:
        if op.name in ("sum", "transpose") and node.attr is not None:
            text = _escape(f"{op.attr_name}={node.attr!r}")
            return Form("\\operatorname{" + op.name + "}_{" + text + "}\\left({0}\\right)", PREC_ATOM)
        return form
    if op.notation == "infix":
        return _infix("\\mathbin{" + _escape(op.symbol) + "}", op)
    if op.notation == "prefix":
        return _prefix("\\operatorname{" + _escape(op.symbol) + "} ", op, bracket_same=True)
    attr = ""
    if op.attr_name is not None and node.attr is not None:
        attr = "_{" + _escape(f"{op.attr_name}={node.attr!r}") + "}"
    return Form("\\operatorname{" + _escape(op.name) + "}" + attr + "\\left({*}\\right)", PREC_ATOM)


def _prec(node: Term) -> int:
    if not node.args:
        if _negative(node):
            return PREC_UNARY
        if node.op.name == "const" and node.attr.__class__ is float and "e" in repr(node.attr):
            return PREC_MUL  # 1.5 \cdot 10^{-10} is a product
        return PREC_ATOM
    return _form(node).prec


def _need(form: Form, i: int) -> int:
    return form.need[i] if i < len(form.need) else form.need[-1]


def _leading_minus(node: Term, memo: dict[Term, bool]) -> bool:
    """Whether the printed form of ``node`` starts with a minus sign (down its left operands, memoised)."""
    path = []
    while node not in memo:
        if _negative(node) or not node.args:
            memo[node] = _negative(node)
            break
        form = _form(node)
        child = node.args[0]
        if not form.template.startswith("{0}") or _prec(child) < _need(form, 0):
            memo[node] = False  # starts with a symbol of its own, or with a parenthesised operand
            break
        path.append(node)
        node = child
    answer = memo[node]
    for n in path:
        memo[n] = answer
    return answer


def _pieces(node: Term, memo: dict[Term, bool]) -> list:
    """Pieces printing ``node`` in reverse order: strings, and (operand, parenthesise) pairs."""
    if not node.args:
        if node.op.name == "symbol":
            return [latex_name(node.attr[0])]
        if node.op.name == "const":
            return [_const(node.attr)]
        return ["\\operatorname{" + _escape(node.op.name) + "}"]
    form = _form(node)
    args = node.args
    template = form.template
    if len(args) > 2 and "{*}" not in template and template.startswith("{0}") and "{2}" not in template:
        # variadic infix (add, mul with more operands): a chain of the same operator
        template = form.joiner.join("{" + str(i) + "}" for i in range(len(args)))
    else:
        template = template.replace("{*}", form.joiner.join("{" + str(i) + "}" for i in range(len(args))))
    parts: list = []
    pos = 0
    while pos < len(template):
        start = _slot_start(template, pos)
        if start < 0:
            parts.append(template[pos:])
            break
        end = template.index("}", start)
        if start > pos:
            parts.append(template[pos:start])
        i = int(template[start + 1 : end])
        arg = args[i]
        par = _prec(arg) < _need(form, i) or (i > 0 and form.signed and _leading_minus(arg, memo))
        parts.append((arg, par))
        pos = end + 1
    parts.reverse()
    return parts


def _slot_start(template: str, pos: int) -> int:
    """Index of the next ``{digits}`` slot at or after ``pos`` (-1 when there is none)."""
    while True:
        start = template.find("{", pos)
        if start < 0:
            return -1
        end = template.find("}", start)
        if end > start + 1 and template[start + 1 : end].isdigit():
            return start
        pos = start + 1


def latex(term: Term, *, limit: int = MAX_PRINT_NODES) -> str:
    """LaTeX source of ``term`` (math mode, without the surrounding ``$``)."""
    if term.__class__ is not Term:
        raise TypeError(f"latex() takes a term, not {type(term).__name__}")
    if term.args:
        check_tree_size((term,), limit, "LaTeX")
    memo: dict[Term, bool] = {}
    return emit([term], lambda node: _pieces(node, memo), "\\left(", "\\right)")


def repr_latex(term: Term) -> str | None:
    """``$latex$`` for a notebook, or None past :data:`DISPLAY_LIMIT` nodes (the text form shows then)."""
    if term.size > DISPLAY_LIMIT:
        return None
    try:
        return "$" + latex(term, limit=10 * DISPLAY_LIMIT) + "$"
    except TermTooLargeError:
        return None


def repr_svg(term: Term, *, timeout: float = 10.0) -> str | None:
    """The DAG as SVG drawn by Graphviz ``dot``; None without ``dot``, past :data:`SVG_LIMIT` nodes or on failure."""
    dot = shutil.which("dot")
    if dot is None or term.size > SVG_LIMIT:
        return None
    try:
        done = subprocess.run(
            [dot, "-Tsvg"], input=to_dot(term), capture_output=True, text=True, timeout=timeout, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    start = done.stdout.find("<svg")
    if done.returncode != 0 or start < 0:
        return None
    return done.stdout[start:]


def pretty_text(term: Term) -> str:
    """The infix text, or a one-line summary when shared nodes would expand past :data:`PRETTY_LIMIT`."""
    try:
        return to_infix(term, limit=PRETTY_LIMIT)
    except TermTooLargeError:
        return f"<{term.op.name} term: {term.size} distinct nodes, depth {term.depth}; dprint() lists it>"


hooks.repr_latex = repr_latex
hooks.repr_svg = repr_svg
hooks.pretty_text = pretty_text
