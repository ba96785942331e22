"""simplify(method="egraph"), the FunctionGraph rewriter, the command line and the Graphviz picture."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from egraph_helpers import SYMS, X, Y, Z, agree, arith_terms, points
from hypothesis import given, settings

import exprgraph as eg
from exprgraph import parse
from exprgraph.cli import main
from exprgraph.egraph import EqualitySaturationRewriter, SaturationProfile, saturate
from exprgraph.egraph.saturation import binarize, saturation_simplify
from exprgraph.graph import FunctionGraph, MergeOptimizer, SequentialGraphRewriter
from exprgraph.simplify import cost, simplify


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("x*1 + 0 + x", "x*2"),
        ("x*(y + z) - x*y", "x*z"),
        ("x - x + y", "y"),
        ("(x + 1)**2 - (x + 1)*(x + 1)", "0.0"),
        ("a*b + a*c + a*d", "a*(b + c + d)"),
    ],
)
def test_simplify_by_saturation(text, want):
    out = simplify(parse(text), method="egraph", unsafe=True)
    assert cost(out) <= cost(parse(want)) and cost(out) < cost(parse(text))


def test_simplify_method_errors_and_safe_mode():
    with pytest.raises(ValueError):
        simplify(X, method="magic")
    assert simplify(parse("x*0"), method="egraph", unsafe=False) is parse("x*0")
    assert simplify(parse("x*0"), method="egraph") is parse("x*0")  # the default: the safe rules
    assert simplify(parse("x*0"), method="egraph", unsafe=True) is eg.const(0.0)


@settings(max_examples=40, deadline=None)
@given(arith_terms(4))
def test_simplified_equals_original_at_random_points(t):
    env = points(16, seed=len(str(t)))
    safe = saturation_simplify(t, unsafe=False, iter_limit=4)
    assert cost(safe) <= cost(t) and safe.dtype == t.dtype
    # safe laws keep every value up to rounding; a zero's sign may differ (and so an infinity's)
    assert agree(t, safe, env, rtol=1e-7, regular_only=True), (str(t), str(safe))
    unsafe = saturation_simplify(t, unsafe=True, iter_limit=4)
    assert cost(unsafe) <= cost(safe) or cost(unsafe) <= cost(t)
    # unsafe laws hold where every intermediate value is finite and non-zero
    assert agree(t, unsafe, env, rtol=1e-7, regular_only=True), (str(t), str(unsafe))


def test_binarize_keeps_values():
    t = eg.get_op("add")(X, Y, Z, X * Y)
    b = binarize(t)
    assert all(len(n.args) <= 2 for n in eg.postorder(b))
    assert agree(t, b, points())


def test_rewriter_in_a_pipeline():
    a = parse("x*y + x*z")
    b = parse("(x*y + x*z)*2*1")  # a*1 -> a (a + 0 -> a is unsafe: the sign of a zero)
    fg = FunctionGraph(list(SYMS), [a, b])
    before = cost(a) + cost(b)
    prof = SequentialGraphRewriter(MergeOptimizer(), EqualitySaturationRewriter()).rewrite(fg)
    assert prof.nodes_after <= prof.nodes_before
    new_a, new_b = fg.outputs
    assert cost(new_a) + cost(new_b) < before
    env = points()
    assert agree(a, new_a, env) and agree(b, new_b, env)
    single = EqualitySaturationRewriter(unsafe=True).rewrite(FunctionGraph([X, Y], [parse("x*1 + y*0")]))
    assert isinstance(single, SaturationProfile) and single.replaced == 1 and single.report is not None
    assert "outputs replaced" in "\n".join(single.lines())
    with pytest.raises(ValueError):
        EqualitySaturationRewriter(cost="depth")


def test_cli_saturate(tmp_path, capsys):
    rules = tmp_path / "rules.txt"
    rules.write_text(
        "d_add: d(x, a + b) -> d(x, a) + d(x, b)\n"
        "d_var: d(x, x) -> 1 where is_sym(x)\n"
        "d_const: d(x, c) -> 0 where is_sym(x) and const_or_distinct_var(c, x)\n"
        "zero: a + 0 <-> a\n"
    )
    assert main(["saturate", "d(x, x + 3)", "--rules", str(rules), "--op", "d:2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert float(out[0]) == 1.0
    assert out[1].startswith("# cost (size): 1") and out[2].startswith("# stop: saturated")
    assert out[3].startswith("| iter | e-nodes")
    assert main(["saturate", "x*1", "--exact", "--dot"]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0] == "x" and "digraph" in text and "cluster_" in text


def test_cli_errors(tmp_path, capsys):
    assert main(["saturate", "x", "--rules", str(tmp_path / "missing.txt")]) == 2
    bad = tmp_path / "bad.txt"
    bad.write_text("a + -> b\n")
    assert main(["saturate", "x", "--rules", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "cannot read the rule file" in err and "^" in err
    assert main(["saturate", "x", "--op", "d"]) == 2
    assert main(["saturate", "x", "--iter-limit", "-1"]) == 2


def test_dot_picture():
    r = saturate(parse("(a*2)/2"), ["a*2 <-> a + a", "(x*y)/z -> x*(y/z)"])
    dot = r.egraph.to_dot()
    assert dot.startswith('digraph "egraph" {') and dot.rstrip().endswith("}")
    assert dot.count("subgraph cluster_") == r.egraph.number_of_classes()
    assert dot.count("[label=") == r.egraph.number_of_nodes()
    assert "lhead=cluster_" in dot
    with pytest.raises(ValueError):
        r.egraph.to_dot(max_nodes=2)


def test_values_survive_saturation_with_unsafe_rules_where_finite():
    t = parse("(x*y)/y + (x - x)*z")
    out = saturation_simplify(t, unsafe=True)
    env = points()
    assert agree(t, out, env) and cost(out) < cost(t)
    assert np.isfinite(eg.evaluate(out, env, on_unused_input="ignore")).all()


def test_simplify_method_egraph_works_in_a_fresh_process():
    code = (
        "from exprgraph import parse\n"
        "from exprgraph.simplify import simplify\n"
        "print(simplify(parse('x*(y + z) - x*y'), method='egraph', unsafe=True))\n"
    )
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "x*z"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_rule_file_that_is_a_fifo_or_a_device_is_refused_at_once(tmp_path, capsys) -> None:
    # opening a FIFO waits for a writer, /dev/zero never ends: both are refused, neither is read
    fifo = tmp_path / "rules.fifo"
    os.mkfifo(fifo)
    for path in (str(fifo), "/dev/zero"):
        assert main(["saturate", "x", "--rules", path]) == 2
        assert "not a regular file" in capsys.readouterr().err
