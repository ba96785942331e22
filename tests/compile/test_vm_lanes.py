"""The vm at one point runs a class's members as its lanes: the same values as at many points, as C and numpy.

A solver's callbacks evaluate at one point; there the vm gathers up to a block of members into the
lanes of the body's registers, runs the body once per block and scatters the results, and stores a
class's outputs with one table-driven instruction (STORES_D). These tests compare that path with the
vm at many points, the numpy backend and the C library on random networks of repeated shapes.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.compile import cbuild, vm
from exprgraph.compile import compile as eg_compile
from exprgraph.core import Term

needs_vm = pytest.mark.skipif(vm._native is None, reason="the vm extension is not built")
needs_cc = pytest.mark.skipif(not any(cbuild.shutil.which(c) for c in ("cc", "gcc", "clang")), reason="no C compiler")


def _network(n_vars: int, members: int, seed: int) -> tuple[list[Term], list[Term]]:
    """Outputs of a few repeated shapes over random variables, plus constants, inputs and repeats."""
    rng = np.random.default_rng(seed)
    xs = [eg.Symbol(f"v{i}") for i in range(n_vars)]
    pick = rng.integers(0, n_vars, size=(members, 4))
    coef = rng.uniform(-2, 2, size=(members, 2)).round(3)
    outs: list[Term] = []
    for (a, b, c, d), (k0, k1) in zip(pick.tolist(), coef.tolist(), strict=True):
        flow = xs[a] * xs[b] * eg.cos(xs[a] - xs[c]) + float(k0) * xs[d]  # a shape with slots and constants
        outs.append(flow)
        outs.append(float(k1) * eg.sin(flow) - xs[b] ** 2)  # a second level, reading the first
        outs.append(xs[a] * xs[c])  # a one-op shape (expanded member by member)
    outs.append(eg.const(2.5))  # a constant output
    outs.append(xs[0])  # an input as an output
    outs.append(outs[0])  # an output listed twice
    outs.append(eg.exp(xs[1]) / (1.0 + xs[2] ** 2))  # irregular rest
    return outs, xs


@needs_vm
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(members=st.integers(48, 300), seed=st.integers(0, 10**6))
def test_one_point_is_many_points_and_numpy(members: int, seed: int) -> None:
    """Packed at one point (members as lanes) = packed at many points = the numpy backend."""
    outs, xs = _network(40, members, seed)
    f = eg_compile(outs, xs, "vm", packed=True)
    assert f.info["grouped"]
    ref = eg_compile(outs, xs, "numpy", packed=True)
    points = np.random.default_rng(seed + 1).uniform(-1.5, 1.5, size=(5, len(xs)))
    many, want = f(points), ref(points)
    for k, row in enumerate(points):
        one = f(row)
        np.testing.assert_allclose(one, many[k], rtol=1e-13, atol=1e-15)  # libm's vector and scalar forms
        np.testing.assert_allclose(one, want[k], rtol=1e-12, atol=1e-14)


@needs_vm
def test_run_entry_point_at_one_point() -> None:
    """The unpacked call (``f(*values)``) at one point writes every output, repeats and constants included."""
    outs, xs = _network(10, 40, 7)
    f = eg_compile(outs, xs, "vm")
    ref = eg_compile(outs, xs, "numpy")
    x = np.random.default_rng(3).uniform(-1, 1, len(xs))
    got, want = f(*x), ref(*x)
    assert len(got) == len(outs)
    np.testing.assert_allclose(np.array(got, dtype=float), np.array(want, dtype=float), rtol=1e-12, atol=1e-14)


@needs_vm
def test_class_outputs_are_stored_by_one_instruction() -> None:
    """A class's outputs cost one STORES_D, not one STORE each: the program does not grow with the members."""
    xs = [eg.Symbol(f"v{i}") for i in range(400)]
    outs = [
        xs[i] * xs[(i * 7 + 1) % 400] * eg.cos(xs[i] - xs[(i + 3) % 400]) + 0.5 * xs[(i + 9) % 400] for i in range(400)
    ]
    f = eg_compile(outs, xs, "vm", packed=True)
    instructions = int(f.source.split(" instructions")[0].split()[-1])
    assert f.info["classes"][0]["members"] >= 390 and instructions < 40  # the body once, one store for all
    x = np.random.default_rng(2).uniform(-1, 1, 400)
    np.testing.assert_allclose(f(x), eg_compile(outs, xs, "numpy", packed=True)(x), rtol=1e-12, atol=1e-14)


@needs_vm
@needs_cc
def test_vm_and_c_agree_at_random_points() -> None:
    """The vm's one-point loops and the C library's loops give the same values on random points."""
    outs, xs = _network(16, 120, 11)
    f = eg_compile(outs, xs, "vm", packed=True)
    c = eg_compile(outs, xs, "c", packed=True)
    for row in np.random.default_rng(5).uniform(-2, 2, size=(6, len(xs))):
        np.testing.assert_allclose(f(row), c(row), rtol=1e-12, atol=1e-14)
