"""C source for a program with repeated structure: one loop per class, straight-line parts for the rest.

The program is cut by :func:`~exprgraph.compile.structure.find_structure`. Each class becomes one
part (a C function with the signature of :mod:`.c_emit`'s parts) that loops over its members; the
body is the class's shape, rendered once by :mod:`.crender`, reading its slots through an index
table, its constants from a constant table, and writing each member's value to its row::

    for (int b = 0; b < nb; b++)
        for (int m = 0; m < K; m++) {
            const int32_t *restrict r = ix + m * S;  const double *restrict c = kc + m * C;
            _Pragma("omp simd") for (int i = 0; i < EG_B; i++) {
                const double v0 = (wd[b][r[0]][i] - wd[b][r[1]][i]);   ... body ...
                wd[b][ox[m]][i] = v3;
            }
        }

The rest is cut into straight-line parts as :mod:`.c_emit` writes them. Every value read across
parts (inputs, roots, rest values read by a later part) has a row of its own, never reused: the
workspace grows linearly with the program.

The tables (index, output and constant tables of the classes, and the driver's copy tables) are
not in the C text: they are two arrays, int32 and double, that the caller passes at run time
through the first bytes of the work area (:class:`~exprgraph.compile.c_emit.Tables`). The C text
and the compiler's time grow with the number of classes, not with the number of outputs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import Term
from ..core.dtypes import FLOAT64, INT64
from . import crender
from .c_emit import (
    _HIDDEN,
    DATA_PARAMS,
    PART_SIZE,
    CSource,
    Tables,
    _cut,
    _driver,
    _params,
    _part,
    _spaces,
    _unit_count,
    _units,
    _uses_single,
    _weight,
    block_head,
)
from .lower import Program, lower
from .structure import LoopClass, Structure

__all__ = ["LoopSource", "emit_loops"]


@dataclass
class LoopSource:
    """The C of a grouped program and the run-time tables its library reads."""

    source: CSource
    #: the int32 tables (class index and output tables, then the driver's)
    ints: np.ndarray
    #: the double tables (class constants, then the driver's constant outputs)
    doubles: np.ndarray


def emit_loops(structure: Structure, *, part_size: int = PART_SIZE) -> LoopSource:
    """The C translation units of a grouped pointwise program (see the module's description)."""
    program = structure.program
    input_index = list(program.used_inputs)
    read_inputs = [program.inputs[i] for i in input_index]
    loop_outputs = program.symbolic_outputs()
    pieces: list[LoopClass | list[Term]] = []
    for seg in structure.segments:
        pieces.extend([seg] if isinstance(seg, LoopClass) else _cut(seg, program, part_size))
    row, counts = _rows(program, pieces, read_inputs, loop_outputs)
    single = _uses_single(program)
    params = _params(single) + DATA_PARAMS
    tables = Tables(data=True)
    parts = []
    for p, piece in enumerate(pieces):
        if isinstance(piece, LoopClass):
            parts.append(_class_part(p, piece, row, params, tables))
        else:
            parts.append(_part(p, piece, program, row, params))
    spaces = _spaces(single)
    counts = {d: counts.get(d, 0) for d in spaces}
    head = block_head(program, counts, single)
    driver = _driver(program, read_inputs, input_index, loop_outputs, row, len(parts), single, tables)
    statements = sum(c.size for c in structure.classes) + sum(_weight(t, program) for t in structure.rest)
    texts = _units(parts, driver, head, _unit_count(statements), single)
    source = CSource(texts, loop_outputs, input_index, counts, statements)
    ints = np.array(tables.ints or [0], dtype=np.int32)
    doubles = np.array(tables.doubles or [0.0], dtype=np.float64)
    return LoopSource(source, ints, doubles)


def _rows(
    program: Program, pieces: list[LoopClass | list[Term]], read_inputs: list[Term], loop_outputs: list[Term]
) -> tuple[dict[Term, int], dict[str, int]]:
    """A row for every value read outside the part computing it (never reused), numbered per dtype."""
    part_of: dict[Term, int] = {}
    wanted: list[Term] = [*read_inputs, *loop_outputs]
    for p, piece in enumerate(pieces):
        if isinstance(piece, LoopClass):
            wanted.extend(piece.members)
            for reads in piece.reads:
                wanted.extend(reads)
            continue
        for node in piece:
            part_of[node] = p
    for p, piece in enumerate(pieces):
        if isinstance(piece, list):
            for node in piece:
                wanted.extend(a for a in program.args_of(node) if part_of.get(a, p) != p)
    row: dict[Term, int] = {}
    counts: dict[str, int] = {}
    for t in wanted:
        if t not in row and t not in program.values:
            row[t] = counts.get(t.dtype, 0)
            counts[t.dtype] = row[t] + 1
    return row, counts


def _class_part(p: int, cls: LoopClass, row: dict[Term, int], params: str, tables: Tables) -> str:
    """One class as a part: a loop over its members, the body rendered once."""
    k, s, c = len(cls.members), len(cls.slots), len(cls.consts)
    ix = tables.table(f"eg_ix{p}", "int32_t", [row[t] for reads in cls.reads for t in reads] or [0])
    ox = tables.table(f"eg_ox{p}", "int32_t", [row[t] for t in cls.members])
    kc = tables.table(f"eg_kc{p}", "double", [float(v) for values in cls.constants for v in values] or [0.0])
    body = lower([cls.body], [*cls.slots, *cls.consts])
    names: dict[Term, str] = {}
    for j, t in enumerate(cls.slots):
        names[t] = f"wd[b][r[{j}]][i]"
    for j, t in enumerate(cls.consts):
        names[t] = f"c[{j}]" if t.dtype == FLOAT64 else f"(({crender.HOST.ctype[INT64]})c[{j}])"
    lines = []
    for n, node in enumerate(body.steps):
        text = crender.render(node, [names[a] for a in node.args], crender.HOST)
        names[node] = f"v{n}"
        lines.append(f"                const {crender.HOST.ctype[node.dtype]} v{n} = {text};")
    lines.append(f"                wd[b][ox[m]][i] = {names[cls.body]};")
    return "\n".join(
        [
            f"/* {k} members of one shape: {len(body.steps)} statements, {s} slots, {c} constants */",
            f"{_HIDDEN} void eg_part{p}({params})",
            "{",
            ix,
            ox,
            kc,
            f"    const int32_t *restrict ix = eg_ix{p};",
            f"    const int32_t *restrict ox = eg_ox{p};",
            f"    const double *restrict kc = eg_kc{p};",
            "    for (int b = 0; b < nb; b++)",
            f"        for (int m = 0; m < {k}; m++) {{",
            f"            const int32_t *restrict r = ix + (int64_t)m * {s};",
            f"            const double *restrict c = kc + (int64_t)m * {c};",
            '            _Pragma("omp simd") for (int i = 0; i < EG_B; i++) {',
            *lines,
            "            }",
            "        }",
            "}",
        ]
    )
