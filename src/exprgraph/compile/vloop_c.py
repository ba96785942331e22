"""The loops of a vector program (:mod:`.vloop`) as C: parts, a driver over points, the loaded library.

The loop nests are cut into parts of at most :data:`PART_LOOPS` nests, each one C function
``eg_vpart{q}(in, out, w, k)``; each nest declares the arrays it names (inputs ``in{j}``, outputs
``out{j}``, work buffers ``b{n}`` at fixed offsets of the work area ``w``, constant tables ``k{n}``
at fixed offsets of the table bytes ``k``), each in its dtype's memory type (bools as bytes). Every
op is rendered by :func:`~.crender.render`. Parts go to several translation units when there are
many (compiled in parallel). The driver runs the parts once per point: ``eg_vrun`` and (every
input and output float64) ``eg_vpacked``, with the contract of :mod:`.vloop_run`.

Loops whose iterations are independent are marked ``omp simd`` (gcc vectorises them, calling
libmvec's vector math where the build has it); a sum's inner loop is marked as a ``+`` reduction
(its additions may then be reordered, as numpy's pairwise sum also orders them its own way).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

from ..core import Term
from ..core.dtypes import BOOL, FLOAT64
from . import crender
from .c_emit import _HIDDEN, _unit_count
from .cbuild import build_library
from .vloop_ir import Acc, Fold, Index, Let, Lookup, LoopPlan, Nest, Operand, Shift, Store, View
from .vloop_run import VectorLoopRunner

__all__ = ["VectorLoopSource", "emit_vector_loops", "build_vector_loops", "PART_LOOPS", "VLOOP_OPT"]

#: loop nests per C function
PART_LOOPS = 24
#: the optimisation level of vector loop builds: -O3 builds as fast as -O2 here (0.1 s of gcc for the
#: model of bench/bench_vectors.py, 0.85 s for a 5,000-node chain) and its calls are up to 10% faster
VLOOP_OPT = "-O3"
_PARAMS = "const void *const *restrict in, void *const *restrict out, char *restrict w, const char *restrict k"
_H = crender.HOST


@dataclass
class VectorLoopSource:
    """The translation units of a vector program's loops and what its runner needs."""

    units: list[str]
    #: loop nests (one per materialised node, output copy or zero fill)
    statements: int
    #: work bytes per point
    work_bytes: int
    #: the constant tables, read through the driver's ``k``
    constants: bytes
    #: whether ``eg_vpacked`` exists (every input and output is float64)
    packed: bool

    @property
    def text(self) -> str:
        """All units as one text (for display)."""
        return "\n".join(self.units)


def emit_vector_loops(plan: LoopPlan) -> VectorLoopSource:
    """The C translation units of ``plan`` (see the module's description)."""
    parts: list[str] = []
    for q, start in enumerate(range(0, len(plan.loops), PART_LOOPS)):
        body = []
        for k in range(start, min(start + PART_LOOPS, len(plan.loops))):
            # each nest declares its arrays in a block of its own: a work buffer's bytes are reused by
            # a later buffer (LoopPlan.place_buffers), so restrict may only hold within one nest
            decls = ["    " + _declaration(n, *plan.arrays[n]) for n in sorted(plan.names[k], key=_order)]
            body += ["    {", *decls, _nest(plan.loops[k], 2), "    }"]
        parts.append("\n".join([f"{_HIDDEN} void eg_vpart{q}({_PARAMS})", "{", *body, "}"]))
    program = plan.program
    packed = all(t.dtype == FLOAT64 for t in (*program.inputs, *program.outputs))
    driver = _driver(
        len(program.inputs), len(program.outputs), len(parts), plan.work_bytes, _widths(plan) if packed else None
    )
    n_units = _unit_count(len(plan.loops) * 8)
    buckets: list[list[str]] = [[] for _ in range(n_units)]
    for q, text in enumerate(parts):
        buckets[q % n_units].append(text)
    buckets[-1].append(driver)
    units = []
    for bucket in buckets:
        text = "\n\n".join(bucket)
        units.append(crender.prelude(text) + "\n" + text + "\n")
    return VectorLoopSource(units, len(plan.loops), plan.work_bytes, bytes(plan.constants), packed)


