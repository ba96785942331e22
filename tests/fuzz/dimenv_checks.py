"""The checks of the DimEnv fuzzer (test_fuzz_dimenv.py): every kind of question asked, each decided answer
asserted on the points of a case (see dimenv_cases), and the answers the compiled and the pure builds compare.
"""

from __future__ import annotations

import json
import random
import sys
from typing import Any

import numpy as np
from dimenv_cases import COMPARE, INF, NAMES, RELATIONS, SYMBOL, SYMPY, Case, op_of, relation_holds, spelled
from hypothesis import strategies as st

from exprgraph.core.term import Term
from exprgraph.dims import (
    DimArith,
    DimEnv,
    clear_caches,
    compiled_modules,
    dim_const,
    dim_name,
    parse_expression,
    unparse,
)
from exprgraph.dims.intervals import ALWAYS, NEVER, SOMETIMES, quick_bound, quick_relation, term_interval
from exprgraph.dims.witness import reached_ends, sometimes
from exprgraph.errors import DimContradictionError, ExprgraphError

# -- checking answers on the points ------------------------------------------------------------------


def fact_given(f: tuple[Any, ...]) -> str | Term:
    """A fact as DimEnv is told it: text, or a core relational term."""
    return f[4]


def fact_as_text(f: tuple[Any, ...], rnd: random.Random) -> str:
    """A fact always as text (a relation in a fresh random spelling)."""
    return f[4] if f[0] == "range" else f"{spelled(f[2], rnd)} {SYMBOL[f[1]]} {spelled(f[3], rnd)}"


