"""The AC-OPF benchmark's model on a 3-bus case written here: derivatives against finite differences,
the same optimum from IPOPT, trust-constr and CasADi (when installed)."""

from __future__ import annotations

import numpy as np
import pytest
from bench.opf_data import Case, parse_matpower, read_case  # the model lives with the benchmark (conftest)
from bench.opf_model import build_casadi, build_exprgraph
from opt_checks import fd_check

import exprgraph as eg
from exprgraph.diff import sparse_hessian

# three buses, a phase-shifting transformer (1-3), line charging, a shunt, two generators, thermal limits
CASE3 = """
function mpc = case3_test
mpc.version = '2';
mpc.baseMVA = 100;
%% bus data
%	bus_i	type	Pd	Qd	Gs	Bs	area	Vm	Va	baseKV	zone	Vmax	Vmin
mpc.bus = [
	1	3	0	0	0	0	1	1	0	230	1	1.1	0.9;
	2	2	90	30	0	0	1	1	0	230	1	1.1	0.9;
	3	1	110	40	2.0	15.0	1	1	0	230	1	1.1	0.9;
];
%% generator data
%	bus	Pg	Qg	Qmax	Qmin	Vg	mBase	status	Pmax	Pmin
mpc.gen = [
	1	100	0	150	-150	1	100	1	250	10;
	2	100	0	150	-150	1	100	1	150	10;
	3	0	0	10	-10	1	100	0	50	0;
];
%% branch data
%	fbus	tbus	r	x	b	rateA	rateB	rateC	ratio	angle	status	angmin	angmax
mpc.branch = [
	1	2	0.01	0.085	0.176	250	250	250	0	0	1	-30	30;
	1	3	0.017	0.092	0.158	150	150	150	0.98	2.5	1	-30	30;
	2	3	0.0119	0.1008	0.209	0	0	0	0	0	1	-360	360;
	2	3	0.05	0.2	0	100	100	100	0	0	0	-30	30;
];
%% generator cost data
mpc.gencost = [
	2	0	0	3	0.11	5	150;
	2	0	0	3	0.085	1.2	600;
	2	0	0	3	0	3	0;
];
"""


@pytest.fixture(scope="module")
def case3(tmp_path_factory: pytest.TempPathFactory) -> Case:
    path = tmp_path_factory.mktemp("opf") / "case3_test.m"
    path.write_text(CASE3)
    return read_case(str(path))


def test_reading_the_case(case3: Case) -> None:
    fields = parse_matpower(CASE3)
    assert fields["baseMVA"] == 100.0 and np.asarray(fields["branch"]).shape == (4, 13)
    assert case3.sizes == (3, 2, 3)  # the inactive generator and branch are dropped
    assert case3.ref == [0] and case3.rate_a[2] == 0.0  # no thermal limit on branch 2-3
    assert case3.angmax[2] == pytest.approx(np.radians(60.0))  # 360 degrees tightened to 60
    assert case3.br_tr[1] == pytest.approx(0.98 * np.cos(np.radians(2.5)))
    assert case3.cost[0].tolist() == pytest.approx([0.11 * 1e4, 500.0, 150.0])


def test_model_derivatives_match_finite_differences(case3: Case) -> None:
    prob, lay = build_exprgraph(case3)
    nlp = prob.compile("numpy")
    rng = np.random.default_rng(7)
    for _ in range(3):
        x = rng.uniform(-1.0, 1.0, lay.n)
        x[lay.va] = rng.uniform(-0.3, 0.3, len(lay.va))
        x[lay.vm] = rng.uniform(0.9, 1.1, len(lay.vm))
        fd_check(nlp, x, rng.normal(size=nlp.m), float(rng.uniform(0.5, 2.0)))


def test_block_hessian_equals_the_summed_lagrangian(case3: Case) -> None:
    prob, lay = build_exprgraph(case3)
    nlp = prob.compile("numpy")
    lam = [eg.Symbol(f"lam_{i}") for i in range(nlp.m)]
    lagrangian = eg.add(prob.f, *(lam_i * g for lam_i, g in zip(lam, prob.g, strict=True)))
    summed = sparse_hessian(lagrangian, prob.x)
    rng = np.random.default_rng(11)
    x = rng.uniform(0.9, 1.1, lay.n)
    lam_values = rng.normal(size=nlp.m)
    env = {**dict(zip(prob.x, x, strict=True)), **dict(zip(lam, lam_values, strict=True))}
    want = np.tril(summed.to_dense(np.array([float(v) for v in eg.evaluate(summed.values, env)])))
    got = np.zeros((lay.n, lay.n))
    rows, cols = nlp.hessianstructure()
    got[rows, cols] = nlp.hessian(x, lam_values, 1.0)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-9)


def test_ipopt_scipy_and_casadi_agree(case3: Case) -> None:
    prob, _ = build_exprgraph(case3)
    nlp = prob.compile("numpy")
    by_scipy = prob.solve("scipy", backend="numpy", options={"maxiter": 2000})
    assert np.isfinite(by_scipy.f)
    cyipopt = pytest.importorskip("cyipopt")
    assert cyipopt is not None
    res = prob.solve("ipopt", backend="numpy")
    assert res.status == "Solve_Succeeded"
    assert by_scipy.f == pytest.approx(res.f, rel=1e-4)  # trust-constr stops less tightly
    assert np.abs(nlp.constraints(res.x) - res.g).max() < 1e-12
    ca = pytest.importorskip("casadi")
    model, lay, lbg, ubg = build_casadi(case3)
    solver = ca.nlpsol("s", "ipopt", model, {"print_time": False, "ipopt.print_level": 0, "ipopt.sb": "yes"})
    sol = solver(x0=lay.x0, lbx=lay.lbx, ubx=lay.ubx, lbg=lbg, ubg=ubg)
    assert float(sol["f"]) == pytest.approx(res.f, rel=1e-6)
    np.testing.assert_allclose(np.array(sol["lam_g"]).ravel(), res.lam_g, rtol=1e-4, atol=1e-6)