def build_vector_loops(plan: LoopPlan, *, timeout: float | None = None) -> tuple[VectorLoopRunner, VectorLoopSource]:
    """Emit, build (or find in the cache) and load the C loops of ``plan``; the runner and the source."""
    source = emit_vector_loops(plan)
    library, _ = build_library(source.units, (), opt=VLOOP_OPT, timeout=timeout)
    i64, ptr = ctypes.c_int64, ctypes.c_void_p
    run = library.function("eg_vrun", ctypes.c_int, [i64, ptr, ptr, ptr, ptr, ptr, ptr])
    packed = library.function("eg_vpacked", ctypes.c_int, [i64, ptr, ptr, ptr, ptr]) if source.packed else None
    return VectorLoopRunner(plan.program, run, packed, source.work_bytes, source.constants, library), source


def _widths(plan: LoopPlan) -> tuple[list[int], list[int], int, int]:
    """Column offsets of the inputs and outputs in packed rows, and the rows' widths."""

    def offsets(terms: tuple[Term, ...]) -> tuple[list[int], int]:
        """Where each term's entries start in a row, and the row's width."""
        out, at = [], 0
        for t in terms:
            out.append(at)
            at += _size(t)
        return out, at

    cols, width_in = offsets(plan.program.inputs)
    pos, width_out = offsets(plan.program.outputs)
    return cols, pos, width_in, width_out


def _size(t: Term) -> int:
    n = 1
    for d in t.shape:
        n *= int(d)
    return n


def _order(name: str) -> tuple[str, int]:
    return name.rstrip("0123456789"), int(name.lstrip("abcdefghijklmnopqrstuvwxyz"))


def _declaration(name: str, kind: str, dtype: str, place: int) -> str:
    store = _H.store[dtype]
    if kind == "in":
        return f"    const {store} *restrict {name} = (const {store} *)in[{place}];"
    if kind == "out":
        return f"    {store} *restrict {name} = ({store} *)out[{place}];"
    if kind == "table":
        return f"    const {store} *restrict {name} = (const {store} *)(k + {place});"
    return f"    {store} *restrict {name} = ({store} *)(w + {place});"


# -- statements ------------------------------------------------------------------------------------


def _index(ix: Index) -> str:
    if isinstance(ix, str):
        return ix
    if isinstance(ix, Shift):
        if not ix.var:
            return str(ix.by)
        return ix.var if not ix.by else f"({ix.var} + {ix.by})"
    assert isinstance(ix, Lookup)
    return _read(ix.table, ix.index)


def _read(view: View, index: tuple[Index, ...]) -> str:
    """The C text of ``view``'s entry at ``index``."""
    if view.value is not None:
        return crender.literal(view.value, view.dtype, _H)
    terms = [str(view.offset)] if view.offset else []
    for ix, stride in zip(index, view.strides, strict=True):
        if stride:
            text = _index(ix)
            terms.append(text if stride == 1 else f"{stride} * {text}")
    return f"{view.base}[{' + '.join(terms) or '0'}]"


def _operand(value: Operand) -> str:
    return value if isinstance(value, str) else _read(value.view, value.index)


def _cast(text: str, have: str, want: str, types: dict[str, str]) -> str:
    return text if have == want else f"({types[want]})({text})"


