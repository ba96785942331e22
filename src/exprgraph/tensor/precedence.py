"""The two operator-precedence readers of the kernel language: right-hand sides and indices.

Both read tokens from a parser of :mod:`.parse` with explicit operator and operand stacks (so
nesting is limited only by memory) and build core terms: a right-hand side of the op table's
elementwise ops and tensor reads, an index of loop variables and integer constants (``+ - *``,
and ``//`` and ``%`` by a positive constant). Tokens come from the core tokenizer, binding powers
from the core precedence table (:mod:`exprgraph.core.notation`); every operator is read
left-associative. Imports: the core, :mod:`.affine`, :mod:`.names` and :mod:`.terms` (the
parser only for type checking).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import FLOAT64, INT64, Term, const
from ..core.notation import infix_ops
from ..core.op import get_op
from .affine import NonAffineError, index_var, linearize
from .names import check_name
from .terms import OPERATORS, function

if TYPE_CHECKING:
    from .parse import RefSyntax, Token, _Parser

__all__ = ["MAX_INDEX_DIVISIONS", "read_expression", "read_index"]

#: deepest nesting of ``//`` and ``%`` inside one index (``(i % 4) // 2`` nests 2)
MAX_INDEX_DIVISIONS = 32

#: binding power of each infix spelling: the core op table's, for the op the expression language
#: spells the same way (``%`` binds as ``mod`` does, though a kernel's ``%`` computes ``fmod``)
_BIN_PREC = {symbol: infix_ops()[symbol].precedence for symbol in OPERATORS}

_I_ADD, _I_SUB, _I_MUL = get_op("add"), get_op("sub"), get_op("mul")
_I_FLOORDIV, _I_MOD, _I_NEG = get_op("floordiv"), get_op("mod"), get_op("neg")
_I_OPS = {"+": _I_ADD, "-": _I_SUB, "*": _I_MUL, "//": _I_FLOORDIV, "%": _I_MOD}


class _Reader:
    """One reading: the parser, its operator stack and its operand stack.

    Operator entries: ``("bin", symbol, pos)``, ``("neg", pos)``, ``("paren", pos, base)`` and (on
    right-hand sides) ``("call", name, pos, base)``, ``base`` being the operand height at the bracket.
    """

    __slots__ = ("p", "ops", "vals")

    def __init__(self, p: _Parser) -> None:
        self.p = p
        self.ops: list[tuple] = []
        self.vals: list[Term] = []

    def read(self) -> Term:
        """Operands and operators in turn, until a token that continues neither."""
        p = self.p
        operand = True
        while True:
            tok = p.peek()
            if operand:
                if not self.prefix(tok):
                    self.operand(tok)
                    operand = False
                continue
            expect = self.operator(tok)
            if expect is None:
                break
            operand = expect
        self.reduce(0)
        return self.finish()

    def prefix(self, tok: Token) -> bool:
        """Take a unary sign or an opening bracket where an operand is expected; False for any other token."""
        if tok.kind != "op" or tok.text not in ("-", "+", "("):
            return False
        self.p.take()
        if tok.text == "-":
            self.ops.append(("neg", tok.pos))
        elif tok.text == "(":
            self.ops.append(("paren", tok.pos, len(self.vals)))
        return True  # unary plus changes nothing

    def take_binary(self, tok: Token) -> bool:
        """Push a binary operator (after reducing what binds at least as tightly); an operand is expected."""
        self.p.take()
        self.reduce(_BIN_PREC[tok.text])
        self.ops.append(("bin", tok.text, tok.pos))
        return True

    def reduce(self, prec: int) -> None:
        """Apply the operators on top that bind at least as tightly as ``prec`` (stopping at a bracket)."""
        ops = self.ops
        while ops and ops[-1][0] in ("bin", "neg"):
            top = ops[-1]
            if top[0] == "bin" and _BIN_PREC[top[1]] < prec:
                break
            self.apply(ops.pop())

    def operand(self, tok: Token) -> None:
        """Push the operand starting at ``tok`` (or open a call)."""
        raise NotImplementedError

    def operator(self, tok: Token) -> bool | None:
        """Take the token after an operand: whether an operand is expected next, None at the end."""
        raise NotImplementedError

    def apply(self, top: tuple) -> None:
        """Apply the operator entry ``top`` to the operands on top of the stack."""
        raise NotImplementedError

    def finish(self) -> Term:
        """The term read, once every operator is applied (an open bracket is an error)."""
        raise NotImplementedError


class _ExpressionReader(_Reader):
    """A right-hand side: numbers, tensor references, calls, and the kernel's operators."""

    __slots__ = ("refs", "var_pos")

    def __init__(self, p: _Parser, refs: list[RefSyntax], var_pos: dict[str, int]) -> None:
        super().__init__(p)
        self.refs = refs
        self.var_pos = var_pos

    def operand(self, tok: Token) -> None:
        p = self.p
        if tok.kind in ("int", "float"):
            p.take()
            self.vals.append(p.number(tok))
        elif tok.kind == "name":
            r = p.reference(self.var_pos)
            self.refs.append(r)
            self.vals.append(r.term)
        else:
            shown = "the end of the kernel" if tok.kind == "end" else repr(tok.text)
            raise p.error(f"expected a number, a tensor or '(', found {shown}")

    def prefix(self, tok: Token) -> bool:
        """A sign, a bracket, or a call opened (its arguments are operands still expected)."""
        if super().prefix(tok):
            return True
        if tok.kind != "name" or function(tok.text) is None:
            return False
        p = self.p
        p.take()
        p.expect("(", f"'(' after {tok.text}")
        self.ops.append(("call", tok.text, tok.pos, len(self.vals)))
        return True

    def operator(self, tok: Token) -> bool | None:
        p = self.p
        if tok.kind != "op":
            return None
        if tok.text in _BIN_PREC:
            return self.take_binary(tok)
        if tok.text == ")":
            p.take()
            self.close(tok)
            return False
        if tok.text == ",":
            p.take()
            self.reduce(0)
            if not self.ops or self.ops[-1][0] != "call":
                raise p.error("',' outside a function call", tok.pos)
            return True
        return None

    def apply(self, top: tuple) -> None:
        vals = self.vals
        if top[0] == "neg":
            vals.append(self.p.call(_I_NEG, (vals.pop(),), top[1]))
        else:
            b = vals.pop()
            a = vals.pop()
            vals.append(self.p.call(self.p.ops[top[1]], (a, b), top[2]))

    def close(self, tok: Token) -> None:
        """A ')': close a bracket, or a call (checking its arity and what an int kernel may call)."""
        p = self.p
        self.reduce(0)
        if not self.ops:
            raise p.error("unmatched ')'", tok.pos)
        top = self.ops.pop()
        if top[0] == "paren":
            return
        name, pos, base = top[1], top[2], top[3]
        args = tuple(self.vals[base:])
        del self.vals[base:]
        op = function(name)
        if op is None:  # pragma: no cover - a call is opened for known functions only
            raise p.error(f"unknown function {name!r}", pos)
        lo, hi = op.arity
        if len(args) < lo or (hi is not None and len(args) > hi):
            more = "" if hi == lo else " or more" if hi is None else f" to {hi}"
            raise p.error(f"{name} takes {lo} argument(s){more}, got {len(args)}", pos)
        term = p.call(op, args, pos)
        if p.data_type == "int" and (term.dtype == FLOAT64 or op.name == "pow"):
            # an int kernel computes in C int: no float results, no int ** negative int
            raise p.error(f"an int kernel cannot call {name}", pos)
        self.vals.append(term)

    def finish(self) -> Term:
        if self.ops:
            top = self.ops[-1]
            what = "(" if top[0] == "paren" else f"{top[1]}("
            raise self.p.error(f"unclosed '{what}'", top[2] if top[0] == "call" else top[1])
        return self.vals[0]


