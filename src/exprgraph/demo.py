"""``exprgraph demo`` (and ``make demo``): an end-to-end tour, one section per capability.

A section is a function ``fn(tour)`` registered with :func:`section`; sections run in the order
they are defined. Each later layer (simplify, gradient, dims, kernels) appends its own section at
the end of this file. Every section rebuilds what it needs from :func:`tour_expression`: terms are
interned, so rebuilding gives back the very same objects.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

import numpy as np

from . import core, errors

__all__ = ["run", "section", "SECTIONS", "Tour", "tour_expression", "add_parser"]

#: the text of the tour's expression, as the tour builds it with Python operators
TOUR_TEXT = "(x*y + 3)/(z - 2) + sin(x*y)"
#: the point the tour evaluates at
TOUR_POINT = {"x": 2.0, "y": 3.0, "z": 3.0}


@dataclass
class Tour:
    """Where a section writes: ``tour.say(...)`` prints a line, ``tour.show(label, value)`` a result."""

    out: TextIO

    def say(self, text: str = "") -> None:
        """Print one line of narration (or code)."""
        print(text, file=self.out)

    def show(self, label: str, value: Any) -> None:
        """Print ``label`` and the value it gives, multi-line values indented below it."""
        text = value if isinstance(value, str) else repr(value)
        if "\n" in text:
            print(f"  {label}:", file=self.out)
            for line in text.splitlines():
                print(f"    {line}", file=self.out)
        else:
            print(f"  {label:<40} -> {text}", file=self.out)


@dataclass(frozen=True)
class Section:
    """One section of the tour: a short name (for ``exprgraph demo NAME``), a title and its body."""

    name: str
    title: str
    body: Callable[[Tour], None]


#: the sections in tour order
SECTIONS: list[Section] = []


def section(name: str, title: str) -> Callable[[Callable[[Tour], None]], Callable[[Tour], None]]:
    """Decorator registering ``fn(tour)`` as the next section of the tour."""

    def register(fn: Callable[[Tour], None]) -> Callable[[Tour], None]:
        if any(s.name == name for s in SECTIONS):
            raise ValueError(f"a demo section named {name!r} exists already")
        SECTIONS.append(Section(name, title, fn))
        return fn

    return register


def tour_expression() -> tuple[core.Term, core.Term, core.Term, core.Term]:
    """The symbols x, y, z and the tour's expression f, built with Python operators."""
    x, y, z = core.symbols("x y z")
    f = (x * y + 3) / (z - 2) + core.sin(x * y)
    return x, y, z, f


# -- the sections -------------------------------------------------------------------------------


@section("build", "Build an expression from symbols and operators")
def _build(tour: Tour) -> None:
    x, _, _, f = tour_expression()
    tour.say('x, y, z = symbols("x y z")')
    tour.say("f = (x*y + 3)/(z - 2) + sin(x*y)")
    tour.show("str(f)", str(f))
    tour.show("f.op.name, f.dtype, f.shape", (f.op.name, f.dtype, f.shape))
    tour.show("sorted(f.free_symbols) by name", sorted(s.name for s in f.free_symbols))
    tour.show("f.size (distinct nodes), f.depth", (f.size, f.depth))
    tour.show("str(x*1)  (no simplification)", str(x * 1))
    a = core.Symbol("A", shape=("m", "n"))
    v = core.Symbol("v", shape=("n",))
    tour.say('A = Symbol("A", shape=("m", "n")); v = Symbol("v", shape=("n",))')
    tour.show("(A @ v).shape  (symbolic dimensions)", (a @ v).shape)


@section("interning", "Interning: equal construction gives the same object")
def _interning(tour: Tour) -> None:
    x, y, _, f = tour_expression()
    tour.show("(x*y + 3) is (x*y + 3)", (x * y + 3) is (x * y + 3))
    tour.show("f is (rebuilt f)", tour_expression()[3] is f)
    tour.show("x*y == x*y  (== is identity)", x * y == x * y)
    tour.show("x*y == y*x  (no reordering)", x * y == y * x)
    tour.show('Symbol("x") is x', core.Symbol("x") is x)
    tour.show("const(1) is const(1.0)  (by dtype)", core.const(1) is core.const(1.0))
    tour.show("str(eq(x, y))  (an equality term)", str(core.eq(x, y)))
    cache = {f: "cached"}
    tour.show("{f: ...}[rebuilt f]  (dict keys)", cache[tour_expression()[3]])


@section("printing", "Printing: infix, repr and a DAG listing")
def _printing(tour: Tour) -> None:
    x, y, z, f = tour_expression()
    tour.show("str(f)", str(f))
    tour.show("repr(f)", repr(f))
    tour.say("  dprint(f)  (x*y is shared: listed once as [id A], then cited):")
    for line in core.dformat(f).splitlines():
        tour.say(f"    {line}")
    tour.show("str(-x**2), str((-x)**2)", (str(-(x**2)), str((-x) ** 2)))
    tour.show("str(const(-2)**x), str(-(2**x))", (str(core.const(-2) ** x), str(-(2**x))))
    tour.show("str(add(x, y, z))  (3-operand add)", str(core.add(x, y, z)))
    dot = core.to_dot(f)
    tour.show("to_dot(f)", f"{len(dot.splitlines())} lines of Graphviz source, starting {dot.splitlines()[0]!r}")


