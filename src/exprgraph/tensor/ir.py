"""The kernel IR: tensors, loop nests whose indices are core int64 terms, guards, statements, kernels.

Semantics of a statement ``T[l] = rhs`` over loops ``l`` (the written indices) and ``r`` (indices
only on the right, summed):

- an *iteration* is a point of the loop box; it is skipped when a read or write would fall
  outside its tensor or an explicit guard fails;
- an *assigning* statement sets ``T[l]`` to the sum of ``rhs`` over the iterations left for ``l``
  (zero when none), for every ``l`` in the box of the written indices;
- an *accumulating* statement (written ``T[l] = T[l] + rest``, the course's explicit
  accumulation) adds ``rest`` for every iteration left, executed inside the reduction loops;
- statements run in order.

Loop ranges are inferred (:func:`build_kernel`): each index takes the smallest range the shapes
imply wherever it appears alone in an index position (``i``, ``i + 1``, ``2*i``, ``i // 4``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from ..core import Symbol, Term
from ..core.dtypes import FLOAT64, INT64
from ..errors import KernelError
from .affine import NonAffineError, bounds, is_var, linearize, to_term
from .loop_ranges import loop_ranges, single_var_range
from .names import check_name
from .terms import accesses, format_rhs, index_of, split_accumulator, tensor_name

__all__ = [
    "Tensor",
    "Loop",
    "Guard",
    "Statement",
    "Kernel",
    "build_kernel",
    "single_var_range",
    "access_guards",
    "statement_guards",
    "format_statement",
    "format_kernel",
    "split_accumulator",
]


@dataclass(frozen=True)
class Tensor:
    """A tensor declaration: name, shape, whether it is written as a scalar (``alpha<1>``), element dtype."""

    name: str
    shape: tuple[int, ...]
    scalar: bool = False
    #: float64 terms stand for the kernel's C ``float`` values, int64 terms for ``int`` ones
    dtype: str = FLOAT64

    @cached_property
    def symbol(self) -> Term:
        """The tensor as a term: a symbol of its dtype and shape (what reads index)."""
        return Symbol(self.name, self.dtype, self.shape)

    @property
    def size(self) -> int:
        """Number of elements."""
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def strides(self) -> tuple[int, ...]:
        """Row-major strides in elements."""
        out = []
        s = 1
        for d in reversed(self.shape):
            out.append(s)
            s *= d
        return tuple(reversed(out))

    def decl(self) -> str:
        """The tensor as the language writes it: ``A<16, 32>``."""
        return f"{self.name}<{', '.join(map(str, self.shape))}>"


@dataclass(frozen=True)
class Loop:
    """A loop variable and its range ``[lo, hi)``."""

    var: Term
    lo: int
    hi: int

    @property
    def name(self) -> str:
        """The variable's name."""
        return self.var.name

    @property
    def extent(self) -> int:
        """Number of values (0 if empty)."""
        return max(0, self.hi - self.lo)

    def __str__(self) -> str:
        return f"{self.name} in [{self.lo}, {self.hi})"


@dataclass(frozen=True)
class Guard:
    """A condition on loop variables: ``lo <= expr < hi`` (either side may be None), or ``expr % modulus == 0``."""

    expr: Term
    lo: int | None = None
    hi: int | None = None
    modulus: int | None = None

    def __str__(self) -> str:
        return self.text(str(self.expr))

    def text(self, expr: str, c: bool = False) -> str:
        """The condition on ``expr`` (the text of the guarded expression): ``lo <= e < hi``, or in C with ``c``."""
        if self.modulus is not None:
            return f"({expr}) % {self.modulus} == 0"
        if self.lo is not None and self.hi is not None and self.hi == self.lo + 1:
            return f"{expr} == {self.lo}"
        if c:
            sides = [f"{expr} >= {self.lo}"] if self.lo is not None else []
            if self.hi is not None:
                sides.append(f"{expr} < {self.hi}")
            return " && ".join(sides)
        low = f"{self.lo} <= " if self.lo is not None else ""
        high = f" < {self.hi}" if self.hi is not None else ""
        return f"{low}{expr}{high}"

    def holds_for(self, ranges: Mapping[Term, tuple[int, int]]) -> bool:
        """True when the guard holds on the whole loop box ``ranges`` (so it can be dropped)."""
        b = bounds(self.expr, ranges)
        if b is None:
            return False
        if self.modulus is not None:
            return b[0] == b[1] and b[0] % self.modulus == 0
        return (self.lo is None or b[0] >= self.lo) and (self.hi is None or b[1] < self.hi)

    def never_holds_for(self, ranges: Mapping[Term, tuple[int, int]]) -> bool:
        """True when no point of the loop box satisfies the guard."""
        b = bounds(self.expr, ranges)
        if b is None or self.modulus is not None:
            return False
        return (self.lo is not None and b[1] < self.lo) or (self.hi is not None and b[0] >= self.hi)


