"""The lowering every backend consumes: a schedule, folded constants, read counts and a buffer plan.

``lower(outputs, inputs)`` walks the DAG of the outputs once and returns a :class:`Program`:

- ``steps``: the nodes computed at run time, in dependency order (each distinct node once, so
  common subexpressions are computed once: terms are interned);
- ``values``: what is known at compile time: the value of every constant leaf and of every
  largest subterm without symbols (folded once here, with :func:`exprgraph.evaluate`; when folding
  fails, say an integer power with a negative exponent, the subterms stay run-time steps so the
  error is raised where it belongs);
- ``reads``: how many operand slots read each node (an output counts one extra read that is never
  released), from which the backends free or overwrite dead buffers;
- ``pointwise``: whether every node is scalar-shaped (the many-points case the C backend compiles).

:func:`plan_rows` is the buffer plan for code that runs in bounded-size parts (the C backend's
chunks): the values that cross from one part to a later one get rows of a workspace, reused as
soon as their last reader has run.

The walk runs in the vm's extension when it is built (``_cvm.walk``, in ``_cvm_walk.c``) for
programs of scalar nodes with nothing to fold; its twin, :func:`lower_py`, lowers every program
(``EXPRGRAPH_PURE_PYTHON``, or ``lower._native = None``, runs it alone). Both give the same program.
The extension's walk also keeps the DAG as arrays (``Program.walked``, see :data:`KEEP_WALK`), from
which the vm encodes without reading the terms again.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..core import Term
from ..core.termbase import PURE_ENV
from ..core.traversal import schedule
from ..errors import EvaluationError
from ..eval import evaluate
from ..eval.bind import SCALAR_TYPES, const_value

try:
    from . import _cvm as _native  # type: ignore[attr-defined]
except ImportError:  # not built: the Python walk runs
    _native = None
if os.environ.get(PURE_ENV) or not hasattr(_native, "walk"):
    _native = None

__all__ = ["Program", "lower", "lower_py", "plan_rows", "RowPlan", "chain_folds", "Reads", "KEEP_WALK"]

#: the extension's walk keeps the DAG as arrays for the vm's encoding (``encode_walked``: each step's op and
#: operands read by number, not from the terms again); False: the vm encodes from the terms (``encode_flat``),
#: the same words (for benchmarks and tests)
KEEP_WALK = True


class Reads(Mapping[Term, int]):
    """The reads of each node of a walked program, made a dict when first asked (the vm never asks)."""

    __slots__ = ("_nodes", "_counts", "_dict")

    def __init__(self, nodes: list[Term], counts: bytes) -> None:
        self._nodes: list[Term] | None = nodes
        self._counts = counts
        self._dict: dict[Term, int] | None = None

    def _reads(self) -> dict[Term, int]:
        if self._dict is None:
            assert self._nodes is not None
            self._dict = dict(zip(self._nodes, memoryview(self._counts).cast("q").tolist(), strict=True))
            self._nodes, self._counts = None, b""
        return self._dict

    def __getitem__(self, node: Term) -> int:
        return self._reads()[node]

    def get(self, node: Term, default: Any = None) -> Any:
        """The reads of ``node``, or ``default``."""
        return self._reads().get(node, default)

    def __iter__(self) -> Iterator[Term]:
        return iter(self._reads())

    def __len__(self) -> int:
        return len(self._reads())

    def __repr__(self) -> str:
        return f"Reads({self._reads()!r})"


@dataclass
class Program:
    """A DAG lowered for code generation (see the module's description)."""

    inputs: tuple[Term, ...]
    outputs: tuple[Term, ...]
    #: nodes computed at run time, operands first
    steps: list[Term]
    #: compile-time values: constant leaves and folded subterms
    values: dict[Term, Any]
    #: operand slots reading each node (outputs: one more)
    reads: Mapping[Term, int]
    #: positions in ``inputs`` of the inputs the outputs use
    used_inputs: tuple[int, ...]
    #: every node is scalar-shaped
    pointwise: bool
    #: operands a step is computed from when they are not its own args (see :func:`chain_folds`)
    operands: dict[Term, tuple[Term, ...]] = field(default_factory=dict)
    #: the symbols under the outputs (found by the lowering's one walk)
    symbols: frozenset[Term] = frozenset()
    #: the outputs that read no symbol (known at compile time, unless their folding failed)
    fixed: frozenset[Term] = frozenset()
    _last: dict[Term, int] | None = field(default=None, repr=False)
    #: the extension's walk kept as arrays and the symbols in its order, for the vm's encoding (taken by it)
    walked: tuple[Any, list[Term]] | None = field(default=None, repr=False, compare=False)

    def symbolic_outputs(self) -> list[Term]:
        """The distinct outputs that read a symbol, in order (what the run entry points write)."""
        fixed = self.fixed
        return list(dict.fromkeys(t for t in self.outputs if t not in fixed))

    def args_of(self, node: Term) -> tuple[Term, ...]:
        """The operands the step ``node`` is computed from."""
        return self.operands.get(node, node.args)

    def last_use(self) -> dict[Term, int]:
        """For each node read by a step, the index of the last step reading it (outputs: ``len(steps)``)."""
        if self._last is None:
            last: dict[Term, int] = {}
            for k, node in enumerate(self.steps):
                for a in self.args_of(node):
                    last[a] = k
            end = len(self.steps)
            for t in self.outputs:
                last[t] = end
            self._last = last
        return self._last


def lower(outputs: Sequence[Term], inputs: Sequence[Term]) -> Program:
    """Lower ``outputs`` (terms) over ``inputs`` (symbols) into a :class:`Program`."""
    outputs = tuple(outputs)
    inputs = tuple(inputs)
    walked = None
    if _native is not None:  # the constants' values as const_value gives them, the inputs' positions found there too
        walked = _native.walk(outputs, "symbol", "const", KEEP_WALK, inputs, SCALAR_TYPES, const_value)
    if walked is None:  # the extension declined (something to fold, a tensor, another leaf): the twin
        return lower_py(outputs, inputs)
    steps, nodes, reads, _, symbols, fixed, arrays, used_inputs, values = walked
    return Program(
        inputs=inputs,
        outputs=outputs,
        steps=steps,
        values=values,
        reads=Reads(nodes, reads),
        used_inputs=used_inputs,
        pointwise=True,
        symbols=frozenset(symbols),
        fixed=frozenset(fixed),
        walked=None if arrays is None else (arrays, symbols),
    )


def lower_py(outputs: Sequence[Term], inputs: Sequence[Term]) -> Program:
    """:func:`lower` in Python: every program (the twin of the extension's walk)."""
    outputs = tuple(outputs)
    inputs = tuple(inputs)
    order, reads = schedule(outputs)
    symbolic = _symbolic(order)
    values, folded_ok = _fold(order, outputs, symbolic)
    steps: list[Term] = []
    for node in order:
        if not node.args:
            if node.op.name == "const":
                values[node] = const_value(node)
            continue
        if node in values or (folded_ok and node not in symbolic):
            continue  # folded, or only read by a folded subterm
        steps.append(node)
    used = {t for t in order if not t.args and t.op.name == "symbol"}  # the symbols under the outputs
    return Program(
        inputs=inputs,
        outputs=outputs,
        steps=steps,
        values=values,
        reads=reads,
        used_inputs=tuple(i for i, s in enumerate(inputs) if s in used),
        pointwise=all(not t.shape for t in order),
        symbols=frozenset(used),
        fixed=frozenset(t for t in outputs if t not in symbolic),
    )


def chain_folds(program: Program, width: int) -> Program:
    """``program`` with every fold over more than ``width`` operands computed as a chain of steps.

    ``f(a1, ..., an)`` of a variadic op becomes ``h1 = f(a1, ..., a_width)``, ``h2 = f(h1, ...)``...
    and the node itself from the last ``h`` and the remaining operands (``program.operands``), so
    no step is bigger than about ``width`` operands and each chain link can go to its own part. The
    order of the operations is unchanged (left to right), and so are the values.
    """
    steps: list[Term] = []
    operands: dict[Term, tuple[Term, ...]] = dict(program.operands)
    done: set[Term] = set()
    for node in program.steps:
        if node in done:
            continue  # computed earlier as a link of a chain
        args = program.args_of(node)
        while len(args) > width:
            head = Term(node.op, args[:width], node.attr)  # f(a1..a_width): a term of its own
            if head not in done:
                done.add(head)
                steps.append(head)
            args = (head, *args[width:])
        if args is not node.args:
            operands[node] = args
        done.add(node)
        steps.append(node)
    if len(steps) == len(program.steps):
        return program
    return replace(program, steps=steps, operands=operands, _last=None)


def _symbolic(order: list[Term]) -> set[Term]:
    """The nodes of ``order`` (operands first) that depend on a symbol: one pass, no symbol sets built."""
    found: set[Term] = set()
    for node in order:
        if (node.op.name == "symbol" and not node.args) or any(a in found for a in node.args):
            found.add(node)
    return found


def _fold(order: list[Term], outputs: tuple[Term, ...], symbolic: set[Term]) -> tuple[dict[Term, Any], bool]:
    """Values of the largest subterms without symbols, and whether folding them worked."""
    wanted = set(outputs)
    roots: list[Term] = []
    for node in order:
        if node in symbolic:
            roots.extend(a for a in node.args if a.args and a not in symbolic)
        elif node.args and node in wanted:
            roots.append(node)
    roots = list(dict.fromkeys(roots))
    if not roots:
        return {}, True
    try:
        found = evaluate(roots, {})
    except (EvaluationError, ArithmeticError, ValueError, TypeError):
        return {}, False  # computed at run time instead, where the error belongs
    return dict(zip(roots, found, strict=True)), True


def unfoldable(program: Program) -> bool:
    """Whether an output without symbols could not be folded (``(-3)**-3``): evaluating it raises an error.

    ``compile`` hands such a program to the numpy backend whatever the backend asked for, which
    raises the folding's error at the call, where it belongs.
    """
    return any(t not in program.values for t in program.fixed)


@dataclass
class RowPlan:
    """Workspace rows for values crossing parts: ``row[node]``, and rows used per dtype."""

    row: dict[Term, int]
    count: dict[str, int]


def plan_rows(program: Program, part_of: dict[Term, int], fixed: Sequence[Term] = ()) -> RowPlan:
    """Rows for the ``fixed`` terms (never reused) and for every step read after its own part.

    ``part_of`` maps each step to its part (non-decreasing along ``program.steps``). A row freed
    by a value's last reader in part ``p`` is reused from part ``p + 1`` on. Outputs keep their
    rows to the end. Rows are numbered per dtype.
    """
    row: dict[Term, int] = {}
    count: dict[str, int] = {}
    free: dict[str, list[int]] = {}

    def take(t: Term) -> None:
        pool = free.get(t.dtype)
        if pool:
            row[t] = pool.pop()
        else:
            row[t] = count.get(t.dtype, 0)
            count[t.dtype] = row[t] + 1

    for t in fixed:
        if t not in row:
            take(t)
    last = program.last_use()
    end = len(program.steps)
    # the part in which each crossing value is read for the last time
    last_part: dict[Term, int] = {}
    for t, k in last.items():
        if t in part_of:
            last_part[t] = part_of[program.steps[k]] if k < end else len(program.steps) + 1
    releases: dict[int, list[Term]] = {}
    current = -1
    for node in program.steps:
        p = part_of[node]
        if p != current:
            for t in releases.pop(current, ()):
                free.setdefault(t.dtype, []).append(row[t])
            current = p
        lp = last_part.get(node, p)
        if lp > p and node not in row:
            take(node)
            if lp <= end:
                releases.setdefault(lp, []).append(node)
    return RowPlan(row, count)
