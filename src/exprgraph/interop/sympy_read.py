"""Reading SymPy expressions back as terms (``from_sympy``; needs ``exprgraph[sympy]``).

SymPy's canonical forms are read back as what they were written from: ``x + (-1)*y`` as
subtraction, ``x*y**-1`` as division, ``(-1)*x`` as negation, ``x**(1/2)`` as a square root (the
table is in :mod:`.sympy`). The expression tree is walked iteratively, each distinct node once.

Text is never handed to SymPy: ``sympify`` of a string runs it through Python's ``eval``. A string
given to :func:`from_sympy` is read by exprgraph's own parser (:func:`exprgraph.core.parse`,
the syntax ``str(term)`` prints), and anything that is neither a SymPy expression, a Python or
numpy number nor a string raises :class:`~exprgraph.errors.ConversionError`.

exprgraph is real-valued: SymPy constructs without a real value (the imaginary unit ``I``,
complex infinity ``zoo``, ``AccumBounds``, a negative number to a fractional power, symbols
known not to be real) raise ``ConversionError`` naming the construct instead of becoming nan.
``oo``, ``-oo`` and ``nan`` are IEEE's ``inf``, ``-inf`` and ``nan`` (``to_sympy`` writes them).
Imports: the core and eval.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

import numpy as np

from ..core import FLOAT64, INT64, Symbol, Term, const, get_op, parse
from ..core.assumptions import from_sympy_keywords
from ..core.exact import EULER, PI
from ..core.tokens import check_name
from ..errors import ConversionError
from ._optional import require
from .registry import Converter, register_converter

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
        for name in ("log2", "log10", "hypot"):  # C's functions in SymPy's codegen
            self.calls[getattr(cfunctions, name)] = get_op(name)
        same = ("asin", "acos", "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "erfc", "sign")
        self.calls.update({getattr(sp, name): get_op(name) for name in same})
        self.calls[sp.Rem] = get_op("fmod")  # Rem(p, q) = p - q*trunc(p/q)
        self.calls.update({getattr(sp, name): _reciprocal_of(get_op(op)) for name, op in _RECIPROCALS.items()})
        self.calls.update({getattr(sp, name): build for name, build in _FORMULAS.items()})
        self.chains[sp.Xor] = get_op("ne")  # a xor b = a != b on truth values

    def term(self, expr: Any) -> Term:
        return self.done[expr]

    def read(self, expr: Any) -> Term:
        sp = self.sp
        if expr.is_Symbol:
            return self.symbol(expr)
        unreal = _NOT_REAL.get(expr.__class__.__name__)
        if unreal is not None:  # no real value: refused, never read as nan
            raise ConversionError(f"from_sympy: {unreal} has no real value (exprgraph is real-valued)")
        if expr.is_Number or expr.is_NumberSymbol or expr in (sp.true, sp.false):
            return self.number(expr)
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
        try:
            check_name(name)  # any other name (e and pi too) is an exprgraph symbol's, printed quoted if need be
        except ValueError as exc:
            raise ConversionError(
                f"from_sympy: the SymPy symbol {name!r} is not an identifier exprgraph symbols may take ({exc}); "
                f"pass symbols={{{name!r}: Symbol('another_name')}}"
            ) from None
        if expr.is_extended_real is False:
            raise ConversionError(f"from_sympy: the SymPy symbol {name!r} is not real (imaginary or complex)")
        integer = bool(expr.is_integer)
        return Symbol(name, INT64 if integer else FLOAT64, **from_sympy_keywords(expr.assumptions0, integer))

    def number(self, expr: Any) -> Term:
        sp = self.sp
        if expr is sp.true or expr is sp.false:
            return const(bool(expr))
        if expr is sp.E or expr is sp.pi:
            return const(EULER if expr is sp.E else PI)  # exact constants, written back as E and pi
        if expr.is_Integer:
            return _integer(int(expr))
        if expr.is_Rational:
            return const(Fraction(int(expr.p), int(expr.q)))  # an exact rational constant
        if (
            expr.is_Float
            and expr._prec > 53
            and np.isfinite(float(expr))
            and sp.Rational(float(expr)) != sp.Rational(expr)
        ):
            raise ConversionError(
                f"from_sympy: the Float {expr} has {expr._prec} bits, float64 53: round it first (sympy.Float(x, 15))"
            )
        # Float (rounded as Python's float() rounds: beyond float64's range, inf or 0.0), oo, -oo, nan,
        # and the other (real) number symbols, EulerGamma, GoldenRatio... (rounded to the nearest float64)
        return const(float(expr))

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
        based = _log_base(sp, expr)
        if based is not None:  # log(x)/log(2) -> log2(x), log(x)/log(10) -> log10(x)
            return get_op(based[0])(self.term(based[1]))
        num: list[Term] = []
        den: list[Term] = []
        sign = 1
        for a in expr.args:
            if a.is_Rational and not a.is_Integer:
                p, q = int(a.p), int(a.q)
                if p < 0:
                    sign, p = -sign, -p
                if p != 1:
                    num.insert(0, _integer(p))
                den.append(_integer(q))
            elif a.is_Integer and a < 0:
                sign = -sign
                if a != -1:
                    num.insert(0, _integer(int(-a)))
            elif a.func is sp.Pow and a.exp.is_Rational and a.exp < 0:
                den.append(self.read_part(_reciprocal(sp, a)))
            else:
                num.append(self.term(a))
        out = _product(num) if num else const(1)
        if den:
            out = out / _product(den)
        return -out if sign < 0 else out

    def pow(self, expr: Any) -> Term:
        sp = self.sp
        base, exp = expr.args
        if base.is_Number and base.is_extended_negative and exp.is_Number and exp.is_finite and not _integral(exp):
            # SymPy's (-8)**(1/3) is the principal complex root; our pow is real (nan there)
            raise ConversionError(f"from_sympy: {expr} is a complex number (a negative base to a fractional power)")
        if exp == sp.Rational(1, 2):
            legs = _squares(sp, base)
            if legs is not None:  # sqrt(a**2 + b**2) -> hypot(a, b)
                return get_op("hypot")(self.read_part(legs[0]), self.read_part(legs[1]))
            return get_op("sqrt")(self.term(base))
        if exp.is_Rational and exp < 0:
            return const(1) / self.read_part(_reciprocal(sp, expr))
        return self.term(base) ** self.term(exp)

    def rounding(self, expr: Any) -> Term:
        # floor(a/b) -> a // b; floor(x) -> floor(x); ceiling(a/b) -> -((-a) // b); ceiling(x) -> ceil(x)
        sp = self.sp
        (inner,) = expr.args
        num, den = sp.fraction(sp.together(inner))
        if den == 1:
            return get_op("floor" if expr.func is sp.floor else "ceil")(self.term(inner))
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


#: SymPy classes without a real value -> how the error names them
_NOT_REAL = {
    "ImaginaryUnit": "the imaginary unit I",
    "ComplexInfinity": "zoo (complex infinity, SymPy's value of x/0)",
    "AccumulationBounds": "AccumBounds (a range of values, such as sin(oo))",
}


#: SymPy's reciprocal functions -> the op they are 1/ of
_RECIPROCALS = {"cot": "tan", "sec": "cos", "csc": "sin", "coth": "tanh", "sech": "cosh", "csch": "sinh"}


def _heaviside(x: Term, at_zero: Term | None = None) -> Term:
    # Heaviside(x, h0): 1 above 0, 0 below, h0 at 0 (SymPy's default h0 is 1/2)
    where, zero = get_op("where"), const(0.0)
    middle = const(0.5) if at_zero is None else at_zero
    return where(get_op("gt")(x, zero), const(1.0), where(get_op("lt")(x, zero), zero, middle))


def _sinc(x: Term) -> Term:
    # sinc(x) = sin(x)/x, 1 at 0
    return get_op("where")(get_op("eq")(x, const(0.0)), const(1.0), get_op("sin")(x) / x)


#: SymPy functions read as formulas of our ops
_FORMULAS = {
    "Heaviside": _heaviside,
    "sinc": _sinc,
    "frac": lambda x: x - get_op("floor")(x),  # frac(x) = x - floor(x)
    "KroneckerDelta": lambda a, b: get_op("where")(get_op("eq")(a, b), const(1), const(0)),
}


def _reciprocal_of(op: Any) -> Any:
    """A builder of ``1/op(x)`` (SymPy's ``cot(x)`` is ``1/tan(x)``)."""
    return lambda x: const(1.0) / op(x)


def _log_base(sp: Any, expr: Any) -> tuple[str, Any] | None:
    """``("log2", x)`` for SymPy's ``log(x)/log(2)`` (``log(x, 2)``), ``("log10", x)`` for base 10, else None."""
    if len(expr.args) != 2:
        return None
    for scale, log in (expr.args, expr.args[::-1]):
        if log.func is sp.log and len(log.args) == 1:
            for base, name in ((2, "log2"), (10, "log10")):
                if scale == 1 / sp.log(base):
                    return name, log.args[0]
    return None


def _squares(sp: Any, base: Any) -> tuple[Any, Any] | None:
    """``(a, b)`` when ``base`` is ``a**2 + b**2`` in SymPy's form, else None."""
    if base.func is not sp.Add or len(base.args) != 2:
        return None
    if all(a.func is sp.Pow and a.exp == 2 for a in base.args):
        return base.args[0].base, base.args[1].base
    return None


def _reciprocal(sp: Any, power: Any) -> Any:
    """``b**e`` for ``power`` = ``b**-e``, left unevaluated (SymPy would compute 10**(10**20) exactly)."""
    base, exp = power.args
    return base if exp == -1 else sp.Pow(base, -exp, evaluate=False)


def _integer(value: int) -> Term:
    """An int64 constant (SymPy's integers are unbounded: one beyond int64 is refused)."""
    if not -(2**63) <= value < 2**63:
        raise ConversionError(f"from_sympy: the integer {value} does not fit in int64")
    return const(value)


def _integral(number: Any) -> bool:
    """Whether a SymPy number is a whole number (an Integer, or a Float like 2.0)."""
    return bool(number.is_Integer or (number.is_Float and float(number).is_integer()))


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


def _as_sympy(sp: Any, value: Any) -> Any:
    """A SymPy expression, or a Python or numpy number made one (never text: sympify would eval it)."""
    if isinstance(value, sp.Basic):
        return value
    if isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
        return sp.sympify(value, strict=True)  # a conversion of the number, no parsing
    raise ConversionError(f"from_sympy takes SymPy expressions, numbers or text, not {type(value).__name__}")


def from_sympy(exprs: Any, symbols: Mapping[str, Term] | Iterable[Term] | None = None) -> Any:
    """The term of a SymPy expression (a list for a list); ``symbols`` maps names to the terms to use.

    Symbols become float64 symbols, or int64 when SymPy knows them to be integers, unless
    ``symbols`` (a mapping from names, or a list of symbol terms) supplies them. A string is
    parsed by exprgraph's own :func:`~exprgraph.core.parse` (never by SymPy, whose ``sympify``
    evaluates Python code): bad text raises :class:`~exprgraph.errors.ParseError`.
    """
    sp = _sympy()
    if symbols is None:
        table: Mapping[str, Term] = {}
    elif isinstance(symbols, Mapping):
        table = symbols
    else:
        table = {s.name: s for s in symbols}
    single = not isinstance(exprs, (list, tuple))
    items = [exprs] if single else list(exprs)
    texts = {i: parse(e, table) for i, e in enumerate(items) if isinstance(e, str)}
    roots = [_as_sympy(sp, e) for e in items if not isinstance(e, str)]
    reader = _Reader(sp, table)
    for node in _postorder_sympy(roots):
        if node not in reader.done:
            reader.done[node] = reader.read(node)
    read = iter(reader.done[r] for r in roots)
    out = [texts[i] if i in texts else next(read) for i in range(len(items))]
    return out[0] if single else out


register_converter(Converter("sympy", "from", from_sympy, "sympy"))
