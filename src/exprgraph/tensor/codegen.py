"""C code for kernels: one readable C function per kernel.

The function is named after the kernel; its parameters follow :attr:`Kernel.params` (course
order). Tensors are array parameters (``const float B[16][32]`` for inputs, ``float A[16][32]``
for outputs); tensors written as scalars (``alpha<1>``) are pointers (``const float *alpha``, read as
``*alpha``). Loops are indented nests in the order :mod:`.schedule` chooses, guards appear as loop
bounds or ``if`` tests, and the innermost loop carries ``#pragma omp simd`` (a no-op unless the
compiler is given ``-fopenmp-simd``; it is correct because written elements are distinct across its
iterations).

Right-hand sides are rendered node by node by the project's one C renderer
(:mod:`exprgraph.compile.crender`, kernel dialect: ``float`` and ``int`` values), which also
supplies the helpers the text uses (``eg_truncdiv`` and ``eg_fmod`` for C division by a value that
may be 0, ``eg_floordiv``, ``eg_max``...) and the includes; this module names array elements and
writes index arithmetic, where a floor division or remainder of a never-negative index is C's
``/`` and ``%``.
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Mapping, Sequence

from ..compile import crender
from ..core import Term
from ..core import postorder as core_postorder
from ..core.dtypes import FLOAT64, INT64
from ..core.op import get_op
from .affine import bounds, linearize, to_term
from .index_arith import ANY
from .ir import Guard, Kernel, Loop, Statement, Tensor, format_statement
from .schedule import Level, Schedule, schedule_statement
from .terms import ACCESS, MAX_TREE, index_of, map_accesses, read, tensor_name, tree_size, value_nodes

__all__ = ["codegen_c", "c_index", "c_value"]

_ADD, _SUB, _MUL, _NEG = get_op("add"), get_op("sub"), get_op("mul"), get_op("neg")
_FLOORDIV, _MOD = get_op("floordiv"), get_op("mod")
_CONST, _SYMBOL = get_op("const"), get_op("symbol")

_INDENT = "    "
_DIALECT = crender.KERNEL

_P_ADD, _P_MUL, _P_UNARY, _P_ATOM = 1, 2, 3, 4

#: C precedence level of the ops the renderer writes as a bare C operator (+ - one level, * / above it)
_LEVEL = {"add": 1, "sub": 1, "mul": 2, "truediv": 2}
#: a C template that is a function call with the operands as its arguments: ``exp({0})``, ``eg_max({0}, {1})``
_ARGUMENTS = re.compile(r"[A-Za-z_]\w*\(\{0\}(?:, \{\d+\})*\)")


class _Emitter:
    """Renders the parts of one kernel's function: indices, reads, right-hand sides, guards, bounds."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.dtype = INT64 if kernel.data_type == "int" else FLOAT64
        self.ctype = _DIALECT.ctype[self.dtype]

    # -- index expressions (int) -------------------------------------------------------------------

    def index(self, term: Term, ranges: Mapping[Term, tuple[int, int]]) -> str:
        """C text of an index term; floor division/modulo use ``/``, ``%`` when the dividend is never negative."""
        done: dict[Term, tuple[str, int]] = {}
        for node in core_postorder(term):
            op = node.op
            if op is _SYMBOL:
                done[node] = (node.name, _P_ATOM)
            elif op is _CONST:
                v = int(node.attr)
                done[node] = (str(v), _P_ATOM) if v >= 0 else (f"({v})", _P_ATOM)
            elif op is _NEG:
                t, p = done[node.args[0]]
                done[node] = (f"-{t if p >= _P_UNARY and not t.startswith('-') else f'({t})'}", _P_UNARY)
            elif op in (_ADD, _SUB, _MUL):
                prec = _P_MUL if op is _MUL else _P_ADD
                sym = {_ADD: "+", _SUB: "-", _MUL: "*"}[op]
                parts = []
                for k, a in enumerate(node.args):
                    t, p = done[a]
                    # C's * / % associate left: a right operand at the same level needs parentheses
                    # (2 * (w / 2) is not 2 * w / 2); so does the subtrahend of a - (b + c)
                    need = p < prec or (k > 0 and p == prec and op is not _ADD)
                    parts.append(f"({t})" if need else t)
                done[node] = (f" {sym} ".join(parts), prec)
            elif op is _FLOORDIV or op is _MOD:
                (ta, pa), (tb, _) = done[node.args[0]], done[node.args[1]]
                lo = bounds(node.args[0], ranges)
                if lo is not None and lo[0] >= 0:
                    sym = "/" if op is _FLOORDIV else "%"
                    done[node] = (f"{ta if pa > _P_MUL else f'({ta})'} {sym} {tb}", _P_MUL)
                else:  # Python's signs: the renderer's helpers
                    done[node] = (f"{'eg_floordiv' if op is _FLOORDIV else 'eg_mod'}({ta}, {tb})", _P_ATOM)
            else:  # pragma: no cover - indices are checked when kernels are built
                raise ValueError(f"an index cannot use {op.name}")
        return done[term][0]

    def access(self, acc: Term, ranges: Mapping[Term, tuple[int, int]]) -> str:
        """``A[i][j + 1]`` (or ``*alpha`` for a scalar); indices in canonical form (``i + 1 + 1`` -> ``i + 2``)."""
        name = tensor_name(acc)
        index = index_of(acc)
        if not index:
            return f"*{name}" if self.kernel.tensors[name].scalar else f"{name}[0]"
        order = tuple(ranges)
        return name + "".join(f"[{self.index(to_term(linearize(t), order), ranges)}]" for t in index)

    # -- values --------------------------------------------------------------------------------------

    def number(self, value: int | float) -> str:
        """A literal of the kernel's type."""
        return crender.literal(value, self.dtype, _DIALECT)

    def value(self, root: Term, ranges: Mapping[Term, tuple[int, int]]) -> str:
        """C text of a right-hand side: reads named here, every other node by the one C renderer."""
        tree_size((root,), MAX_TREE)
        done: dict[Term, str] = {}
        wrapped: dict[Term, bool] = {}  # whether the text is one bracketed whole: (a + b)
        for node in value_nodes(root):
            if node.op is ACCESS:
                text = done[node] = self.access(node, ranges)
            elif node.op is _CONST:
                text = done[node] = crender.literal(node.attr, node.dtype, _DIALECT)
            else:
                text = done[node] = crender.render(node, _operands(node, done, wrapped), _DIALECT)
                template = node.op.c_render
                if isinstance(template, str):
                    # the template's own brackets decide (operand texts are balanced): no scan of
                    # the text, which holds every operand's (a left-nested sum would be scanned n times)
                    wrapped[node] = _template_wraps(template)
                    continue
            wrapped[node] = len(_bare(text)) != len(text)
        return done[root]

    # -- guards and bounds ---------------------------------------------------------------------------

    def condition(self, g: Guard, ranges: Mapping[Term, tuple[int, int]]) -> str:
        return g.text(self.index(g.expr, ranges), c=True)

    def bound(self, static: int, extra: list[Term], pick: str, ranges: Mapping[Term, tuple[int, int]]) -> str:
        text = str(static) if static >= 0 else f"({static})"
        for t in extra:
            text = f"{pick}({text}, {self.index(t, ranges)})"
        return text


