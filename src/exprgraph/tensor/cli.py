"""``exprgraph kernel``: C code and gradient kernels for course cases from the command line.

- ``exprgraph kernel codegen CASE.json [-o FILE]``: the forward kernel's C function;
- ``exprgraph kernel grad CASE.json [-o FILE] [--to A,B] [--check] [--seed N]``: the gradient
  kernel's C function (for the case's ``grad_to`` unless ``--to`` says otherwise). ``--check``
  builds the forward and gradient kernels, fills inputs from [-10, 10) and compares the forward
  kernel with numpy and the gradient with numpy's reverse mode and with finite differences,
  printing the worst errors; the exit code is 1 on a mismatch (a nan or an infinity on one side
  only is a mismatch). Inputs are drawn inside the domains of the ops reading them, and a case
  needing more than ``--max-elements`` tensor elements or ``--max-points`` loop iterations is
  refused before anything is allocated.

Without ``-o`` the C source goes to standard output (and the check report to standard error).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..console import add_command
from ..errors import CommandError
from .check import MAX_ELEMENTS, MAX_POINTS

__all__ = ["add_parser", "run_codegen", "run_grad"]


#: what ``exprgraph kernel --help`` says: a summary line, then the description
HELP = """tensor index kernels: C code and gradient kernels for JSON cases

Generate C for a tensor index kernel (a JSON case with name, ins, outs, data_type, kernel and, for
gradients, grad_to), or for its gradient kernel."""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``kernel`` (with ``codegen`` and ``grad``) to the ``exprgraph`` command."""
    p = add_command(subparsers, "kernel", _need_action, HELP)
    sub = p.add_subparsers(dest="kernel_command", metavar="ACTION", required=True)
    cg = sub.add_parser("codegen", help="C code of the forward kernel", description="Print the C function of a case.")
    cg.add_argument("case", metavar="CASE.json", help="the case file")
    cg.add_argument("-o", "--output", metavar="FILE", help="write the C source to FILE (default: standard output)")
    cg.add_argument(
        "--unroll", action="store_true", help="unroll and jam loops (faster; written indices may get offsets)"
    )
    cg.set_defaults(func=run_codegen)
    gr = sub.add_parser(
        "grad",
        help="C code of the gradient kernel",
        description="Print the C function of a case's gradient kernel: parameters are the inputs still used, "
        "then d<out>, then d<x> for each differentiated input.",
    )
    gr.add_argument("case", metavar="CASE.json", help="the case file")
    gr.add_argument("-o", "--output", metavar="FILE", help="write the C source to FILE (default: standard output)")
    gr.add_argument(
        "--unroll", action="store_true", help="unroll and jam loops (faster; written indices may get offsets)"
    )
    gr.add_argument("--to", metavar="A,B", help="inputs to differentiate (default: the case's grad_to)")
    gr.add_argument(
        "--check",
        action="store_true",
        help="build and run the kernels on random inputs in [-10, 10); compare with numpy and finite differences",
    )
    gr.add_argument("--seed", type=int, default=0, help="random seed for --check (default 0)")
    gr.add_argument(
        "--max-elements",
        type=_positive,
        metavar="N",
        help=f"--check refuses cases with more tensor elements than N (default {MAX_ELEMENTS:,}, "
        "or $EXPRGRAPH_CHECK_MAX_ELEMENTS)",
    )
    gr.add_argument(
        "--max-points",
        type=_positive,
        metavar="N",
        help=f"--check refuses cases evaluating more loop iterations than N (default {MAX_POINTS:,}, "
        "or $EXPRGRAPH_CHECK_MAX_POINTS)",
    )
    gr.set_defaults(func=run_grad)
    return p


def _positive(text: str) -> int:
    """A positive integer option (``1_000_000`` is fine)."""
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _need_action(args: argparse.Namespace) -> int:
    raise CommandError("kernel needs an action: codegen or grad")  # pragma: no cover - argparse requires one


def _write(source: str, output: str | None) -> None:
    if output is None:
        sys.stdout.write(source)
        sys.stdout.flush()
        return
    try:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(source)
    except OSError as exc:
        raise CommandError(f"cannot write {output}: {exc.strerror}") from None


def run_codegen(args: argparse.Namespace) -> int:
    """``kernel codegen``: load the case, print (or write) its C function."""
    from .codegen import codegen_c
    from .parse import load_case

    kernel = load_case(args.case)
    _write(codegen_c(kernel, unroll=args.unroll), args.output)
    return 0


def run_grad(args: argparse.Namespace) -> int:
    """``kernel grad``: the gradient kernel's C function, optionally checked."""
    from .check import check_kernel, check_kernel_grad, check_limits
    from .codegen import codegen_c
    from .grad import grad_kernel
    from .parse import load_case

    kernel = load_case(args.case)
    grad_to = None
    if args.to is not None:
        grad_to = [n.strip() for n in args.to.split(",") if n.strip()]
        if not grad_to:
            raise CommandError("--to needs at least one input name")
    gk = grad_kernel(kernel, grad_to)
    limits = {"max_elements": args.max_elements, "max_points": args.max_points}
    if args.check:  # refuse a case too large to check before writing anything
        check_limits(kernel, gk, tuple(kernel.grad_to if grad_to is None else grad_to), **limits)
    _write(codegen_c(gk, unroll=args.unroll), args.output)
    if not args.check:
        return 0
    out = sys.stderr if args.output is None else sys.stdout
    ok = True
    for c in check_kernel(kernel, seed=args.seed, **limits):
        c.what = f"forward {c.what} vs numpy"
        print(c, file=out)
        ok &= c.ok
    report = check_kernel_grad(kernel, grad_to, seed=args.seed, **limits)
    for c in report.comparisons:
        print(c, file=out)
        ok &= c.ok
    print("check passed" if ok else "check FAILED", file=out)
    return 0 if ok else 1
