"""Equality saturation: exprgraph.egraph against egglog-python, side by side in one process.

Three parts:

1. egg's math suite (its 20 equalities, each with its own limits, stopped as soon as the goal is
   proved): ours against egglog-python running the same rules in egglog's language. egglog has no
   node limit, so both sides check egg's limits after each iteration; egglog declares the rules
   once and runs each equality between ``(push)`` and ``(pop)``, and, lacking egg's pruning,
   saturates its constant-folding rules (with ``subsume``) around each rewrite iteration, the way
   its users write analyses. Goal: the whole suite in at most 10x egglog's time.
2. egglog's math micro-benchmark (the unconditional rules iterated on seven terms without constant
   folding): e-nodes after each iteration on both sides (they must be equal: the same saturation)
   and the time to reach iteration 10. Goal: iteration 10 in at most 1.5 s.
3. DAG-aware extraction: the greedy heuristic against the ILP optimum (HiGHS) on the e-graphs of
   the suite and the micro-benchmark after a few iterations. Goal: within 5% everywhere.

Also measured: the two e-matching machines (compiled loops and the virtual machine) on parts 1
and 2, which is how the default was chosen. Run ``python -m bench.bench_egraph``.
"""

from __future__ import annotations

import sys
import time
from fractions import Fraction
from typing import Any

from bench.common import best_of, fmt_seconds, print_table, ratio, skip
from exprgraph.core import Term, postorder
from exprgraph.egraph import EGraph, saturate
from exprgraph.egraph.dag import dag_cost, greedy_dag, ilp_dag, improve
from exprgraph.egraph.extract import class_nodes, node_cost_fn
from exprgraph.egraph.mathsuite import EQUALITIES, MICRO_RULES, MICRO_TERMS, Equality

MICRO_ITERATIONS = 10

# -- egglog's side ----------------------------------------------------------------------------------

_NAMES = {
    "d": "Diff",
    "i": "Integral",
    "add": "Add",
    "sub": "Sub",
    "mul": "Mul",
    "truediv": "Div",
    "pow": "Pow",
    "log": "Ln",
    "sqrt": "Sqrt",
    "sin": "Sin",
    "cos": "Cos",
}
_C0, _C1, _CM1 = "(Const (rational 0 1))", "(Const (rational 1 1))", "(Const (rational -1 1))"
_UNARY = ("Ln", "Sqrt", "Sin", "Cos", "Const", "Var")
_BINARY = ("Diff", "Integral", "Add", "Sub", "Mul", "Div", "Pow")

_DATATYPE = """
(datatype Math
  (Diff Math Math) (Integral Math Math) (Add Math Math) (Sub Math Math) (Mul Math Math) (Div Math Math)
  (Pow Math Math) (Ln Math) (Sqrt Math) (Sin Math) (Cos Math) (Const Rational) (Var String))
"""


def _analysis() -> str:
    """Constant folding, subsumption of folded nodes, and the condition relations, as one ruleset."""
    lines = ["(ruleset analysis)", "(relation MathU (Math))"]
    for f in _BINARY:
        lines.append(f"(rule ((= e ({f} a b))) ((MathU e)) :ruleset analysis)")
    for f in _UNARY:
        lines.append(f"(rule ((= e ({f} a))) ((MathU e)) :ruleset analysis)")
    lines += [
        "(function evals-to (Math) Rational :merge old)",
        "(rule ((= e (Const c))) ((set (evals-to e) c)) :ruleset analysis)",
    ]
    for f, op in (("Add", "+"), ("Sub", "-"), ("Mul", "*")):
        lines.append(
            f"(rule ((= e ({f} a b)) (= va (evals-to a)) (= vb (evals-to b))) "
            f"((set (evals-to e) ({op} va vb))) :ruleset analysis)"
        )
    lines += [
        "(rule ((= e (Div a b)) (= va (evals-to a)) (= vb (evals-to b)) (!= vb (rational 0 1))) "
        "((set (evals-to e) (/ va vb))) :ruleset analysis)",
        "(rule ((= v (evals-to e))) ((union e (Const v))) :ruleset analysis)",
    ]
    for f in _BINARY:  # egg keeps only the constant in a folded class: subsume the rest
        lines.append(f"(rule ((= v (evals-to e)) (= e ({f} a b))) ((subsume ({f} a b))) :ruleset analysis)")
    for f in _UNARY[:4]:
        lines.append(f"(rule ((= v (evals-to e)) (= e ({f} a))) ((subsume ({f} a))) :ruleset analysis)")
    lines += [
        "(relation is-const (Math))",
        "(rule ((= v (evals-to e))) ((is-const e)) :ruleset analysis)",
        "(relation is-sym (Math))",
        "(rule ((= e (Var s))) ((is-sym e)) :ruleset analysis)",
        "(relation is-not-zero (Math))",
        f"(rule ((MathU a) (!= a {_C0})) ((is-not-zero a)) :ruleset analysis)",
    ]
    return "\n".join(lines)


