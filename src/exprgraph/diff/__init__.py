"""exprgraph.diff: symbolic differentiation by reverse mode over the DAG, higher order, numeric gradients.

- :func:`grad` - the gradient of a scalar term as terms (size linear in the size of ``f``);
- :func:`jacobian`, :func:`hessian`, :func:`vjp`, :func:`jvp` - built on the same backward sweep;
- :func:`numeric_gradient` - values of all partials at a point or many points at once;
- :func:`check_grad` - gradient versus central finite differences along a random direction.

The gradient rules themselves live in the op table (``Op.grad``, see ``exprgraph.core.stdops``).
"""

from __future__ import annotations

from ..errors import DifferentiationError
from .higher import hessian, jacobian, jvp, vjp
from .numeric import GradCheck, check_grad, numeric_gradient
from .reverse import backprop, grad

__all__ = [
    "grad",
    "backprop",
    "jacobian",
    "hessian",
    "vjp",
    "jvp",
    "numeric_gradient",
    "check_grad",
    "GradCheck",
    "DifferentiationError",
]
