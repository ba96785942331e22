"""The scoreboard of ``bench_onnx_models``: figures per model and where our inference loses dims.

A node is a **loss origin** when one of its outputs has an undecided dim while none of its inputs
has one, nor a symbolic value naming a dim that is not an input's (its inputs were all known, its
outputs are not): the op whose rule, or whose inputs' *values*, are missing. Each origin is
charged with the undecided dims of every value downstream of it (origins of one op type share
their downstream dims, counted once). Wrong dims
get the same treatment (**wrong origins**). For a loss origin whose small integer inputs (shape
tensors, by the truth's dtype and size) have no symbolic value in our inference, the producers are
followed up to the first node that has all its integer inputs' values and still gives none: the
**value origin** (a missing value rule).
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench import onnx_corpus as corpus
from bench.onnx_corpus_score import UNDECIDED, WRONG, Scored

BOARD = Path(__file__).resolve().parent.parent / "notes" / "onnx_scoreboard.md"
INT_TYPES = {"int64", "int32", "int16", "int8", "uint8", "bool"}


def _graph(model: Any) -> tuple[dict[str, int], dict[str, list[int]]]:
    producer, consumers = {}, defaultdict(list)
    for i, node in enumerate(model.graph.node):
        for name in node.output:
            producer[name] = i
        for name in node.input:
            consumers[name].append(i)
    return producer, consumers


class Diagnosis:
    """Our symbolic values on one model (re-run untimed), and which values the truth says hold shapes."""

    def __init__(self, model: Any, entry: dict, scored: Scored) -> None:
        self.model, self.scored, self.nodes = model, scored, model.graph.node
        self.producer, self.consumers = _graph(model)
        self.truth, self.dtypes = entry["truth"], entry["dtypes"]
        self.inputs = set(entry["bindings"][0]) if entry["bindings"] else set()
        try:
            from exprgraph.interop.onnx_shapes import MAX_VALUE_SIZE, Inference

            inference = Inference(model, True, None)
            inference.run()
            self.values: dict[str, Any] | None = inference.values
            self.max_size = MAX_VALUE_SIZE
        except Exception:  # the internals changed (or a crash, reported elsewhere): no value diagnosis
            self.values, self.max_size = None, 0

    def count(self, name: str, bad: str) -> int:
        """Dims of ``name`` with verdict ``bad``."""
        return sum(v == bad for v in self.scored.verdicts.get(name, ()))

    def lost(self, name: str, bad: str) -> bool:
        """Whether ``name`` has a ``bad`` dim (undecided: or no shape at all, or a value naming a non-input dim)."""
        if bad == UNDECIDED and (name in self.scored.no_shape or self.vague(name)):
            return True
        return self.count(name, bad) > 0

    def vague(self, name: str) -> bool:
        """Whether our value of ``name`` has an entry naming a dim that is not an input's (a fresh, unknown size)."""
        value = (self.values or {}).get(name)
        if value is None:
            return False
        for e in value.entries:
            if e is not None and not isinstance(e, int) and hasattr(e, "free_symbols"):
                if any(sym.name not in self.inputs for sym in e.free_symbols):
                    return True
        return False

    def wants_value(self, name: str) -> bool:
        """A small integer tensor of rank <= 1 in the truth runs: a value inference should follow."""
        shape = (self.truth.get(name) or [None])[0]
        if shape is None or self.dtypes.get(name) not in INT_TYPES or len(shape) > 1:
            return False
        return math.prod(shape) <= self.max_size

    def known(self, name: str) -> bool:
        """Whether our inference has every entry of ``name``'s value."""
        value = (self.values or {}).get(name)
        return value is not None and all(e is not None for e in value.entries)

    def missing_values(self, node: Any) -> list[str]:
        """Inputs of ``node`` that should have a value and do not."""
        if self.values is None:
            return []
        return [x for x in node.input if x and not self.known(x) and self.wants_value(x)]

    def origins(self, bad: str) -> dict[str, tuple[int, int, int, str]]:
        """Op type -> (origin nodes, of them with an input value missing, ``bad`` dims downstream, an example)."""
        by_op: dict[str, list[int]] = defaultdict(list)
        for i, node in enumerate(self.nodes):
            if any(self.count(o, bad) for o in node.output) and not any(self.lost(x, bad) for x in node.input if x):
                by_op[node.op_type].append(i)
        out = {}
        for op, starts in by_op.items():
            gaps = sum(bool(self.missing_values(self.nodes[i])) for i in starts)
            out[op] = (len(starts), gaps, self.downstream(starts, bad), self.nodes[starts[0]].name or f"#{starts[0]}")
        return out

    def downstream(self, starts: list[int], bad: str) -> int:
        """``bad`` dims in the outputs of the nodes ``starts`` and of every node after them (each counted once)."""
        seen, stack, total = set(starts), list(starts), 0
        while stack:
            for name in self.nodes[stack.pop()].output:
                total += self.count(name, bad)
                for j in self.consumers.get(name, ()):
                    if j not in seen:
                        seen.add(j)
                        stack.append(j)
        return total

    def value_origins(self) -> dict[str, int]:
        """Op type -> undecided dims downstream of loss origins traced back to a node giving no value (module doc)."""
        charged: dict[str, list[int]] = defaultdict(list)  # op -> the loss origins its lost values feed
        for index, node in enumerate(self.nodes):
            lost = sum(self.count(o, UNDECIDED) for o in node.output)
            if not lost or any(self.lost(x, UNDECIDED) for x in node.input if x):
                continue
            stack, seen, found = self.missing_values(node), set(), set()
            while stack:
                name = stack.pop()
                if name in seen:
                    continue
                seen.add(name)
                if name not in self.producer:
                    found.add("(graph input)")
                    continue
                up = self.nodes[self.producer[name]]
                if any(self.lost(x, UNDECIDED) for x in up.input if x):
                    continue  # its input's shape is lost: a shape origin upstream, counted there
                missing = self.missing_values(up)
                if missing:
                    stack.extend(missing)
                else:
                    found.add(up.op_type)
            for op in found:
                charged[op].append(index)
        return {op: self.downstream(starts, UNDECIDED) for op, starts in charged.items()}