#: the suite's rules in egglog's language (conditions as relations of the analysis ruleset)
EGGLOG_RULES = {
    "comm_add": "(rewrite (Add a b) (Add b a))",
    "comm_mul": "(rewrite (Mul a b) (Mul b a))",
    "assoc_add": "(rewrite (Add a (Add b c)) (Add (Add a b) c))",
    "assoc_mul": "(rewrite (Mul a (Mul b c)) (Mul (Mul a b) c))",
    "sub_canon": f"(rewrite (Sub a b) (Add a (Mul {_CM1} b)))",
    "div_canon": f"(rewrite (Div a b) (Mul a (Pow b {_CM1})) :when ((is-not-zero b)))",
    "zero_add": f"(rewrite (Add a {_C0}) a)",
    "zero_mul": f"(rewrite (Mul a {_C0}) {_C0})",
    "one_mul": f"(rewrite (Mul a {_C1}) a)",
    "add_zero": f"(rule ((MathU a)) ((union a (Add a {_C0}))))",
    "mul_one": f"(rule ((MathU a)) ((union a (Mul a {_C1}))))",
    "cancel_sub": f"(rewrite (Sub a a) {_C0})",
    "cancel_div": f"(rewrite (Div a a) {_C1} :when ((is-not-zero a)))",
    "distribute": "(rewrite (Mul a (Add b c)) (Add (Mul a b) (Mul a c)))",
    "factor": "(rewrite (Add (Mul a b) (Mul a c)) (Mul a (Add b c)))",
    "pow_mul": "(rewrite (Mul (Pow a b) (Pow a c)) (Pow a (Add b c)))",
    "pow0": f"(rewrite (Pow x {_C0}) {_C1} :when ((is-not-zero x)))",
    "pow1": f"(rewrite (Pow x {_C1}) x)",
    "pow2": "(rewrite (Pow x (Const (rational 2 1))) (Mul x x))",
    "pow_recip": f"(rewrite (Pow x {_CM1}) (Div {_C1} x) :when ((is-not-zero x)))",
    "recip_mul_div": f"(rewrite (Mul x (Div {_C1} x)) {_C1} :when ((is-not-zero x)))",
    "d_variable": f"(rewrite (Diff x x) {_C1} :when ((is-sym x)))",
    "d_constant": f"(rule ((= e (Diff x c)) (is-sym x) (is-const c)) ((union e {_C0})))\n"
    f"(rule ((= e (Diff x c)) (= x (Var s1)) (= c (Var s2)) (!= s1 s2)) ((union e {_C0})))",
    "d_add": "(rewrite (Diff x (Add a b)) (Add (Diff x a) (Diff x b)))",
    "d_mul": "(rewrite (Diff x (Mul a b)) (Add (Mul a (Diff x b)) (Mul b (Diff x a))))",
    "d_sin": "(rewrite (Diff x (Sin x)) (Cos x))",
    "d_cos": f"(rewrite (Diff x (Cos x)) (Mul {_CM1} (Sin x)))",
    "d_ln": f"(rewrite (Diff x (Ln x)) (Div {_C1} x) :when ((is-not-zero x)))",
    "d_power": "(rewrite (Diff x (Pow f g)) (Mul (Pow f g) (Add (Mul (Diff x f) (Div g f)) "
    "(Mul (Diff x g) (Ln f)))) :when ((is-not-zero f) (is-not-zero g)))",
    "i_one": f"(rewrite (Integral {_C1} x) x)",
    "i_power_const": f"(rewrite (Integral (Pow x c) x) (Div (Pow x (Add c {_C1})) (Add c {_C1})) :when ((is-const c)))",
    "i_cos": "(rewrite (Integral (Cos x) x) (Sin x))",
    "i_sin": f"(rewrite (Integral (Sin x) x) (Mul {_CM1} (Cos x)))",
    "i_sum": "(rewrite (Integral (Add f g) x) (Add (Integral f x) (Integral g x)))",
    "i_dif": "(rewrite (Integral (Sub f g) x) (Sub (Integral f x) (Integral g x)))",
    "i_parts": "(rewrite (Integral (Mul a b) x) "
    "(Sub (Mul a (Integral b x)) (Integral (Mul (Diff x a) (Integral b x)) x)))",
}