@dataclass(frozen=True, eq=False)
class Statement:
    """``target = rhs`` (or ``target += rhs`` when ``accumulate``) over ``loops``, where ``guards`` hold.

    ``target`` is a read term (:func:`~exprgraph.tensor.terms.read`) at plain loop variables and
    ``rhs`` a term of the op table whose tensor reads are ``access`` nodes.
    """

    target: Term
    rhs: Term
    accumulate: bool
    loops: tuple[Loop, ...]
    guards: tuple[Guard, ...] = ()
    pos: int | None = None
    #: source position of each read of the right-hand side (its first occurrence)
    positions: Mapping[Term, int] = field(default_factory=dict, repr=False)

    @property
    def name(self) -> str:
        """The name of the written tensor."""
        return tensor_name(self.target)

    @property
    def out_vars(self) -> tuple[Term, ...]:
        """The written indices (loop variables), in target order."""
        return index_of(self.target)

    @property
    def reduction_vars(self) -> tuple[Term, ...]:
        """The loop variables that are summed (not written)."""
        written = set(self.out_vars)
        return tuple(lp.var for lp in self.loops if lp.var not in written)

    @property
    def ranges(self) -> dict[Term, tuple[int, int]]:
        """Loop variable -> ``(lo, hi)``."""
        return {lp.var: (lp.lo, lp.hi) for lp in self.loops}

    def reads(self) -> Iterator[tuple[Term, int | None]]:
        """Every distinct tensor read of the right-hand side, left to right, with its source position."""
        for acc in accesses(self.rhs):
            yield acc, self.positions.get(acc)


@dataclass(frozen=True, eq=False)
class Kernel:
    """A checked kernel: its C name, data type, tensors, statements and parameter lists."""

    name: str
    data_type: str
    tensors: Mapping[str, Tensor]
    statements: tuple[Statement, ...]
    ins: tuple[str, ...]
    outs: tuple[str, ...]
    grad_to: tuple[str, ...] = ()
    text: str = ""
    #: for a gradient kernel: the forward kernel it differentiates
    forward: Kernel | None = field(default=None, repr=False)

    @property
    def params(self) -> tuple[str, ...]:
        """C parameter order: ``ins`` then ``outs``, each name once."""
        seen: list[str] = []
        for n in (*self.ins, *self.outs):
            if n not in seen:
                seen.append(n)
        return tuple(seen)

    @property
    def written(self) -> tuple[str, ...]:
        """Tensors some statement writes, in order of first write."""
        out: list[str] = []
        for st in self.statements:
            if st.name not in out:
                out.append(st.name)
        return tuple(out)

    @property
    def ctype(self) -> str:
        """The C element type: ``float`` or ``int``."""
        return self.data_type

    def __str__(self) -> str:
        return format_kernel(self)


# -- building from syntax ------------------------------------------------------------------------


