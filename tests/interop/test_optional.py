"""Optional packages stay optional: imported on first use, a clear error naming the extra when missing."""

from __future__ import annotations

import subprocess
import sys

import pytest

from exprgraph import symbols
from exprgraph.errors import OptionalDependencyError
from exprgraph.interop import ufunc_ops

x, y = symbols("x y")


def test_importing_interop_imports_no_optional_package():
    code = (
        "import sys, exprgraph, exprgraph.interop as i; i.to_sympy; i.to_onnx; i.dask_evaluate; "
        "print(sorted(m for m in ('sympy', 'pytensor', 'jax', 'onnx', 'dask') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("module", "call", "extra"),
    [
        ("sympy", lambda i: i.to_sympy(x + 1), "sympy"),
        ("pytensor", lambda i: i.to_pytensor(x + 1), "pytensor"),
        ("jax", lambda i: i.to_jax(x + 1), "jax"),
        ("onnx", lambda i: i.to_onnx(x + 1), "onnx"),
        ("dask", lambda i: i.dask_evaluate(x + 1, {"x": 1.0}), "dask"),
    ],
)
def test_a_missing_package_names_its_extra(monkeypatch, module, call, extra):
    import exprgraph.interop as interop

    for name in list(sys.modules):
        if name == module or name.startswith(module + "."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` fail
    with pytest.raises(OptionalDependencyError, match=rf"pip install 'exprgraph\[{extra}\]'") as info:
        call(interop)
    assert isinstance(info.value, ImportError)


def test_the_ufunc_table_is_documented_from_the_op_table():
    table = ufunc_ops()
    assert table["add"] == "add" and table["sin"] == "sin" and table["divide"] == "truediv"
    assert table["square"] == "x**2" and table["bitwise_and"] == "x and y"
    assert "cbrt" not in table
    import exprgraph.interop as interop

    with pytest.raises(AttributeError):
        interop.no_such_converter
