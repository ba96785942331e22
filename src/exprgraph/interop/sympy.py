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
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from ..core import FLOAT64, INT64, Symbol, Term, const, get_op
from ..core.walk import postorder
from ..errors import ConversionError
from ..eval import evaluate
from ._optional import require

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
        "where": lambda a, attr: sp.Piecewise((a[1], a[0]), (a[2], True)),
        "lt": nary(sp.Lt),
        "le": nary(sp.Le),
        "gt": nary(sp.Gt),
        "ge": nary(sp.Ge),
        "eq": nary(sp.Eq),
        "ne": nary(sp.Ne),
        "logical_and": nary(sp.And),
        "logical_or": nary(sp.Or),
        "logical_not": nary(sp.Not),
    }


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

    def classify(self, node: Term) -> str:
        if not node.args:
            if node.op.name == "symbol":
                return "symbolic"
            return "value" if node.attr.__class__ in (float, np.float32) else "exact"
        kinds = {self.kind[a] for a in node.args}
        if "symbolic" in kinds:
            return "symbolic"
        return "exact" if kinds == {"exact"} and node.op.name in _EXACT else "value"

    def convert(self, roots: list[Term]) -> list[Any]:
        order = postorder(roots)
        self.inlined = _inlined_chain_links(order, roots)
        for node in order:
            if node.shape:
                raise ConversionError(f"to_sympy converts scalar terms; {node.op.name} has shape {node.shape}")
            kind = self.kind[node] = self.classify(node)
            if node.op.name == "symbol":
                sym, dtype, _ = node.attr
                self.done[node] = (
                    self.sp.Symbol(sym, integer=True) if dtype == INT64 else self.sp.Symbol(sym, **self.assume)
                )
            elif node.op.name == "const":
                self.done[node] = _sympy_const(self.sp, node.attr)
            elif kind != "value" and node not in self.inlined:
                self.done[node] = self.expr(node)
        return [self.get(r) for r in roots]

    def expr(self, node: Term) -> Any:
        """The SymPy expression of an operation node (its operands are converted)."""
        sp = self.sp
        name = node.op.name
        if name in _CHAINS:
            # a + b - c + ... is one Add (and a*b/c... one Mul): SymPy re-flattens a sum each
            # time it grows, so building a long chain link by link would take quadratic time
            parts = _chain_operands(node, self.inlined, self.get)
            total = _CHAINS[name] == "sum"
            args = [e if sign > 0 else (-e if total else sp.Pow(e, -1)) for e, sign in parts]
            fn: Callable[..., Any] = (lambda a, attr: sp.Add(*a)) if total else (lambda a, attr: sp.Mul(*a))
        else:
            found = self.build.get(name)
            if found is None:
                raise ConversionError(f"to_sympy: the op {name!r} has no SymPy counterpart")
            fn = found
            args = [self.get(a) for a in node.args]
        nan = _nan_result(sp, name, args)
        if nan is not None:
            return nan
        expr = fn(args, node.attr)
        if self.kind[node] == "exact" and (expr is sp.zoo or expr is sp.nan):
            return _sympy_const(sp, _value_of(node))  # 1/0 is inf to us
        if isinstance(expr, sp.AccumBounds) or (not expr.is_Boolean and expr.is_extended_real is False):
            return sp.nan  # sqrt(-max(1, x)) is imaginary to SymPy and sin(oo) a range: nan to us
        if expr is sp.zoo or sp.zoo in expr.args:
            with sp.evaluate(False):  # x/0: keep the division, SymPy would make it complex infinity
                return fn(args, node.attr)
        return expr


def to_sympy(terms: Term | Iterable[Term], *, real: bool = True) -> Any:
    """The SymPy expression of a scalar term (a list of them for a list of terms).

    float64 symbols become real SymPy symbols (``real=False``: symbols without assumptions,
    which SymPy treats as complex), int64 ones integer symbols. Constant subterms become numbers
    (our values), except exact arithmetic on integers, which SymPy keeps exact (``1/3``).
    """
    if isinstance(terms, Term):
        return _Writer(_sympy(), real).convert([terms])[0]
    return _Writer(_sympy(), real).convert(list(terms))


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


# -- from SymPy -----------------------------------------------------------------------------------------


def _children(expr: Any) -> tuple:
    if expr.is_Number or expr.__class__.__name__ == "AccumulationBounds":
        return ()
    if expr.is_Piecewise:  # its operands are (expression, condition) pairs: visit both parts
        return tuple(part for pair in expr.args for part in pair.args)
    return expr.args