def build_kernel(
    text: str,
    statements: Sequence,
    *,
    name: str,
    ins: Sequence[str] | None,
    outs: Sequence[str] | None,
    data_type: str,
    grad_to: Sequence[str] = (),
) -> Kernel:
    """Check the parsed statements (names, shapes, indices) and infer loop ranges."""
    check_name(name, "kernel name")
    shapes: dict[str, tuple[tuple[int, ...], int]] = {}
    first_pos: dict[str, int] = {}
    for st in statements:
        for r in st.refs:
            check_name(r.name, "tensor name", text, r.pos)
            first_pos.setdefault(r.name, r.pos)
            if r.shape is not None:
                if r.name in shapes and shapes[r.name][0] != r.shape:
                    old, where = shapes[r.name]
                    raise KernelError(
                        f"shape mismatch: {r.name} is <{', '.join(map(str, r.shape))}> here but "
                        f"<{', '.join(map(str, old))}> at position {where}",
                        text,
                        r.pos,
                    )
                shapes.setdefault(r.name, (r.shape, r.pos))
    dtype = INT64 if data_type == "int" else FLOAT64
    # (the parser checked that each reference's indices fit its shape, and that some reference gives it)
    scalar_form = {r.name for st in statements for r in st.refs if r.index is None}
    tensors = {n: Tensor(n, shape, n in scalar_form, dtype) for n, (shape, _) in shapes.items()}

    written: list[str] = []
    for st in statements:
        if st.target.name not in written:
            written.append(st.target.name)
    if outs is None:
        outs = tuple(written)
    if ins is None:
        ins = tuple(n for n in first_pos if n not in written)
    ins, outs, grad_to = tuple(ins), tuple(outs), tuple(grad_to)
    listed = set(ins) | set(outs)
    for n, p in first_pos.items():
        if n not in listed:
            raise KernelError(f"unknown tensor {n}: it is in neither ins nor outs", text, p)
    for n in (*ins, *outs):
        check_name(n, "tensor name")
        if n not in tensors:
            raise KernelError(f"{n} is listed in {'ins' if n in ins else 'outs'} but the kernel never uses it")
    for st in statements:
        if st.target.name not in outs:
            raise KernelError(f"the kernel writes {st.target.name}, which is not listed in outs", text, st.target.pos)
    for n in grad_to:
        if n not in ins:
            raise KernelError(f"grad_to names {n}, which is not an input")

    built = tuple(_build_statement(st, tensors, text, data_type) for st in statements)
    return Kernel(name, data_type, tensors, built, ins, outs, grad_to, text)


def _build_statement(st, tensors: Mapping[str, Tensor], text: str, data_type: str) -> Statement:
    for v, p in st.var_pos.items():
        check_name(v, "loop variable", text, p)
        if v in tensors:
            raise KernelError(f"{v} names both a tensor and a loop variable", text, p)
    tgt = st.target
    index = tgt.index or ()
    seen: set[Term] = set()
    for t, p in zip(index, tgt.index_pos, strict=True):
        if not is_var(t):
            raise KernelError("a written index must be a plain loop variable", text, p)
        if t in seen:
            raise KernelError(f"index {t.name} is written twice", text, p)
        seen.add(t)
    target = tgt.term
    positions: dict[Term, int] = {}
    for r in st.refs[1:]:
        positions.setdefault(r.term, r.pos)
    for r in st.refs:
        for t, p in zip(r.index or (), r.index_pos, strict=True):
            try:
                linearize(t)
            except NonAffineError as exc:
                raise KernelError(str(exc), text, p) from None

    rhs = st.rhs
    rest = split_accumulator(rhs, target, data_type)
    accumulate = rest is not None
    body = rhs if rest is None else rest

    loops = tuple(Loop(v, lo, hi) for v, lo, hi in loop_ranges(st, tensors, index, text))
    statement = Statement(target, body, accumulate, loops, (), st.pos, positions)

    # the written tensor may be read only where it is written (and, with a reduction, only as the accumulator)
    for acc, p in statement.reads():
        if tensor_name(acc) != tgt.name:
            continue
        if acc is not target:
            raise KernelError(f"the statement reads {tgt.name} at other indices than it writes", text, p)
        if statement.reduction_vars:
            names = ", ".join(v.name for v in statement.reduction_vars)
            raise KernelError(
                f"with a reduction (over {names}) {tgt.name} may be read only as the accumulator "
                f"{target} = {target} + ...",
                text,
                p,
            )
    return statement


# -- guards --------------------------------------------------------------------------------------