def _md_table(header: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]


def _by_dims(table: dict[str, list], at: int) -> list[tuple[str, list]]:
    return sorted(table.items(), key=lambda kv: -kv[1][at])


def _model_section(key: str, score: Any, lost: dict, vals: dict, wrong: dict) -> list[str]:
    undecided = score.dims - score.ok - score.wrong
    out = [f"### {key}: ours {score.ok}/{score.dims} correct, {undecided} undecided, {score.wrong} wrong", ""]
    if lost:
        rows = [[op, *row] for op, row in sorted(lost.items(), key=lambda kv: -kv[1][2])]
        out += [*_md_table([*LOSS_HEAD, "e.g."], rows), ""]
    if vals:
        ranked = sorted(vals.items(), key=lambda kv: -kv[1])
        out += ["Values lost first at: " + ", ".join(f"{op} ({d} dims)" for op, d in ranked), ""]
    if wrong:
        rows = [[op, n, dims, ex] for op, (n, _, dims, ex) in sorted(wrong.items(), key=lambda kv: -kv[1][2])]
        out += [*_md_table(["first WRONG at op", "nodes", "wrong dims downstream", "e.g."], rows), ""]
    return out


LOSS_HEAD = [
    "first undecided at op",
    "origin nodes",
    "of them with an input value missing",
    "undecided dims downstream",
]