def _in_ruleset(text: str, ruleset: str) -> str:
    return "\n".join(line[:-1] + f" :ruleset {ruleset})" for line in text.split("\n"))


def sexpr(term: Term) -> str:
    """A term in egglog's Math language (numbers as exact rationals)."""
    out: dict[Term, str] = {}
    for n in postorder(term):
        if n.op.name == "const":
            f = Fraction(n.attr)
            out[n] = f"(Const (rational {f.numerator} {f.denominator}))"
        elif n.op.name == "symbol":
            out[n] = f'(Var "{n.name}")'
        else:
            out[n] = "(" + _NAMES[n.op.name] + " " + " ".join(out[a] for a in n.args) + ")"
    return out[term]


class EgglogSuite:
    """One egglog e-graph holding the declarations; each equality runs between push and pop."""

    def __init__(self, bindings: Any) -> None:
        self.b = bindings
        self.eg = bindings.EGraph()
        rules = "\n".join(_in_ruleset(t, "rw") for t in EGGLOG_RULES.values())
        only = "\n".join(_in_ruleset(EGGLOG_RULES[n], "assoc") for n in ("comm_add", "assoc_add"))
        program = "\n".join([_DATATYPE, _analysis(), "(ruleset rw)", "(ruleset assoc)", rules, only, _C0])
        self._run(program)

    def _run(self, text: str) -> Any:
        return self.eg.run_program(*self.eg.parse_program(text))

    def size(self) -> int:
        return sum(n for _, n in self._run("(print-size)")[0].sizes)

    def prove(self, eq: Equality) -> tuple[bool, int]:
        """Run one equality under egg's limits; ``(proved, iterations)``."""
        s = eq.settings
        limit, nodes, seconds = s.get("iter_limit", 30), s.get("node_limit", 10_000), s.get("time_limit", 5.0)
        start = time.perf_counter()
        extra = "".join(f"{sexpr(t)}\n" for t in eq.extra_terms)
        self._run(f"(push)\n(let $start {sexpr(eq.start_term)})\n(let $goal {sexpr(eq.goal_term)})\n{extra}")
        eg = self.eg
        step = eg.parse_program(
            "(run assoc 1)"
            if eq.only
            else "(run-schedule (saturate (run analysis)) (run rw) (saturate (run analysis)))"
        )
        check = eg.parse_program("(check (= $start $goal))")
        proved, i = False, 0
        try:
            for i in range(limit + 1):
                try:
                    eg.run_program(*check)
                    proved = True
                    break
                except self.b.EggSmolError:
                    pass
                if i == limit or self.size() > nodes or time.perf_counter() - start > seconds:
                    break
                out = eg.run_program(*step)
                report = getattr(out[-1], "report", None) if out else None
                if report is not None and not report.updated:  # saturated
                    break
        finally:
            self._run("(pop)")
        return proved, i