def make_env(case: Case, order: list[int] | None = None, how: str = "one by one") -> DimEnv:
    """The environment of a case: ranges as a mapping (or as text), facts declared in ``order``: one at a time, all
    at once (``constraints=``), or in two calls of ``declare``."""
    given = [fact_given(f) for f in case.facts]
    given = [given[i] for i in (order if order is not None else range(len(given)))]
    if how == "as text":  # ranges as text, set one by one, then every fact in one call
        env = DimEnv()
        for n, (lo, hi) in case.ranges.items():
            env.set_range(n, f"[{lo}, {'oo' if hi is None else hi}]")
        return env.declare(*given)
    if how == "default":  # names open above that share their low end take the default range instead
        open_lows = {lo for lo, hi in case.ranges.values() if hi is None}
        if len(open_lows) == 1:
            low = open_lows.pop()
            own = {n: r for n, r in case.ranges.items() if r[1] is not None}
            return DimEnv(own, constraints=given, default=(low, None))
    env = DimEnv({n: (lo, hi) for n, (lo, hi) in case.ranges.items()}, constraints=given if how == "at once" else ())
    if how == "one by one":
        for fact in given:
            env.declare(fact)
    elif how == "two calls":
        env.declare(*given[: len(given) // 2]).declare(*given[len(given) // 2 :])
    return env


class Checker:
    """Asserts each decided answer on the points of a case where the question's sides are defined."""

    def __init__(self, case: Case, what: str) -> None:
        self.case = case
        self.what = what

    def fail(self, msg: str) -> str:
        facts = [f[4] if f[0] == "range" else str(f[4]) for f in self.case.facts]
        return f"{self.what}: {msg}\n  ranges {self.case.ranges}\n  facts {facts}"

    def relation(self, answer: bool | None, op: str, left: Term, right: Term, label: str) -> None:
        if answer is None:
            return
        assert answer is True or answer is False, self.fail(f"{label}: answer {answer!r} is not a bool")
        (x, dx), (y, dy) = self.case.values(left), self.case.values(right)
        ok = dx & dy
        truth = relation_holds(op, x[ok], y[ok])
        bad = np.nonzero(truth != answer)[0]
        if len(bad):
            i = np.nonzero(ok)[0][bad[0]]
            at = {n: int(v[i]) for n, v in self.case.points.items()}
            raise AssertionError(
                self.fail(f"{label}: said {answer} for {unparse(left)} {SYMBOL[op]} {unparse(right)}, wrong at {at}")
            )

    def same_value(self, original: Term, other: Term, label: str, *, defined: bool = True) -> None:
        (x, dx), (y, dy) = self.case.values(original), self.case.values(other)
        if defined:
            bad = np.nonzero(dx & ~dy)[0]
            assert not len(bad), self.fail(f"{label}: {unparse(other)} undefined where {unparse(original)} is")
        ok = dx & dy
        bad = np.nonzero(np.asarray(x[ok] != y[ok], dtype=bool))[0]
        if len(bad):
            i = np.nonzero(ok)[0][bad[0]]
            at = {n: int(v[i]) for n, v in self.case.points.items()}
            raise AssertionError(self.fail(f"{label}: {unparse(original)} -> {unparse(other)}, differ at {at}"))

    def bound(self, r: tuple[Any, Any], term: Term, label: str) -> None:
        lo, hi = r
        if self.case.count:  # (no point satisfies the facts: every bound holds, an empty one too)
            assert lo <= hi, self.fail(f"{label}: empty bound {r} of {unparse(term)}")
        x, dx = self.case.values(term)
        v = x[dx]
        bad = np.nonzero(np.asarray((v < lo) | (v > hi), dtype=bool))[0]
        if len(bad):
            i = np.nonzero(dx)[0][bad[0]]
            at = {n: int(w[i]) for n, w in self.case.points.items()}
            raise AssertionError(self.fail(f"{label}: {unparse(term)} in {r} is wrong at {at} (value {v[bad[0]]})"))


def _as_term(answer: Any) -> Term:
    if isinstance(answer, Term):
        return answer
    if isinstance(answer, int):
        return dim_const(answer)
    return parse_expression(answer)


def check_env(case: Case, env: DimEnv, exprs: list[Term], ks: list[int], rnd: random.Random, label: str) -> list:
    """Asks ``env`` every kind of question about ``exprs`` and checks each decided answer; returns the answers."""
    chk = Checker(case, label)
    answers: list[Any] = []
    for name in NAMES:  # the ranges the facts narrowed hold every point that satisfies them
        chk.bound(env.range_of(name), dim_name(name), f"range_of({name})")
    facts = env._facts
    if facts is not None:  # each substitution the environment made holds on the points
        for name, rep in facts.subst.items():
            chk.same_value(name, rep, f"substitution {name.attr[0]} -> {unparse(rep)}")
    e1, e2 = exprs[0], exprs[1]
    t1, t2 = spelled(e1, rnd), spelled(e2, rnd)
    side1, side2 = rnd.choice([e1, t1]), rnd.choice([e2, t2])
    for op in RELATIONS:
        rel: str | Term = rnd.choice([f"{t1} {SYMBOL[op]} {t2}", op_of(op)(e1, e2), f"{SYMPY[op]}({t1}, {t2})"])
        a = env.statically_known(rel)
        chk.relation(a, op, e1, e2, f"statically_known({rel})")
        answers.append(a)
        why = env.explain(rel)
        assert why.answer == a, chk.fail(f"explain({rel}).answer {why.answer} != statically_known {a}")
        if op in ("ge", "gt"):
            asked = env.ask(op, side1, side2)
            chk.relation(asked, op, e1, e2, f"ask({op})")
            answers.append(asked)
    eq = env.equal(side1, side2)
    chk.relation(eq, "eq", e1, e2, "equal")
    cmp = env.compare(side1, side2)
    if cmp is not None:
        chk.relation(True, COMPARE[cmp], e1, e2, f"compare said {cmp}")
    answers += [eq, cmp]
    for e, t in ((e1, t1), (e2, t2)):
        r = env.bound(rnd.choice([e, t]))
        chk.bound(r, e, f"bound({t})")
        s = env.simplify(e)
        chk.same_value(e, _as_term(s), f"simplify(term {t})")
        st_ = env.simplify(t)
        chk.same_value(e, _as_term(st_), f"simplify({t!r})")
        answers += [r, unparse(s) if isinstance(s, Term) else s, st_]
    for k in ks:
        d = env.divisible(side1, k)
        if d is not None:
            chk.relation(d, "eq", op_of("mod")(e1, dim_const(k)), dim_const(0), f"divisible(., {k})")
        q = env.exact_div(side1, k)
        if q is not None:
            chk.same_value(e1, op_of("mul")(_as_term(q), dim_const(k)), f"exact_div(., {k}) = {q}")
        answers += [d, q if not isinstance(q, Term) else unparse(q)]
    d = env.divisible(side1, side2)
    if d is not None:
        chk.relation(d, "eq", op_of("mod")(e1, e2), dim_const(0), "divisible(e1, e2)")
    q = env.exact_div(side1, side2)
    if q is not None:  # e1 == e2*q where e2 != 0
        nz = op_of("ne")(e2, dim_const(0))
        (x, dx), (y, dy), (z, dz) = case.values(e1), case.values(e2), case.values(_as_term(q))
        ok = dx & dy & np.asarray(y != 0, dtype=bool)
        assert (dz[ok]).all() and (x[ok] == y[ok] * z[ok]).all(), chk.fail(f"exact_div({t1}, {t2}) = {q} ({nz})")
    answers += [d, q if not isinstance(q, Term) else unparse(q)]
    # DimArith under the environment's ranges (its context: the facts' substitutions are not made there)
    arith = DimArith(env=env)
    for op in ("lt", "ge", "eq", "ne"):
        a = arith.compare(op, e1, e2)
        chk.relation(a, op, e1, e2, f"DimArith.compare({op})")
        answers.append(a)
    for name in ("add", "sub", "mul", "floordiv", "mod", "ceildiv", "max", "min"):
        try:
            out = getattr(arith, name)(e1, e2)
        except ExprgraphError:
            continue
        if out is None:
            continue
        full = op_of({"ceildiv": "ceil_div", "max": "maximum", "min": "minimum"}.get(name, name))(e1, e2)
        chk.same_value(full, _as_term(out), f"DimArith.{name}", defined=False)
        answers.append(unparse(out) if isinstance(out, Term) else out)
    return answers


def check_quick_paths(case: Case, exprs: list[Term]) -> None:
    """The intervals' and witnesses' verdicts under the ranges alone (every point of the box, facts or not)."""

    def name_range(n: str) -> tuple[int | float, int | float]:
        lo, hi = case.ranges[n]
        return (lo, INF if hi is None else hi)

    whole = Case(case.ranges, [])
    chk = Checker(whole, "quick paths")
    e1, e2 = exprs[0], exprs[1]
    memo: dict[Term, Any] = {}
    bits: dict[str, int] = {}
    for op in RELATIONS:
        verdict = quick_relation(op, e1, e2, name_range, memo, bits)
        if verdict in (ALWAYS, NEVER):
            chk.relation(verdict == ALWAYS, op, e1, e2, f"quick_relation({op})")
        shown = sometimes(op, e1, e2, name_range, memo, {})
        for said, label in ((verdict == SOMETIMES, "quick_relation SOMETIMES"), (shown, "witness.sometimes")):
            if said and whole.bounded:  # the box is the whole range: both answers occur on it
                (x, dx), (y, dy) = whole.values(e1), whole.values(e2)
                truth = set(relation_holds(op, x[dx & dy], y[dx & dy]).tolist())
                assert truth == {True, False}, chk.fail(f"{label} for {unparse(e1)} {SYMBOL[op]} {unparse(e2)}")
    for e in (e1, e2):
        x, dx = whole.values(e)
        r = quick_bound(e, name_range, memo, bits)
        if r is not None:
            chk.bound(r, e, "quick_bound")
            if whole.bounded and dx.all():  # exact: both ends are values
                assert r[0] in x.tolist() and r[1] in x.tolist(), chk.fail(f"quick_bound {r} of {unparse(e)} not met")
        it = term_interval(e, name_range, memo, bits)
        if it:
            chk.bound((it[0], it[1]), e, "term_interval")
            if whole.bounded and dx.all() and reached_ends(e, it, name_range, memo, {}):
                ends = (it[0], it[1])
                assert set(ends) <= set(x.tolist()), chk.fail(f"reached_ends: {ends} of {unparse(e)} not both met")


HOW = st.sampled_from(["one by one", "at once", "two calls", "as text", "default"])


def case_and_env(case: Case, order: list[int] | None = None, how: str = "one by one") -> DimEnv | None:
    """The environment, or None when it rightly raised DimContradictionError (no point satisfies the facts)."""
    try:
        return make_env(case, order, how)
    except DimContradictionError as err:
        assert case.count == 0, Checker(case, "contradiction").fail(f"{err} but {case.count} points satisfy them")
        return None


# -- the compiled modules answer as the pure ones ------------------------------------------------------


def printed(answer: Any) -> Any:
    """A term answer as its text (JSON-able), any other answer as it is."""
    return unparse(answer) if isinstance(answer, Term) else answer


def spec_answers(spec: dict[str, Any]) -> list[Any]:
    """The answers to a case written as text (JSON in, JSON out): what the compiled and the pure builds compare."""
    clear_caches()
    ranges = {n: (lo, hi) for n, (lo, hi) in spec["ranges"].items()}
    try:
        env = DimEnv(ranges, constraints=spec["facts"])
    except DimContradictionError:
        return ["contradiction"]
    out: list[Any] = [[env.range_of(n)[0], str(env.range_of(n)[1])] for n in spec["ranges"]]
    e1, e2 = spec["exprs"]
    t1, t2 = parse_expression(e1), parse_expression(e2)
    for op in RELATIONS:
        out.append(env.statically_known(f"{e1} {SYMBOL[op]} {e2}"))
        out.append(env.statically_known(op_of(op)(t1, t2)))
    for e, t in ((e1, t1), (e2, t2)):
        s = env.simplify(t)
        out += [[str(x) for x in env.bound(e)], [str(x) for x in env.bound(t)], env.simplify(e), printed(s)]
    out += [env.equal(e1, e2), env.compare(e1, e2), env.divisible(e1, 2), env.divisible(e1, e2)]
    out += [printed(env.exact_div(e1, e2)), str(env.explain(f"{e1} >= {e2}"))]
    arith = DimArith(env=env)  # the arithmetic, and the quick paths under the ranges alone
    out += [printed(arith.max(t1, t2)), printed(arith.floordiv(t1, t2)), arith.compare("le", t1, t2)]
    memo: dict[Term, Any] = {}
    bits: dict[str, int] = {}
    for op in RELATIONS:
        out.append(quick_relation(op, t1, t2, env.range_of, memo, bits))
        out.append(sometimes(op, t1, t2, env.range_of, memo, {}))
    for t in (t1, t2):
        it = term_interval(t, env.range_of, memo, bits)
        out.append([str(x) for x in it] + [reached_ends(t, it, env.range_of, memo, {}) if it else None])
    return out


def worker() -> None:
    """Answers specs read one a line from stdin (run with EXPRGRAPH_PURE_PYTHON=1 by the test)."""
    print(json.dumps(list(compiled_modules())), flush=True)
    for line in sys.stdin:
        try:
            result: Any = spec_answers(json.loads(line))
        except Exception as err:  # the compiled side must fail alike
            result = ["error", type(err).__name__]
        print(json.dumps(result), flush=True)