class _IndexReader(_Reader):
    """An index: loop variables and integer constants, affine but for ``//`` and ``%`` by constants."""

    __slots__ = ("var_pos", "nesting")

    def __init__(self, p: _Parser, var_pos: dict[str, int]) -> None:
        super().__init__(p)
        self.var_pos = var_pos
        self.nesting: dict[Term, int] = {}  # term -> depth of // and % inside it

    def operand(self, tok: Token) -> None:
        p = self.p
        if tok.kind == "int":
            p.take()
            self.vals.append(const(p.int_value(tok, "index constant"), INT64))
        elif tok.kind == "name":
            p.take()
            if function(tok.text) is not None:
                raise p.error(f"an index cannot call {tok.text}", tok.pos)
            check_name(tok.text, "loop variable", p.text, tok.pos)
            self.var_pos.setdefault(tok.text, tok.pos)
            self.vals.append(index_var(tok.text))
        elif tok.kind == "float":
            raise p.error("an index constant must be an integer")
        else:
            shown = "the end of the kernel" if tok.kind == "end" else repr(tok.text)
            raise p.error(f"expected a loop variable, an integer or '(' in an index, found {shown}")

    def operator(self, tok: Token) -> bool | None:
        p = self.p
        if tok.kind != "op":
            return None
        if tok.text == "/":
            raise p.error("an index divides with '//' (floor division), not '/'")
        if tok.text in _I_OPS:
            return self.take_binary(tok)
        if tok.text == ")":
            self.reduce(0)
            if not self.ops:
                return None  # not ours: let the caller report it
            p.take()
            self.ops.pop()
            return False
        return None

    def apply(self, top: tuple) -> None:
        vals, nesting = self.vals, self.nesting
        if top[0] == "neg":
            a = vals.pop()
            term = const(-a.attr) if a.is_const else Term(_I_NEG, (a,))
            nesting[term] = nesting.get(a, 0)
            vals.append(term)
            return
        b = vals.pop()
        a = vals.pop()
        symbol, pos = top[1], top[2]
        self.check_operands(symbol, a, b, pos)
        term = Term(_I_OPS[symbol], (a, b))
        depth = max(nesting.get(a, 0), nesting.get(b, 0)) + (symbol in ("//", "%"))
        if depth > MAX_INDEX_DIVISIONS:
            raise self.p.error(f"an index nests // and % more than {MAX_INDEX_DIVISIONS} deep", pos)
        nesting[term] = depth
        vals.append(term)

    def check_operands(self, symbol: str, a: Term, b: Term, pos: int) -> None:
        """An index multiplies a variable only by a constant, and divides only by a positive constant."""
        p = self.p
        if symbol == "*" and a.free_symbols and b.free_symbols:
            raise p.error("an index may multiply a variable only by a constant", pos)
        if symbol in ("//", "%"):
            if b.free_symbols:
                raise p.error(f"an index may use {symbol} only with a constant divisor", pos)
            try:
                c = linearize(b).const
            except NonAffineError as exc:  # pragma: no cover - constants always linearize
                raise p.error(str(exc), pos) from None
            if c <= 0:
                raise p.error(f"the divisor of {symbol} in an index must be positive", pos)

    def finish(self) -> Term:
        if self.ops:
            raise self.p.error("unclosed '(' in an index", self.ops[-1][1])
        return self.vals[0]


def read_expression(p: _Parser, refs: list[RefSyntax], var_pos: dict[str, int]) -> Term:
    """A right-hand side read from ``p`` (its references appended to ``refs``)."""
    return _ExpressionReader(p, refs, var_pos).read()


def read_index(p: _Parser, var_pos: dict[str, int]) -> Term:
    """One index expression (an int64 term) read from ``p``."""
    return _IndexReader(p, var_pos).read()