def micro_egglog(bindings: Any, iterations: int) -> list[int]:
    """egglog's math micro-benchmark: e-nodes after each iteration."""
    rules = "\n".join(EGGLOG_RULES[r.name] for r in MICRO_RULES)
    terms = "\n".join(sexpr(t) for t in MICRO_TERMS)
    eg = bindings.EGraph()
    eg.run_program(*eg.parse_program("\n".join([_DATATYPE, rules, terms])))
    run1, size = eg.parse_program("(run 1)"), eg.parse_program("(print-size)")
    counts = []
    for _ in range(iterations):
        eg.run_program(*run1)
        counts.append(sum(n for _, n in eg.run_program(*size)[0].sizes))
    return counts


# -- our side ----------------------------------------------------------------------------------------


def prove_ours(eq: Equality, machine: str = "compiled") -> tuple[bool, int]:
    """Run one equality as egg's test does; ``(proved, iterations)``."""
    settings = dict(eq.settings)
    fold = settings.pop("fold", True)
    egraph = EGraph(fold=fold)
    start, goal = eq.start_term, eq.goal_term
    egraph.add(start)
    for t in eq.extra_terms:
        egraph.add(t)
    report = saturate(egraph, eq.rules(), goals=[(start, goal)], machine=machine, **settings)
    return egraph.equivalent(start, goal), len(report.iterations)


def micro_ours(iterations: int, machine: str = "compiled") -> list[int]:
    """The micro-benchmark on our e-graph: e-nodes after each iteration."""
    egraph = EGraph(fold=False)
    for t in MICRO_TERMS:
        egraph.add(t)
    report = saturate(
        egraph,
        MICRO_RULES,
        iter_limit=iterations,
        node_limit=10**9,
        time_limit=1e9,
        scheduler="simple",
        machine=machine,
    )
    return [it.nodes for it in report.iterations]


# -- the parts ------------------------------------------------------------------------------------------


def _egglog() -> Any:
    try:
        from egglog import bindings
    except ImportError:
        return None
    return bindings


def bench_suite(bindings: Any, repeat: int = 3) -> None:
    """Part 1: the 20 equalities, each timed on both sides, interleaved, best of ``repeat``."""
    rows, total_ours, total_egglog, total_vm = [], 0.0, 0.0, 0.0
    suite = EgglogSuite(bindings) if bindings is not None else None
    for eq in EQUALITIES:
        contenders = {"ours": lambda eq=eq: prove_ours(eq), "vm": lambda eq=eq: prove_ours(eq, "vm")}
        if suite is not None:
            contenders["egglog"] = lambda eq=eq: suite.prove(eq)
        times = best_of(contenders, repeat)
        ours_ok, ours_it = prove_ours(eq)
        row = [eq.name, f"{ours_ok}/{ours_it}", fmt_seconds(times["ours"])]
        total_ours += times["ours"]
        total_vm += times["vm"]
        if suite is not None:
            ok, it = suite.prove(eq)
            total_egglog += times["egglog"]
            row += [f"{ok}/{it}", fmt_seconds(times["egglog"]), ratio(times["ours"], times["egglog"])]
        else:
            row += ["-", "skipped", "-"]
        rows.append(row)
    rows.append(
        [
            "**whole suite**",
            "",
            fmt_seconds(total_ours),
            "",
            fmt_seconds(total_egglog) if suite else "skipped",
            ratio(total_ours, total_egglog) if suite else "-",
        ]
    )
    header = ["equality", "ours proved/iters", "ours", "egglog proved/iters", "egglog", "ours/egglog"]
    print_table("egg's math suite (goal: whole suite <= 10x egglog)", header, rows)
    print(f"e-matching machines on the suite: compiled {fmt_seconds(total_ours)}, vm {fmt_seconds(total_vm)}\n")
    if suite is None:
        skip("the egglog column", "egglog is not installed (pip install egglog)")


