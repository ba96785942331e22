"""Dimension expressions: ``simplify_expression`` vs ``sympy.simplify`` and symengine's ``expand``.

1,000 typical shape expressions (``2*batch//batch``, ``(seq+7)//8*8``, ``CeilToInt(s,8)``,
``max(a,b)+min(a,b)``, sums of products of 2-6 names with constants, and a few mixes) are made
from a fixed seed. Ours takes each as text and returns text (or an int), measured *cold* (every
cache cleared before the round, so the 1,000 strings are parsed and simplified from scratch)
and *warm* (caches kept, as in shape inference where the same dimensions come back), and also
cold on terms parsed beforehand (``simplify_term``, no text either way). The anchors get the same
expressions as their own objects (``floor(a/b)``, ``Mod``, ``Max``, ``ceiling``):

- symengine, text in and text out: ``str(expand(sympify(text)))`` on symengine's own text of the
  expression. ``simplify_expression`` takes text and gives text, so this is the anchor of the
  target "no slower than 3x symengine's expand on the same input".
- symengine's ``expand`` on prebuilt objects: no parsing and no printing. Shown for reference,
  next to ours on prebuilt terms (which still prints nothing but builds the canonical term).
- ``sympy.simplify`` on every 10th expression (it takes milliseconds each); target: ours at
  least 50x faster.

Interleaved rounds, best of N; the table gives mean microseconds per expression and the ratio
ours/anchor (lower is better).

Run: ``python -m bench.bench_dims`` (the table says whether the fast path runs compiled; set
``EXPRGRAPH_PURE_PYTHON=1`` to measure the pure Python modules of the same build).
"""

from __future__ import annotations

import operator
import random
from collections.abc import Callable
from typing import Any

from bench.common import best_of, print_table, ratio, skip
from bench.dims_convert import convert
from exprgraph.dims import clear_caches, compiled_modules, parse_expression, simplify_expression, simplify_term

N_EXPRESSIONS = 1000
SYMPY_EVERY = 10
SE_TEXT = "symengine: text -> sympify -> expand -> str"
SE_EXPAND = "symengine: expand on prebuilt objects"
SP_SIMPLIFY = "sympy.simplify (sample)"
NAMES = ("batch", "seq", "heads", "dim", "cache", "past", "width", "height", "chan", "s0", "s1", "s2", "s3", "s4")


def make_expressions(n: int = N_EXPRESSIONS, seed: int = 7) -> list[str]:
    """``n`` shape expressions of the kinds the issue lists, in a fixed pseudo-random order."""
    rng = random.Random(seed)

    def name() -> str:
        return rng.choice(NAMES)

    def k() -> int:
        return rng.choice([2, 4, 8, 16, 32, 64, 128, 3, 5, 6, 12, 24])

    def product() -> str:
        factors = [name() for _ in range(rng.randint(1, 3))]
        coef = rng.choice(["", "2*", "3*", "4*", "-1*", "8*"])
        return coef + "*".join(factors)

    kinds: list[Callable[[], str]] = [
        lambda: f"{k()}*{(n := name())}//{n}",
        lambda: f"({name()}+{(q := k()) - 1})//{q}*{q}",
        lambda: f"CeilToInt({name()},{k()})",
        lambda: f"max({(a := name())},{(b := name())})+min({a},{b})+{rng.randint(0, 9)}",
        lambda: " + ".join(product() for _ in range(rng.randint(2, 6))) + f" + {rng.randint(-9, 9)}",
        lambda: f"{name()}*{name()} - {name()} + {rng.randint(0, 9)} - {name()}*{name()}",
        lambda: f"({name()}+{name()})*{name()}//{k()}",
        lambda: f"{(a := name())}*{(b := name())}*{name()}//({a}*{b})+{rng.randint(0, 9)}",
    ]
    out: list[str] = []
    seen: set[str] = set()
    i = 0
    while len(out) < n:
        text = kinds[i % len(kinds)]()
        i += 1
        if text not in seen:  # distinct texts: a cold round never hits a cache on a repeat
            seen.add(text)
            out.append(text)
    return out


