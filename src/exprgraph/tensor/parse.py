"""The kernel language: tokenizer and iterative parsers for statements, right-hand sides and indices.

Grammar (the course's, plus function calls on the right)::

    kernel    := statement+
    statement := ref "=" expr ";"
    ref       := NAME ["<" INT ("," INT)* ">"] ["[" index ("," index)* "]"]
    expr      := operands joined by + - * / // %, unary -, ( ), numbers, refs, and calls
                 name(e, ...) of the op table's elementwise ops (exp, log, max, where...)
    index     := loop variables and integer constants joined by + -, * (by a constant),
                 // and % (by a positive constant), unary -, ( )

Both expression parsers are operator-precedence parsers with explicit stacks, so nesting depth
is limited only by memory. Right-hand sides are built as core terms (:mod:`.terms`): a reference
is an ``access`` of the tensor's symbol, whose shape is the one the kernel declares for it. Every
error is a :class:`~exprgraph.errors.KernelError` carrying the offset of the offending token and a
caret line. :func:`parse_kernel` and :func:`load_case` are
the public entry points; they hand the syntax to :mod:`.ir`, which checks names and shapes and
infers loop ranges.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..console import NotRegularFileError, read_bounded
from ..core import FLOAT64, INT64, Symbol, Term
from ..core.op import get_op
from ..core.tokens import Lexicon, check_text_size, max_text
from ..core.tokens import tokenize as core_tokenize
from ..errors import KernelError
from .ir import Kernel, build_kernel
from .names import check_name
from .precedence import MAX_INDEX_DIVISIONS, read_expression, read_index
from .terms import OPERATORS, function, number, read

__all__ = [
    "Token",
    "tokenize",
    "RefSyntax",
    "StatementSyntax",
    "parse_statements",
    "parse_kernel",
    "load_case",
    "MAX_INT_CONSTANT",
    "MAX_INDEX_DIVISIONS",
]

#: the largest integer constant a kernel may write (C int)
MAX_INT_CONSTANT = 2**31 - 1

#: the kernel's tokens (the core tokenizer's table): int and float numbers, C names, its operators
#: and brackets (``<>`` of shapes, ``[]`` of indices, ``;`` ending a statement)
LEXICON = Lexicon(
    ("//", *"-+*/%()[]<>,;="),
    kinds=(
        ("float", r"\d+\.\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+"),
        ("int", r"\d+"),
        ("name", r"[A-Za-z_][A-Za-z_0-9]*"),
    ),
    error=KernelError,
)


@dataclass(frozen=True)
class Token:
    """One token: ``kind`` (name, int, float, op, end), its ``text`` and offset ``pos``."""

    kind: str
    text: str
    pos: int


def tokenize(text: str) -> list[Token]:
    """Split kernel text into tokens (whitespace dropped); a stray character is a KernelError."""
    return [Token(*tok) for tok in core_tokenize(text, LEXICON)]


@dataclass
class RefSyntax:
    """A tensor reference as written: name, shape (None if omitted), indices (None for ``alpha<1>``)."""

    name: str
    shape: tuple[int, ...] | None
    index: tuple[Term, ...] | None
    pos: int
    #: offset of each index expression
    index_pos: tuple[int, ...]
    #: the reference as a term (a read of the tensor's symbol)
    term: Term


@dataclass
class StatementSyntax:
    """One statement as written: its target, right-hand side and every reference in order."""

    target: RefSyntax
    rhs: Term
    refs: list[RefSyntax]
    pos: int
    #: loop variable name -> offset of its first occurrence
    var_pos: dict[str, int] = field(default_factory=dict)


class _Parser:
    """State of one parse: the text, its tokens and a cursor."""

    def __init__(self, text: str, data_type: str) -> None:
        self.text = text
        self.toks = tokenize(text)
        self.i = 0
        self.data_type = data_type
        self.dtype = INT64 if data_type == "int" else FLOAT64
        self.ops = {symbol: get_op(entry[2] if data_type == "int" else entry[1]) for symbol, entry in OPERATORS.items()}
        self.shapes = self.declared_shapes()

    # -- helpers ---------------------------------------------------------------------------------

    def error(self, message: str, pos: int | None = None) -> KernelError:
        return KernelError(message, self.text, self.peek().pos if pos is None else pos)

    def peek(self, k: int = 0) -> Token:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def take(self) -> Token:
        tok = self.toks[self.i]
        if tok.kind != "end":
            self.i += 1
        return tok

    def expect(self, text: str, what: str) -> Token:
        tok = self.peek()
        if tok.kind != "op" or tok.text != text:
            shown = "the end of the kernel" if tok.kind == "end" else repr(tok.text)
            raise self.error(f"expected {what}, found {shown}")
        return self.take()

    def int_value(self, tok: Token, what: str) -> int:
        value = int(tok.text)
        if value > MAX_INT_CONSTANT:
            raise self.error(f"{what} {value} is too large (at most {MAX_INT_CONSTANT})", tok.pos)
        return value

    def declared_shapes(self) -> dict[str, tuple[int, ...]]:
        """The first shape written for each tensor (``B<16, 32>``), read ahead so reads can be built as terms."""
        shapes: dict[str, tuple[int, ...]] = {}
        toks = self.toks
        for k in range(len(toks) - 1):
            if toks[k].kind != "name" or toks[k + 1].text != "<" or toks[k].text in shapes:
                continue
            dims: list[int] = []
            m = k + 2
            while m + 1 < len(toks) and toks[m].kind == "int" and toks[m + 1].text in (",", ">"):
                dims.append(int(toks[m].text))
                if toks[m + 1].text == ">":
                    shapes[toks[k].text] = tuple(dims)
                    break
                m += 2
        return shapes

    def call(self, op, args: tuple[Term, ...], pos: int) -> Term:
        """``op(*args)`` as a term; a dtype or arity the op refuses is a KernelError at ``pos``."""
        try:
            return Term(op, args)
        except (TypeError, ValueError) as exc:
            raise self.error(f"cannot apply {op.name}: {exc}", pos) from None

    # -- statements ------------------------------------------------------------------------------

    def statements(self) -> list[StatementSyntax]:
        out: list[StatementSyntax] = []
        while self.peek().kind != "end":
            out.append(self.statement())
        if not out:
            raise self.error("a kernel needs at least one statement")
        return out

    def statement(self) -> StatementSyntax:
        start = self.peek()
        if start.kind != "name":
            raise self.error("a statement starts with the name of the tensor it writes")
        var_pos: dict[str, int] = {}
        refs: list[RefSyntax] = []
        target = self.reference(var_pos)
        refs.append(target)
        self.expect("=", "'=' after the written tensor")
        rhs = self.expr(refs, var_pos)
        self.expect(";", "';' at the end of the statement")
        return StatementSyntax(target, rhs, refs, start.pos, var_pos)

    def reference(self, var_pos: dict[str, int]) -> RefSyntax:
        tok = self.take()
        name = tok.text
        if function(name) is not None:
            raise self.error(f"{name!r} is a function, not a tensor", tok.pos)
        check_name(name, "tensor name", self.text, tok.pos)
        shape: tuple[int, ...] | None = None
        if self.peek().text == "<" and self.peek().kind == "op":
            self.take()
            dims: list[int] = []
            while True:
                t = self.take()
                if t.kind != "int":
                    raise self.error("a shape entry must be a positive integer", t.pos)
                d = self.int_value(t, "shape entry")
                if d <= 0:
                    raise self.error("a shape entry must be a positive integer", t.pos)
                dims.append(d)
                sep = self.take()
                if sep.kind == "op" and sep.text == ">":
                    break
                if sep.kind != "op" or sep.text != ",":
                    raise self.error("expected ',' or '>' in the shape", sep.pos)
            shape = tuple(dims)
        index: tuple[Term, ...] | None = None
        index_pos: list[int] = []
        if self.peek().text == "[" and self.peek().kind == "op":
            self.take()
            items: list[Term] = []
            while True:
                index_pos.append(self.peek().pos)
                items.append(self.index(var_pos))
                sep = self.take()
                if sep.text == "]" and sep.kind == "op":
                    break
                if sep.text != "," or sep.kind != "op":
                    raise self.error("expected ',' or ']' after an index", sep.pos)
            index = tuple(items)
        elif shape is None:
            raise self.error(f"expected '<' (a shape) or '[' (indices) after {name!r}")
        return RefSyntax(name, shape, index, tok.pos, tuple(index_pos), self.read(name, shape, index, tok.pos))

    def read(self, name: str, shape: tuple[int, ...] | None, index: tuple[Term, ...] | None, pos: int) -> Term:
        """The term of a reference, at the shape it writes (else the first one the kernel writes)."""
        if shape is None:
            shape = self.shapes.get(name)
            if shape is None:
                raise self.error(f"the shape of {name} is never given (write {name}<...>)", pos)
        if index is None:
            if shape != (1,):
                raise self.error(f"{name} has no indices, so its shape must be <1>", pos)
            index = ()
        elif len(index) != len(shape):
            raise self.error(f"{name} has {len(shape)} dimension(s) but {len(index)} index(es) here", pos)
        return read(Symbol(name, self.dtype, shape), index)

    # -- right-hand sides ------------------------------------------------------------------------

    def number(self, tok: Token) -> Term:
        if self.data_type == "int":
            if tok.kind == "int":
                return number(self.int_value(tok, "constant"), "int")
            value = float(tok.text)
            if not value.is_integer():
                raise self.error("an int kernel cannot use the fractional constant " + tok.text, tok.pos)
            if abs(value) > MAX_INT_CONSTANT:
                raise self.error(f"constant {tok.text} is too large for an int kernel", tok.pos)
            return number(int(value), "int")
        value = float(tok.text)
        if value != value or value in (float("inf"), float("-inf")):
            raise self.error(f"constant {tok.text} is out of range", tok.pos)
        return number(value, "float")

    def expr(self, refs: list[RefSyntax], var_pos: dict[str, int]) -> Term:
        """A right-hand side (see :mod:`.precedence`)."""
        return read_expression(self, refs, var_pos)

    def index(self, var_pos: dict[str, int]) -> Term:
        """One index expression, an int64 term (see :mod:`.precedence`)."""
        return read_index(self, var_pos)


def parse_statements(text: str, data_type: str = "float") -> list[StatementSyntax]:
    """The statements of a kernel as written (syntax only: no name or shape checks)."""
    if not isinstance(text, str):
        raise KernelError(f"a kernel is a string, not {type(text).__name__}")
    return _Parser(text, data_type).statements()


def parse_kernel(
    text: str,
    *,
    name: str = "kernel",
    ins: Sequence[str] | None = None,
    outs: Sequence[str] | None = None,
    data_type: str = "float",
    grad_to: Sequence[str] = (),
) -> Kernel:
    """Parse kernel text into a checked :class:`~exprgraph.tensor.ir.Kernel` (ranges inferred).

    Without ``ins``/``outs`` the written tensors are the outputs and the others the inputs.

    >>> k = parse_kernel("C<4, 3>[i, j] = A<4, 5>[i, k] * B<5, 3>[k, j];", name="mm")
    >>> k.params, [str(loop) for loop in k.statements[0].loops]
    (('A', 'B', 'C'), ['i in [0, 4)', 'j in [0, 3)', 'k in [0, 5)'])
    """
    if data_type not in ("float", "int"):
        raise KernelError(f"data_type must be 'float' or 'int', not {data_type!r}")
    statements = parse_statements(text, data_type)
    return build_kernel(text, statements, name=name, ins=ins, outs=outs, data_type=data_type, grad_to=grad_to)


# -- JSON cases --------------------------------------------------------------------------------------


def _field_pos(source: str, key: str) -> int | None:
    m = re.search(r'"' + re.escape(key) + r'"\s*:', source)
    return m.start() if m else None


def _field_error(message: str, source: str, key: str) -> KernelError:
    return KernelError(message, source, _field_pos(source, key)) if source else KernelError(message)


def _case_text(path: str | Path) -> str:
    """The UTF-8 text of a case file: a regular file (a FIFO or a device is refused, not waited on or
    read forever) of at most the parsers' text limit, of which no more than that is read."""
    limit = max_text()
    try:
        data = read_bounded(path, 4 * limit)  # a UTF-8 character takes at most 4 bytes
    except NotRegularFileError:
        raise KernelError(f"the case file {str(path)!r} is not a regular file") from None
    except OSError as exc:
        raise KernelError(f"cannot read the case file {str(path)!r}: {exc.strerror}") from None
    check_text_size(data.decode("utf-8", "replace"))  # a file cut short by the bounded read is over the limit
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise KernelError(f"the case file {str(path)!r} is not UTF-8 text") from None