def bench_micro(bindings: Any, repeat: int = 3) -> None:
    """Part 2: the micro-benchmark's e-node counts per iteration and the time to iteration 10."""
    ours = micro_ours(MICRO_ITERATIONS)
    theirs = micro_egglog(bindings, MICRO_ITERATIONS) if bindings is not None else None
    rows = [
        [i + 1, ours[i], theirs[i] if theirs else "skipped", (ours[i] == theirs[i]) if theirs else "-"]
        for i in range(MICRO_ITERATIONS)
    ]
    print_table("math micro-benchmark: e-nodes per iteration", ["iteration", "ours", "egglog", "equal"], rows)
    contenders = {
        "ours": lambda: micro_ours(MICRO_ITERATIONS),
        "vm": lambda: micro_ours(MICRO_ITERATIONS, "vm"),
    }
    if bindings is not None:
        contenders["egglog"] = lambda: micro_egglog(bindings, MICRO_ITERATIONS)
    times = best_of(contenders, repeat)
    rows = [["ours (compiled matcher)", fmt_seconds(times["ours"]), ratio(times["ours"], times.get("egglog", 0))]]
    rows.append(["ours (virtual machine)", fmt_seconds(times["vm"]), ratio(times["vm"], times.get("egglog", 0))])
    rows.append(["egglog-python", fmt_seconds(times["egglog"]) if bindings is not None else "skipped", "1.00x"])
    print_table(
        f"math micro-benchmark: time to iteration {MICRO_ITERATIONS} ({ours[-1]} e-nodes; goal: ours <= 1.5 s)",
        ["", "time", "ratio to egglog"],
        rows,
    )


def _dag_cases() -> list[tuple[str, EGraph, int]]:
    cases = []
    for n in (2, 3, 4, 5):
        g = EGraph(fold=False)
        roots = [g.add(t) for t in MICRO_TERMS]
        saturate(g, MICRO_RULES, iter_limit=n, scheduler="simple")
        cases.extend((f"micro it{n} term{i}", g, g.find(r)) for i, r in enumerate(roots))
    for n in (2, 3, 4):
        for eq in EQUALITIES[2:]:
            g = EGraph()
            root = g.add(eq.start_term)
            saturate(g, eq.rules(), iter_limit=n)
            cases.append((f"{eq.name} it{n}", g, g.find(root)))
    return cases


def bench_dag(time_limit: float = 10.0) -> None:
    """Part 3: DAG-aware greedy extraction against the ILP optimum."""
    _, unit = node_cost_fn("size")
    rows, worst, solved, tried, t_greedy, t_ilp = [], 1.0, 0, 0, 0.0, 0.0
    for name, g, root in _dag_cases():
        nodes = class_nodes(g)
        t0 = time.perf_counter()
        heuristic = dag_cost(improve(nodes, root, greedy_dag(nodes, unit), unit), root, unit)
        t1 = time.perf_counter()
        optimum, _choice, proved = ilp_dag(nodes, root, unit, time_limit=time_limit)
        t2 = time.perf_counter()
        tried += 1
        t_greedy += t1 - t0
        t_ilp += t2 - t1
        if not proved:
            continue
        solved += 1
        worst = max(worst, heuristic / optimum)
        if heuristic > optimum:
            rows.append([name, sum(map(len, nodes.values())), heuristic, optimum, f"{heuristic / optimum:.3f}"])
    rows.append(["**all**", f"{solved}/{tried} proved optimal", "", "", f"worst {worst:.3f}"])
    print_table(
        "DAG extraction: greedy + local search against the ILP optimum (goal: within 5%)",
        ["e-graph", "e-nodes", "greedy DAG cost", "ILP optimum", "ratio"],
        rows,
    )
    print(f"time: greedy {fmt_seconds(t_greedy)}, ILP {fmt_seconds(t_ilp)} (HiGHS, {time_limit:g} s cap each)\n")


def main() -> None:
    """Run the three parts and print their tables."""
    bindings = _egglog()
    if bindings is None:
        skip("egglog rows", "egglog-python is not installed")
    bench_suite(bindings)
    bench_micro(bindings)
    bench_dag()
    sys.stdout.flush()


if __name__ == "__main__":
    main()
