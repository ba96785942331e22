"""Convert between terms and SymPy expressions (scalar terms; needs ``exprgraph[sympy]``).

``to_sympy`` builds each distinct node once, children first, so shared subterms stay shared and
deep chains convert without recursion. SymPy canonicalises as it builds (``x - y`` is
``x + (-1)*y``, ``x/y`` is ``x*y**-1``); ``from_sympy`` reads those forms back as subtraction,
division, negation and square roots, so ``to_sympy(from_sympy(e)) == e`` for SymPy expressions
made of the functions below, and ``from_sympy(to_sympy(t))`` has the values of ``t``.

| term | SymPy |
|---|---|
| symbol (float64, float32 / int64) | ``Symbol(name, real=True)`` / ``Symbol(name, integer=True)`` |
| float32 constant | ``Float`` of its value (SymPy has no float32; ``from_sympy`` gives float64) |
| exact constants ``rational(1, 3)``, ``pi``, ``e`` | ``Rational(1, 3)``, ``pi``, ``E`` (read back as themselves) |
| ``sqrt(2)``, ``2**rational(1, 3)``, ``log(3)`` (exact operands) | ``sqrt(2)``, ``2**(1/3)``, ``log(3)`` |
| ``+ - * / ** neg`` | ``Add``, ``Mul``, ``Pow`` |
| ``a // b``, ``a % b`` | ``floor(a/b)``, ``Mod(a, b)`` (both with Python's floor semantics) |
| ``abs exp log sqrt sin cos tan tanh`` | ``Abs exp log sqrt sin cos tan tanh`` |
| ``sigmoid(a)`` | ``1/(1 + exp(-a))`` |
| ``log1p``, ``expm1`` | ``log1p``, ``expm1`` of ``sympy.codegen.cfunctions`` (read back as themselves) |
| ``softplus(a)``, ``log_sigmoid(a)`` | ``log(1 + exp(a))``, ``-log(1 + exp(-a))`` |
| ``logaddexp(a, b)`` | ``log(exp(a) + exp(b))`` (``simplify`` turns these back into the stable ops) |
| ``maximum``, ``minimum`` | ``Max``, ``Min`` |
| ``where(c, a, b)`` | ``Piecewise((a, c), (b, True))`` |
| ``< <= > >= eq ne``, ``and or not`` | ``Lt Le Gt Ge Eq Ne``, ``And Or Not`` |
| ``asin ... atanh atan2 erf erfc sign floor ceil`` | the SymPy function of that meaning (``ceiling``) |
| ``trunc``, ``truncdiv``, ``fmod`` | ``sign(q)*floor(Abs(q))`` of ``x`` or ``a/b``; ``a - b*trunc(a/b)`` |
| ``log2``, ``log10``, ``hypot`` | ``log(x)/log(2)``, ``log(x)/log(10)``, ``sqrt(a**2 + b**2)`` (read back as ours) |
| ``broadcast_dim(a, b)``, ``identity(a)`` | ``Piecewise((a, Eq(b, 1)), (b, True))``, ``a`` |

Edge semantics. SymPy's booleans are no numbers: a bool operand of arithmetic becomes
``Piecewise((1, b), (0, True))`` and a number operand of logic ``Ne(x, 0)``, as evaluate reads
them. A division by a zero SymPy can see (``x/0``, ``x // (y - y)``) is written as IEEE computes
it, ``Piecewise((oo, x > 0), (-oo, x < 0), (nan, True))``, where SymPy would say ``zoo``; an
integer ``n // 0`` and ``n % 0`` are 0, a float ``x % 0.0`` nan. SymPy has no signed zero
(``-0.0`` is 0) and no int64 overflow (``n*m`` does not wrap around in SymPy), and it may make a
real subterm complex (``sqrt(-(x % 2))`` is ``I*sqrt(x % 2)`` to it), which ``from_sympy`` then
refuses. An expression SymPy refuses to build raises :class:`~exprgraph.errors.ConversionError`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..core import BOOL, FLOAT64, INT64, Term
from ..core.assumptions import to_sympy_keywords
from ..core.exact import EULER, PI, Rational
from ..core.walk import postorder
from ..errors import ConversionError
from ..eval import evaluate
from ._optional import require
from .registry import Converter, register_converter
from .sympy_read import from_sympy

__all__ = ["to_sympy", "from_sympy"]


def _sympy() -> Any:
    return require("sympy", "sympy")


def _builders(sp: Any) -> dict[str, Callable[..., Any]]:
    """op name -> function of the operands' SymPy expressions (and the node's attr)."""
    from sympy.codegen import cfunctions  # SymPy's log1p and expm1 (C's functions, with derivatives)

    def nary(f: Callable) -> Callable:
        return lambda args, attr: f(*args)

    return {
        "add": nary(sp.Add),
        "sub": lambda a, attr: a[0] - a[1],
        "mul": nary(sp.Mul),
        "truediv": lambda a, attr: a[0] / a[1],
        "floordiv": lambda a, attr: sp.floor(a[0] / a[1]),
        "ceil_div": lambda a, attr: sp.ceiling(a[0] / a[1]),
        "mod": _mod_builder(sp),
        "pow": lambda a, attr: a[0] ** a[1],
        "neg": lambda a, attr: -a[0],
        # |z| of what SymPy thinks may be complex (exp(sqrt(x))) would become exp(re(sqrt(x))): keep it
        "abs": lambda a, attr: sp.Abs(a[0], evaluate=bool(a[0].is_extended_real)),
        "exp": nary(sp.exp),
        "log": nary(sp.log),
        "sqrt": nary(sp.sqrt),
        "sin": nary(sp.sin),
        "cos": nary(sp.cos),
        "tan": nary(sp.tan),
        "tanh": nary(sp.tanh),
        "sigmoid": lambda a, attr: 1 / (1 + sp.exp(-a[0])),
        "log1p": nary(cfunctions.log1p),
        "expm1": nary(cfunctions.expm1),
        "softplus": lambda a, attr: sp.log(1 + sp.exp(a[0])),
        "log_sigmoid": lambda a, attr: -sp.log(1 + sp.exp(-a[0])),
        "logaddexp": lambda a, attr: sp.log(sp.exp(a[0]) + sp.exp(a[1])),
        "maximum": nary(sp.Max),
        "minimum": nary(sp.Min),
        "where": lambda a, attr: _piecewise(sp, *a),
        "lt": nary(sp.Lt),
        "le": nary(sp.Le),
        "gt": nary(sp.Gt),
        "ge": nary(sp.Ge),
        "eq": nary(sp.Eq),
        "ne": nary(sp.Ne),
        "logical_and": nary(sp.And),
        "logical_or": nary(sp.Or),
        "logical_not": nary(sp.Not),
        **_more_builders(sp, nary),
    }


def _more_builders(sp: Any, nary: Callable[[Callable], Callable]) -> dict[str, Callable[..., Any]]:
    """The inverse and hyperbolic functions, erf, rounding, sign, log2/log10 and the integer helpers."""
    same = ("asin", "acos", "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "erfc", "sign")
    out = {name: nary(getattr(sp, name)) for name in same}
    return {
        **out,
        "floor": nary(sp.floor),
        "ceil": nary(sp.ceiling),
        "trunc": lambda a, attr: _trunc(sp, a[0]),
        "log2": lambda a, attr: sp.log(a[0]) / sp.log(2),  # read back as log2
        "log10": lambda a, attr: sp.log(a[0]) / sp.log(10),
        "hypot": lambda a, attr: sp.sqrt(a[0] ** 2 + a[1] ** 2),
        "truncdiv": lambda a, attr: _trunc(sp, a[0] / a[1]),
        "fmod": lambda a, attr: a[0] - a[1] * _trunc(sp, a[0] / a[1]),  # C's remainder, the sign of a
        "identity": lambda a, attr: a[0],
        "broadcast_dim": lambda a, attr: sp.Piecewise((a[0], sp.Eq(a[1], 1)), (a[1], True)),
    }


def _piecewise(sp: Any, cond: Any, then: Any, otherwise: Any) -> Any:
    # where(c, a, where(d, b, e)) -> Piecewise((a, c), (b, d), (e, True)): one Piecewise for a chain
    if isinstance(otherwise, sp.Piecewise):
        return sp.Piecewise((then, cond), *otherwise.args)
    return sp.Piecewise((then, cond), (otherwise, True))


def _trunc(sp: Any, q: Any) -> Any:
    # trunc(q) = sign(q)*floor(|q|) (SymPy has no trunc function)
    return sp.sign(q) * sp.floor(sp.Abs(q))


def _mod_builder(sp: Any) -> Callable[[list, Any], Any]:
    """``Mod(a, b)``, left unevaluated around another Mod: SymPy 1.14 rewrites Mod(3*Mod(n, 3), 4)
    into Mod(3*Mod(n, 3)**2, 4), which differs at n = -4."""

    def build(args: list, attr: Any) -> Any:
        return sp.Mod(*args, evaluate=not args[0].has(sp.Mod))

    return build


def _sympy_const(sp: Any, value: Any) -> Any:
    cls = value.__class__
    if cls is bool:
        return sp.true if value else sp.false
    if cls is int:
        return sp.Integer(value)
    if cls is Rational:
        return sp.Rational(value.numerator, value.denominator)
    if value is PI or value is EULER:
        return sp.pi if value is PI else sp.E
    if cls is np.float32:
        value, cls = float(value), float  # its exact value (SymPy has no float32 type)
    if cls is float:
        if value != value:
            return sp.nan
        if math.isinf(value):
            return sp.oo if value > 0 else -sp.oo
        return sp.Float(value)
    raise ConversionError("to_sympy converts scalar terms; an array constant has no SymPy scalar form")


def _nan_result(sp: Any, name: str, args: list) -> Any:
    """What an op gives when an operand is nan, as IEEE says (None: no nan operand, or no rule)."""
    if not any(a is sp.nan for a in args):
        return None
    if name in ("lt", "le", "gt", "ge", "eq"):
        return sp.false  # every comparison with nan is false...
    if name == "ne":
        return sp.true  # ...but !=
    if name in ("where", "logical_and", "logical_or", "logical_not", "pow"):
        return None  # a branch not taken, a truth value, or nan**0 == 1: SymPy decides
    return sp.nan  # arithmetic and functions propagate nan


def _value_of(node: Term) -> Any:
    """Our value of a constant term (IEEE: nan outside an op's domain, inf for x/0)."""
    value = evaluate(node).item()
    return bool(value) if node.dtype == "bool" else int(value) if node.dtype == INT64 else float(value)


#: ops whose constant operands SymPy computes exactly (1/3 stays a Rational); other constant
#: subterms become our values, as SymPy numbers (SymPy would evalf them, or make them complex)
_EXACT = frozenset({"add", "sub", "mul", "truediv", "neg"})
#: float64 ops that stay exact over exact operands (sqrt(2), 2**(1/3), log(3), exp(1)): SymPy keeps them
#: symbolic; where it makes them complex (sqrt(-2), log(-1)) our value is nan, as evaluate gives
_EXACT_FLOAT = frozenset({"sqrt", "pow", "log", "exp", "sin", "cos", "tan", "abs", "atan", "sinh", "cosh", "tanh"})


#: the largest numerator and denominator of a constant exponent SymPy computes with exactly
_MAX_EXPONENT = 1024


def _small_exponent(e: Term) -> bool:
    """Whether the exponent ``e`` is no constant, or an exact one small enough to power with exactly."""
    if not e.is_const:
        return True
    v = e.attr
    if v.__class__ is int or v.__class__ is Rational:
        return abs(v.numerator) <= _MAX_EXPONENT and v.denominator <= _MAX_EXPONENT
    return True


class _Writer:
    """Builds SymPy expressions for terms, children first, one SymPy object per distinct node."""

    def __init__(self, sp: Any, real: bool) -> None:
        self.sp = sp
        self.build = _builders(sp)
        self.assume = {"real": True} if real else {}
        self.done: dict[Term, Any] = {}
        #: "symbolic" (a symbol below), "exact" (int constants and exact arithmetic) or "value"
        self.kind: dict[Term, str] = {}

    def get(self, node: Term) -> Any:
        expr = self.done.get(node)
        if expr is None:  # a constant subterm: our value, computed once for all of it
            expr = self.done[node] = _sympy_const(self.sp, _value_of(node))
        return expr

    def number(self, node: Term) -> Any:
        """The SymPy expression of ``node`` as a number: a bool counts as 1 or 0 (SymPy's booleans are no numbers)."""
        expr = self.get(node)
        if node.dtype != BOOL:
            return expr
        sp = self.sp
        if expr is sp.true or expr is sp.false:
            return sp.Integer(1 if expr is sp.true else 0)
        return sp.Piecewise((sp.Integer(1), expr), (sp.Integer(0), True))

    def operand(self, node: Term, i: int, arg: Term) -> Any:
        """Operand ``i`` of ``node`` in the kind SymPy wants there: a truth value or a number."""
        name = node.op.name
        if name in _TRUTHS or (name == "where" and i == 0):
            # logic reads a number as its truth value: x != 0 (nan too)
            return self.get(arg) if arg.dtype == BOOL else self.sp.Ne(self.get(arg), 0)
        if (name == "where" and node.dtype == BOOL) or (name in ("eq", "ne") and node.args[1 - i].dtype == BOOL):
            return self.get(arg)  # booleans chosen, or compared with booleans, stay booleans
        return self.number(arg)

    def classify(self, node: Term) -> str:
        if not node.args:
            if node.op.name == "symbol":
                return "symbolic"
            return "value" if node.attr.__class__ in (float, np.float32) else "exact"
        kinds = {self.kind[a] for a in node.args}
        if "symbolic" in kinds:
            return "symbolic"
        name = node.op.name
        exact_op = name in _EXACT or (name in _EXACT_FLOAT and node.dtype == FLOAT64)
        if name == "pow" and not _small_exponent(node.args[1]):
            return "value"  # SymPy would compute (1/3)**(10**9) exactly: our value instead
        return "exact" if kinds == {"exact"} and exact_op else "value"

    def convert(self, roots: list[Term]) -> list[Any]:
        order = postorder(roots)
        self.inlined = _inlined_chain_links(order, roots)
        for node in order:
            tensor = next((t for t in (node, *node.args) if t.shape), None)
            if tensor is not None and (node.args or node in roots):  # name the op, not the symbol it reads
                raise ConversionError(f"to_sympy converts scalar terms; {node.op.name} reads shape {tensor.shape}")
            kind = self.kind[node] = self.classify(node)
            if node.op.name == "symbol":
                sym, dtype, _ = node.attr
                facts = to_sympy_keywords(node) or ({"integer": True} if dtype == INT64 else self.assume)
                self.done[node] = self.sp.Symbol(sym, **facts)
            elif node.op.name == "const":
                self.done[node] = _sympy_const(self.sp, node.attr)
            elif kind != "value" and node not in self.inlined:
                try:
                    self.done[node] = self.expr(node)
                except _SYMPY_REFUSALS as err:  # x < zoo, And of a number...: SymPy will not build it
                    raise ConversionError(f"to_sympy: SymPy cannot build {node.op.name} here ({err})") from err
        return [self.get(r) for r in roots]

    def expr(self, node: Term) -> Any:
        """The SymPy expression of an operation node (its operands are converted)."""
        sp = self.sp
        name = node.op.name
        if name in _CHAINS:
            # a + b - c + ... is one Add (and a*b/c... one Mul): SymPy re-flattens a sum each
            # time it grows, so building a long chain link by link would take quadratic time
            parts = _chain_operands(node, self.inlined, self.number)
            total = _CHAINS[name] == "sum"
            if not total and any(sign < 0 and _is_zero(e) for e, sign in parts):
                # a/0*b: the sign of everything else decides (IEEE), where SymPy would say zoo
                rest = [e if sign > 0 else sp.Pow(e, -1) for e, sign in parts if not (sign < 0 and _is_zero(e))]
                return _over_zero(sp, sp.Mul(*rest))
            args = [e if sign > 0 else (-e if total else sp.Pow(e, -1)) for e, sign in parts]
            fn: Callable[..., Any] = (lambda a, attr: sp.Add(*a)) if total else (lambda a, attr: sp.Mul(*a))
        else:
            found = self.build.get(name)
            if found is None:
                raise ConversionError(f"to_sympy: the op {name!r} has no SymPy counterpart")
            fn = found
            args = [self.operand(node, i, a) for i, a in enumerate(node.args)]
            if name in ("floordiv", "mod", "ceil_div", "truncdiv", "fmod") and _is_zero(args[1]):
                return _by_zero(sp, name, node.dtype, args[0])
        nan = _nan_result(sp, name, args)
        if nan is not None:
            return nan
        expr = fn(args, node.attr)
        if self.kind[node] == "exact" and (
            expr is sp.zoo or expr is sp.nan or (expr.is_Integer and not -(2**63) <= expr < 2**63)
        ):
            return _sympy_const(sp, _value_of(node))  # 1/0 is inf to us, and int64 wraps around
        if isinstance(expr, sp.AccumBounds) or _real_or_nan(sp, expr) is sp.nan:
            return sp.nan  # sqrt(-max(1, x)) is imaginary to SymPy and sin(oo) a range: nan to us
        if expr is sp.zoo or sp.zoo in expr.args:
            with sp.evaluate(False):  # x/0: keep the division, SymPy would make it complex infinity
                return fn(args, node.attr)
        if expr.is_Piecewise:
            # sqrt(where(c, 0.5, -0.5)) folds into Piecewise((sqrt(0.5), c), (I*sqrt(0.5), True)): nan to us
            pieces = [(_real_or_nan(sp, e), c) for e, c in expr.args]
            if any(new is not e for (new, _), (e, _) in zip(pieces, expr.args, strict=True)):
                return sp.Piecewise(*pieces)
        return expr


def _real_or_nan(sp: Any, expr: Any) -> Any:
    """``expr``, or nan where SymPy knows it is not real (our functions are real: nan off their domain)."""
    return sp.nan if not expr.is_Boolean and expr.is_extended_real is False else expr


def _is_zero(expr: Any) -> bool:
    """Whether a SymPy expression is the number zero (SymPy folds ``y - y`` to it)."""
    return bool(expr.is_Number and expr.is_zero)


def _over_zero(sp: Any, num: Any) -> Any:
    """``num / 0`` as IEEE computes it: inf or -inf by the sign of ``num``, nan at 0 (and nan)."""
    if num.is_Number:
        return sp.oo if num > 0 else -sp.oo if num < 0 else sp.nan
    return sp.Piecewise((sp.oo, num > 0), (-sp.oo, num < 0), (sp.nan, True))


def _by_zero(sp: Any, name: str, dtype: str, num: Any) -> Any:
    """``num // 0``, ``num % 0`` or ``ceil_div(num, 0)`` as evaluate computes them (SymPy: zoo or an error)."""
    if dtype == INT64:
        return sp.Integer(0)  # numpy's integer division by zero gives 0, and so does evaluate
    if name in ("mod", "fmod"):
        return sp.nan  # fmod(x, 0.0) is nan
    return _over_zero(sp, num)  # x // 0.0 is x / 0.0, and so is ceil(x / 0.0) = -((-x) // 0.0)


def to_sympy(terms: Term | Iterable[Term], *, real: bool = True) -> Any:
    """The SymPy expression of a scalar term (a list of them for a list of terms).

    float64 symbols become real SymPy symbols (``real=False``: symbols without assumptions,
    which SymPy treats as complex), int64 ones integer symbols. Constant subterms become numbers
    (our values), except exact arithmetic on integers, which SymPy keeps exact (``1/3``).
    """
    if isinstance(terms, Term):
        return _Writer(_sympy(), real).convert([terms])[0]
    return _Writer(_sympy(), real).convert(list(terms))


#: what SymPy raises when it refuses to build an expression (its own checks, and a few of its bugs)
_SYMPY_REFUSALS = (TypeError, ValueError, ZeroDivisionError, AttributeError, RecursionError)

#: ops whose operands SymPy wants as truth values
_TRUTHS = frozenset({"logical_and", "logical_or", "logical_not"})

#: ops that chain into one SymPy Add (``sum``) or Mul (``prod``)
_CHAINS = {"add": "sum", "sub": "sum", "mul": "prod", "truediv": "prod"}


def _inlined_chain_links(order: list[Term], roots: list[Term]) -> set[Term]:
    """Sums (products) used once, by a sum (product): they are built as part of their user."""
    parent: dict[Term, Term | None] = {r: None for r in roots}
    for node in order:
        for a in node.args:
            parent[a] = node if a not in parent else None  # None: used more than once
    inlined = set()
    for node, user in parent.items():
        kind = _CHAINS.get(node.op.name)
        if kind is not None and user is not None and _CHAINS.get(user.op.name) == kind:
            inlined.add(node)
    return inlined


def _chain_operands(node: Term, inlined: set[Term], get: Callable[[Term], Any]) -> list[tuple[Any, int]]:
    """The operands of the chain under ``node``, left to right, with their signs (-1: subtracted/divided)."""
    out: list[tuple[Any, int]] = []
    stack = [(node, 1)]
    while stack:
        t, sign = stack.pop()
        if t is node or t in inlined:
            name = t.op.name
            if name in ("sub", "truediv"):
                stack.append((t.args[1], -sign))
                stack.append((t.args[0], sign))
            else:
                stack.extend((a, sign) for a in reversed(t.args))
        else:
            out.append((get(t), sign))
    return out


register_converter(Converter("sympy", "to", to_sympy, "sympy"))
