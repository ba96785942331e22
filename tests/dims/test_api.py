"""evaluate_expression, renaming, dim_* arithmetic and the ``exprgraph dims`` command."""

from __future__ import annotations

import argparse

import pytest

from exprgraph import Symbol
from exprgraph.dims import (
    DimExpressionError,
    dim_add,
    dim_div,
    dim_max,
    dim_min,
    dim_mod,
    dim_mul,
    dim_multi_mul,
    dim_name,
    dim_sub,
    evaluate_expression,
    parse_expression,
    rename_dynamic_dimensions,
    rename_dynamic_expression,
    rename_expression,
    simplify_dim,
    tidy,
    unparse,
)
from exprgraph.dims.cli import add_parser
from exprgraph.errors import EvaluationError

# -- evaluate ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "values", "want"),
    [
        ("-7//2", {}, -4),
        ("-7%3", {}, 2),
        ("7%-3", {}, -2),
        ("a^b", {"a": 2, "b": 5}, 5),
        ("a&b", {"a": 2, "b": 5}, 2),
        ("a^b&c", {"a": 4, "b": 9, "c": 1}, 4),
        ("CeilToInt(a, 4)", {"a": 9}, 3),
        ("CeilToInt(-9, 4)", {}, -2),
        ("Max(a, b, c) - Min(a, b, c)", {"a": 3, "b": 8, "c": 5}, 5),
        ("x", {Symbol("x", "int64"): 7}, 7),
    ],
)
def test_evaluate(text, values, want):
    assert evaluate_expression(text, values) == want


def test_evaluate_errors():
    with pytest.raises(EvaluationError, match="no value for the name 'y'"):
        evaluate_expression("x + y", {"x": 1})
    with pytest.raises(EvaluationError, match="division by zero in x//\\(y-1\\)"):
        evaluate_expression("x // (y - 1)", {"x": 1, "y": 1})
    with pytest.raises(EvaluationError, match="division by zero"):
        evaluate_expression("x % 0", {"x": 1})
    with pytest.raises(EvaluationError, match="division by zero"):
        evaluate_expression("CeilToInt(x, 0)", {"x": 1})
    with pytest.raises(EvaluationError, match="must be an integer"):
        evaluate_expression("x", {"x": 1.5})
    with pytest.raises(DimExpressionError):
        evaluate_expression("x +", {"x": 1})
    assert evaluate_expression(12) == 12


def test_evaluate_is_exact_beyond_int64():
    assert evaluate_expression("a*a*a", {"a": 2**40}) == 2**120


# -- rename ----------------------------------------------------------------------------------------------


def test_rename_expression():
    assert rename_expression("s1 + s2*2", {"s1": "batch", "s2": "seq"}) == "batch+seq*2"
    # a replacement may be an expression: it is substituted as a whole, brackets and all
    assert rename_expression("2*s1", {"s1": "a+b"}) == "2*(a+b)"
    assert rename_expression("s1//2", {"s1": 8}) == "8//2"
    assert rename_expression("Max(s1, s2)", {"s1": "s2", "s2": "s1"}) == "s2^s1"  # simultaneous
    with pytest.raises(DimExpressionError):
        rename_expression("s1 +", {"s1": "a"})
    with pytest.raises(SyntaxError):
        rename_expression("s1", {"s1": "a b"})


def test_rename_dynamic_expression():
    assert rename_dynamic_expression("s1+0+s2*1", {"s1": "a"}) == "a+s2"
    assert rename_dynamic_expression("Max(s1, s1)//1", {}) == "s1"
    assert rename_dynamic_expression("b + a", {}) == "b+a"  # keeps the order of the text
    assert rename_dynamic_expression("s0::x", {}) == "s0::x"
    assert rename_dynamic_expression("s1", {"s1": "a +"}) == "s1"


def test_tidy_keeps_other_terms():
    t = parse_expression("(a - 0) * 1 + 0 + b//1 + Min(c, c)")
    assert unparse(tidy(t)) == "a+b+c"
    u = parse_expression("a*2 + 3")
    assert tidy(u) is u


def test_rename_dynamic_dimensions_skips_banned_names():
    constraints = {"s0": {"DYN1", "batch", "s5"}, "s5": {"s0"}, "s7": {"DYN2"}}
    got = rename_dynamic_dimensions(constraints, {"DYN1", "DYN2", "batch"})
    # the smallest allowed original name wins even when a banned one sorts first
    assert got == {"DYN1": "DYN1", "DYN2": "DYN2", "batch": "batch", "s0": "batch", "s5": "batch"}
    got = rename_dynamic_dimensions(constraints, {"DYN1", "batch"}, ban_prefix="")
    assert got["s0"] == "DYN1"