@section("parsing", "Parsing the printed text gives back the same object")
def _parsing(tour: Tour) -> None:
    f = tour_expression()[3]
    text = str(f)
    tour.show("parse(str(f)) is f", core.parse(text) is f)
    tour.show(f"parse({TOUR_TEXT!r}) is f", core.parse(TOUR_TEXT) is f)
    bad = "(x*y + 3)/(z - ) + sin(x*y)"
    try:
        core.parse(bad)
    except errors.ParseError as exc:
        tour.show(f"parse({bad!r})", f"ParseError: {exc}")


@section("evaluation", "Evaluation: at a point, then vectorised over many points")
def _evaluation(tour: Tour) -> None:
    from .eval import evaluate

    x, y, z, f = tour_expression()
    value = float(evaluate(f, TOUR_POINT))
    tour.show(f"evaluate(f, {TOUR_POINT})", value)
    n = 100_000
    rng = np.random.default_rng(0)
    xs, ys = rng.uniform(-2.0, 2.0, n), rng.uniform(-2.0, 2.0, n)
    zs = rng.uniform(3.0, 4.0, n)
    many = evaluate(f, {x: xs, y: ys, z: zs})
    reference = (xs * ys + 3) / (zs - 2) + np.sin(xs * ys)  # the same formula, hand-written numpy
    tour.show(f"evaluate(f, <{n:,} points>).shape", many.shape)
    tour.show("max |ours - hand-written numpy|", float(np.max(np.abs(many - reference))))
    ieee = evaluate(core.log(x), {x: np.array([-1.0, 0.0, 1.0])})
    tour.show("log(x) at x = [-1, 0, 1]  (IEEE)", ieee.tolist())


@section("rules", "Rewriting with rules written as text or with term operators")
def _rules(tour: Tour) -> None:
    from .match import V
    from .rules import Rule, RuleSet, rewrite, rule

    x, y, z, _ = tour_expression()
    algebra = RuleSet.parse(
        """
        x*1 -> x          # multiplicative identity
        x + 0 -> x        # additive identity
        (x*y)/y -> x      # cancellation (unsafe where y == 0)
        """
    )
    g = (x * 1 + 0) * (y + z) / (y + z)
    tour.show(f"rewrite({g}, algebra)", str(rewrite(g, algebra)))
    cancel = rule("x - x -> 0")
    assert isinstance(cancel, Rule)  # a one-way rule (a two-way "<->" rule gives a pair)
    tour.show("rule('x - x -> 0')(y*z - y*z)", str(cancel(y * z - y * z)))
    double = (V.a + V.a) >> (lambda a: 2 * a)
    tour.show("(V.a + V.a >> 2*a)(sin(x) + sin(x))", str(double(core.sin(x) + core.sin(x))))


@section("dims", "Symbolic dimensions: simplify, evaluate, shapes")
def _dims(tour: Tour) -> None:
    from . import dims

    for text in ["2*batch//batch", "(seq+7)//8*8 - seq", "max(a, b) + min(a, b)", "CeilToInt(8*s, 8)"]:
        tour.show(f"simplify_expression({text!r})", dims.simplify_expression(text))
    tour.show("evaluate_expression('(s+7)//8', {'s': 13})", dims.evaluate_expression("(s+7)//8", {"s": 13}))
    a = core.Symbol("A", shape=("batch", "seq+1"))
    b = core.Symbol("B", shape=("1+seq",))
    tour.show("shape of A + B, A: (batch, seq+1), B: (1+seq,)", tuple(str(d) for d in (a + b).shape))


# -- running --------------------------------------------------------------------------------------