def canonical(term: Term, order: Sequence[Term] = ()) -> Term:
    """The canonical form of an index term (equal forms give the same interned term)."""
    return to_term(linearize(term), order)


def access_guards(access: Term, tensor: Tensor, ranges: Mapping[Term, tuple[int, int]]) -> list[Guard]:
    """Guards ``0 <= index < extent`` for the positions of the read ``access`` the loop box does not keep in range."""
    out: list[Guard] = []
    index = index_of(access)
    if not index:
        return out  # a scalar (alpha<1>)
    for t, extent in zip(index, tensor.shape, strict=True):
        b = bounds(t, ranges)
        if b is not None and b[0] >= 0 and b[1] < extent:
            continue
        out.append(Guard(canonical(t, tuple(ranges)), 0, extent))
    return out


def merge_guards(guards: Sequence[Guard], ranges: Mapping[Term, tuple[int, int]]) -> tuple[Guard, ...]:
    """Drop guards the loop box satisfies, merge range guards on one expression, keep first-seen order."""
    ranged: dict[Term, list[int | None]] = {}
    order: list[tuple[str, object]] = []
    others: list[Guard] = []
    for g in guards:
        if g.holds_for(ranges):
            continue
        if g.modulus is not None:
            if g not in others:
                others.append(g)
                order.append(("m", g))
            continue
        cur = ranged.get(g.expr)
        if cur is None:
            ranged[g.expr] = [g.lo, g.hi]
            order.append(("r", g.expr))
        else:
            if g.lo is not None:
                cur[0] = g.lo if cur[0] is None else max(cur[0], g.lo)
            if g.hi is not None:
                cur[1] = g.hi if cur[1] is None else min(cur[1], g.hi)
    out: list[Guard] = []
    for kind, item in order:
        if kind == "m":
            out.append(item)  # type: ignore[arg-type]
        else:
            lo, hi = ranged[item]  # type: ignore[index]
            g = Guard(item, lo, hi)  # type: ignore[arg-type]
            if not g.holds_for(ranges):
                out.append(g)
    return tuple(out)


def statement_guards(st: Statement, tensors: Mapping[str, Tensor]) -> tuple[Guard, ...]:
    """Every condition an iteration of ``st`` must meet: explicit guards, then in-range accesses."""
    ranges = st.ranges
    found: list[Guard] = list(st.guards)
    found += access_guards(st.target, tensors[st.name], ranges)
    for acc, _ in st.reads():
        found += access_guards(acc, tensors[tensor_name(acc)], ranges)
    return merge_guards(found, ranges)


# -- printing ------------------------------------------------------------------------------------


def _ref_text(acc: Term, tensors: Mapping[str, Tensor]) -> str:
    name = tensor_name(acc)
    t = tensors.get(name)
    head = t.decl() if t is not None else name
    index = index_of(acc)
    if not index:
        return head
    return f"{head}[{', '.join(str(i) for i in index)}]"


def format_statement(st: Statement, tensors: Mapping[str, Tensor], *, loops: bool = False) -> str:
    """The statement in the kernel language; explicit loops and guards follow as ``for ...`` / ``where ...``."""
    target = tensors.get(st.name)
    data_type = "int" if target is not None and target.dtype == INT64 else "float"
    rhs = format_rhs(st.rhs, data_type, lambda acc: _ref_text(acc, tensors))
    lhs = _ref_text(st.target, tensors)
    text = f"{lhs} = {lhs} + {rhs}" if st.accumulate else f"{lhs} = {rhs}"
    if loops or st.guards:
        text += " for " + ", ".join(str(lp) for lp in st.loops)
    if st.guards:
        text += " where " + " and ".join(str(g) for g in st.guards)
    return text + ";"


def format_kernel(kernel: Kernel) -> str:
    """All statements of a kernel, one per line, in the kernel language (loops spelled out for gradients)."""
    explicit = kernel.forward is not None
    return "\n".join(format_statement(st, kernel.tensors, loops=explicit) for st in kernel.statements)


def loop_count(st: Statement) -> int:
    """Points of the loop box (an upper bound on the iterations; guards and tightened bounds cut it)."""
    n = 1
    for lp in st.loops:
        n *= lp.extent
    return n