def _read_case(path: str | Path | dict) -> tuple[Any, str]:
    """The case as parsed (a dict unless malformed), and the text of its file (empty for a dict given as it is)."""
    if isinstance(path, dict):
        return path, ""
    source = _case_text(path)
    try:
        data = json.loads(source)
    except json.JSONDecodeError as exc:
        raise KernelError(f"the case file is not JSON: {exc.msg}", source, exc.pos) from None
    except RecursionError:
        raise KernelError("the case file nests too deeply") from None
    return data, source


def _check_case(data: object, source: str) -> None:
    """Every field of a case present, known and of its type, and every name a valid identifier."""
    if not isinstance(data, dict):
        raise KernelError("a case is a JSON object with name, ins, outs, data_type and kernel")
    known = {"name", "ins", "outs", "data_type", "kernel", "grad_to"}
    for key in data:
        if key not in known:
            raise _field_error(f"unknown field {key!r} (known: {', '.join(sorted(known))})", source, key)
    for key in ("name", "ins", "outs", "data_type", "kernel"):
        if key not in data:
            raise KernelError(f"the case has no {key!r} field")
    for key in ("name", "data_type", "kernel"):
        if not isinstance(data[key], str):
            raise _field_error(f"field {key!r} must be a string", source, key)
    for key in ("ins", "outs", "grad_to"):
        value = data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _field_error(f"field {key!r} must be a list of tensor names", source, key)
        if len(set(value)) != len(value):
            raise _field_error(f"field {key!r} lists a name twice", source, key)
    if data["data_type"] not in ("float", "int"):
        raise _field_error(f"data_type must be 'float' or 'int', not {data['data_type']!r}", source, "data_type")
    try:
        check_name(data["name"], "kernel name")
    except KernelError as exc:
        raise _field_error(exc.msg, source, "name") from None
    for key in ("ins", "outs", "grad_to"):
        for item in data.get(key, []):
            try:
                check_name(item, "tensor name")
            except KernelError as exc:
                raise _field_error(exc.msg, source, key) from None


def load_case(path: str | Path | dict) -> Kernel:
    """Read a course case (a JSON file, or its parsed dict) into a checked Kernel.

    Fields: ``name`` (a C identifier), ``ins`` and ``outs`` (lists of tensor names), ``data_type``
    (``"float"`` or ``"int"``), ``kernel`` (the statements) and, for gradients, ``grad_to``.
    A missing or malformed field raises KernelError pointing at the field in the file.
    """
    data, source = _read_case(path)
    _check_case(data, source)
    try:
        return parse_kernel(
            data["kernel"],
            name=data["name"],
            ins=data["ins"],
            outs=data["outs"],
            data_type=data["data_type"],
            grad_to=data.get("grad_to", []),
        )
    except KernelError as exc:
        if exc.pos is None:
            # a list that names the wrong tensors: point at the list
            for key, marker in (("ins", "listed in ins"), ("outs", "listed in outs"), ("grad_to", "grad_to names")):
                if marker in exc.msg:
                    raise _field_error(exc.msg, source, key) from None
        raise
