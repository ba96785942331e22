"""The AC optimal power flow model, polar form, as the public rosetta-opf comparison states it.

Variables: voltage angle and magnitude at each bus, active and reactive power of each generator,
active and reactive flow at both ends of each branch. Constraints: the reference angle, active and
reactive power balance at each bus, the flow equations at both ends of each branch (Ohm's law with
transformer and line charging), angle difference limits, thermal limits at both ends. Objective:
the generators' quadratic costs. The same function writes the model for exprgraph (symbols) and
for CasADi (SX scalars): only the algebra passed in (``sin``, ``cos``, ``total``) differs, so both
tools solve the very same expressions. The model is our own, written from the formulation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.opf_data import Case

__all__ = ["Layout", "layout", "Algebra", "opf_expressions", "build_exprgraph", "build_casadi"]


@dataclass
class Layout:
    """Where each quantity sits in the vector of variables, its bounds and its start."""

    n: int
    va: np.ndarray
    vm: np.ndarray
    pg: np.ndarray
    qg: np.ndarray
    pf: np.ndarray
    pt: np.ndarray
    qf: np.ndarray
    qt: np.ndarray
    lbx: np.ndarray
    ubx: np.ndarray
    x0: np.ndarray


def layout(case: Case) -> Layout:
    """The variables of ``case``: ``va, vm`` per bus, ``pg, qg`` per generator, four flows per branch."""
    nb, ng, nl = case.sizes
    sizes = [nb, nb, ng, ng, nl, nl, nl, nl]
    starts = np.cumsum([0, *sizes])
    parts = [np.arange(starts[k], starts[k + 1]) for k in range(8)]
    n = int(starts[-1])
    lbx, ubx, x0 = np.full(n, -np.inf), np.full(n, np.inf), np.zeros(n)
    va, vm, pg, qg, pf, pt, qf, qt = parts
    lbx[vm], ubx[vm], x0[vm] = case.bus_vmin, case.bus_vmax, 1.0
    lbx[pg], ubx[pg], lbx[qg], ubx[qg] = case.pmin, case.pmax, case.qmin, case.qmax
    rate = np.where(case.rate_a > 0, case.rate_a, np.inf)
    for flows in (pf, pt, qf, qt):
        lbx[flows], ubx[flows] = -rate, rate
    return Layout(n, va, vm, pg, qg, pf, pt, qf, qt, lbx, ubx, x0)


@dataclass
class Algebra:
    """The few functions the model needs from a tool: ``sin``, ``cos`` and a sum of several terms."""

    sin: Callable[[Any], Any]
    cos: Callable[[Any], Any]
    total: Callable[[list[Any]], Any]


def _branch_flows(case: Case, lay: Layout, x: Sequence[Any], alg: Algebra, l: int) -> list[Any]:  # noqa: E741
    """The four flow equations of branch ``l`` (each ``= 0``)."""
    f, t = int(case.br_from[l]), int(case.br_to[l])
    # Python floats, as a user's model holds them (a numpy scalar times a term goes through numpy's ufunc protocol)
    g, b, tr, ti = float(case.br_g[l]), float(case.br_b[l]), float(case.br_tr[l]), float(case.br_ti[l])
    b_sh = float(case.br_charging[l]) / 2.0
    ttm = tr * tr + ti * ti
    vf, vt, af, at = x[lay.vm[f]], x[lay.vm[t]], x[lay.va[f]], x[lay.va[t]]
    vv = vf * vt
    c_ft, s_ft = vv * alg.cos(af - at), vv * alg.sin(af - at)
    c_tf, s_tf = vv * alg.cos(at - af), vv * alg.sin(at - af)
    return [
        x[lay.pf[l]] - (g / ttm * vf**2 + (-g * tr + b * ti) / ttm * c_ft + (-b * tr - g * ti) / ttm * s_ft),
        x[lay.qf[l]] - (-(b + b_sh) / ttm * vf**2 - (-b * tr - g * ti) / ttm * c_ft + (-g * tr + b * ti) / ttm * s_ft),
        x[lay.pt[l]] - (g * vt**2 + (-g * tr - b * ti) / ttm * c_tf + (-b * tr + g * ti) / ttm * s_tf),
        x[lay.qt[l]] - (-(b + b_sh) * vt**2 - (-b * tr + g * ti) / ttm * c_tf + (-g * tr - b * ti) / ttm * s_tf),
    ]


def _balance(case: Case, lay: Layout, x: Sequence[Any], alg: Algebra) -> tuple[list[Any], list[float]]:
    """Active and reactive balance at each bus: ``flows out - generation + shunt = -load``."""
    nb = case.sizes[0]
    out_p: list[list[Any]] = [[] for _ in range(nb)]
    out_q: list[list[Any]] = [[] for _ in range(nb)]
    for l in range(case.sizes[2]):  # noqa: E741
        f, t = int(case.br_from[l]), int(case.br_to[l])
        out_p[f].append(x[lay.pf[l]])
        out_q[f].append(x[lay.qf[l]])
        out_p[t].append(x[lay.pt[l]])
        out_q[t].append(x[lay.qt[l]])
    for k, i in enumerate(case.gen_bus):
        out_p[int(i)].append(-x[lay.pg[k]])
        out_q[int(i)].append(-x[lay.qg[k]])
    exprs: list[Any] = []
    rhs: list[float] = []
    for i in range(nb):
        vm2 = x[lay.vm[i]] ** 2
        gs, bs = float(case.bus_gs[i]), float(case.bus_bs[i])
        p = out_p[i] + ([gs * vm2] if gs else [])
        q = out_q[i] + ([-bs * vm2] if bs else [])
        for terms, load in ((p, case.bus_pd[i]), (q, case.bus_qd[i])):
            if terms:
                exprs.append(alg.total(terms))
                rhs.append(-float(load))
    return exprs, rhs


def opf_expressions(
    case: Case, lay: Layout, x: Sequence[Any], alg: Algebra
) -> tuple[Any, list[Any], np.ndarray, np.ndarray]:
    """``(objective, constraints, lbg, ubg)`` of the AC-OPF of ``case`` over the scalars ``x``."""
    gs, lbg, ubg = [], [], []
    for r in case.ref:
        gs.append(x[lay.va[r]])
        lbg.append(0.0)
        ubg.append(0.0)
    balance, rhs = _balance(case, lay, x, alg)
    gs += balance
    lbg += rhs
    ubg += rhs
    for l in range(case.sizes[2]):  # noqa: E741
        gs += _branch_flows(case, lay, x, alg, l)
        lbg += [0.0] * 4
        ubg += [0.0] * 4
        gs.append(x[lay.va[int(case.br_from[l])]] - x[lay.va[int(case.br_to[l])]])
        lbg.append(float(case.angmin[l]))
        ubg.append(float(case.angmax[l]))
        if case.rate_a[l] > 0:
            for p, q in ((lay.pf[l], lay.qf[l]), (lay.pt[l], lay.qt[l])):
                gs.append(x[p] ** 2 + x[q] ** 2)
                lbg.append(-np.inf)
                ubg.append(float(case.rate_a[l] ** 2))
    costs = []
    for k in range(case.sizes[1]):
        c2, c1 = float(case.cost[k][0]), float(case.cost[k][1])
        pg = x[lay.pg[k]]
        costs += ([c2 * pg**2] if c2 else []) + ([c1 * pg] if c1 else [])
    constant = float(case.cost[:, 2].sum()) if case.sizes[1] else 0.0
    if not costs:
        return constant, gs, np.array(lbg), np.array(ubg)
    objective = alg.total(costs) + constant if constant else alg.total(costs)
    return objective, gs, np.array(lbg), np.array(ubg)


def build_exprgraph(case: Case) -> tuple[Any, Layout]:
    """The model as an :class:`exprgraph.optimize.Problem`."""
    from exprgraph import add, cos, sin
    from exprgraph.optimize import Problem

    lay = layout(case)
    prob = Problem()
    x = prob.variables("x", lay.n, lb=lay.lbx, ub=lay.ubx, start=lay.x0)
    alg = Algebra(sin, cos, lambda ts: ts[0] if len(ts) == 1 else add(*ts))
    f, gs, lbg, ubg = opf_expressions(case, lay, x, alg)
    prob.constraints(gs, lbg, ubg, name="g")
    prob.minimize(f)
    return prob, lay


def build_casadi(case: Case) -> tuple[dict[str, Any], Layout, np.ndarray, np.ndarray]:
    """The model as CasADi SX (``{"x", "f", "g"}``), as a CasADi user writes it, with ``lbg, ubg``."""
    import casadi as ca

    lay = layout(case)
    xv = ca.SX.sym("x", lay.n)
    x = ca.vertsplit(xv)
    alg = Algebra(ca.sin, ca.cos, lambda ts: ts[0] if len(ts) == 1 else sum(ts[1:], ts[0]))
    f, gs, lbg, ubg = opf_expressions(case, lay, x, alg)
    return {"x": xv, "f": f, "g": ca.vertcat(*gs)}, lay, lbg, ubg
