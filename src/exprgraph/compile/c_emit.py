"""C source for a pointwise program: bounded-size parts over blocks of points, and their drivers.

The points are processed in blocks of ``EG_B`` (the CPU's vector width in doubles: 8 with
AVX-512, else 4). The program's steps are cut into *parts* of at most :data:`PART_SIZE`
statements; each part is one C function whose loop over the ``EG_B`` lanes of a block the
compiler turns into straight-line vector code. Within a part every value is a local; a value read
by a later part lives in a row of the workspace (``wd[row][lane]`` for doubles, ``wi`` for
int64, ``wb`` for bools), and rows are reused once their last reader has run (the buffer plan of
:func:`~exprgraph.compile.lower.plan_rows`). Inputs are copied into rows at the start of a block,
outputs out of rows at its end. Keeping functions small keeps the C compiler's time linear in the
size of the program (one huge loop body takes it superlinear time), and the parts are spread over
several translation units that are compiled in parallel.

Two entry points: ``eg_run(n, in, step, out, work)`` reads each input as an array with stride 1
or 0 (a broadcast scalar) and writes each run-time output as an array; ``eg_packed(npts, x, o,
work)`` reads ``npts`` rows of all inputs packed as doubles and writes ``npts`` rows of all
outputs (constants and inputs among them) as doubles, with no per-argument work in Python.
Both return nonzero when an integer power had a negative exponent.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..core import Term
from ..core.dtypes import BOOL, FLOAT64, INT64
from . import crender
from .lower import Program, plan_rows

__all__ = ["CSource", "emit_c", "PART_SIZE"]

#: statements per part (C function)
PART_SIZE = 64
#: statements per translation unit before a program is split over several
UNIT_SIZE = 2500

_ROWS = {FLOAT64: "wd", INT64: "wi", BOOL: "wb"}
_HIDDEN = '__attribute__((visibility("hidden")))'
_PARAMS = "double (*restrict wd)[EG_B], int64_t (*restrict wi)[EG_B], int (*restrict wb)[EG_B]"


@dataclass
class CSource:
    """The translation units of one program and what the caller needs to run them."""

    units: list[str]
    #: run-time outputs (distinct terms computed by the steps or read from inputs), in ``out`` order
    loop_outputs: list[Term]
    #: positions (in the program's inputs) of the inputs ``eg_run`` reads, in ``in`` order
    input_index: list[int]
    #: workspace rows per dtype
    rows: dict[str, int]
    #: number of statements
    statements: int

    @property
    def text(self) -> str:
        """All units as one text (for display)."""
        return "\n".join(self.units)


def _row(t: Term, rows: dict[Term, int]) -> str:
    return f"{_ROWS[t.dtype]}[{rows[t]}][i]"


def emit_c(program: Program, *, part_size: int = PART_SIZE, units: int | None = None) -> CSource:
    """The C translation units of a pointwise ``program`` (see the module's description)."""
    dialect = crender.HOST
    steps = program.steps
    inputs = program.inputs
    input_index = list(program.used_inputs)
    read_inputs = [inputs[i] for i in input_index]
    loop_outputs = list(dict.fromkeys(t for t in program.outputs if t.free_symbols))
    part_of = {node: k // part_size for k, node in enumerate(steps)}
    n_parts = (len(steps) + part_size - 1) // part_size
    plan = plan_rows(program, part_of, fixed=[*read_inputs, *(t for t in loop_outputs if t not in part_of)])
    row = plan.row
    for t in loop_outputs:  # an output computed by a step keeps a row to the end
        if t not in row:
            row[t] = plan.count.get(t.dtype, 0)
            plan.count[t.dtype] = row[t] + 1
    values = program.values
    parts: list[str] = []
    for p in range(n_parts):
        chunk = steps[p * part_size : (p + 1) * part_size]
        names: dict[Term, str] = {}
        body: list[str] = []
        for node in chunk:
            operands = []
            for a in node.args:
                text = names.get(a)
                if text is None:
                    text = crender.literal(values[a], a.dtype, dialect) if a in values else _row(a, row)
                operands.append(text)
            local = f"v{len(names)}"
            names[node] = local
            body.append(
                f"        const {dialect.ctype[node.dtype]} {local} = {crender.render(node, operands, dialect)};"
            )
            if node in row:
                body.append(f"        {_row(node, row)} = {local};")
        parts.append(
            "\n".join(
                [
                    f"{_HIDDEN} void eg_part{p}({_PARAMS})",
                    "{",
                    "    for (int i = 0; i < EG_B; i++) {",
                    *body,
                    "    }",
                    "}",
                ]
            )
        )
    driver = _driver(program, read_inputs, input_index, loop_outputs, row, plan.count, n_parts)
    n_units = units if units is not None else _unit_count(len(steps))
    texts = _units(parts, driver, n_units)
    return CSource(texts, loop_outputs, input_index, dict(plan.count), len(steps))


def _unit_count(statements: int) -> int:
    return max(1, min(max(2, os.cpu_count() or 1), statements // UNIT_SIZE))


_HEAD = """#if defined(__AVX512F__)
#define EG_B 8
#else
#define EG_B 4
#endif
"""


def _units(parts: list[str], driver: str, n_units: int) -> list[str]:
    """Spread the parts over ``n_units`` texts (balanced by size); the driver goes with the last."""
    buckets: list[list[str]] = [[] for _ in range(n_units)]
    sizes = [0] * n_units
    for text in parts:
        k = min(range(n_units), key=sizes.__getitem__)
        buckets[k].append(text)
        sizes[k] += len(text)
    buckets[-1].append(driver)
    texts = []
    for bucket in buckets:
        body = "\n\n".join(bucket)
        texts.append(crender.prelude(body) + _HEAD + "\n" + body + "\n")
    return texts


def _table(name: str, ctype: str, items: list) -> str:
    """A static C array (the driver loops over tables, so its size does not grow with the program)."""
    return f"static const {ctype} {name}[{len(items)}] = {{{', '.join(map(str, items))}}};"


def _driver(
    program: Program,
    read_inputs: list[Term],
    input_index: list[int],
    loop_outputs: list[Term],
    row: dict[Term, int],
    counts: dict[str, int],
    n_parts: int,
) -> str:
    dialect = crender.HOST
    n_d, n_i, n_b = counts.get(FLOAT64, 0), counts.get(INT64, 0), counts.get(BOOL, 0)
    lines = [crender.ERROR_DEFINITION, *(f"{_HIDDEN} void eg_part{p}({_PARAMS});" for p in range(n_parts)), ""]
    lines.append("int eg_block(void) { return EG_B; }")
    lines.append(f"int64_t eg_work_bytes(void) {{ return (int64_t)EG_B * ({n_d} * 8 + {n_i} * 8 + {n_b} * 4); }}")
    setup = [
        "    double (*wd)[EG_B] = (double (*)[EG_B])work;",
        f"    int64_t (*wi)[EG_B] = (int64_t (*)[EG_B])(wd + {n_d});",
        f"    int (*wb)[EG_B] = (int (*)[EG_B])(wi + {n_i});",
    ]
    calls = [f"        eg_part{p}(wd, wi, wb);" for p in range(n_parts)]
    n_in, n_out = len(program.inputs), len(program.outputs)
    positions = {s: k for k, s in enumerate(program.inputs)}
    out_position = {}
    for j, t in enumerate(program.outputs):
        out_position.setdefault(t, []).append(j)
    run_in, run_out, pk_in, pk_out = [], [], [], []
    for dtype, rows in _ROWS.items():
        store, ctype = dialect.store[dtype], dialect.ctype[dtype]
        ins = [(k, t) for k, t in enumerate(read_inputs) if t.dtype == dtype]
        if ins:
            tag = rows[1]
            lines.append(_table(f"eg_in_{tag}_k", "int32_t", [k for k, _ in ins]))
            lines.append(_table(f"eg_in_{tag}_row", "int32_t", [row[t] for _, t in ins]))
            lines.append(_table(f"eg_in_{tag}_col", "int32_t", [input_index[k] for k, _ in ins]))
            run_in.append(
                f"        for (int k = 0; k < {len(ins)}; k++) {{\n"
                f"            const int64_t d = step[eg_in_{tag}_k[k]];\n"
                f"            const {store} *p = (const {store} *)in[eg_in_{tag}_k[k]] + s * d;\n"
                f"            for (int i = 0; i < EG_B; i++)\n"
                f"                {rows}[eg_in_{tag}_row[k]][i] = ({ctype})p[(i < m ? i : 0) * d];\n"
                "        }"
            )
            pk_in.append(
                f"        for (int k = 0; k < {len(ins)}; k++)\n"
                f"            for (int i = 0; i < EG_B; i++)\n"
                f"                {rows}[eg_in_{tag}_row[k]][i] =\n"
                f"                    ({ctype})xs[(i < m ? i : 0) * {n_in} + eg_in_{tag}_col[k]];"
            )
        outs = [(j, t) for j, t in enumerate(loop_outputs) if t.dtype == dtype]
        if outs:
            tag = rows[1]
            test = " != 0" if dtype == BOOL else ""
            lines.append(_table(f"eg_out_{tag}_j", "int32_t", [j for j, _ in outs]))
            lines.append(_table(f"eg_out_{tag}_row", "int32_t", [row[t] for _, t in outs]))
            run_out.append(
                f"        for (int k = 0; k < {len(outs)}; k++) {{\n"
                f"            {store} *p = ({store} *)out[eg_out_{tag}_j[k]] + s;\n"
                f"            for (int i = 0; i < m; i++) p[i] = ({store})({rows}[eg_out_{tag}_row[k]][i]{test});\n"
                "        }"
            )
            pairs = [(j, row[t]) for t in dict.fromkeys(t for _, t in outs) for j in out_position[t]]
            lines.append(_table(f"eg_pk_{tag}_j", "int32_t", [j for j, _ in pairs]))
            lines.append(_table(f"eg_pk_{tag}_row", "int32_t", [r for _, r in pairs]))
            pk_out.append(
                f"            for (int k = 0; k < {len(pairs)}; k++)"
                f" os[eg_pk_{tag}_j[k]] = (double)({rows}[eg_pk_{tag}_row[k]][i]{test});"
            )
    # packed outputs known without computing: inputs read back, and constants
    copies = [(j, positions[t]) for j, t in enumerate(program.outputs) if t.op.name == "symbol" and t not in row]
    consts = [(j, t) for j, t in enumerate(program.outputs) if not t.free_symbols]
    if copies:
        lines.append(_table("eg_pk_copy_j", "int32_t", [j for j, _ in copies]))
        lines.append(_table("eg_pk_copy_col", "int32_t", [c for _, c in copies]))
        pk_out.append(
            f"            for (int k = 0; k < {len(copies)}; k++)\n"
            f"                os[eg_pk_copy_j[k]] = xs[i * {n_in} + eg_pk_copy_col[k]];"
        )
    if consts:
        lines.append(_table("eg_pk_const_j", "int32_t", [j for j, _ in consts]))
        values = [crender.literal(program.values[t], FLOAT64, dialect) for _, t in consts]
        lines.append(_table("eg_pk_const_v", "double", values))
        pk_out.append(f"            for (int k = 0; k < {len(consts)}; k++) os[eg_pk_const_j[k]] = eg_pk_const_v[k];")
    lines += ["", "int eg_run(int64_t n, void *const *in, const int64_t *step, void *const *out, void *work)", "{"]
    lines += [*setup, "    eg_error = 0;", "    for (int64_t s = 0; s < n; s += EG_B) {"]
    lines += ["        const int m = n - s < EG_B ? (int)(n - s) : EG_B;", *run_in, *calls, *run_out]
    lines += ["    }", "    return eg_error;", "}", ""]
    lines += ["int eg_packed(int64_t npts, const double *restrict x, double *restrict o, void *work)", "{"]
    lines += [*setup, "    eg_error = 0;", "    for (int64_t s = 0; s < npts; s += EG_B) {"]
    lines += ["        const int m = npts - s < EG_B ? (int)(npts - s) : EG_B;"]
    lines += [f"        const double *restrict xs = x + s * {n_in};", *pk_in, *calls]
    lines += ["        for (int i = 0; i < m; i++) {", f"            double *restrict os = o + (s + i) * {n_out};"]
    lines += [*pk_out, "        }", "    }", "    return eg_error;", "}"]
    return "\n".join(lines)
