"""KernelErrors beyond the parse-error table of tests/test_parse_errors.py: bad cases, bad gradients, limits.

Each carries the position of the fault.
"""

from __future__ import annotations

import json
import re

import pytest

from exprgraph.errors import KernelError
from exprgraph.tensor import grad, grad_kernel, load_case, parse_kernel


def test_index_division_nesting_is_bounded():
    text = "A<4>[i] = B<16>[" + "(" * 40 + "i" + " // 2)" * 40 + "];"
    with pytest.raises(KernelError, match="more than 32 deep") as info:
        parse_kernel(text)
    assert info.value.pos == [m.start() for m in re.finditer("//", text)][32]
    # parentheses and sums nest without limit
    parse_kernel("A<4>[i] = B<16>[" + "(" * 40 + "i" + " + 0)" * 40 + "];")


def test_bad_data_type():
    with pytest.raises(KernelError, match="data_type"):
        parse_kernel("A<2>[i] = B<2>[i];", data_type="double")


def test_kernel_must_be_text():
    with pytest.raises(KernelError, match="string"):
        parse_kernel(b"A<2>[i] = B<2>[i];")  # type: ignore[arg-type]


# -- JSON cases ------------------------------------------------------------------------------------

GOOD = {"name": "k", "ins": ["B"], "outs": ["A"], "data_type": "float", "kernel": "A<2>[i] = B<2>[i];"}


@pytest.mark.parametrize(
    ("change", "message", "field"),
    [
        ({"name": 3}, "'name' must be a string", "name"),
        ({"name": "int"}, "reserved", "name"),
        ({"name": "a b"}, "not an identifier", "name"),
        ({"ins": "B"}, "'ins' must be a list", "ins"),
        ({"outs": ["A", "A"]}, "lists a name twice", "outs"),
        ({"ins": [1]}, "'ins' must be a list", "ins"),
        ({"ins": ["B-1"]}, "not an identifier", "ins"),
        ({"data_type": "double"}, "data_type must be", "data_type"),
        ({"kernel": ["A"]}, "'kernel' must be a string", "kernel"),
        ({"grad_to": "B"}, "'grad_to' must be a list", "grad_to"),
        ({"extra": 1}, "unknown field 'extra'", "extra"),
    ],
)
def test_bad_case_field_points_at_the_field(tmp_path, change, message, field):
    data = {**GOOD, **change}
    path = tmp_path / "case.json"
    source = json.dumps(data, indent=2)
    path.write_text(source)
    with pytest.raises(KernelError) as info:
        load_case(path)
    assert message in str(info.value)
    assert info.value.pos == source.index(f'"{field}"')


@pytest.mark.parametrize(
    ("change", "field"),
    [({"ins": ["B", "C"]}, "ins"), ({"outs": ["A", "Z"]}, "outs"), ({"grad_to": ["A"]}, "grad_to")],
)
def test_case_lists_naming_the_wrong_tensors(tmp_path, change, field):
    path = tmp_path / "case.json"
    source = json.dumps({**GOOD, **change}, indent=1)
    path.write_text(source)
    with pytest.raises(KernelError) as info:
        load_case(path)
    assert info.value.pos == source.index(f'"{field}"')


def test_missing_case_field(tmp_path):
    data = dict(GOOD)
    del data["outs"]
    path = tmp_path / "case.json"
    path.write_text(json.dumps(data))
    with pytest.raises(KernelError, match="no 'outs' field"):
        load_case(path)


def test_case_file_errors(tmp_path):
    with pytest.raises(KernelError, match="cannot read"):
        load_case(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "k",\n "ins": [}')
    with pytest.raises(KernelError, match="not JSON") as info:
        load_case(bad)
    assert info.value.pos == bad.read_text().index("}")
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"name": "\xe9"}')
    with pytest.raises(KernelError, match="UTF-8"):
        load_case(latin)
    arr = tmp_path / "list.json"
    arr.write_text("[1, 2]")
    with pytest.raises(KernelError, match="JSON object"):
        load_case(arr)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(KernelError):
        load_case(deep)


def test_case_kernel_error_points_into_the_kernel(tmp_path):
    path = tmp_path / "case.json"
    path.write_text(json.dumps({**GOOD, "kernel": "A<2>[i] = Q<2>[i];"}))
    with pytest.raises(KernelError, match="unknown tensor Q") as info:
        load_case(path)
    assert info.value.text == "A<2>[i] = Q<2>[i];" and info.value.pos == 10


def test_case_from_a_dict():
    assert load_case(dict(GOOD)).name == "k"
    with pytest.raises(KernelError, match="'name' must be a string"):
        load_case({**GOOD, "name": None})


# -- gradients -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kwargs", "grad_to", "message"),
    [
        ("A<2>[i] = B<2>[i];", {"data_type": "int"}, ["B"], "float kernel"),
        ("A<2>[i] = B<2>[i];", {}, [], "nothing to differentiate"),
        ("A<2>[i] = B<2>[i];", {}, ["C"], "not an input"),
        ("A<2>[i] = A<2>[i] + B<2>[i];", {"ins": ["A", "B"], "outs": ["A"]}, ["A"], "also writes it"),
        ("A<2>[i] = A<2>[i] + B<2>[i];", {"ins": ["B"], "outs": ["A"]}, ["B"], "accumulates"),
        ("A<2>[i] = B<2>[i]; A<2>[i] = C<2>[i];", {}, ["B"], "written twice"),
        ("A<2>[i] = B<2>[i]; D<2>[i] = A<2>[i];", {"ins": ["B"], "outs": ["A", "D"]}, ["B"], "read inputs only"),
        ("A<2>[i] = B<2>[i] * dB<2>[i];", {}, ["B"], "clash"),
        ("A<2>[i] = B<2>[i] * dA<2>[i];", {}, ["B"], "clash"),
    ],
)
def test_gradient_errors(text, kwargs, grad_to, message):
    kernel = parse_kernel(text, **kwargs)
    with pytest.raises(KernelError, match=message):
        grad_kernel(kernel, grad_to)


def test_gradient_error_positions():
    text = "A<2>[i] = B<2>[i];\nA<2>[i] = A<2>[i] + B<2>[i];"
    kernel = parse_kernel(text, ins=["B"], outs=["A"])
    with pytest.raises(KernelError) as info:
        grad_kernel(kernel, ["B"])
    assert info.value.pos == text.index("A<2>[i] = A")


def test_gradient_strategy_and_size_limit(monkeypatch):
    kernel = parse_kernel("A<2>[i] = B<2>[i] * B<2>[i] * B<2>[i];", grad_to=["B"])
    with pytest.raises(KernelError, match="strategy"):
        grad_kernel(kernel, strategy="scatter")
    monkeypatch.setattr(grad, "MAX_GRADIENT_NODES", 5)
    with pytest.raises(KernelError, match="too large"):
        grad_kernel(kernel)
