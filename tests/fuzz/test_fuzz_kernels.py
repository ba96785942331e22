"""Fuzzing the kernel language and case files: a kernel, or a KernelError with a position; over the size
limit (deep nesting, long texts, long tokens), SizeLimitError exactly past the limit."""

from __future__ import annotations

import pytest
from fuzz_support import FUZZ, FUZZ_MAX_TEXT, fuzz_inputs, kernels, mutated, oversized, read_within_limit
from hypothesis import given
from hypothesis import strategies as st

from exprgraph.core.tokens import ENV_MAX_TEXT
from exprgraph.errors import KernelError
from exprgraph.tensor import codegen_c, load_case, parse_kernel

KERNEL_TOKENS = [
    "A<2, 3>",
    "B<3>",
    "C<2>",
    "A",
    "B",
    "alpha<1>",
    "[i, j]",
    "[i]",
    "[j]",
    "[i + 1]",
    "[2*i]",
    "[i // 2]",
    "[k]",
    "=",
    ";",
    *"+-*/%(),<>[]",
    "//",
    "exp(",
    "log(",
    "max(",
    "1.5",
    "2",
    "0",
    "99999999999",
    "i",
    "j",
]


@FUZZ
@given(
    fuzz_inputs(kernels(), KERNEL_TOKENS),
    st.sampled_from(["float", "int"]),
)
def test_parse_kernel_raises_only_kernel_errors(text: str, data_type: str) -> None:
    try:
        kernel = parse_kernel(text, data_type=data_type)
    except KernelError as exc:
        assert exc.pos is None or 0 <= exc.pos <= len(text)
        return
    assert codegen_c(kernel)


#: right-hand sides to nest, repeat or lengthen (the kernels' tensors as kernels() declares them)
RIGHT_SIDES = mutated(
    st.sampled_from(["B<6, 5>[j, k] * 2.0", "C<4>[i] + exp(C<4>[i])", "max(C<4>[i], 1) - B<6, 5>[j, j]"]),
    KERNEL_TOKENS,
)


@FUZZ
@given(
    text=st.one_of(
        oversized(RIGHT_SIDES, "A<4, 6>[i, j] = {};"),  # a deep or long right-hand side
        oversized(kernels(), joiner=" "),  # many statements
    ),
    data_type=st.sampled_from(["float", "int"]),
)
def test_oversized_kernels_raise_only_named_errors(text: str, data_type: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_MAX_TEXT, str(FUZZ_MAX_TEXT))
    kernel = read_within_limit(lambda t: parse_kernel(t, data_type=data_type), text, KernelError)
    if kernel is not None:
        assert codegen_c(kernel)


VALUES = st.one_of(
    st.text(max_size=12),
    st.integers(),
    st.none(),
    st.lists(st.sampled_from(["A", "B", "C", "", "1x"]), max_size=3),
    st.sampled_from(["float", "int", "double"]),
)


@FUZZ
@given(
    st.dictionaries(
        st.sampled_from(["name", "ins", "outs", "data_type", "kernel", "grad_to", "extra"]), VALUES, max_size=7
    ),
    mutated(kernels(), KERNEL_TOKENS),
)
def test_load_case_raises_only_kernel_errors(case: dict, kernel_text: str) -> None:
    case = {"name": "k", "ins": ["B"], "outs": ["A"], "data_type": "float", "kernel": kernel_text, **case}
    try:
        load_case(case)
    except KernelError:
        pass