def _operands(node: Term, done: Mapping[Term, str], wrapped: Mapping[Term, bool]) -> list[str]:
    """The operand texts of ``node`` without the parentheses C does not need around them.

    C's ``+ -`` and ``* /`` associate left and ``*`` binds tighter, so ``(a * b) * c`` is
    ``a * b * c`` and ``(a * b) + c`` is ``a * b + c``; an argument of a function call needs none.
    An operand the renderer converts (``(float)(a - b)``) keeps them.
    """
    texts = [done[a] for a in node.args]
    level = _LEVEL.get(node.op.name)
    call = isinstance(node.op.c_render, str) and _ARGUMENTS.fullmatch(node.op.c_render) is not None
    for k, (a, want) in enumerate(zip(node.args, crender.operand_dtypes(node), strict=True)):
        inner = _LEVEL.get(a.op.name)
        if want == a.dtype and (call or (level and inner and (inner > level or (inner == level and k == 0)))):
            texts[k] = texts[k][1:-1] if wrapped[a] else texts[k]
    return texts


@functools.cache
def _template_wraps(template: str) -> bool:
    """Whether every text of the C template is one bracketed whole (``({0} + {1})``, not ``({0}) * ({1})``)."""
    skeleton = "".join(
        literal + ("x" if field is not None else "") for literal, field, _, _ in _FORMATTER.parse(template)
    )
    return len(_bare(skeleton)) != len(skeleton)