def diagnose(runs: list) -> list[str]:
    """Markdown: where ours loses or gets dims wrong, over the corpus (sorted by dims) and per model."""
    total: dict[str, list] = defaultdict(lambda: [0, 0, 0, set()])
    total_values: dict[str, list] = defaultdict(lambda: [0, set()])
    total_wrong: dict[str, list] = defaultdict(lambda: [0, 0, set()])
    sections = []
    for run in runs:
        model, _ = corpus.load(run.key, strip=True)
        diagnosis = Diagnosis(model, run.entry, run.scored["ours"])
        lost, wrong = diagnosis.origins(UNDECIDED), diagnosis.origins(WRONG)
        vals = diagnosis.value_origins() if lost else {}
        for op, (n, gaps, dims, _) in lost.items():
            row = total[op]
            row[0], row[1], row[2] = row[0] + n, row[1] + gaps, row[2] + dims
            row[3].add(run.key)
        for op, dims in vals.items():
            total_values[op][0] += dims
            total_values[op][1].add(run.key)
        for op, (n, _, dims, _) in wrong.items():
            row = total_wrong[op]
            row[0], row[1] = row[0] + n, row[1] + dims
            row[2].add(run.key)
        if lost or wrong:
            sections += _model_section(run.key, run.scored["ours"].score, lost, vals, wrong)
    lines = ["## Where ours loses dims, whole corpus (sorted by dims lost)", ""]
    rows = [
        [op, n, gaps, dims, len(keys), ", ".join(sorted(keys))[:200]]
        for op, (n, gaps, dims, keys) in _by_dims(total, 2)
    ]
    lines += [*_md_table([*LOSS_HEAD, "models", "which"], rows), ""]
    lines += [
        "Shape inputs whose value is lost first at (value rules missing; undecided dims downstream of the loss "
        "origins they feed):",
        "",
    ]
    rows = [[op, dims, len(keys), ", ".join(sorted(keys))[:200]] for op, (dims, keys) in _by_dims(total_values, 0)]
    lines += [*_md_table(["value lost at op", "dims", "models", "which"], rows), ""]
    if total_wrong:
        rows = [[op, n, dims, ", ".join(sorted(keys))[:200]] for op, (n, dims, keys) in _by_dims(total_wrong, 1)]
        lines += ["## Wrong dims of ours, by first op", ""]
        lines += [*_md_table(["first wrong at op", "nodes", "wrong dims downstream", "which"], rows), ""]
    return [*lines, "## Per model detail (ours)", "", *sections]


def write_board(runs: list, failed: dict[str, str], per_model: tuple, totals: tuple, families: tuple, started: str,
                load: str, repeat: int) -> Path:  # fmt: skip
    """Write ``notes/onnx_scoreboard.md`` from a bench run; returns its path."""
    lines = [
        "# ONNX shapes of real exports: scoreboard",
        "",
        f"Run {started}, load average {load}, CPU best of {repeat}. Reproduce: "
        "`.venv/bin/python -m bench.bench_onnx_models` (written by bench/onnx_corpus_board.py; do not edit).",
        "Correct = right at all three truth sizes; `ok (dyn)` = correct dims (of them dynamic); a false merge "
        "(one symbol for dims of different sizes) is wrong. Goals: every dynamic dim ort decides, 0 wrong, "
        "ours/ort <= 0.05. A loss origin is a node whose inputs' shapes ours knows and whose outputs' it does "
        "not; 'with an input value missing' means a small integer input (a shape tensor) has no symbolic value "
        "(a value rule is missing upstream), otherwise the op's own shape rule is what is missing.",
        "",
        "## Totals",
        "",
        *_md_table(*totals),
        "",
        *_md_table(*families),
        "",
    ]
    crashes = [(r.key, e, m) for r in runs for e, m in r.failures.items()]
    if crashes:
        lines += ["## Engine failures (ours: a crash inside our inference, naming the node)", ""]
        lines += [f"- {k} / {e}: `{m[:300]}`" for k, e, m in crashes] + [""]
    lines += diagnose(runs)
    lines += ["## Per model", "", *_md_table(*per_model), ""]
    if failed:
        lines += ["Not built (export or truth run failed):", ""]
        lines += [f"- {k}: {v.splitlines()[0][:240]}" for k, v in sorted(failed.items())] + [""]
    notes = [(r.key, n) for r in runs for n in r.notes]
    if notes:
        lines += ["Corpus and run notes:", ""] + [f"- {k}: {n[:240]}" for k, n in notes] + [""]
    BOARD.write_text("\n".join(lines).rstrip() + "\n")
    return BOARD
