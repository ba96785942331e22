"""Pickled compiled functions: rebuilt from terms and checked options, never from a callable or path of the pickle."""

from __future__ import annotations

import io
import pickle
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import exprgraph as eg
from exprgraph import TermPack
from exprgraph.compile import compile as eg_compile
from exprgraph.compile import runner

x, y = eg.symbols("x y")
HAVE_CC = any(shutil.which(c) for c in ("cc", "gcc", "clang"))


class _Recording(pickle.Unpickler):
    """An unpickler that notes every global a pickle names."""

    def __init__(self, data: bytes) -> None:
        super().__init__(io.BytesIO(data))
        self.named: list[tuple[str, str]] = []

    def find_class(self, module: str, name: str) -> Any:
        self.named.append((module, name))
        return super().find_class(module, name)


class _Forged:
    """Pickles as a call of ``target(*args)``: what a hand-written pickle can say."""

    def __init__(self, target: Any, *args: Any) -> None:
        self.target, self.args = target, args

    def __reduce__(self) -> tuple:
        return (self.target, self.args)


def _rebuild_of(fn: Any) -> Any:
    """The function a compiled function's pickle calls to rebuild it."""
    return fn.__reduce__()[0]


@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_a_compiled_function_pickles_as_terms_and_options(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if backend == "c" and not HAVE_CC:
        pytest.skip("no C compiler")
    monkeypatch.setenv("EXPRGRAPH_CACHE", str(tmp_path / "cache"))
    fn = eg_compile([x * y + 1.0, x - y], [x, y], backend, packed=True, build_timeout=120)
    data = pickle.dumps(fn)
    reader = _Recording(data)
    again = reader.load()
    assert np.array_equal(again(np.array([[2.0, 3.0]])), np.array([[7.0, -1.0]]))
    assert again.packed and again.backend == backend
    # the only callable of exprgraph's compile package the pickle names is the fixed rebuild
    named = {f"{m}.{n}" for m, n in reader.named if m.startswith("exprgraph.compile")}
    assert named == {"exprgraph.compile._rebuild"}
    assert not any(m.split(".")[0] in ("subprocess", "os", "posix", "builtins") for m, _ in reader.named)


def test_a_pickle_cannot_hand_the_rebuild_a_command_runner(tmp_path: Path) -> None:
    # the shape of the old pickle (a factory, then its arguments) with the compiler runner as the
    # factory: before, unpickling ran the command; now the rebuild takes no callable at all
    marker = tmp_path / "ran"
    rebuild = _rebuild_of(eg_compile(x + 1.0, [x]))
    forged = _Forged(
        rebuild, runner.run_compilers, [["sh", "-c", f"touch {marker}"]], 5.0, tmp_path, {"note": "compiling"}
    )
    with pytest.raises((TypeError, ValueError)):
        pickle.loads(pickle.dumps(forged))
    assert not marker.exists()


@pytest.mark.parametrize(
    "outputs, inputs, backend, options",
    [
        ([["sh", "-c", "touch {marker}"]], [x], "numpy", {}),  # a command where terms belong
        (x + 1.0, [x], "numpy", {"factory": runner.run_compilers}),  # an option compile() does not have
        (x + 1.0, [x], "numpy", {"packed": "yes"}),  # an option of the wrong type
        (x + 1.0, [x], "numpy", {"build_timeout": float("nan")}),  # a setting out of range
        (x + 1.0, [x], "sh -c 'touch {marker}'", {}),  # a command where a backend name belongs
        (x + 1.0, ["x"], "numpy", {}),  # a name where a symbol belongs
        (x + 1.0, [x], "numpy", [("packed", True)]),  # options that are not a dict
        (TermPack((x + 1.0, x)), (5, False), "numpy", {}),  # more inputs than the pack holds
        (TermPack((x + 1.0, x)), ("1", True), "numpy", {}),  # a count that is not an int
        (TermPack((x + 1.0, x)), (1, "yes"), "numpy", {}),  # a flag that is not a bool
    ],
)
def test_the_rebuild_accepts_only_terms_a_backend_and_checked_options(
    tmp_path: Path, outputs: Any, inputs: Any, backend: str, options: Any
) -> None:
    marker = tmp_path / "ran"
    if isinstance(outputs, list) and isinstance(outputs[0], list):
        outputs = [[part.format(marker=marker) for part in outputs[0]]]
    rebuild = _rebuild_of(eg_compile(x + 1.0, [x]))
    forged = _Forged(rebuild, outputs, inputs, backend.format(marker=marker), options)
    with pytest.raises((TypeError, ValueError)):
        pickle.loads(pickle.dumps(forged))
    assert not marker.exists()


def test_a_function_not_made_by_compile_does_not_pickle() -> None:
    from exprgraph.compile.function import Built, CompiledFunction, check_signature

    run = lambda v: (v,)
    fn = CompiledFunction(Built(run, "", run), check_signature(x, [x]), "numpy")
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(fn)


def test_the_security_page_says_pickles_are_code() -> None:
    text = (Path(__file__).resolve().parents[2] / "SECURITY.md").read_text()
    section = text[text.index("## What is trusted") :]
    assert "pickle" in section.lower() and "like code" in section
