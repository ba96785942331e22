"""exprgraph.tensor: tensor index kernels (``A<2,8,5,5>[n,k,p,q] = B<..>[n,c,p+r,q+s] * C<..>[k,c,r,s];``).

Parse kernels (:func:`parse_kernel`, :func:`load_case`) into statements whose right-hand sides are
core terms (tensor reads are the op table's ``access`` op), generate C with the project's one C
renderer (:func:`codegen_c`), compile and run it (:func:`build`), evaluate the same kernel in numpy
through the op table (:func:`reference`), and differentiate it with each op's own gradient rule
into gather-form gradient kernels (:func:`grad_kernel`), checked by :func:`check_kernel_grad`.

Layer 11 of docs/architecture.md: imports compile, diff, core, console, progress and errors;
nothing above it.
"""

from __future__ import annotations

from ..errors import KernelError
from .build import CompiledKernel, build, count_iterations
from .check import Comparison, KernelGradCheck, check_kernel, check_kernel_grad, compare, random_inputs
from .codegen import codegen_c
from .grad import grad_kernel
from .ir import Guard, Kernel, Loop, Statement, Tensor, format_kernel, format_statement
from .parse import load_case, parse_kernel
from .reference import evaluate_kernel, reference, reference_grad

__all__ = [
    "KernelError",
    "parse_kernel",
    "load_case",
    "Kernel",
    "Statement",
    "Tensor",
    "Loop",
    "Guard",
    "format_kernel",
    "format_statement",
    "codegen_c",
    "build",
    "CompiledKernel",
    "count_iterations",
    "reference",
    "evaluate_kernel",
    "reference_grad",
    "grad_kernel",
    "compare",
    "Comparison",
    "check_kernel",
    "check_kernel_grad",
    "KernelGradCheck",
    "random_inputs",
]