_FORMATTER = string.Formatter()


def _bare(text: str) -> str:
    """``text`` without the parentheses around the whole of it (a right-hand side standing alone)."""
    if not (text.startswith("(") and text.endswith(")")):
        return text
    depth = 0
    for k, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return text[1:-1] if k == len(text) - 1 else text
    return text  # pragma: no cover - rendered text is balanced


def _comment(text: str) -> str:
    return "/* " + text.replace("*/", "* /") + " */"


def _param(tensor: Tensor, ctype: str, written: bool) -> str:
    qual = "" if written else "const "
    if tensor.scalar:
        return f"{qual}{ctype} *{tensor.name}"
    dims = "".join(f"[{d}]" for d in tensor.shape)
    return f"{qual}{ctype} {tensor.name}{dims}"


def _shifted(st: Statement, offsets: Mapping[Term, int]) -> tuple[Term, Term]:
    """The target and right-hand side of ``st`` with each jammed variable ``v`` replaced by ``v + offset``."""
    if not any(offsets.values()):
        return st.target, st.rhs
    sub = {v: ANY.add(v, a) for v, a in offsets.items() if a}
    order = [lp.var for lp in st.loops]

    def shift(acc: Term) -> Term:
        return read(acc.args[0], [ANY.term(ANY.value(t, sub), order) for t in index_of(acc)])

    return shift(st.target), map_accesses(st.rhs, shift)


def _emit_nest(
    em: _Emitter,
    sched: Schedule,
    levels: list[Level],
    lines: list[str],
    base: int,
    *,
    jam: Sequence[tuple[int, int]] = (),
    count: bool = False,
    parallel: bool = False,
) -> None:
    """Append one loop nest of a statement over ``levels`` (with jammed copies of its body)."""
    _Nest(em, sched, levels, lines, base, jam, count, parallel).emit()


