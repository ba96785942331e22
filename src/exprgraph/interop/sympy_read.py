"""Reading SymPy expressions back as terms (``from_sympy``; needs ``exprgraph[sympy]``).

SymPy's canonical forms are read back as what they were written from: ``x + (-1)*y`` as
subtraction, ``x*y**-1`` as division, ``(-1)*x`` as negation, ``x**(1/2)`` as a square root (the
table is in :mod:`.sympy`). The expression tree is walked iteratively, each distinct node once.
Imports: the core and eval.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..core import FLOAT64, INT64, Symbol, Term, const, get_op
from ..errors import ConversionError
from ._optional import require

__all__ = ["from_sympy"]


def _sympy() -> Any:
    return require("sympy", "sympy")


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
