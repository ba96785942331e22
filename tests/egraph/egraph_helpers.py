"""Shared helpers of the e-graph tests: random terms, numeric agreement, math-suite running."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.core import postorder
from exprgraph.egraph import EGraph, saturate
from exprgraph.egraph.mathsuite import Equality

X, Y, Z = eg.symbols("x y z")
SYMS = (X, Y, Z)


@st.composite
def arith_terms(draw: st.DrawFn, max_depth: int = 4) -> eg.Term:
    """Small random terms over x, y, z, small integer constants and + - * / and a few functions."""
    leaf = st.one_of(st.sampled_from(SYMS), st.integers(-3, 3).map(eg.const))
    depth = draw(st.integers(0, max_depth))
    stack_terms = [draw(leaf) for _ in range(2 ** min(depth, 3))]
    ops = ["add", "sub", "mul", "truediv", "neg", "sin", "exp"]
    while len(stack_terms) > 1 or depth > 0:
        name = draw(st.sampled_from(ops))
        op = eg.get_op(name)
        if op.arity[0] == 1:
            stack_terms[-1] = op(stack_terms[-1])
        elif len(stack_terms) >= 2:
            b = stack_terms.pop()
            a = stack_terms.pop()
            stack_terms.append(op(a, b))
        else:
            stack_terms[-1] = op(stack_terms[-1], draw(leaf))
        depth -= 1
        if depth <= 0 and len(stack_terms) == 1:
            break
    return stack_terms[0]


def points(n: int = 32, seed: int = 0) -> dict:
    """Random values of x, y, z in [0.5, 2] (away from the poles of the suite's terms)."""
    rng = np.random.default_rng(seed)
    return {"x": rng.uniform(0.5, 2.0, n), "y": rng.uniform(0.5, 2.0, n), "z": rng.uniform(0.5, 2.0, n),
            "a": rng.uniform(0.5, 2.0, n), "five": np.full(n, 5.0)}  # fmt: skip


def evaluable(t: eg.Term) -> bool:
    """Whether ``t`` has a numeric value (no uninterpreted ops such as d and i)."""
    return all(n.op.impl is not None or n.op.ufunc is not None or not n.args for n in postorder(t))


def _column(v: object, n: int) -> np.ndarray:
    return np.broadcast_to(np.asarray(v, dtype=np.float64), (n,))


def agree(a: eg.Term, b: eg.Term, env: dict, rtol: float = 1e-9, regular_only: bool = False) -> bool:
    """``a`` and ``b`` have the same values at the points of ``env`` (nan where nan).

    ``regular_only`` keeps only the points where no intermediate value of ``a`` is zero, infinite
    or nan: where the sign of a zero or an overflow may legitimately differ between equal forms.
    """
    n = len(env["x"])
    moved_env = {k: np.asarray(v) * (1 + 2.0**-40) for k, v in env.items()}
    with np.errstate(all="ignore"):
        # env names every symbol of the suite: those a term does not use are ignored
        va, vb = (_column(v, n) for v in eg.evaluate([a, b], env, on_unused_input="ignore"))
        # how far a moves when its inputs move by 2**-40: ill-conditioned points allow more rounding
        sensitivity = np.abs(_column(eg.evaluate(a, moved_env, on_unused_input="ignore"), n) - va)
        keep = np.ones(n, dtype=bool)
        if regular_only:
            for v in eg.evaluate(postorder(a), env, on_unused_input="ignore"):
                col = _column(v, n)
                keep &= np.isfinite(col) & (col != 0)
    va, vb, sensitivity = va[keep], vb[keep], sensitivity[keep]
    if not np.array_equal(np.isnan(va), np.isnan(vb)):
        return False
    ok = ~np.isnan(va)
    va, vb, sensitivity = va[ok], vb[ok], np.nan_to_num(sensitivity[ok], nan=np.inf)
    with np.errstate(all="ignore"):
        allowed = rtol * np.abs(va) + 1e-9 + 1e6 * sensitivity
        return bool(np.all((va == vb) | (np.abs(va - vb) <= allowed)))


def run_equality(eq: Equality, *, explanations: bool = False, machine: str = "compiled") -> tuple[EGraph, object]:
    """Saturate one equality of the suite as egg's test does: stop when its goal is proved."""
    settings = dict(eq.settings)
    fold = settings.pop("fold", True)
    egraph = EGraph(fold=fold, explanations=explanations)
    start, goal = eq.start_term, eq.goal_term
    egraph.add(start)
    for extra in eq.extra_terms:
        egraph.add(extra)
    report = saturate(egraph, eq.rules(), goals=[(start, goal)], machine=machine, **settings)
    return egraph, report