class _Nest:
    """One loop nest being written: the open loops and tests, and the accumulators of a hoisted sum.

    With ``count`` the body only counts its iterations; a statement whose innermost ``suffix``
    loops only sum (``hoist``) adds into local accumulators (per lane with ``lanes``), stored once
    after those loops; each jammed copy (``jam``: level, unroll) has its own body and accumulator.
    """

    def __init__(
        self,
        em: _Emitter,
        sched: Schedule,
        levels: list[Level],
        lines: list[str],
        base: int,
        jam: Sequence[tuple[int, int]],
        count: bool,
        parallel: bool,
    ) -> None:
        self.em, self.sched, self.levels, self.lines = em, sched, levels, lines
        self.base, self.count, self.parallel = base, count, parallel
        self.st = sched.statement
        self.written = set(self.st.out_vars)
        self.hoist = sched.suffix > 0 and not count
        self.steps = dict(jam)
        copies: list[dict[Term, int]] = [{}]
        for k, u in jam:
            copies = [{**c, levels[k].var: a} for c in copies for a in range(u)]
        self.copies = copies
        self.accs = ["eg_acc"] if len(copies) == 1 else [f"eg_acc{m}" for m in range(len(copies))]
        self.lanes = sched.lanes if self.hoist else 0
        self.depth = base
        self.closers: list[int] = []

    def emit(self) -> None:
        """The loops, the body, and (for a hoisted sum) the accumulators around the summing loops."""
        em, lines, accs, lanes = self.em, self.lines, self.accs, self.lanes
        n = len(self.levels)
        split = n - self.sched.suffix if self.hoist else n
        zero = em.number(0)
        for k in range(split):
            self.open_level(k)
        if self.hoist:
            lines += [_INDENT * self.depth + f"{em.ctype} {a} = {zero};" for a in accs]
            if lanes:
                lines.append(_INDENT * self.depth + f"{em.ctype} eg_lane[{len(accs)}][{lanes}] = {{{{{zero}}}}};")
        acc_depth = self.depth
        for k in range(split, n):
            self.open_level(k)
        rendered = [_shifted(self.st, c) for c in self.copies]
        lines += [_INDENT * self.depth + b for b in self.body(rendered)]
        self.close_to(acc_depth)
        depth = self.depth
        if lanes:
            # add up the partial sums of each lane
            lines.append(_INDENT * depth + f"#pragma omp simd reduction(+:{', '.join(accs)})")
            lines.append(_INDENT * depth + f"for (int eg_l = 0; eg_l < {lanes}; ++eg_l) {{")
            lines += [_INDENT * (depth + 1) + f"{a} += eg_lane[{m}][eg_l];" for m, a in enumerate(accs)]
            lines.append(_INDENT * depth + "}")
        if self.hoist:
            op = "+=" if self.st.accumulate or self.sched.zero_first else "="
            for a, (tgt, _) in zip(accs, rendered, strict=True):
                lines.append(_INDENT * depth + f"{em.access(tgt, self.st.ranges)} {op} {a};")
        self.close_to(self.base)

    def open_level(self, k: int) -> None:
        """Open the loop of level ``k`` (with its pragmas) and the test of its guards."""
        em, lines, ranges = self.em, self.lines, self.st.ranges
        lv = self.levels[k]
        lp = lv.loop
        lo = em.bound(lp.lo, lv.lower, "eg_max", ranges)
        hi = em.bound(lp.hi, lv.upper, "eg_min", ranges)
        innermost = k == len(self.levels) - 1
        if self.parallel and k == 0 and not innermost and lp.var in self.written:
            lines.append(_INDENT * self.depth + "#pragma omp parallel for")
        if innermost and not self.count:
            clause = f" reduction(+:{', '.join(self.accs)})" if self.hoist and not self.lanes else ""
            lines.append(_INDENT * self.depth + "#pragma omp simd" + clause)
        step = f"{lp.name} += {self.steps[k]}" if k in self.steps else f"++{lp.name}"
        lines.append(_INDENT * self.depth + f"for (int {lp.name} = {lo}; {lp.name} < {hi}; {step}) {{")
        self.closers.append(self.depth)
        self.depth += 1
        if lv.tests and not (self.sched.select and innermost) and not (self.count and innermost):
            cond = " && ".join(f"({em.condition(g, ranges)})" for g in lv.tests)
            lines.append(_INDENT * self.depth + f"if ({cond}) {{")
            self.closers.append(self.depth)
            self.depth += 1

    def close_to(self, level_depth: int) -> None:
        """Close every loop and test opened at ``level_depth`` or deeper."""
        closers = self.closers
        while closers and closers[-1] >= level_depth:
            d = closers.pop()
            self.lines.append(_INDENT * d + "}")
            self.depth = d

    def body(self, rendered: list[tuple[Term, Term]]) -> list[str]:
        """The statements of the innermost loop, one per jammed copy (``rendered``: target, rhs)."""
        em, st, sched, ranges = self.em, self.st, self.sched, self.st.ranges
        levels = self.levels
        body: list[str] = []
        if self.count:
            body.append("eg_n += 1;")
        elif self.hoist and self.lanes:
            inner_lo = levels[-1].loop.lo if levels else 0
            lane = levels[-1].var.name if inner_lo == 0 else f"{levels[-1].var.name} - {inner_lo}"
            for m, (_, rhs) in enumerate(rendered):
                body.append(f"eg_lane[{m}][{lane}] += {_bare(em.value(rhs, ranges))};")
        elif self.hoist:
            for a, (_, rhs) in zip(self.accs, rendered, strict=True):
                body.append(f"{a} += {_bare(em.value(rhs, ranges))};")
        elif sched.select:
            target = em.access(st.target, ranges)
            cond = " && ".join(f"({em.condition(g, ranges)})" for g in levels[-1].tests)
            body.append(f"{target} = ({cond}) ? {_bare(em.value(st.rhs, ranges))} : {em.number(0)};")
        elif st.accumulate or (sched.zero_first and any(lp.var not in self.written for lp in st.loops)):
            # copies that differ only in summed indices add to the same element: one += with their sum
            groups: dict[Term, list[Term]] = {}
            for tgt, rhs in rendered:
                groups.setdefault(tgt, []).append(rhs)
            for tgt, rhss in groups.items():
                total = " + ".join(em.value(r, ranges) for r in rhss)
                body.append(f"{em.access(tgt, ranges)} += {_bare(total) if len(rhss) == 1 else total};")
        else:
            for tgt, rhs in rendered:
                body.append(f"{em.access(tgt, ranges)} = {_bare(em.value(rhs, ranges))};")
        return body


