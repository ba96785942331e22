"""exprgraph.diff: symbolic differentiation by reverse and forward mode over the DAG, sparse and higher order.

- :func:`grad` - the gradient of a scalar term as terms (size linear in the size of ``f``);
- :func:`jvp` - a forward-mode sweep; :func:`vjp` - a seeded reverse sweep; :func:`hvp` - forward
  over reverse (a Hessian-vector product without the Hessian);
- :func:`jacobian`, :func:`hessian` - dense (size-limited), or ``sparse=True`` for the structural
  non-zeros only, as a :class:`SparseMatrix` (found by dependency sets and row colouring);
- :func:`numeric_gradient` - values of all partials at a point or many points at once (by every node
  with ``nodes=True``), as a :class:`GradientMap` that answers zero for a variable ``f`` does not use;
- :func:`check_grad` - gradient versus central finite differences along a random direction.

The gradient rules themselves live in the op table (``Op.grad``, see ``exprgraph.core.stdops``).

In the numerics stack of docs/architecture.md: imports eval, core, console and errors (and
simplify, for the command line). The sweeps run in C when ``diff._csweep`` is built (:mod:`.sweep`).
"""

from __future__ import annotations

from ..errors import DifferentiationError, SizeLimitError
from .blocks import BlockHessian, block_hessian, jacobian_and_block_hessian
from .forward import forward, jvp
from .higher import hessian, hvp, jacobian, vjp
from .numeric import GradCheck, GradientMap, check_grad, numeric_gradient
from .reverse import backprop, grad
from .sparse import SparseMatrix, sparse_hessian, sparse_jacobian

__all__ = [
    "block_hessian",
    "jacobian_and_block_hessian",
    "BlockHessian",
    "grad",
    "backprop",
    "forward",
    "jacobian",
    "hessian",
    "sparse_jacobian",
    "sparse_hessian",
    "SparseMatrix",
    "vjp",
    "jvp",
    "hvp",
    "numeric_gradient",
    "GradientMap",
    "check_grad",
    "GradCheck",
    "DifferentiationError",
    "SizeLimitError",
]