def _postorder_sympy(roots: list) -> list:
    """Distinct SymPy subexpressions, children first (an explicit stack: deep trees are fine)."""
    seen: set = set()
    order: list = []
    for root in roots:
        if root in seen:
            continue
        stack = [(root, iter(_children(root)))]
        seen.add(root)
        while stack:
            node, it = stack[-1]
            for child in it:
                if child not in seen:
                    seen.add(child)
                    stack.append((child, iter(_children(child))))
                    break
            else:
                stack.pop()
                order.append(node)
    return order


class _Reader:
    """Reads SymPy expressions into terms, one node at a time (children already converted)."""

    def __init__(self, sp: Any, symbols: Mapping[str, Term]) -> None:
        self.sp = sp
        self.symbols = symbols
        self.done: dict[Any, Term] = {}
        ops = ("exp", "log", "sin", "cos", "tan", "tanh", "Abs", "Max", "Min", "Mod", "Not")
        names = ("exp", "log", "sin", "cos", "tan", "tanh", "abs", "maximum", "minimum", "mod", "logical_not")
        self.calls = {getattr(sp, s): get_op(n) for s, n in zip(ops, names, strict=True)}
        rel = sp.core.relational
        self.relations = {
            rel.StrictLessThan: get_op("lt"),
            rel.LessThan: get_op("le"),
            rel.StrictGreaterThan: get_op("gt"),
            rel.GreaterThan: get_op("ge"),
            rel.Equality: get_op("eq"),
            rel.Unequality: get_op("ne"),
        }
        self.chains = {sp.And: get_op("logical_and"), sp.Or: get_op("logical_or")}
        self.calls[sp.ITE] = get_op("where")  # a boolean if-then-else
        from sympy.codegen import cfunctions

        self.calls[cfunctions.log1p] = get_op("log1p")
        self.calls[cfunctions.expm1] = get_op("expm1")

    def term(self, expr: Any) -> Term:
        return self.done[expr]

    def read(self, expr: Any) -> Term:
        sp = self.sp
        if expr.is_Symbol:
            return self.symbol(expr)
        if expr.is_Number or expr.is_NumberSymbol or expr in (sp.true, sp.false) or expr is sp.zoo:
            return self.number(expr)
        if expr is sp.I or isinstance(expr, sp.AccumBounds):
            return const(float("nan"))  # no real value: the imaginary unit, the range sin(oo) lies in
        cls = expr.func
        if cls is sp.Add:
            return self.add(expr)
        if cls is sp.Mul:
            return self.mul(expr)
        if cls is sp.Pow:
            return self.pow(expr)
        if cls is sp.Piecewise:
            return self.piecewise(expr)
        if cls is sp.floor or cls is sp.ceiling:
            return self.rounding(expr)
        args = [self.term(a) for a in expr.args]
        if cls in self.calls:
            return self.calls[cls](*args)
        if cls in self.relations:
            return self.relations[cls](*args)
        if cls in self.chains:
            return _chain(self.chains[cls], args)
        raise ConversionError(f"from_sympy: no exprgraph op for SymPy's {cls.__name__} (in {expr})")

    def symbol(self, expr: Any) -> Term:
        name = expr.name
        if name in self.symbols:
            return self.symbols[name]
        if not name.isidentifier():
            raise ConversionError(f"from_sympy: the SymPy symbol {name!r} is not an identifier; pass symbols={{...}}")
        return Symbol(name, INT64 if expr.is_integer else FLOAT64)

    def number(self, expr: Any) -> Term:
        sp = self.sp
        if expr is sp.true or expr is sp.false:
            return const(bool(expr))
        if expr is sp.E:
            return get_op("exp")(const(1))  # e = exp(1), which SymPy reads back as E
        if expr.is_Integer:
            value = int(expr)
            if not -(2**63) <= value < 2**63:
                raise ConversionError(f"from_sympy: the integer {value} does not fit in int64")
            return const(value)
        if expr.is_Rational:
            p, q = int(expr.p), int(expr.q)
            return const(p) / const(q)  # exact: SymPy reads p/q back as the Rational
        if expr is sp.zoo:
            return const(float("nan"))  # complex infinity (a division by zero) has no real value
        return const(float(expr))  # Float, oo, -oo, nan, pi and the other number symbols

    def add(self, expr: Any) -> Term:
        # SymPy's x - y is Add(x, -y): terms with a negative sign are subtracted
        args = list(expr.args)
        args.sort(key=lambda a: _negated(self.sp, a) is not None)  # stable: positive terms first
        out = self.term(args[0])
        for a in args[1:]:
            neg = _negated(self.sp, a)
            out = out + self.term(a) if neg is None else out - self.read_part(neg)
        return out

    def read_part(self, expr: Any) -> Term:
        """A term for ``expr``, which may be a part SymPy never built on its own (converted on the spot)."""
        done = self.done.get(expr)
        if done is not None:
            return done
        for node in _postorder_sympy([expr]):
            if node not in self.done:
                self.done[node] = self.read(node)
        return self.done[expr]

    def mul(self, expr: Any) -> Term:
        # SymPy's x/y is Mul(x, Pow(y, -1)) and -x is Mul(-1, x): split numerator and denominator
        sp = self.sp
        num: list[Term] = []
        den: list[Term] = []
        sign = 1
        for a in expr.args:
            if a.is_Rational and not a.is_Integer:
                p, q = int(a.p), int(a.q)
                if p < 0:
                    sign, p = -sign, -p
                if p != 1:
                    num.insert(0, const(p))
                den.append(const(q))
            elif a.is_Integer and a < 0:
                sign = -sign
                if a != -1:
                    num.insert(0, const(int(-a)))
            elif a.func is sp.Pow and a.exp.is_Rational and a.exp < 0:
                den.append(self.read_part(sp.Pow(a.base, -a.exp)))
            else:
                num.append(self.term(a))
        out = _product(num) if num else const(1)
        if den:
            out = out / _product(den)
        return -out if sign < 0 else out

    def pow(self, expr: Any) -> Term:
        sp = self.sp
        base, exp = expr.args
        if exp == sp.Rational(1, 2):
            return get_op("sqrt")(self.term(base))
        if exp.is_Rational and exp < 0:
            return const(1) / self.read_part(sp.Pow(base, -exp))
        return self.term(base) ** self.term(exp)

    def rounding(self, expr: Any) -> Term:
        # floor(a/b) -> a // b; floor(x) -> x // 1; ceiling(x) -> -((-x) // 1)
        sp = self.sp
        (inner,) = expr.args
        num, den = sp.fraction(sp.together(inner))
        if expr.func is sp.floor:
            return self.read_part(num) // self.read_part(den)
        return -((-self.read_part(num)) // self.read_part(den))

    def piecewise(self, expr: Any) -> Term:
        # Piecewise((a, c1), (b, c2), ..., (z, True)) -> where(c1, a, where(c2, b, ... z)); no True: nan
        sp = self.sp
        pieces = list(expr.args)
        if pieces[-1].cond is sp.true:
            out = self.term(pieces[-1].expr)
            pieces = pieces[:-1]
        else:
            out = const(float("nan"))
        where = get_op("where")
        for piece in reversed(pieces):
            out = where(self.term(piece.cond), self.term(piece.expr), out)
        return out


def _negated(sp: Any, expr: Any) -> Any:
    """``e`` when ``expr`` is ``-e`` in SymPy's form (a product with a negative coefficient), else None."""
    if expr.is_Number and expr < 0:
        return -expr
    if expr.func is sp.Mul and expr.args and expr.args[0].is_Number and expr.args[0] < 0:
        return -expr
    return None


def _product(factors: list[Term]) -> Term:
    out = factors[0]
    for f in factors[1:]:
        out = out * f
    return out


def _chain(op: Any, args: list[Term]) -> Term:
    out = args[0]
    for a in args[1:]:
        out = op(out, a)
    return out


def from_sympy(exprs: Any, symbols: Mapping[str, Term] | Iterable[Term] | None = None) -> Any:
    """The term of a SymPy expression (a list for a list); ``symbols`` maps names to the terms to use.

    Symbols become float64 symbols, or int64 when SymPy knows them to be integers, unless
    ``symbols`` (a mapping from names, or a list of symbol terms) supplies them.
    """
    sp = _sympy()
    if symbols is None:
        table: Mapping[str, Term] = {}
    elif isinstance(symbols, Mapping):
        table = symbols
    else:
        table = {s.name: s for s in symbols}
    single = not isinstance(exprs, (list, tuple))
    roots = [sp.sympify(e) for e in ([exprs] if single else exprs)]
    reader = _Reader(sp, table)
    for node in _postorder_sympy(roots):
        if node not in reader.done:
            reader.done[node] = reader.read(node)
    out = [reader.done[r] for r in roots]
    return out[0] if single else out