def _with_range(levels: list[Level], k: int, lo: int, hi: int) -> list[Level]:
    out = list(levels)
    lv = levels[k]
    out[k] = Level(Loop(lv.var, lo, hi), list(lv.lower), list(lv.upper), list(lv.tests))
    return out


def _emit_statement(
    em: _Emitter, sched: Schedule, lines: list[str], count_slot: int | None = None, parallel: bool = False
) -> None:
    """Append the loop nests of one statement (or, with ``count_slot``, a nest counting its iterations)."""
    st = sched.statement
    kernel = em.kernel
    ranges = st.ranges
    count = count_slot is not None
    base = 2 if count else 1
    if count:
        lines.append(_INDENT + "{")
    lines.append(_INDENT * base + _comment(format_statement(st, kernel.tensors, loops=kernel.forward is not None)))
    if sched.zero_first and not count:
        depth = base
        target = em.access(st.target, ranges)
        for k, v in enumerate(st.out_vars):
            lp = next(lp for lp in st.loops if lp.var is v)
            if parallel and k == 0 and len(st.out_vars) > 1:
                lines.append(_INDENT * depth + "#pragma omp parallel for")
            lines.append(_INDENT * depth + f"for (int {lp.name} = {lp.lo}; {lp.name} < {lp.hi}; ++{lp.name}) {{")
            depth += 1
        lines.append(_INDENT * depth + f"{target} = {em.number(0)};")
        for d in range(depth - 1, base - 1, -1):
            lines.append(_INDENT * d + "}")
    if count:
        lines.append(_INDENT * base + "long long eg_n = 0;")
    if not sched.empty:
        levels = sched.levels
        jam = [] if count else sched.jam
        if not jam:
            _emit_nest(em, sched, levels, lines, base, count=count, parallel=parallel)
        else:
            main = levels
            cut: dict[int, int] = {}
            for k, u in jam:
                lp = levels[k].loop
                cut[k] = lp.lo + (lp.extent // u) * u
                main = _with_range(main, k, lp.lo, cut[k])
            _emit_nest(em, sched, main, lines, base, jam=jam, parallel=parallel)
            # the remainders, without jamming: first loop's tail, then the second's tail
            (k1, _), rest = jam[0], jam[1:]
            lp1 = levels[k1].loop
            if cut[k1] < lp1.hi:
                _emit_nest(em, sched, _with_range(levels, k1, cut[k1], lp1.hi), lines, base, parallel=parallel)
            if rest:
                k2 = rest[0][0]
                lp2 = levels[k2].loop
                if cut[k2] < lp2.hi:
                    region = _with_range(_with_range(levels, k1, lp1.lo, cut[k1]), k2, cut[k2], lp2.hi)
                    _emit_nest(em, sched, region, lines, base, parallel=parallel)
    if count:
        lines.append(_INDENT * base + f"eg_count[{count_slot}] = eg_n;")
        lines.append(_INDENT + "}")


def codegen_c(
    kernel: Kernel, *, name: str | None = None, count: bool = False, parallel: bool = False, unroll: bool = False
) -> str:
    """The C source of ``kernel``: includes and helpers it needs, then ``void name(params)`` with its loop nests.

    A kernel that calls no function (most do not) is plain C with no header at all; one that does
    starts with the one C renderer's prelude (``<math.h>``, ``<tgmath.h>`` so that ``exp`` of a
    ``float`` is ``expf``, and the helpers used).

    ``count=True`` generates instead ``void name(long long *eg_count)``, which stores the number of
    innermost-loop iterations of statement ``k`` in ``eg_count[k]`` (the figures benchmarks report).
    ``unroll=True`` unrolls and jams up to two loops into the innermost one (register blocking:
    faster, but the copies index ``k + 1``... even on the written side, so the default keeps every
    written index a plain variable). ``parallel=True`` marks each nest's outermost written-index
    loop ``#pragma omp parallel for``
    (compile with ``-fopenmp``; iterations write distinct elements, so there are no races).

    >>> from exprgraph.tensor import parse_kernel
    >>> print(codegen_c(parse_kernel("B<3, 2>[i, j] = A<2, 3>[j, i];", name="transpose")))
    void transpose(const float A[2][3], float B[3][2])
    {
        /* B<3, 2>[i, j] = A<2, 3>[j, i]; */
        for (int i = 0; i < 3; ++i) {
            #pragma omp simd
            for (int j = 0; j < 2; ++j) {
                B[i][j] = A[j][i];
            }
        }
    }
    <BLANKLINE>
    """
    em = _Emitter(kernel)
    fname = name or kernel.name
    written = set(kernel.written)
    body: list[str] = []
    for k, st in enumerate(kernel.statements):
        sched = schedule_statement(st, kernel.tensors, unroll=unroll and not count, parallel=parallel and not count)
        _emit_statement(em, sched, body, k if count else None, parallel and not count)
    if count:
        params = "long long *eg_count"
    else:
        params = ", ".join(_param(kernel.tensors[p], em.ctype, p in written) for p in kernel.params)
    text = "\n".join([f"void {fname}({params})", "{", *body, "}"]) + "\n"
    if not _calls(body):
        return text
    head = crender.prelude(text, _DIALECT)
    if "eg_error" in crender.helpers_for(text):
        head += crender.ERROR_DEFINITION + "\n"  # the kernel's library defines the flag an int power sets
    return head + "\n" + text


_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


def _calls(body: Sequence[str]) -> bool:
    """Whether the lines call a function (``for (`` and ``if (`` are not calls; pragmas and comments are skipped)."""
    for line in body:
        if line.lstrip().startswith(("#", "/*")):
            continue
        if any(name not in ("for", "if") for name in _CALL.findall(line)):
            return True
    return False


def c_index(term: Term, ranges: Mapping[Term, tuple[int, int]], kernel: Kernel) -> str:
    """C text of one index term (helpers it needs are not emitted)."""
    return _Emitter(kernel).index(term, ranges)


def c_value(rhs: Term, kernel: Kernel, ranges: Mapping[Term, tuple[int, int]]) -> str:
    """C text of one right-hand side (helpers it needs are not emitted)."""
    return _bare(_Emitter(kernel).value(rhs, ranges))