# -- dim_* ----------------------------------------------------------------------------------------------


def test_dim_ops_on_ints_follow_python():
    assert dim_div(-7, 2) == -4
    assert dim_mod(-7, 2) == 1
    assert dim_max(3, 9) == 9 and dim_min(3, 9) == 3
    assert dim_multi_mul(2, 3, 4) == 24
    with pytest.raises(ZeroDivisionError):
        dim_div(1, 0)


def test_dim_ops_on_symbols():
    assert dim_add("batch", 1) == "batch+1"
    assert dim_sub("n+2", "n") == 2
    assert dim_mul("n", "m") == "m*n"
    assert dim_div("(n+7)//8*8", 8) == "(7+n)//8"
    assert dim_mod("8*n+3", 8) == 3
    assert dim_max("n", "n+1") == "n+1"
    assert dim_min("a", "b") == "a&b"
    assert dim_div("n", 0) == "n//0"
    assert dim_multi_mul("a") == "a"
    n = dim_name("n")
    assert dim_add(n, 1) is n + 1  # terms in, terms out
    assert dim_sub(n, n) == 0
    with pytest.raises(TypeError):
        dim_add(1.5, "n")
    with pytest.raises(TypeError):
        dim_multi_mul()


def test_simplify_dim_is_the_broadcast_hook():
    a, b = dim_name("a"), dim_name("b")
    from exprgraph import get_op

    # what the core's broadcast builds for two symbolic dims, simplified
    assert simplify_dim(get_op("maximum")(a + 1, a)) is a + 1
    assert simplify_dim(get_op("maximum")(b, a)) is get_op("maximum")(a, b)
    assert simplify_dim(get_op("maximum")(a - a + 3, 2)) == 3
    x = Symbol("x", shape=("batch", "seq+1"))
    assert simplify_dim(x.shape[1]) is dim_name("seq") + 1


# -- command line ------------------------------------------------------------------------------------------


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="exprgraph")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


def test_cli_simplify(capsys):
    assert _run(["dims", "simplify", "(seq+7)//8*8 + 2*batch//batch"]) == 0
    assert capsys.readouterr().out == "8*((7+seq)//8)+2\n"
    assert _run(["dims", "simplify", "--positive", "max(a, 1)"]) == 0
    assert capsys.readouterr().out == "a\n"
    with pytest.raises(DimExpressionError):
        _run(["dims", "simplify", "a +"])


def test_cli_eval(capsys):
    assert _run(["dims", "eval", "CeilToInt(n, 8)*8", "n=13"]) == 0
    assert capsys.readouterr().out == "16\n"
    assert _run(["dims", "eval", "a-b", "a=1", "b=-4"]) == 0
    assert capsys.readouterr().out == "5\n"
    with pytest.raises(EvaluationError, match="name=integer"):
        _run(["dims", "eval", "a", "a=1.5"])
    with pytest.raises(EvaluationError, match="twice"):
        _run(["dims", "eval", "a", "a=1", "a=2"])
    with pytest.raises(EvaluationError, match="no value"):
        _run(["dims", "eval", "a+b", "a=1"])


def test_cli_main_reports_errors(capsys):
    from exprgraph.dims.cli import main

    assert main(["simplify", "x//"]) == 2
    err = capsys.readouterr().err
    assert "syntax error" in err and "^" in err
    assert main(["eval", "x//y", "x=1", "y=0"]) == 2
    assert "division by zero" in capsys.readouterr().err


def test_dim_equal():
    from exprgraph.dims import dim_equal

    assert dim_equal(3, 3) is True and dim_equal(3, 4) is False
    assert dim_equal("2*(n+1)", "2*n+2") is True
    assert dim_equal("CeilToInt(n, 8)", "(n+7)//8") is True
    assert dim_equal("n+1", "n") is False
    assert dim_equal("n", "m") is None
    assert dim_equal(dim_name("n"), "n") is True


def test_core_evaluator_and_printer_know_ceil_div():
    import numpy as np

    from exprgraph import parse
    from exprgraph.eval import evaluate

    t = parse_expression("CeilToInt(n, 8)*8 ^ m")
    assert evaluate(t, {"n": np.array([0, 1, 8, 9]), "m": 3}).tolist() == [3, 8, 8, 16]
    assert parse(str(t), dtype="int64") is t
