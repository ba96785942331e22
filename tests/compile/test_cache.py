"""The build cache as a trust boundary: planted libraries are never loaded, builds clean up after themselves."""

from __future__ import annotations

import gc
import os
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import threading
import time
import warnings
import weakref
from pathlib import Path

import numpy as np
import pytest

import exprgraph as eg
from exprgraph.compile import builddir, cache, cbuild, runner
from exprgraph.compile import compile as eg_compile
from exprgraph.errors import BuildTimeoutError, CacheSecurityError, CompileError, CompilerNotFoundError
from time_limit import time_limit

CC = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
pytestmark = pytest.mark.skipif(CC is None or not hasattr(os, "getuid"), reason="needs a C compiler on POSIX")

x, y = eg.symbols("x y")


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A new private cache, nothing loaded in this process, no remembered flag choice."""
    directory = tmp_path / "cache"
    monkeypatch.setenv("EXPRGRAPH_CACHE", str(directory))
    monkeypatch.delenv("EXPRGRAPH_CACHE_SIZE", raising=False)
    monkeypatch.setattr(cbuild, "_loaded", weakref.WeakValueDictionary())
    monkeypatch.setattr(cache, "_opened", {})
    return directory


def _pid_dead(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as fh:
            return any(line.startswith("State:") and "Z" in line.split()[1] for line in fh)
    except FileNotFoundError:
        return True


def _wait_dead(pid: int, seconds: float = 10.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if _pid_dead(pid):
            return True
        time.sleep(0.05)
    return False


def _script(path: Path, body: str) -> str:
    path.write_text("#!/bin/sh\n" + textwrap.dedent(body))
    path.chmod(0o755)
    return str(path)


# -- the directory -----------------------------------------------------------------------------------


def test_cache_is_created_private(fresh: Path) -> None:
    fn = eg_compile(x * 2.5 + 1.0, [x], backend="c")
    assert float(fn(2.0)) == 6.0
    assert stat.S_IMODE(os.stat(fresh).st_mode) == 0o700
    for p in fresh.iterdir():
        if p.suffix in (".so", ".sha256"):
            assert not os.stat(p).st_mode & (stat.S_IWGRP | stat.S_IWOTH)


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o702])
def test_an_explicit_cache_writable_by_others_is_refused(fresh: Path, mode: int) -> None:
    fresh.mkdir()
    fresh.chmod(mode)
    with pytest.raises(CacheSecurityError, match=str(fresh)):
        eg_compile(x * 3.25, [x], backend="c")


def test_a_symlinked_cache_is_refused(fresh: Path, tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    fresh.symlink_to(real)
    with pytest.raises(CacheSecurityError, match="symbolic link"):
        eg_compile(x * 3.5, [x], backend="c")


def test_a_cache_owned_by_someone_else_is_refused(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fresh.mkdir(mode=0o700)
    monkeypatch.setattr(cache, "current_uid", lambda: os.getuid() + 1)  # we are now "another user"
    with pytest.raises(CacheSecurityError, match="owned by uid"):
        eg_compile(x * 3.75, [x], backend="c")


def test_a_parent_others_can_rename_in_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # no sticky bit: anyone may move our directory away and put theirs in its place
    monkeypatch.setenv("EXPRGRAPH_CACHE", str(shared / "cache"))
    monkeypatch.setattr(cache, "_opened", {})
    with pytest.raises(CacheSecurityError, match="rename"):
        cache.open_cache()


def test_an_unsafe_default_falls_back_to_a_private_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the attack of the report: the predictable default pre-created world-writable by someone else
    monkeypatch.delenv("EXPRGRAPH_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    planted = tmp_path / "xdg" / "exprgraph"
    planted.mkdir(parents=True)
    planted.chmod(0o777)
    monkeypatch.setattr(cache, "_opened", {})
    monkeypatch.setattr(cbuild, "_loaded", weakref.WeakValueDictionary())
    with pytest.warns(RuntimeWarning, match="cannot be used"):
        directory = cache.open_cache()
    assert directory != planted and stat.S_IMODE(os.stat(directory).st_mode) == 0o700
    fn = eg_compile(x * 4.5, [x], backend="c")
    assert float(fn(2.0)) == 9.0
    assert not any(planted.iterdir())  # nothing was written to, or read from, the planted directory


def test_a_default_that_cannot_be_created_falls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.delenv("EXPRGRAPH_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    monkeypatch.setattr(cache, "_opened", {})
    with pytest.warns(RuntimeWarning, match="cannot be created"):
        directory = cache.open_cache()
    assert directory.is_dir() and stat.S_IMODE(os.stat(directory).st_mode) == 0o700


ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
#: a uid that is neither root nor the user running the tests
STRANGER = 4242


@pytest.mark.skipif(not ROOT, reason="giving a symlink to another user needs root (os.lchown)")
@pytest.mark.parametrize("explicit", [True, False])
def test_a_cache_reached_through_another_users_symlink_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, explicit: bool
) -> None:
    # the stranger's link may be re-pointed at any time: to a directory where they planted a library
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    os.lchown(link, STRANGER, STRANGER)
    monkeypatch.setattr(cache, "_opened", {})
    if explicit:
        monkeypatch.setenv("EXPRGRAPH_CACHE", str(link / "cache"))
        with pytest.raises(CacheSecurityError, match=f"symbolic link {link}, owned by uid {STRANGER}"):
            cache.open_cache()
    else:
        monkeypatch.delenv("EXPRGRAPH_CACHE", raising=False)
        monkeypatch.setenv("XDG_CACHE_HOME", str(link))
        with pytest.warns(RuntimeWarning, match=f"symbolic link {link}, owned by uid {STRANGER}"):
            assert not str(cache.open_cache()).startswith(str(link))
    assert list(real.iterdir()) == []  # nothing was created through the link either
    os.lchown(link, os.getuid(), os.getgid())  # the same link, ours: accepted
    monkeypatch.setattr(cache, "_opened", {})
    assert cache.open_cache() == link / ("cache" if explicit else "exprgraph")


@pytest.mark.skipif(not ROOT, reason="giving a symlink to another user needs root (os.lchown)")
def test_a_foreign_symlink_met_inside_a_symlink_target_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ours -> hop/deeper, where hop is the stranger's: every link on the way counts, not just the first
    (tmp_path / "real" / "deeper").mkdir(parents=True, mode=0o700)
    hop = tmp_path / "hop"
    hop.symlink_to("real")  # relative target
    os.lchown(hop, STRANGER, STRANGER)
    ours = tmp_path / "ours"
    ours.symlink_to(tmp_path / "hop" / "deeper")
    monkeypatch.setenv("EXPRGRAPH_CACHE", str(ours / "cache"))
    monkeypatch.setattr(cache, "_opened", {})
    with pytest.raises(CacheSecurityError, match=f"symbolic link {hop}, owned by uid {STRANGER}"):
        cache.open_cache()


def test_a_symlink_loop_on_the_way_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    monkeypatch.setenv("EXPRGRAPH_CACHE", str(tmp_path / "a" / "cache"))
    monkeypatch.setattr(cache, "_opened", {})
    with pytest.raises(CacheSecurityError, match="symbolic links"):
        cache.open_cache()


# -- the libraries ------------------------------------------------------------------------------------

_PLANT = """
#include <stdio.h>
#include <stdint.h>
__attribute__((constructor)) static void planted(void) {
    FILE *f = fopen("MARKER", "w");
    if (f) { fputs("planted code ran", f); fclose(f); }
}
int eg_kernel(int64_t n, void *const *in, const int64_t *step, void *const *out) {
    double *o = (double *)out[0];
    for (int64_t i = 0; i < n; i++) o[i] = 666.0;
    return 0;
}
"""


def _planted_library(tmp_path: Path, marker: Path) -> Path:
    src = tmp_path / "plant.c"
    src.write_text(_PLANT.replace("MARKER", str(marker)))
    out = tmp_path / "plant.so"
    subprocess.run([CC, "-shared", "-fPIC", "-o", str(out), str(src)], check=True)
    return out


def _only_library(directory: Path) -> Path:
    (lib,) = [p for p in directory.iterdir() if p.suffix == ".so"]
    return lib


def _built_then_unloaded(f: eg.Term, inputs: list, directory: Path) -> Path:
    """Build ``f``, then forget it as a new process would: the library on disk, nothing loaded."""
    fn = eg_compile(f, inputs, backend="c")
    victim = _only_library(directory)
    del fn
    gc.collect()
    cbuild._loaded.clear()
    return victim


def test_a_replaced_library_is_never_loaded(fresh: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = x * y + 1.25
    fn = eg_compile(f, [x, y], backend="c")
    assert float(fn(2.0, 3.0)) == 7.25
    victim = _only_library(fresh)
    recorded = cache.record_path(victim).read_text()
    marker = tmp_path / "marker"
    del fn  # the victim's first process ends (writing into a mapped library would crash it)
    gc.collect()
    shutil.copyfile(_planted_library(tmp_path, marker), victim)  # swapped in after the first build
    monkeypatch.setattr(cbuild, "_loaded", weakref.WeakValueDictionary())  # "the victim's next process"
    again = eg_compile(f, [x, y], backend="c")
    assert float(again(2.0, 3.0)) == 7.25
    assert not marker.exists()
    assert cache.record_path(victim).read_text() == recorded  # rebuilt: the content matches its record again
    assert cache.check_library(victim)


def test_a_library_planted_before_the_first_build_is_never_loaded(fresh: Path, tmp_path: Path) -> None:
    f = x - 2.0 * y
    marker = tmp_path / "marker"
    victim = _built_then_unloaded(f, [x, y], fresh)
    # the attacker also forges the record: a record they wrote has their owner, ours is checked
    for p in (victim, cache.record_path(victim)):
        p.unlink()
    shutil.copyfile(_planted_library(tmp_path, marker), victim)
    assert not cache.check_library(victim)  # no record: not trusted
    fn = eg_compile(f, [x, y], backend="c")
    assert float(fn(1.0, 1.0)) == -1.0 and not marker.exists()


@pytest.mark.parametrize("flags_known", [True, False], ids=["flags known", "flags chosen again"])
def test_a_library_owned_by_someone_else_raises(
    fresh: Path, monkeypatch: pytest.MonkeyPatch, flags_known: bool
) -> None:
    # flags not known yet (a new process): the flag fallback runs, retrying with weaker flags when the
    # compiler refuses some. A library it may not load is no such reason: it must not be answered by
    # building (and remembering) a weaker library
    monkeypatch.setattr(cbuild, "_chosen", {})
    f = x * 5.5
    victim = _built_then_unloaded(f, [x], fresh)
    chosen = dict(cbuild._chosen) if flags_known else {}
    monkeypatch.setattr(cbuild, "_chosen", dict(chosen))
    real = cache._lstat

    def foreign(path: Path) -> os.stat_result:
        st = real(path)
        if Path(path) == victim:
            fields = list(st)
            fields[stat.ST_UID] = os.getuid() + 1
            return os.stat_result(fields)
        return st

    monkeypatch.setattr(cache, "_lstat", foreign)
    with pytest.raises(CacheSecurityError, match="owned by uid"):
        eg_compile(f, [x], backend="c")
    assert cbuild._chosen == chosen  # no weaker flag set remembered
    assert list(fresh.glob("*.so")) == [victim]  # and no weaker library built


def test_a_symlinked_library_raises(fresh: Path, tmp_path: Path) -> None:
    f = x * 6.5
    victim = _built_then_unloaded(f, [x], fresh)
    elsewhere = tmp_path / "elsewhere.so"
    shutil.copyfile(victim, elsewhere)
    victim.unlink()
    victim.symlink_to(elsewhere)
    with pytest.raises(CacheSecurityError):
        eg_compile(f, [x], backend="c")


@pytest.mark.parametrize("which", ["library", "record"])
def test_a_fifo_in_place_of_a_cache_file_is_refused_without_hanging(fresh: Path, which: str) -> None:
    f = x * 14.5
    victim = _built_then_unloaded(f, [x], fresh)
    target = victim if which == "library" else cache.record_path(victim)
    target.unlink()
    os.mkfifo(target, 0o600)  # opening a FIFO for reading waits for a writer that never comes
    with time_limit(20), pytest.raises(CacheSecurityError, match="not a regular file"):
        eg_compile(f, [x], backend="c")


def test_a_fifo_in_place_of_a_lock_is_refused(fresh: Path) -> None:
    directory = cache.open_cache()
    os.mkfifo(directory / "eg_somekey.lock", 0o600)
    with time_limit(20), pytest.raises(CacheSecurityError, match="not a regular file"):
        with cache.key_lock(directory, "somekey"):
            pass


# -- one handle per library --------------------------------------------------------------------------


def test_one_handle_per_library_released_when_unused(fresh: Path) -> None:
    f = x * 7.25 - y
    a = eg_compile(f, [x, y], backend="c")
    b = eg_compile(f, [x, y], backend="c")
    assert a.library is b.library
    held = cbuild.loaded_libraries()
    assert held >= 1
    del a, b
    gc.collect()
    assert cbuild.loaded_libraries() == held - 1


def test_many_short_lived_functions_do_not_pile_up(fresh: Path) -> None:
    before = cbuild.loaded_libraries()
    for k in range(5):
        fn = eg_compile(x * (k + 0.5), [x], backend="c")
        assert float(fn(2.0)) == 2.0 * (k + 0.5)
        del fn
        gc.collect()
    assert cbuild.loaded_libraries() == before


# -- concurrency ---------------------------------------------------------------------------------------


def test_threads_build_one_function_once(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    eg_compile(x + 0.125, [x], backend="c")  # settle the flag choice first
    calls = []
    real = cbuild._compile
    monkeypatch.setattr(cbuild, "_compile", lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    f = eg.sin(x) * 8.5 + y
    results: list[float] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            results.append(float(eg_compile(f, [x, y], backend="c")(0.0, 1.0)))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and results == [1.0] * 6
    assert len(calls) == 1


def test_processes_build_one_function_once(fresh: Path, tmp_path: Path) -> None:
    log = tmp_path / "builds.log"
    wrapper = _script(
        tmp_path / "cc-logging",
        f"""\
        case "$*" in *" -o "*) echo build >> {log};; esac
        exec {CC} "$@"
        """,
    )
    program = textwrap.dedent(
        """\
        import exprgraph as eg
        from exprgraph.compile import compile
        x = eg.Symbol("x")
        print(float(compile(eg.exp(x) * 9.75, [x], backend="c")(0.0)))
        """
    )
    env = {**os.environ, "CC": wrapper, "EXPRGRAPH_CACHE": str(fresh)}
    procs = [
        subprocess.Popen([sys.executable, "-c", program], env=env, stdout=subprocess.PIPE, text=True) for _ in range(3)
    ]
    outs = [p.communicate(timeout=300)[0].strip() for p in procs]
    assert outs == ["9.75"] * 3
    # one build of the function (the first flag set tried is accepted, so no other build happens)
    assert log.read_text().count("build") == 1


# -- builds that clean up ------------------------------------------------------------------------------


def _slow_compiler(tmp_path: Path) -> tuple[str, Path]:
    pidfile = tmp_path / "child.pid"
    wrapper = _script(
        tmp_path / "cc-slow",
        f"""\
        case "$*" in *--version*) exec {CC} --version;; esac
        sleep 300 &
        echo $! > {pidfile}.part && mv {pidfile}.part {pidfile}  # the pid file appears whole
        wait
        """,
    )
    return wrapper, pidfile


def _no_leftovers(directory: Path) -> None:
    left = [p.name for p in directory.iterdir() if not p.name.endswith(".lock")]
    assert left == [], left


def test_a_build_past_its_time_limit_kills_the_whole_compiler(
    fresh: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrapper, pidfile = _slow_compiler(tmp_path)
    monkeypatch.setenv("CC", wrapper)
    monkeypatch.setenv("EXPRGRAPH_BUILD_TIMEOUT", "1.5")
    monkeypatch.setattr(cbuild, "_chosen", {})
    start = time.monotonic()
    with pytest.raises(BuildTimeoutError, match="EXPRGRAPH_BUILD_TIMEOUT"):
        eg_compile(x * 10.5, [x], backend="c")
    assert time.monotonic() - start < 30
    assert _wait_dead(int(pidfile.read_text()))  # the "cc1" the driver started is gone too
    _no_leftovers(fresh)


def test_an_interrupted_build_kills_the_compiler_and_cleans_up(
    fresh: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrapper, pidfile = _slow_compiler(tmp_path)
    monkeypatch.setenv("CC", wrapper)
    monkeypatch.setattr(cbuild, "_chosen", {})

    def interrupted(proc: subprocess.Popen, timeout: float) -> int:
        end = time.monotonic() + 10
        while not pidfile.exists() and time.monotonic() < end:
            time.sleep(0.02)
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "_wait", interrupted)
    with pytest.raises(KeyboardInterrupt):
        eg_compile(x * 11.5, [x], backend="c")
    assert _wait_dead(int(pidfile.read_text()))
    _no_leftovers(fresh)


def test_a_compiler_that_cannot_start_is_reported_as_missing(tmp_path: Path) -> None:
    (result,) = runner.run_compilers([[str(tmp_path / "no-such-cc"), "-c", "x.c"]], 30.0, tmp_path)
    with pytest.raises(CompilerNotFoundError, match="no-such-cc"):
        runner.check_result(result)


def test_a_forked_child_lets_go_of_the_watchdog_pipe() -> None:
    # a child that kept a copy of the write end would keep its parent's compilers alive past the parent
    read_end = runner._watch_fd()
    write_end = runner._watch_fds[1]
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.fstat(write_end)
        except OSError:
            os._exit(0 if runner._watch_fds == [] else 2)
        os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert runner._watch_fds == [read_end, write_end]  # the parent keeps its own


def test_a_failed_build_leaves_no_files(fresh: Path) -> None:
    with pytest.raises(CompileError, match="failed"):
        cbuild.library_path(cbuild.find_compiler(), cbuild.BASE_FLAGS, "this is not C;")
    _no_leftovers(fresh)


def test_translation_units_are_compiled_and_linked(fresh: Path) -> None:
    units = [
        "#include <stdint.h>\nint64_t eg_part(int64_t v) { return 3 * v; }\n",
        "#include <stdint.h>\nint64_t eg_part(int64_t);\nint64_t eg_whole(int64_t v) { return eg_part(v) + 1; }\n",
    ]
    import ctypes

    lib, path = cbuild.build_library(units, opt="-O1")
    fn = lib.function("eg_whole", ctypes.c_int64, [ctypes.c_int64])
    assert fn(5) == 16
    assert path.parent == fresh


_CHILD_BUILD = """\
import signal, sys
import exprgraph as eg
from exprgraph.compile import compile
if sys.argv[1] == "handler":
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(7))
x = eg.Symbol("x")
compile(x * 16.5, [x], backend="c")
"""


def _builder(fresh: Path, wrapper: str, pidfile: Path, mode: str = "default") -> subprocess.Popen:
    """A Python process building with the slow compiler, returned once its compiler runs."""
    env = {**os.environ, "CC": wrapper, "EXPRGRAPH_CACHE": str(fresh), "EXPRGRAPH_PROGRESS": "0"}
    proc = subprocess.Popen([sys.executable, "-c", _CHILD_BUILD, mode], env=env)
    end = time.monotonic() + 120
    while not pidfile.exists():
        assert proc.poll() is None, "the building process ended before its compiler started"
        assert time.monotonic() < end, "the slow compiler never started"
        time.sleep(0.05)
    return proc


def _build_dirs(directory: Path) -> list[Path]:
    return [p for p in directory.iterdir() if p.name.startswith(".build-")]


def test_a_builder_killed_outright_takes_its_compilers_along(fresh: Path, tmp_path: Path) -> None:
    wrapper, pidfile = _slow_compiler(tmp_path)
    proc = _builder(fresh, wrapper, pidfile)
    proc.kill()  # SIGKILL: no Python code of the builder runs again
    proc.wait(timeout=30)
    assert _wait_dead(int(pidfile.read_text()))  # the compiler's own child (the "cc1") is gone
    (left,) = _build_dirs(fresh)  # nothing could remove this one...
    eg_compile(x * 16.75, [x], backend="c")
    assert not left.exists()  # ...until the next build swept it


def test_sigterm_unwinds_a_build_and_still_ends_the_process(fresh: Path, tmp_path: Path) -> None:
    wrapper, pidfile = _slow_compiler(tmp_path)
    proc = _builder(fresh, wrapper, pidfile)
    proc.terminate()
    assert proc.wait(timeout=30) == -signal.SIGTERM  # ended by SIGTERM, as without exprgraph
    assert _wait_dead(int(pidfile.read_text()))
    assert _build_dirs(fresh) == []  # removed at once, not left for the next build


def test_a_sigterm_handler_of_the_callers_own_is_kept(fresh: Path, tmp_path: Path) -> None:
    wrapper, pidfile = _slow_compiler(tmp_path)
    proc = _builder(fresh, wrapper, pidfile, "handler")
    proc.terminate()
    assert proc.wait(timeout=30) == 7  # the caller's handler ran (sys.exit(7)), not ours
    assert _wait_dead(int(pidfile.read_text()))
    assert _build_dirs(fresh) == []


def test_stale_build_directories_and_temporary_files_are_swept(fresh: Path, tmp_path: Path) -> None:
    directory = cache.open_cache()
    ended = subprocess.Popen(["true"])
    ended.wait()
    host = builddir._host()
    old = time.time() - 2 * cbuild.DEFAULT_TIMEOUT
    entries = {
        "dead owner": directory / f".build-{host}-{ended.pid}-a",
        "live owner": directory / f".build-{host}-{os.getppid()}-b",
        "this process": directory / f".build-{host}-{os.getpid()}-c",
        "other host, young": directory / ".build-0000abcd-1-d",
        "other host, old": directory / ".build-0000abcd-1-e",
        "no owner, old": directory / ".build-f",
    }
    for path in entries.values():
        path.mkdir()
        (path / "unit0.c").write_text("int x;")
    for name in ("other host, old", "no owner, old"):
        os.utime(entries[name], (old, old))
    young_tmp, old_tmp = directory / ".tmp-young", directory / ".tmp-old"
    young_tmp.write_text("half")
    old_tmp.write_text("half")
    os.utime(old_tmp, (old, old))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("not the cache's")
    (directory / ".build-link").symlink_to(elsewhere)  # a link is never followed, never swept
    assert builddir.sweep_stale(directory, cbuild.DEFAULT_TIMEOUT) == 4
    gone = {name for name, path in entries.items() if not path.exists()}
    assert gone == {"dead owner", "other host, old", "no owner, old"}
    assert young_tmp.exists() and not old_tmp.exists()
    assert (elsewhere / "keep.txt").exists()


# -- the cap ---------------------------------------------------------------------------------------------


def test_the_cache_keeps_the_most_recently_used_under_its_cap(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fns = [eg_compile(x * (k + 0.25), [x], backend="c") for k in range(2)]
    one = max(p.stat().st_size for p in fresh.glob("*.so"))
    monkeypatch.setenv("EXPRGRAPH_CACHE_SIZE", str(int(2.5 * one)))
    time.sleep(0.02)
    fns.append(eg_compile(x * 2.25, [x], backend="c"))
    time.sleep(0.02)
    fns.append(eg_compile(x * 3.25, [x], backend="c"))
    libs = list(fresh.glob("*.so"))
    assert len(libs) <= 2 and sum(p.stat().st_size for p in libs) <= 2.5 * one
    assert {cache.record_path(p).exists() for p in libs} == {True}
    newest = fns[-1].library.path
    assert newest in libs
    assert float(fns[0](2.0)) == 0.5  # a library removed from disk stays loaded where it is used


def test_size_cap_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    for text, value in [("", cache.DEFAULT_CAP), ("200M", 200 << 20), ("2G", 2 << 30), ("1024", 1024)]:
        monkeypatch.setenv("EXPRGRAPH_CACHE_SIZE", text)
        assert cache.size_cap() == value
    monkeypatch.setenv("EXPRGRAPH_CACHE_SIZE", "lots")
    with pytest.raises(ValueError, match="EXPRGRAPH_CACHE_SIZE"):
        cache.size_cap()


# -- the command line ---------------------------------------------------------------------------------


def test_cache_info_and_clear(fresh: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from exprgraph.cli import main

    fn = eg_compile(x * 12.5, [x], backend="c")
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert str(fresh) in out and "libraries: 1" in out and "ok" in out
    assert main(["cache", "clear"]) == 0
    assert "removed 1" in capsys.readouterr().out
    assert not list(fresh.glob("*.so"))
    assert np.isclose(float(fn(2.0)), 25.0)  # still loaded here
    fresh.chmod(0o777)
    try:
        assert main(["cache", "clear"]) == 2
        assert "refusing" in capsys.readouterr().err
    finally:
        fresh.chmod(0o700)


def test_warnings_are_not_raised_for_a_good_cache(fresh: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cache.open_cache() == fresh
