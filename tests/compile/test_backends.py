"""The backend registry: compile() finds every backend by the name its module registered."""

from __future__ import annotations

import pickle

import pytest

import exprgraph as eg
from exprgraph.compile import BACKENDS, backend_names, register_backend
from exprgraph.compile import compile as compile_terms
from exprgraph.compile.backends import _BACKENDS, Backend, get_backend
from exprgraph.compile.function import Built
from exprgraph.errors import EvaluationError

x, y = eg.symbols("x y")


def test_the_three_backends_register_themselves() -> None:
    assert set(BACKENDS) == {"numpy", "c", "llvm"} <= set(backend_names())
    assert get_backend("c").uses_build_timeout and not get_backend("numpy").uses_build_timeout


def test_an_unknown_backend_names_the_known_ones() -> None:
    for bad in ("fortran", 3, None):
        with pytest.raises(ValueError, match="backend must be one of"):
            compile_terms(x + y, [x, y], bad)  # type: ignore[arg-type]


def _traced(program, build_timeout):  # type: ignore[no-untyped-def]
    built = get_backend("numpy").build(program, build_timeout)
    return Built(built.run, "# traced\n" + built.source, built.packed)


def test_a_new_backend_is_one_registration(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(_BACKENDS, "traced", Backend("traced", _traced))
    f = compile_terms([x * y, x - y], [x, y], "traced")
    assert [float(v) for v in f(2.0, 3.0)] == [6.0, -1.0]
    assert f.source.startswith("# traced")
    assert [float(v) for v in pickle.loads(pickle.dumps(f))(2.0, 3.0)] == [6.0, -1.0]


def test_a_name_is_taken_once() -> None:
    with pytest.raises(ValueError, match="registered already"):
        register_backend(Backend("numpy", _traced))
    assert register_backend(get_backend("numpy")) is get_backend("numpy")


@pytest.mark.parametrize("backend", ["c", "llvm", "vm", "numpy"])
def test_an_output_that_cannot_be_folded_raises_at_the_call(backend: str) -> None:
    """(-3)**-3 in int64 has no value: compiling works and the call raises, on every backend."""
    if backend == "llvm":
        pytest.importorskip("llvmlite")
    x = eg.Symbol("x")
    fn = eg.compile([eg.const(-3) ** eg.const(-3), x], [x], backend=backend)
    with pytest.raises((EvaluationError, ValueError)):
        fn(2.0)