def _statement(stmt: Any, pad: str) -> list[str]:
    """The C lines of one statement (a nested :class:`Nest` as its loops)."""
    if isinstance(stmt, Nest):
        return _nest(stmt, len(pad) // 4).split("\n")
    if isinstance(stmt, Let):
        text = crender.render(stmt.node, [_operand(a) for a in stmt.args], _H)
        return [f"{pad}const {_H.ctype[stmt.node.dtype]} {stmt.name} = {text};"]
    if isinstance(stmt, Acc):
        return [f"{pad}{_H.ctype[stmt.dtype]} {stmt.name} = {crender.literal(stmt.start, stmt.dtype, _H)};"]
    if isinstance(stmt, Fold):
        want = stmt.step.dtype
        item = _cast(_operand(stmt.item), stmt.item_dtype, want, _H.ctype)
        return [f"{pad}{stmt.acc} = {crender.render(stmt.step, [stmt.acc, item], _H)};"]
    assert isinstance(stmt, Store)
    value = _operand(stmt.value)
    if stmt.view.dtype == BOOL and stmt.dtype != BOOL:
        value = f"({value} != 0)"
    return [f"{pad}{_read(stmt.view, stmt.index)} = {_cast(value, stmt.dtype, stmt.view.dtype, _H.store)};"]


def _nest(nest: Nest, depth: int) -> str:
    """A loop nest's C (the innermost loop marked for vectorising when the nest allows it)."""
    lines = []
    pad = "    " * depth
    last = len(nest.shape) - 1
    for d, n in enumerate(nest.shape):
        if d == last and nest.simd == "map":
            lines.append(f'{pad}_Pragma("omp simd")')
        elif d == last and nest.simd == "sum":
            lines.append(f'{pad}_Pragma("omp simd reduction(+:acc)")')
        var = f"{nest.tag}{d}"
        lines.append(f"{pad}for (int64_t {var} = 0; {var} < {n}; {var}++)")
        pad += "    "
    inner = pad + "    "
    body = [line for stmt in nest.body for line in _statement(stmt, inner)]
    return "\n".join([*lines, f"{pad}{{", *body, f"{pad}}}"])


def _driver(
    n_in: int, n_out: int, n_parts: int, work_bytes: int, packed: tuple[list[int], list[int], int, int] | None
) -> str:
    """The entry points: the parts run once per point, on pointers moved by each point's steps."""
    calls = f"        for (int q = 0; q < {n_parts}; q++) eg_vparts[q](pin, pout, (char *)work, (const char *)k);"
    lines = [
        crender.ERROR_DEFINITION,
        *(f"{_HIDDEN} void eg_vpart{q}({_PARAMS});" for q in range(n_parts)),
        f"static void (*const eg_vparts[{max(n_parts, 1)}])({_PARAMS}) = {{",
        *(f"    eg_vpart{q}," for q in range(n_parts)),
        *(["    0,"] if not n_parts else []),
        "};",
        f"int64_t eg_vwork(void) {{ return {work_bytes}; }}",
        "",
        "int eg_vrun(int64_t npts, void *const *in, const int64_t *istep, void *const *out, const int64_t *ostep,",
        "            void *work, const void *k)",
        "{",
        f"    const void *pin[{max(n_in, 1)}];",
        f"    void *pout[{max(n_out, 1)}];",
        "    eg_error = 0;",
        "    for (int64_t p = 0; p < npts; p++) {",
        f"        for (int j = 0; j < {n_in}; j++) pin[j] = (const char *)in[j] + p * istep[j];",
        f"        for (int j = 0; j < {n_out}; j++) pout[j] = (char *)out[j] + p * ostep[j];",
        calls,
        "    }",
        "    return eg_error;",
        "}",
    ]
    if packed is not None:
        cols, pos, width_in, width_out = packed
        lines += [
            "",
            "int eg_vpacked(int64_t npts, const double *x, double *o, void *work, const void *k)",
            "{",
            f"    static const int64_t col[{max(n_in, 1)}] = {{{', '.join(map(str, cols)) or '0'}}};",
            f"    static const int64_t pos[{max(n_out, 1)}] = {{{', '.join(map(str, pos)) or '0'}}};",
            f"    const void *pin[{max(n_in, 1)}];",
            f"    void *pout[{max(n_out, 1)}];",
            "    eg_error = 0;",
            "    for (int64_t p = 0; p < npts; p++) {",
            f"        for (int j = 0; j < {n_in}; j++) pin[j] = x + p * {width_in} + col[j];",
            f"        for (int j = 0; j < {n_out}; j++) pout[j] = o + p * {width_out} + pos[j];",
            calls,
            "    }",
            "    return eg_error;",
            "}",
        ]
    return "\n".join(lines)
