"""The compiled fast path: choosing compiled or pure modules, and both giving the same answers."""

from __future__ import annotations

import importlib
import importlib.machinery
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from exprgraph import dims
from exprgraph.dims import accel

EXPRESSIONS = [
    "2*batch//batch",
    "(seq+7)//8*8",
    "CeilToInt(s,8)",
    "max(a,b)+min(a,b)+3",
    "batch*chan*dim + 4*width - dim*batch + -6",
    "(s0+width)*batch//16",
    "a*b*c//(a*b)+2",
    "((x//4)*4 + x%4) ^ (x & 3)",
    "not an expression (",
]


def _compiled_path(directory: Path) -> Path:
    """The fake compiled file of ``mod`` (named, not globbed: ``mod.*`` also matches ``mod.py``)."""
    return directory / f"mod{importlib.machinery.EXTENSION_SUFFIXES[0]}"


def _fake_package(tmp_path: Path, name: str) -> Path:
    """A package ``name`` with module ``mod`` as source (VALUE = 'source') and a broken compiled file."""
    directory = tmp_path / name
    directory.mkdir()
    (directory / "__init__.py").write_text("")
    (directory / "mod.py").write_text("VALUE = 'source'\n")
    # not a loadable extension: importing it would fail, so a successful import came from the source
    _compiled_path(directory).write_bytes(b"not a shared object")
    return directory


def _set_mtime(path: Path, seconds: float) -> None:
    os.utime(path, (seconds, seconds))


def test_a_stale_compiled_module_is_found(tmp_path):
    directory = _fake_package(tmp_path, "stalepkg")
    compiled = _compiled_path(directory)
    source = directory / "mod.py"
    _set_mtime(source, 1_000_000)
    _set_mtime(compiled, 1_000_001)
    assert accel.stale_modules(directory, ["mod"]) == []  # built after the source was written
    _set_mtime(source, 1_000_001 + accel.MTIME_SLACK + 5)
    assert accel.stale_modules(directory, ["mod"]) == ["mod"]  # edited after the build
    compiled.unlink()
    assert accel.stale_modules(directory, ["mod"]) == []  # nothing compiled at all: a pure build


def test_a_missing_compiled_module_makes_the_build_stale(tmp_path):
    directory = _fake_package(tmp_path, "partialpkg")
    (directory / "other.py").write_text("VALUE = 'other'\n")
    assert accel.stale_modules(directory, ["mod", "other"]) == ["other"]


def test_select_serves_the_source_of_a_stale_module(tmp_path, monkeypatch):
    directory = _fake_package(tmp_path, "servedpkg")
    _set_mtime(_compiled_path(directory), 1_000_000)  # the compiled file is older than the source
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))  # the finder goes away after the test
    monkeypatch.delenv(accel.PURE_ENV, raising=False)
    with pytest.warns(RuntimeWarning, match="older than its source"):
        assert accel.select("servedpkg", directory, ["mod"]) is True
    module = importlib.import_module("servedpkg.mod")
    assert module.VALUE == "source"
    assert not accel.is_compiled(module)


def test_select_serves_the_source_when_asked(tmp_path, monkeypatch):
    directory = _fake_package(tmp_path, "askedpkg")  # the compiled file is newer: not stale
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    monkeypatch.setenv(accel.PURE_ENV, "1")
    assert accel.select("askedpkg", directory, ["mod"]) is True
    assert importlib.import_module("askedpkg.mod").VALUE == "source"


def test_without_a_reason_select_keeps_the_compiled_module(tmp_path, monkeypatch):
    directory = _fake_package(tmp_path, "keptpkg")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    monkeypatch.delenv(accel.PURE_ENV, raising=False)
    assert accel.select("keptpkg", directory, ["mod"]) is False
    with pytest.raises(ImportError):  # Python tries the (broken) compiled file first
        importlib.import_module("keptpkg.mod")


def _answers_in_subprocess(env: dict[str, str]) -> dict:
    code = textwrap.dedent(
        f"""
        import json
        from exprgraph import dims
        texts = {EXPRESSIONS!r}
        print(json.dumps({{"compiled": list(dims.compiled_modules()),
                           "answers": [dims.simplify_expression(t) for t in texts]}}))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_pure_and_current_builds_give_the_same_answers():
    env = {k: v for k, v in os.environ.items() if k != accel.PURE_ENV}
    pure = _answers_in_subprocess({**env, accel.PURE_ENV: "1"})
    current = _answers_in_subprocess(env)
    assert pure["compiled"] == []
    assert current["compiled"] in ([], list(accel.COMPILED_MODULES))  # the build compiles all or none
    assert pure["answers"] == current["answers"] == [dims.simplify_expression(t) for t in EXPRESSIONS]


@pytest.mark.skipif(not os.environ.get("EXPRGRAPH_EXPECT_COMPILED"), reason="only where the build must be compiled")
def test_the_build_is_compiled_where_expected():
    # `make test` sets EXPRGRAPH_EXPECT_COMPILED: a build that fell back to pure Python fails here
    assert dims.compiled_modules() == accel.COMPILED_MODULES
