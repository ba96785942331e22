"""Fuzzing DimEnv's reasoning with facts: a decided answer holds on every point of a box that satisfies the facts.

A case draws a few names with small ranges (some open above: the box then stops a few values past the low end),
a few facts of every kind ``DimEnv`` takes (relations between expressions, substitutions ``a == b + c``,
remainders ``a % 3 == 1``, ranges ``a in [1, 4]``, max/min relations, ``!=``, sympy's ``Eq(...)``, core relational
terms) and random expressions with ``+ - * // % max min`` and ceiling division, given as terms or as text in
random spellings (``Max(a, b)``, ``a ^ b``, ``FloorDiv``, ``floor(a/b)``, ``CeilToInt``...). The box is
enumerated once, each expression evaluated on all of its points at once (numpy object arrays of Python
integers, floor semantics, undefined where a divisor is 0); the points where every fact holds are the oracle.
Every answer that is decided (True/False, a bound, a comparison, a quotient, a simplified form, a range the
facts narrowed, a substitution the environment made, the quick intervals' and witnesses' verdicts, DimArith's
results) must hold on every such point where the question's sides are defined; an undecided answer is always
fine. Contradictory facts raise DimContradictionError only when no point satisfies them. Facts declared in
another order and names renamed give answers that hold too (the same ones, for a renaming that keeps the
names' order). The compiled modules answer as the pure ones do (a worker process with
``EXPRGRAPH_PURE_PYTHON=1``). Bad input (constants past int64, deep expressions, hostile names) raises named
errors only. ``$EXPRGRAPH_FUZZ_EXAMPLES`` makes the run long. The oracle and the strategies are in
dimenv_cases.py, the questions and their checks in dimenv_checks.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dimenv_cases import NAMES, RELATIONS, SYMBOL, Case, cases, expressions, op_of, spelled
from dimenv_checks import (
    HOW,
    Checker,
    case_and_env,
    check_env,
    check_quick_paths,
    fact_as_text,
    spec_answers,
)
from fuzz_support import FUZZ
from hypothesis import given
from hypothesis import strategies as st

from exprgraph.core.term import Term
from exprgraph.core.traversal import substitute
from exprgraph.dims import DimEnv, clear_caches, dim_name, statically_known
from exprgraph.dims.accel import PURE_ENV
from exprgraph.errors import DimContradictionError, DimExpressionError, ExprgraphError

# -- the fuzzers --------------------------------------------------------------------------------------


@FUZZ
@given(
    cases(),
    st.lists(expressions(), min_size=2, max_size=2),
    st.lists(st.integers(1, 6), min_size=1, max_size=2),
    HOW,
)
def test_decided_answers_hold_on_every_point_that_satisfies_the_facts(case_rnd, exprs, ks, how) -> None:
    case, rnd = case_rnd
    if rnd.random() < 0.5:
        clear_caches()  # (else the states other examples left are shared: answers must not leak between them)
    env = case_and_env(case, None, how)
    if env is None:
        return
    check_env(case, env, exprs, ks, rnd, "in order")
    check_quick_paths(case, exprs)


@FUZZ
@given(cases(), st.lists(expressions(), min_size=2, max_size=2), st.randoms(use_true_random=False), HOW)
def test_facts_in_another_order_give_answers_that_hold(case_rnd, exprs, shuffle, how) -> None:
    case, rnd = case_rnd
    order = list(range(len(case.facts)))
    shuffle.shuffle(order)
    clear_caches()
    first = case_and_env(case)
    second = case_and_env(case, order, how)
    if first is None or second is None:
        return
    state = rnd.getstate()
    a = check_env(case, first, exprs, [2], rnd, "in order")
    rnd.setstate(state)
    b = check_env(case, second, exprs, [2], rnd, f"in the order {order}")
    for x, y in zip(a, b, strict=True):  # (both were checked; two bools never say opposite things)
        assert not (isinstance(x, bool) and isinstance(y, bool) and x != y), (x, y)


@FUZZ
@given(cases(), st.lists(expressions(), min_size=2, max_size=2), st.sampled_from(["prefix", "cycle", "long"]))
def test_renaming_keeps_answers(case_rnd, exprs, how) -> None:
    case, _ = case_rnd
    new = {
        "prefix": {n: f"dim_{n}" for n in NAMES},
        "cycle": {"a": "b", "b": "c", "c": "a"},
        "long": {n: f"{n}_{'x' * 40}{i}" for i, n in enumerate(NAMES)},
    }[how]
    mapping = {dim_name(n): dim_name(m) for n, m in new.items()}

    def rn(t: Term) -> Term:
        return substitute(t, mapping)

    facts = []
    for f in case.facts:
        if f[0] == "range":
            facts.append(("range", new[f[1]], f[2], f[3], f"{new[f[1]]} in [{f[2]}, {f[3]}]"))
        else:
            left, right = rn(f[2]), rn(f[3])
            facts.append(("rel", f[1], left, right, op_of(f[1])(left, right)))
    plain = [("rel", f[1], f[2], f[3], op_of(f[1])(f[2], f[3])) if f[0] == "rel" else f for f in case.facts]
    renamed = Case({new[n]: r for n, r in case.ranges.items()}, facts)
    original = Case(case.ranges, plain)
    clear_caches()
    env = case_and_env(original)
    env2 = case_and_env(renamed)
    if env is None or env2 is None:
        assert (env is None) == (env2 is None) or original.count == 0
        return
    a = _answers_of(original, env, exprs)
    b = _answers_of(renamed, env2, [rn(e) for e in exprs])
    if how == "prefix":  # the names keep their order (and their lengths' order): the same answers
        assert a == b, (a, b)
    else:
        for x, y in zip(a, b, strict=True):
            assert not (isinstance(x, bool) and isinstance(y, bool) and x != y), (x, y)


def _answers_of(case: Case, env: DimEnv, exprs: list[Term]) -> list[Any]:
    """The decided-or-not answers that do not print names (checked on the points too)."""
    chk = Checker(case, "renamed")
    e1, e2 = exprs
    out: list[Any] = []
    for op in RELATIONS:
        a = env.statically_known(op_of(op)(e1, e2))
        chk.relation(a, op, e1, e2, f"statically_known({op})")
        out.append(a)
    out += [env.equal(e1, e2), env.compare(e1, e2), env.bound(e1), env.bound(e2), env.divisible(e1, 2)]
    for e in exprs:
        chk.bound(env.bound(e), e, "bound")
    return out


# -- the one-shot functions, with facts given as constraints ------------------------------------------


@FUZZ
@given(cases(), st.lists(expressions(), min_size=2, max_size=2), st.sampled_from(RELATIONS))
def test_one_shot_questions_with_constraints(case_rnd, exprs, op) -> None:
    case, rnd = case_rnd
    constraints = [f"{n} in [{lo}, {'inf' if hi is None else hi}]" for n, (lo, hi) in case.ranges.items()]
    constraints += [fact_as_text(f, rnd) for f in case.facts]
    clear_caches()
    try:
        answer = statically_known(f"{spelled(exprs[0], rnd)} {SYMBOL[op]} {spelled(exprs[1], rnd)}", constraints)
    except DimContradictionError:
        assert case.count == 0
        return
    Checker(case, "one-shot").relation(answer, op, exprs[0], exprs[1], "statically_known(rel, constraints)")


@pytest.fixture(scope="module")
def pure_worker() -> Iterator[Any]:
    env = {**os.environ, PURE_ENV: "1"}
    here = Path(__file__).parent
    code = f"import sys; sys.path[:0] = [{str(here)!r}]; import dimenv_checks as m; m.worker()"
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    )
    assert proc.stdin is not None and proc.stdout is not None
    assert json.loads(proc.stdout.readline()) == []  # the worker runs every module pure

    def ask(spec: dict[str, Any]) -> Any:
        proc.stdin.write(json.dumps(spec) + "\n")
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    yield ask
    proc.stdin.close()
    proc.wait(timeout=30)


@FUZZ
@given(cases(), st.lists(expressions(), min_size=2, max_size=2))
def test_compiled_and_pure_answer_alike(pure_worker, case_rnd, exprs) -> None:
    case, rnd = case_rnd
    spec = {
        "ranges": {n: [lo, hi] for n, (lo, hi) in case.ranges.items()},
        "facts": [fact_as_text(f, rnd) for f in case.facts],
        "exprs": [spelled(e, rnd) for e in exprs],
    }
    try:
        here: Any = json.loads(json.dumps(spec_answers(spec)))
    except Exception as err:
        here = ["error", type(err).__name__]
    assert here == pure_worker(spec), spec


# -- bad input: named errors only ---------------------------------------------------------------------

_HUGE = ["9223372036854775807", "9223372036854775808", "-9223372036854775808", "2**63", "2**64", str(10**30)]
_HOSTILE = ["None", "True", "in", "inf", "oo", "é", "a b", "", "__class__", "x" * 5000, "s0::x", "1a", "a.b", "lambda"]


@FUZZ
@given(
    st.sampled_from(["fact", "query", "range", "name", "deep", "simplify", "bound", "no relation"]),
    st.sampled_from(_HUGE),
    st.sampled_from(_HOSTILE),
    expressions(4),
    st.integers(0, 3),
    st.randoms(use_true_random=False),
)
def test_bad_input_raises_named_errors_only(where, huge, name, expr, depth_kind, rnd) -> None:
    text = spelled(expr, rnd)
    deep = {0: "(" * 3000 + text + ")" * 3000, 1: " + ".join([text] * 3000), 2: "-" * 3000 + text}.get(depth_kind)
    clear_caches()
    try:
        if where == "fact":
            DimEnv({"a": (0, 9)}, constraints=[f"{text} * {huge} >= a", f"a == {huge} + b"]).bound(f"{huge}*a")
        elif where == "query":
            env = DimEnv({"a": (0, 9), "b": (0, None)}, constraints=["a >= b"])
            env.statically_known(f"{text} + {huge} > {huge}*{text}")
            env.simplify(f"{huge} + {huge} - a")
            env.exact_div(f"{huge}*a", huge)
            env.divisible(text, huge)
        elif where == "range":
            DimEnv({"a": (0, int(huge) if huge.lstrip("-").isdigit() else 9)}, constraints=[f"b in [0, {huge}]"]).bound(
                "a*a*b"
            )
        elif where == "name":
            env = DimEnv({name: (0, 5)}) if depth_kind < 2 else DimEnv(constraints=[f"{name} >= 2"])
            env.bound(f"{name} + 1")
        elif where == "deep":
            if deep is None:
                return
            env = DimEnv({"a": (0, 9)}, constraints=[f"{deep} >= a"])
            env.statically_known(f"{deep} >= 0")
            env.bound(deep)
        elif where == "no relation":  # an expression where a relation is expected: a parse error
            with pytest.raises(DimExpressionError, match="not a relation"):
                DimEnv(constraints=[text]) if depth_kind < 2 else DimEnv().statically_known(text)
        elif where == "simplify":
            DimEnv({"a": (0, 9)}).simplify(f"({text}) * {huge} * {huge}")
        else:
            DimEnv({"a": (-(2**62), 2**62)}).bound(f"a*a*{huge}")
    except ExprgraphError:
        pass