def _constructors(lib: Any) -> dict[str, Callable[..., Any]]:
    """sympy's or symengine's constructor for each of our ops (floor division as floor(a/b), and so on)."""
    return {
        "const": lib.Integer,
        "add": operator.add,
        "sub": operator.sub,
        "mul": operator.mul,
        "neg": operator.neg,
        "floordiv": lambda a, b: lib.floor(a / b),
        "mod": lambda a, b: lib.Mod(a, b),  # looked up when used: symengine has no Mod (the generator makes none)
        "maximum": lib.Max,
        "minimum": lib.Min,
        "ceil_div": lambda a, b: lib.ceiling(a / b),
    }


def main() -> None:
    """Run the comparison and print the table."""
    texts = make_expressions()
    sample = texts[::SYMPY_EVERY]
    terms = [parse_expression(t) for t in texts]
    contenders: dict[str, Callable[[], Any]] = {
        "ours, cold": lambda: [simplify_expression(t) for t in texts],
        "ours, warm": lambda: [simplify_expression(t) for t in texts],
        "ours, cold, prebuilt terms": lambda: [simplify_term(t) for t in terms],
        "ours, cold (sympy sample)": lambda: [simplify_expression(t) for t in sample],
    }
    setup = {
        "ours, cold": clear_caches,
        "ours, cold, prebuilt terms": clear_caches,
        "ours, cold (sympy sample)": clear_caches,
    }
    counts = {name: len(texts) for name in contenders}
    counts["ours, cold (sympy sample)"] = len(sample)
    repeat: dict[str, int] = dict.fromkeys(contenders, 7)
    try:
        import symengine as se

        se_syms: dict[str, Any] = {}
        se_new = _constructors(se)
        se_exprs = [convert(term, se_new, lambda n: se_syms.setdefault(n, se.Symbol(n))) for term in terms]
        se_texts = [str(e) for e in se_exprs]
        contenders[SE_TEXT] = lambda: [str(se.expand(se.sympify(s))) for s in se_texts]
        contenders[SE_EXPAND] = lambda: [se.expand(e) for e in se_exprs]
        counts[SE_TEXT] = counts[SE_EXPAND] = len(texts)
        repeat[SE_TEXT] = repeat[SE_EXPAND] = 7
    except ImportError:
        skip("symengine rows", "symengine is not installed (pip install -e '.[bench]')")
    try:
        import sympy as sp

        sp_syms: dict[str, Any] = {}
        sp_new = _constructors(sp)
        sp_exprs = [
            convert(term, sp_new, lambda n: sp_syms.setdefault(n, sp.Symbol(n, integer=True, nonnegative=True)))
            for term in terms[::SYMPY_EVERY]
        ]
        contenders[SP_SIMPLIFY] = lambda: [sp.simplify(e) for e in sp_exprs]
        counts[SP_SIMPLIFY] = len(sample)
        repeat[SP_SIMPLIFY] = 1
    except ImportError:
        skip("sympy row", "sympy is not installed (pip install -e '.[bench]')")
    best = best_of(contenders, repeat=repeat, setup=setup)
    per = {name: best[name] / counts[name] * 1e6 for name in best}
    build = "fast path compiled by mypyc" if compiled_modules() else "pure Python"
    print_table(
        f"simplify {len(texts)} shape expressions, {build}: µs per expression",
        ["contender", "µs/expr"],
        [[name, f"{per[name]:.1f}"] for name in contenders],
    )
    # (anchor, ours, target ratio or None, why this pair is compared)
    pairs = [
        (SE_TEXT, "ours, cold", 3.0, "the target: text in, text out on both sides"),
        (SE_TEXT, "ours, warm", None, "shape inference meets the same dimensions again"),
        (SE_EXPAND, "ours, cold, prebuilt terms", None, "reference: no parsing on either side"),
        (SE_EXPAND, "ours, cold", None, "reference: ours parses and prints, this anchor does neither"),
        (SP_SIMPLIFY, "ours, cold (sympy sample)", 0.02, "the target: at least 50x faster"),
    ]
    rows = []
    for anchor, ours, target, why in pairs:
        if anchor not in per:
            continue
        r = per[ours] / per[anchor]
        goal = "" if target is None else f"<= {target:g}x: {'met' if r <= target else 'NOT met'}"
        rows.append([ours, anchor, ratio(per[ours], per[anchor]), goal, why])
    print_table(
        "ratios ours/anchor (lower is better)",
        ["ours", "anchor", "ratio", "target", "why this pair"],
        rows,
    )
    print("examples:", ", ".join(f"{t!r} -> {simplify_expression(t)!r}" for t in texts[:8]))


if __name__ == "__main__":
    main()