def run(out: TextIO | None = None, only: Sequence[str] | None = None) -> None:
    """Print the tour (or only the named sections) to ``out`` (stdout by default)."""
    out = sys.stdout if out is None else out
    chosen = SECTIONS if not only else [s for s in SECTIONS if s.name in set(only)]
    unknown = sorted(set(only or ()) - {s.name for s in SECTIONS})
    if unknown:
        raise ValueError(f"no demo section {', '.join(unknown)}; sections: {', '.join(s.name for s in SECTIONS)}")
    tour = Tour(out)
    for i, sec in enumerate(chosen):
        if i:
            tour.say()
        tour.say(f"== {SECTIONS.index(sec) + 1}. {sec.title} [{sec.name}] ==")
        sec.body(tour)


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """The ``exprgraph demo [SECTION ...]`` subcommand."""
    listing = "\n".join(f"  {s.name:<12} {s.title}" for s in SECTIONS)
    p = subparsers.add_parser(
        "demo",
        help="a tour of the library, one section per capability (make demo runs it)",
        description=textwrap.fill(
            "Print an end-to-end tour of exprgraph: each section shows one capability on the tour's "
            f"expression {TOUR_TEXT}, with the code and what it gives. Name sections to run only those."
        ),
        epilog=f"sections, in tour order:\n{listing}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("sections", nargs="*", metavar="SECTION", help="run only these sections")
    p.set_defaults(func=_run_command)
    return p


def _run_command(args: argparse.Namespace) -> int:
    run(only=args.sections)
    return 0


@section("gradient", "Gradients: symbolic, simplified, numeric, higher order, compiled")
def _gradient(tour: Tour) -> None:
    from .compile import CompileError
    from .compile import compile as compile_terms
    from .diff import check_grad, grad, hessian, numeric_gradient
    from .errors import CacheSecurityError
    from .eval import evaluate
    from .simplify import simplify

    x, y, z, f = tour_expression()
    d = grad(f)
    tour.say("d = grad(f)  (reverse mode over the DAG: one backward sweep, terms out)")
    for s in (x, y, z):
        tour.show(f"simplify(d[{s.name}])", str(simplify(d[s])))
    tour.show("size of f, of all of d (distinct nodes)", (f.size, len(core.postorder(list(d.values())))))
    values = numeric_gradient(f, TOUR_POINT)
    tour.show(f"numeric_gradient(f, {TOUR_POINT})", {s.name: float(v) for s, v in values.items()})
    xs = np.linspace(0.0, 1.0, 5)
    many = numeric_gradient(f, {x: xs, y: 3.0, z: 3.0}, x)
    tour.show("d/dx at x = 0, 0.25, .., 1 (one call)", [round(float(v), 6) for v in many])
    tour.show("check_grad(f, point).ok (finite differences)", check_grad(f, TOUR_POINT).ok)
    h = hessian(f, [x, y])
    tour.show("hessian(f, [x, y]) simplified", [[str(simplify(t)) for t in row] for row in h])
    k = x
    for _ in range(30):
        k = core.sin(k) * k + x
    tour.show("f_k = sin(f_k-1)*f_k-1 + x, k=30: size of f, df/dx", (k.size, grad(k, x).size))
    fn = compile_terms([f, *d.values()], [x, y, z])
    point = [TOUR_POINT[n] for n in "xyz"]
    tour.show("compile([f, *d.values()], [x, y, z])(2, 3, 3)", [float(v) for v in fn(*point)])
    try:
        fc = compile_terms([f, *d.values()], [x, y, z], backend="c", packed=True)
        tour.say("fc = compile([f, *d.values()], [x, y, z], backend='c', packed=True)")
        tour.show("fc([2, 3, 3]): f and its gradient at one point, one C call", fc(np.array(point)).round(6).tolist())
        batch = np.column_stack([np.linspace(0.0, 1.0, 10_000), np.full(10_000, 3.0), np.full(10_000, 3.0)])
        many_out = fc(batch)
        tour.show("fc(batch) on 10,000 points: shape", many_out.shape)
        ref = evaluate([f, *d.values()], {x: batch[:, 0], y: batch[:, 1], z: batch[:, 2]})
        same = all(np.allclose(many_out[:, k], r, rtol=1e-12) for k, r in enumerate(ref))
        tour.show("the batch agrees with evaluate", same)
    except CompileError as exc:
        if isinstance(exc, CacheSecurityError):
            raise  # an unsafe cache is never a skipped section (SECURITY.md)
        tour.show("backend='c'", f"skipped: {exc}")


@section("kernels", "Tensor index kernels: the convolution's gradient kernel as C, built and checked")
def _kernels(tour: Tour) -> None:
    from .errors import CacheSecurityError, CompileError
    from .tensor import check_kernel_grad, codegen_c, format_kernel, grad_kernel, parse_kernel

    text = "A<2, 8, 5, 5>[n, k, p, q] = B<2, 16, 7, 7>[n, c, p + r, q + s] * C<8, 16, 3, 3>[k, c, r, s];"
    tour.say(f"kernel: {text}")
    conv = parse_kernel(text, name="grad_case6", ins=["B", "C"], outs=["A"], grad_to=["B"])
    g = grad_kernel(conv)
    tour.show("grad_kernel(conv): parameters", g.params)
    tour.show("the gradient kernel (gather form)", format_kernel(g))
    tour.show("codegen_c(gradient)", codegen_c(g).rstrip())
    try:
        report = check_kernel_grad(conv)
    except CompileError as exc:
        if isinstance(exc, CacheSecurityError):
            raise  # an unsafe cache is never a skipped section (SECURITY.md)
        tour.show("build and check", f"skipped: {exc}")
        return
    for c in report.comparisons:
        tour.show(c.what, f"{'ok' if c.ok else 'MISMATCH'} (worst abs error {c.max_abs:.2g})")
