"""Progress on long work: silent within a second, then rate-limited lines on stderr and a closing line."""

from __future__ import annotations

import io
import os
import stat
import sys
from pathlib import Path

import pytest

import exprgraph as eg
from exprgraph import progress
from exprgraph.progress import LOG_INTERVAL, Progress


class FakeClock:
    """A clock that moves only when told to (or by ``step`` seconds at every reading)."""

    def __init__(self, step: float = 0.0) -> None:
        self.now = 100.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_silent_within_the_delay() -> None:
    clock, out = FakeClock(), io.StringIO()
    with Progress("quick", clock=clock, stream=out, enabled=True) as p:
        for k in range(100):
            clock.now += 0.009  # 0.9 s in all
            p.update(k)
    assert out.getvalue() == ""


def test_reports_after_the_delay_at_most_once_per_interval_then_a_closing_line() -> None:
    clock, out = FakeClock(), io.StringIO()
    with Progress("long", total=40, clock=clock, stream=out, enabled=True) as p:
        for k in range(40):
            clock.now += 0.125  # 5 s in all
            p.update(k + 1, note="working")
    lines = out.getvalue().splitlines()
    assert lines[0] == "exprgraph: long: 8/40 done, working, 1.0 s"
    assert lines[1].startswith("exprgraph: long: 16/40 done") and len(lines) == 6  # 1, 2, 3, 4, 5 s + the end
    assert lines[-1] == "exprgraph: long: done in 5.0 s"
    assert p.shown == 6


def test_a_task_that_outlasts_the_delay_without_updates_still_closes() -> None:
    clock, out = FakeClock(), io.StringIO()
    with pytest.raises(RuntimeError), Progress("blocked", clock=clock, stream=out, enabled=True):
        clock.now += 2.5
        raise RuntimeError("fails")
    assert out.getvalue() == "exprgraph: blocked: stopped in 2.5 s\n"


def test_switched_off_by_the_environment_or_the_parameter(monkeypatch: pytest.MonkeyPatch) -> None:
    for value in ("0", "off", "False"):
        monkeypatch.setenv(progress.ENV, value)
        assert not progress.progress_enabled()
        clock, out = FakeClock(), io.StringIO()
        with Progress("off", clock=clock, stream=out) as p:
            clock.now += 5
            p.update(1)
        assert out.getvalue() == ""
    monkeypatch.setenv(progress.ENV, "1")
    clock, out = FakeClock(), io.StringIO()
    with Progress("forced off", clock=clock, stream=out, enabled=False) as p:
        clock.now += 5
        p.update(1)
    assert out.getvalue() == ""
    monkeypatch.delenv(progress.ENV)
    assert progress.progress_enabled()


def test_a_closed_stream_never_breaks_the_work() -> None:
    clock, out = FakeClock(), io.StringIO()
    out.close()
    with Progress("closed", clock=clock, stream=out, enabled=True) as p:
        clock.now += 3
        p.update(1)
    assert not p.enabled


def test_saturation_reports_its_iterations(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    from exprgraph.egraph import saturate
    from exprgraph.egraph.mathsuite import rules

    monkeypatch.setattr(progress, "CLOCK", FakeClock(step=0.5))  # every reading half a second later
    monkeypatch.delenv(progress.ENV, raising=False)
    x, y = eg.symbols("x y")
    saturate((x + y) * (x - y) + x * 0 + 1, rules(), iter_limit=4, node_limit=100_000, time_limit=60)
    err = capsys.readouterr().err
    assert "exprgraph: saturating: " in err and "/4 done" in err and "e-nodes" in err
    assert err.rstrip().splitlines()[-1].startswith("exprgraph: saturating: done in")


def _slow_compiler(tmp: Path) -> str:
    """A C compiler that takes a second and a half, then compiles."""
    from exprgraph.compile.cbuild import find_compiler

    real = " ".join(find_compiler())
    script = tmp / "slowcc"
    script.write_text(f'#!/bin/sh\nsleep 1.5\nexec {real} "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


@pytest.mark.skipif(sys.platform == "win32", reason="a shell script compiler")
def test_a_slow_c_build_reports_on_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture
) -> None:
    from exprgraph.compile import cbuild
    from exprgraph.compile import compile as eg_compile
    from exprgraph.errors import CompilerNotFoundError

    try:
        cc = _slow_compiler(tmp_path)
    except CompilerNotFoundError:
        pytest.skip("no C compiler")
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    monkeypatch.setenv("EXPRGRAPH_CACHE", str(cache))
    monkeypatch.setenv("CC", cc)
    monkeypatch.delenv(progress.ENV, raising=False)
    monkeypatch.setattr(cbuild, "_chosen", {})
    x = eg.Symbol("x")
    assert float(eg_compile(x * 12.25, [x], backend="c")(2.0)) == 24.5
    err = capfd.readouterr().err
    assert "exprgraph: building C (1 unit" in err and "compiling" in err and "done in" in err
    # a build served from the cache is quick: nothing printed
    cbuild._loaded.clear()
    eg_compile(x * 12.25, [x], backend="c")
    assert capfd.readouterr().err == ""
    assert os.environ["CC"] == cc


def test_reports_to_a_log_file_are_spaced_out(monkeypatch: pytest.MonkeyPatch) -> None:
    # stderr that is not a terminal (CI, a redirected run) gets a line per LOG_INTERVAL, not per second
    clock, log = FakeClock(), io.StringIO()
    monkeypatch.setattr(sys, "stderr", log)
    with Progress("logged", clock=clock, enabled=True) as p:
        for _ in range(600):
            clock.now += 0.1  # 60 s in all
            p.update()
    lines = log.getvalue().splitlines()
    assert p.interval == LOG_INTERVAL and len(lines) == 5  # 1, 16, 31, 46 s + the end
