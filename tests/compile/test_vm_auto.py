"""The auto backend: the vm at once, the C library once its background build is done."""

from __future__ import annotations

import numpy as np
import pytest

import exprgraph as eg
from exprgraph.compile import cbuild, vm
from exprgraph.compile import compile as eg_compile
from exprgraph.errors import EvaluationError

HAVE_CC = any(cbuild.shutil.which(c) for c in ("cc", "gcc", "clang"))
pytestmark = pytest.mark.skipif(vm._native is None or not HAVE_CC, reason="needs the vm extension and a C compiler")


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXPRGRAPH_CACHE", str(tmp_path_factory.getbasetemp() / "eg-cache-auto"))


def test_the_vm_runs_first_and_the_library_replaces_it() -> None:
    x, y = eg.symbols("x y")
    outs = [x * y + eg.sin(x * y), x - y, eg.exp(x) / (1.0 + y**2)]
    f = eg_compile(outs, [x, y], "auto", packed=True)
    point = np.array([[2.0, 3.0], [0.5, -1.0]])
    want = eg_compile(outs, [x, y], "numpy", packed=True)(point)
    first = f(point)  # on whatever is ready: the vm until the build is done
    np.testing.assert_allclose(first, want, rtol=1e-13)
    assert f.library.wait(300) and f.library.error is None
    assert f.library.active == "c"
    np.testing.assert_allclose(f(point), want, rtol=1e-13)
    np.testing.assert_allclose(f.library.vm.packed(point), want, rtol=1e-13)


def test_a_failed_build_keeps_the_vm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC", "/nonexistent/cc")
    x = eg.Symbol("x")
    f = eg_compile([x * 2.0, eg.cos(x)], [x], "auto")
    assert f.library.wait(120)
    assert f.library.active == "vm" and f.library.error is not None
    got = f(np.array([0.0, 1.0]))
    np.testing.assert_allclose(got[0], [0.0, 2.0])
    np.testing.assert_allclose(got[1], np.cos([0.0, 1.0]), rtol=1e-13)


def test_float32_goes_to_the_c_backend_at_once() -> None:
    s = eg.Symbol("s", "float32")
    f = eg_compile(eg.sin(s) * 2, [s], "auto")
    assert "vm program" not in f.source
    np.testing.assert_allclose(f(np.float32(0.5)), np.float32(np.sin(np.float32(0.5)) * 2), rtol=1e-6)


def test_an_output_that_fails_to_fold_raises_at_the_call() -> None:
    """``(-3)**-3`` in int64 cannot be folded: both backends raise EvaluationError when called."""
    x = eg.Symbol("x")
    for backend in ("vm", "auto"):
        f = eg_compile([eg.const(-3) ** eg.const(-3), x], [x], backend)
        with pytest.raises(EvaluationError, match="negative"):
            f(1.0)
