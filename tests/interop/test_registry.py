"""The converter registry: a converter module registers itself once, by tool and direction."""

from __future__ import annotations

import pytest

from exprgraph.interop import registry
from exprgraph.interop.registry import Converter, converters, get_converter, register_converter


def _to_text(terms: object) -> str:
    return str(terms)


def _from_text(text: str) -> str:
    return text


def test_a_converter_is_found_by_tool_and_direction(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_CONVERTERS", {})
    to = register_converter(Converter("text", "to", _to_text, "none"))
    back = register_converter(Converter("text", "from", _from_text, "none"))
    assert get_converter("text", "to") is to and get_converter("text", "from") is back
    assert converters() == (back, to)
    assert get_converter("text", "to").function(1) == "1"


def test_unknown_and_twice_registered_converters_are_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_CONVERTERS", {})
    with pytest.raises(ValueError, match="known: none"):
        get_converter("text", "to")
    with pytest.raises(ValueError, match="direction"):
        register_converter(Converter("text", "sideways", _to_text, "none"))
    register_converter(Converter("text", "to", _to_text, "none"))
    with pytest.raises(ValueError, match="registered already"):
        register_converter(Converter("text", "to", str, "none"))
    with pytest.raises(ValueError, match="known: to text"):
        get_converter("text", "from")
