"""The build settings: finite positive numbers only, else a named error, from the environment or a keyword."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import exprgraph as eg
from exprgraph.compile import cache, cbuild, settings
from exprgraph.compile import compile as eg_compile
from exprgraph.errors import SettingError

x = eg.Symbol("x")

#: what a number setting must refuse: no limit in disguise (nan, inf), nothing, negatives, words
BAD_NUMBERS = ["nan", "NaN", "inf", "-inf", "Infinity", "1e999", "0", "0.0", "-5", "-1e-9", "soon", "1,5", "0x10"]


@pytest.mark.parametrize("text", BAD_NUMBERS)
def test_a_bad_build_timeout_in_the_environment_is_refused(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setenv("EXPRGRAPH_BUILD_TIMEOUT", text)
    with pytest.raises(SettingError, match=r"\$EXPRGRAPH_BUILD_TIMEOUT must be a finite positive number") as info:
        cbuild.build_timeout()
    assert isinstance(info.value, ValueError) and info.value.setting == "$EXPRGRAPH_BUILD_TIMEOUT"


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, 0, 0.0, -1, True, "10", 1j])
def test_a_bad_build_timeout_keyword_is_refused(value: object) -> None:
    # before anything is lowered, built or looked up in the cache, whatever the backend
    for backend in ("numpy", "c"):
        with pytest.raises(SettingError, match="build_timeout must be a finite positive number"):
            eg_compile(x * 2.0, [x], backend, build_timeout=value)  # type: ignore[arg-type]


def test_a_bad_build_timeout_is_reported_even_for_a_cached_library(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXPRGRAPH_BUILD_TIMEOUT", "nan")
    with pytest.raises(SettingError):
        cbuild.build_library("int eg_probe(int v) { return v; }\n")
    with pytest.raises(SettingError):
        cbuild.library_path(["cc"], (), "int eg_probe(int v) { return v; }\n")


@pytest.mark.parametrize("text, value", [("", 600.0), ("2.5", 2.5), (" 30 ", 30.0), ("1e-3", 0.001)])
def test_good_build_timeouts(monkeypatch: pytest.MonkeyPatch, text: str, value: float) -> None:
    monkeypatch.setenv("EXPRGRAPH_BUILD_TIMEOUT", text)
    assert cbuild.build_timeout() == value
    assert cbuild.build_timeout(7) == 7.0  # the keyword wins over the environment


@pytest.mark.parametrize("text", [*BAD_NUMBERS, "G", "-1G", "0.1", "1e400k", "nanM", "infG", "2Q"])
def test_a_bad_cache_size_is_refused(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setenv("EXPRGRAPH_CACHE_SIZE", text)
    with pytest.raises(SettingError, match=r"\$EXPRGRAPH_CACHE_SIZE must be a finite positive size"):
        cache.size_cap()


@pytest.mark.parametrize(
    "text, value",
    [("", 1 << 30), ("200M", 200 << 20), ("2G", 2 << 30), ("1.5g", 3 << 29), ("1024", 1024), (" 4k ", 4096)],
)
def test_good_cache_sizes(monkeypatch: pytest.MonkeyPatch, text: str, value: int) -> None:
    monkeypatch.setenv("EXPRGRAPH_CACHE_SIZE", text)
    assert cache.size_cap() == value


def test_a_bad_cap_argument_is_refused() -> None:
    for cap in (0, -1, 1.5, True):
        with pytest.raises(SettingError, match="cap must be a positive int"):
            settings.size_cap(cap)


_numbers = st.floats(allow_nan=True, allow_infinity=True).map(repr)
_texts = st.one_of(st.text(max_size=12), _numbers, st.tuples(_numbers, st.sampled_from("kKmMgGtTx")).map("".join))


@given(_texts)
def test_any_text_is_a_size_or_a_setting_error(text: str) -> None:
    try:
        value = settings.parse_size(text)
    except SettingError:
        return
    assert isinstance(value, int) and value >= 1


@given(_texts)
def test_any_text_is_a_timeout_or_a_setting_error(text: str) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EXPRGRAPH_BUILD_TIMEOUT", text.replace("\0", ""))
        try:
            value = settings.build_timeout()
        except SettingError:
            return
    assert math.isfinite(value) and value > 0
