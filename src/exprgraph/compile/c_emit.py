"""C source for a pointwise program: bounded-size parts over blocks of points, and their drivers.

Points are processed in blocks of ``EG_B`` lanes (the CPU's vector width in doubles: 8 with
AVX-512 unless the build says ``EG_NARROW`` (a CPU that splits 512-bit vectors, see
``cbuild._splits_wide_vectors``), else 4; twice that, in floats, for programs whose float values
are all float32), and
blocks in *superblocks* of up to ``EG_SUPER`` blocks, as many as keep the workspace within
:data:`WORK_TARGET` bytes (so small programs amortise the per-call overhead over hundreds of
points, and a single point costs one block).

The program's steps are cut into *parts* of at most :data:`PART_SIZE` statements. Each part is one C
function looping over the blocks of a superblock; its loop over the ``EG_B`` lanes of a block
becomes straight-line vector code. Within a part every value is a local; a value read by a later
part lives in a row of the workspace (``wd[block][row][lane]`` for doubles, ``wf`` for floats,
``wi`` for int64, ``wb`` for bools; ``wf`` only in programs with float32 values), and rows are
reused once their last reader has run (the buffer plan of
:func:`~exprgraph.compile.lower.plan_rows`). Inputs are copied into rows at the start of a
superblock, outputs out of rows at its end, by loops over tables, so the driver's size does not grow
with the program. Small functions keep the C compiler's time linear in the size of the program (one
huge loop body takes it superlinear time), and the parts are spread over several translation units
that are compiled in parallel.

Two entry points: ``eg_run(n, in, step, out, work)`` reads each input as an array with stride 1
or 0 (a broadcast scalar) and writes each run-time output as an array; ``eg_packed(npts, x, o,
work)`` reads ``npts`` rows of all inputs packed as doubles and writes ``npts`` rows of all
outputs (constants and inputs among them) as doubles, whatever the dtypes of the terms (float32
inputs are rounded from the packed doubles, float32 outputs widened exactly). Both return nonzero
when an integer power had a negative exponent.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..core import Term
from ..core.dtypes import BOOL, FLOAT32, FLOAT64, INT64
from . import crender
from .lower import Program, chain_folds, plan_rows

__all__ = ["CSource", "emit_c", "block_head", "Tables", "DATA_PARAMS", "PART_SIZE", "UNIT_SIZE", "WORK_TARGET"]

#: statements per part (C function)
PART_SIZE = 64
#: most operands in one C statement of a variadic op (a longer fold becomes several statements)
FOLD_WIDTH = 8
#: statements per translation unit before a program is split over several
UNIT_SIZE = 2500
#: most statements in one translation unit (the compiler's memory and stack grow with a unit)
MAX_UNIT = 20_000
#: workspace bytes a superblock may use (about half of a core's L2 cache)
WORK_TARGET = 256 * 1024
#: most blocks in a superblock
MAX_SUPER = 64

#: (workspace array, its row-count macro, bytes per value) of each dtype
_SPACE = {FLOAT64: ("wd", "EG_ND", 8), INT64: ("wi", "EG_NI", 8), BOOL: ("wb", "EG_NB", 4)}
#: the float workspace, present only in programs with float32 values (the others' C stays as it was)
_SINGLE_SPACE = {FLOAT32: ("wf", "EG_NF", 4)}
_HIDDEN = '__attribute__((visibility("hidden")))'
#: the parameters a part takes after the work spaces when the tables are run-time data
DATA_PARAMS = ", const int32_t *restrict eg_it, const double *restrict eg_dt"


def _spaces(single: bool) -> dict[str, tuple[str, str, int]]:
    """The workspace arrays of a program: ``wd``, ``wi``, ``wb``, and ``wf`` when it has float32 values."""
    return {**_SPACE, **_SINGLE_SPACE} if single else _SPACE


def _params(single: bool) -> str:
    """The parameters of a part: the block count and a pointer to each workspace array."""
    return "int nb, " + ", ".join(
        f"{crender.HOST.ctype[d]} (*restrict {name})[{macro}][EG_B]" for d, (name, macro, _) in _spaces(single).items()
    )


def _uses_single(program: Program) -> bool:
    """Whether any value of ``program`` (input, step, output or constant) is a float32."""
    return any(t.dtype == FLOAT32 for t in (*program.inputs, *program.steps, *program.outputs, *program.values))


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


def _cell(t: Term, rows: dict[Term, int], block: str = "b", lane: str = "i") -> str:
    return f"{(_SPACE.get(t.dtype) or _SINGLE_SPACE[t.dtype])[0]}[{block}][{rows[t]}][{lane}]"


def emit_c(program: Program, *, part_size: int = PART_SIZE, units: int | None = None) -> CSource:
    """The C translation units of a pointwise ``program`` (see the module's description)."""
    # a fold longer than a part is a chain of steps, a part's worth of operands each: one C function
    # with a hundred thousand statements takes gcc minutes and gigabytes
    program = chain_folds(program, 1 + part_size * (FOLD_WIDTH - 1))
    steps = program.steps
    input_index = list(program.used_inputs)
    read_inputs = [program.inputs[i] for i in input_index]
    loop_outputs = program.symbolic_outputs()
    chunks = _cut(program.steps, program, part_size)
    part_of = {node: p for p, chunk in enumerate(chunks) for node in chunk}
    n_parts = len(chunks)
    plan = plan_rows(program, part_of, fixed=[*read_inputs, *(t for t in loop_outputs if t not in part_of)])
    row = plan.row
    single = _uses_single(program)
    spaces = _spaces(single)
    params = _params(single)
    parts = [_part(p, chunk, program, row, params) for p, chunk in enumerate(chunks)]
    counts = {d: plan.count.get(d, 0) for d in spaces}
    head = block_head(program, counts, single)
    driver = _driver(program, read_inputs, input_index, loop_outputs, row, n_parts, single)
    statements = sum(_weight(node, program) for node in steps)
    n_units = units if units is not None else _unit_count(statements)
    texts = _units(parts, driver, head, n_units, single)
    return CSource(texts, loop_outputs, input_index, counts, statements)


def block_head(program: Program, counts: dict[str, int], single: bool) -> str:
    """The macros of a program's block layout: lanes ``EG_B``, rows per dtype, blocks per superblock."""
    spaces = _spaces(single)
    # lanes: the vector width in doubles, or in floats when every float value is a float32
    wide = 2 if single and not any(t.dtype == FLOAT64 for t in (*program.steps, *program.inputs)) else 1
    per_block = 8 * wide * sum(max(1, counts[d]) * size for d, (_, _, size) in spaces.items())
    superblock = max(1, min(MAX_SUPER, WORK_TARGET // per_block))
    return "\n".join(
        [
            "#if defined(__AVX512F__) && !defined(EG_NARROW)",
            f"#define EG_B {8 * wide}",
            "#else",
            f"#define EG_B {4 * wide}",
            "#endif",
            *(f"#define {macro} {max(1, counts[d])}" for d, (_, macro, _) in spaces.items()),
            f"#define EG_SUPER {superblock}",
            "",
        ]
    )


def _weight(node: Term, program: Program) -> int:
    """The statements a node becomes: a fold over many operands is written FOLD_WIDTH operands at a time."""
    n = len(program.args_of(node))
    return 1 if n <= FOLD_WIDTH else 1 + (n - 2) // (FOLD_WIDTH - 1)


def _cut(steps: list[Term], program: Program, part_size: int) -> list[list[Term]]:
    """``steps`` cut into parts of at most ``part_size`` statements (a bigger node gets a part of its own)."""
    chunks: list[list[Term]] = []
    current: list[Term] = []
    weight = 0
    for node in steps:
        w = _weight(node, program)
        if current and weight + w > part_size:
            chunks.append(current)
            current, weight = [], 0
        current.append(node)
        weight += w
    if current:
        chunks.append(current)
    return chunks


def _part(p: int, chunk: list[Term], program: Program, row: dict[Term, int], params: str) -> str:
    """One part: its statements over every lane of every block of a superblock."""
    dialect = crender.HOST
    values = program.values
    names: dict[Term, str] = {}
    body: list[str] = []
    count = 0
    for node in chunk:
        operands = []
        args = program.args_of(node)
        for a in args:
            text = names.get(a)
            if text is None:
                text = crender.literal(values[a], a.dtype, dialect) if a in values else _cell(a, row)
            operands.append(text)
        # a long fold, FOLD_WIDTH operands per statement, in numpy's left-to-right order (one huge
        # expression would nest as deep as it is long, which no C compiler's parser survives)
        while len(args) > FOLD_WIDTH:
            head = Term(node.op, args[:FOLD_WIDTH], node.attr)
            local = f"v{count}"
            count += 1
            text = crender.render(head, operands[:FOLD_WIDTH], dialect)
            body.append(f"        const {dialect.ctype[head.dtype]} {local} = {text};")
            args, operands = (head, *args[FOLD_WIDTH:]), [local, *operands[FOLD_WIDTH:]]
        if args is not node.args:
            node_text = crender.render(Term(node.op, args, node.attr), operands, dialect)
        else:
            node_text = crender.render(node, operands, dialect)
        local = f"v{count}"
        count += 1
        names[node] = local
        body.append(f"        const {dialect.ctype[node.dtype]} {local} = {node_text};")
        if node in row:
            body.append(f"        {_cell(node, row)} = {local};")
    return "\n".join(
        [
            f"{_HIDDEN} void eg_part{p}({params})",
            "{",
            "    for (int b = 0; b < nb; b++)",
            '    _Pragma("omp simd") for (int i = 0; i < EG_B; i++) {',
            *body,
            "    }",
            "}",
        ]
    )


def _unit_count(statements: int) -> int:
    """As many units as CPUs once a program is big, more when a unit would pass MAX_UNIT statements."""
    parallel = min(max(2, os.cpu_count() or 1), statements // UNIT_SIZE)
    return max(1, parallel, -(-statements // MAX_UNIT))


def _units(parts: list[str], driver: str, head: str, n_units: int, single: bool) -> list[str]:
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
        texts.append(crender.prelude(body, single=single) + head + "\n" + body + "\n")
    return texts


def _table(name: str, ctype: str, items: list) -> str:
    """A static C array (the driver loops over tables, so its size does not grow with the program)."""
    rows = [", ".join(map(str, items[k : k + 16])) for k in range(0, len(items), 16)]
    return f"static const {ctype} {name}[{len(items)}] = {{\n    " + ",\n    ".join(rows) + "\n};"


class Tables:
    """Where the driver's tables go: static arrays in the C text, or (``data=True``) run-time data.

    As data, a table is a stretch of one int32 array (``eg_it``) or one double array (``eg_dt``)
    that the caller passes at run time, and the C text only names its offset, so the text does not
    grow with the number of inputs and outputs (see :mod:`.c_loops`).
    """

    def __init__(self, data: bool = False) -> None:
        self.data = data
        self.ints: list[int] = []
        self.doubles: list[float] = []

    def table(self, name: str, ctype: str, items: list) -> str:
        """The C declaration of table ``name`` (int32 ``items``, or doubles when ``ctype`` is double)."""
        if not self.data:
            if ctype == "double":
                items = [crender.literal(v, FLOAT64, crender.HOST) for v in items]
            return _table(name, ctype, items)
        if ctype == "double":
            offset = len(self.doubles)
            self.doubles.extend(float(v) for v in items)
            return f"#define {name} (eg_dt + {offset})"
        offset = len(self.ints)
        self.ints.extend(int(v) for v in items)
        return f"#define {name} (eg_it + {offset})"


def _driver(
    program: Program,
    read_inputs: list[Term],
    input_index: list[int],
    loop_outputs: list[Term],
    row: dict[Term, int],
    n_parts: int,
    single: bool,
    tables: Tables | None = None,
) -> str:
    """The C driver: copy a block of rows in, call the parts on it, copy the outputs out (``eg_run``, ``eg_packed``).

    With ``tables`` holding data (:class:`Tables`), the tables are read from the two pointers at
    the start of the work area, which every part also receives.
    """
    tables = tables or Tables()
    spaces = _spaces(single)
    params = _params(single) + (DATA_PARAMS if tables.data else "")
    lines = _driver_head(spaces, params, n_parts, 64 if tables.data else 0)
    n_in, n_out = len(program.inputs), len(program.outputs)
    out_position: dict[Term, list[int]] = {}
    for j, t in enumerate(program.outputs):
        out_position.setdefault(t, []).append(j)
    run_in: list[str] = []
    run_out: list[str] = []
    pk_in: list[str] = []
    pk_out: list[str] = []
    for dtype, (space, _, _) in spaces.items():
        ins = [(k, t) for k, t in enumerate(read_inputs) if t.dtype == dtype]
        if ins:
            _input_copies(lines, run_in, pk_in, dtype, space, ins, row, input_index, n_in, tables)
        outs = [(j, t) for j, t in enumerate(loop_outputs) if t.dtype == dtype]
        if outs:
            _output_copies(lines, run_out, pk_out, dtype, space, outs, row, out_position, tables)
    _known_outputs(lines, pk_out, program, row, n_in, tables)
    setup = _work_setup(single, tables.data)
    calls_args = ", ".join(
        ["nb", *(name for name, _, _ in spaces.values()), *(("eg_it", "eg_dt") if tables.data else ())]
    )
    start = [
        "        const int64_t m = total - s < EG_B * EG_SUPER ? total - s : EG_B * EG_SUPER;",
        "        const int nb = (int)((m + EG_B - 1) / EG_B);",
    ]
    calls = [f"        for (int k = 0; k < {n_parts}; k++) eg_parts[k]({calls_args});"]
    lines += ["", "int eg_run(int64_t total, void *const *in, const int64_t *step, void *const *out, void *work)", "{"]
    lines += [*setup, "    eg_error = 0;", "    for (int64_t s = 0; s < total; s += EG_B * EG_SUPER) {"]
    lines += [*start, *run_in, *calls, *run_out, "    }", "    return eg_error;", "}", ""]
    lines += ["int eg_packed(int64_t total, const double *restrict x, double *restrict o, void *work)", "{"]
    lines += [*setup, "    eg_error = 0;", "    for (int64_t s = 0; s < total; s += EG_B * EG_SUPER) {"]
    lines += [*start, f"        const double *restrict xs = x + s * {n_in};", *pk_in, *calls]
    lines += ["        for (int64_t j = 0; j < m; j++) {", f"            double *restrict os = o + (s + j) * {n_out};"]
    lines += [*pk_out, "        }", "    }", "    return eg_error;", "}"]
    return "\n".join(lines)


def _work_setup(single: bool, data: bool) -> list[str]:
    """The driver's views of the work area (after the two table pointers when the tables are data)."""
    setup = [
        "    double (*wd)[EG_ND][EG_B] = (double (*)[EG_ND][EG_B])work;",
        "    int64_t (*wi)[EG_NI][EG_B] = (int64_t (*)[EG_NI][EG_B])(wd + EG_SUPER);",
        "    int (*wb)[EG_NB][EG_B] = (int (*)[EG_NB][EG_B])(wi + EG_SUPER);",
    ]
    if single:
        setup.append("    float (*wf)[EG_NF][EG_B] = (float (*)[EG_NF][EG_B])(wb + EG_SUPER);")
    if data:
        setup[:0] = [
            "    const int32_t *restrict eg_it = ((const int32_t *const *)work)[0];",
            "    const double *restrict eg_dt = ((const double *const *)work)[1];",
            "    work = (char *)work + 64;",
        ]
    return setup


#: a packed double read as an int64 input (see _input_copies)
INT_OF_DOUBLE = (
    "static inline int64_t eg_int_of(double x) {\n"
    "    return (x != x || x >= 9223372036854775808.0 || x < -9223372036854775808.0) ? INT64_MIN : (int64_t)x;\n"
    "}"
)


def _driver_head(spaces: dict, params: str, n_parts: int, header: int = 0) -> list[str]:
    """The driver's declarations: the parts, the block size, the work size, and the table of parts."""
    lines = [crender.ERROR_DEFINITION, INT_OF_DOUBLE]
    lines += [*(f"{_HIDDEN} void eg_part{p}({params});" for p in range(n_parts)), ""]
    lines.append("int eg_block(void) { return EG_B; }")
    sizes = " + ".join(f"{macro} * {size}" for _, macro, size in spaces.values())
    extra = f"{header} + " if header else ""
    lines.append(f"int64_t eg_work_bytes(void) {{ return {extra}(int64_t)EG_SUPER * EG_B * ({sizes}); }}")
    # the parts are called through a table, so the driver's size does not grow with the program
    lines.append(f"static void (*const eg_parts[{max(n_parts, 1)}])({params}) = {{")
    lines.extend(f"    eg_part{p}," for p in range(n_parts))
    if not n_parts:
        lines.append("    0,")
    lines.append("};")
    return lines


def _input_copies(
    lines: list[str],
    run_in: list[str],
    pk_in: list[str],
    dtype: str,
    space: str,
    ins: list[tuple[int, Term]],
    row: dict[Term, int],
    input_index: list[int],
    n_in: int,
    tables: Tables,
) -> None:
    """Tables and loops that copy the inputs of one dtype into its work space (strided and packed)."""
    store, ctype = crender.HOST.store[dtype], crender.HOST.ctype[dtype]
    tag = space[1]
    lines.append(tables.table(f"eg_in_{tag}_k", "int32_t", [k for k, _ in ins]))
    lines.append(tables.table(f"eg_in_{tag}_row", "int32_t", [row[t] for _, t in ins]))
    lines.append(tables.table(f"eg_in_{tag}_col", "int32_t", [input_index[k] for k, _ in ins]))
    run_in.append(
        f"        for (int k = 0; k < {len(ins)}; k++) {{\n"
        f"            const int64_t d = step[eg_in_{tag}_k[k]];\n"
        f"            const {store} *p = (const {store} *)in[eg_in_{tag}_k[k]] + s * d;\n"
        "            for (int b = 0; b < nb; b++)\n"
        "                for (int i = 0; i < EG_B; i++) {\n"
        "                    const int64_t j = b * EG_B + i;\n"
        f"                    {space}[b][eg_in_{tag}_row[k]][i] = ({ctype})p[(j < m ? j : 0) * d];\n"
        "                }\n"
        "        }"
    )
    # a packed double is a bool's truth as numpy reads it: any non-zero (nan too) is True ((int)0.5 would be 0)
    read = f"xs[(j < m ? j : 0) * {n_in} + eg_in_{tag}_col[k]]"
    # and an int is cut toward 0 where it fits, INT64_MIN elsewhere (nan too): x86's and numpy's cast there, the
    # vm's (_cvm.h); C leaves a double that no int64 holds undefined
    if dtype == BOOL:
        read = f"({read} != 0.0)"
    elif dtype == INT64:
        read = f"eg_int_of({read})"
    else:
        read = f"({ctype}){read}"
    pk_in.append(
        f"        for (int k = 0; k < {len(ins)}; k++)\n"
        "            for (int b = 0; b < nb; b++)\n"
        "                for (int i = 0; i < EG_B; i++) {\n"
        "                    const int64_t j = b * EG_B + i;\n"
        f"                    {space}[b][eg_in_{tag}_row[k]][i] =\n"
        f"                        {read};\n"
        "                }"
    )


def _output_copies(
    lines: list[str],
    run_out: list[str],
    pk_out: list[str],
    dtype: str,
    space: str,
    outs: list[tuple[int, Term]],
    row: dict[Term, int],
    out_position: dict[Term, list[int]],
    tables: Tables,
) -> None:
    """Tables and loops that copy the outputs of one dtype out of its work space (strided and packed)."""
    store = crender.HOST.store[dtype]
    tag = space[1]
    test = " != 0" if dtype == BOOL else ""
    lines.append(tables.table(f"eg_out_{tag}_j", "int32_t", [j for j, _ in outs]))
    lines.append(tables.table(f"eg_out_{tag}_row", "int32_t", [row[t] for _, t in outs]))
    run_out.append(
        f"        for (int k = 0; k < {len(outs)}; k++) {{\n"
        f"            {store} *p = ({store} *)out[eg_out_{tag}_j[k]] + s;\n"
        f"            for (int64_t j = 0; j < m; j++)\n"
        f"                p[j] = ({store})({space}[j / EG_B][eg_out_{tag}_row[k]][j % EG_B]{test});\n"
        "        }"
    )
    pairs = [(j, row[t]) for t in dict.fromkeys(t for _, t in outs) for j in out_position[t]]
    lines.append(tables.table(f"eg_pk_{tag}_j", "int32_t", [j for j, _ in pairs]))
    lines.append(tables.table(f"eg_pk_{tag}_row", "int32_t", [r for _, r in pairs]))
    pk_out.append(
        f"            for (int k = 0; k < {len(pairs)}; k++)\n"
        f"                os[eg_pk_{tag}_j[k]] =\n"
        f"                    (double)({space}[j / EG_B][eg_pk_{tag}_row[k]][j % EG_B]{test});"
    )


def _known_outputs(
    lines: list[str], pk_out: list[str], program: Program, row: dict[Term, int], n_in: int, tables: Tables
) -> None:
    """Packed outputs known without computing: inputs read back, and constants."""
    positions = {s: k for k, s in enumerate(program.inputs)}
    copies = [(j, positions[t]) for j, t in enumerate(program.outputs) if t.op.name == "symbol" and t not in row]
    consts = [(j, t) for j, t in enumerate(program.outputs) if t in program.fixed]
    if copies:
        lines.append(tables.table("eg_pk_copy_j", "int32_t", [j for j, _ in copies]))
        lines.append(tables.table("eg_pk_copy_col", "int32_t", [c for _, c in copies]))
        pk_out.append(
            f"            for (int k = 0; k < {len(copies)}; k++)\n"
            f"                os[eg_pk_copy_j[k]] = xs[j * {n_in} + eg_pk_copy_col[k]];"
        )
    if consts:
        lines.append(tables.table("eg_pk_const_j", "int32_t", [j for j, _ in consts]))
        lines.append(tables.table("eg_pk_const_v", "double", [program.values[t] for _, t in consts]))
        pk_out.append(f"            for (int k = 0; k < {len(consts)}; k++) os[eg_pk_const_j[k]] = eg_pk_const_v[k];")
