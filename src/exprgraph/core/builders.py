"""Builders: one callable per op of the standard table (``exp(x)``, ``where(c, a, b)``...).

Each is the :class:`~exprgraph.core.op.Op` itself, so ``exp(x)`` builds the term ``exp(x)``.
``eq``/``ne`` build equality terms, since Python's ``==`` on terms is identity.

``from exprgraph import *`` must not shadow Python builtins, so the ops named like one are
exported with a trailing underscore (PEP 8's way): ``sum_``, ``abs_``, ``pow_``. The plain names
stay attributes (``exprgraph.sum``); the builtins ``abs(x)`` and ``pow(x, 2)`` build the same
terms through the operators anyway.
"""

from __future__ import annotations

from . import stdops as _stdops  # noqa: F401 - the table must exist before we read it
from .op import get_op

__all__ = [
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow_", "neg", "abs_", "exp", "log", "sqrt",
    "sin", "cos", "tan", "tanh", "sigmoid", "maximum", "minimum", "where", "lt", "le", "gt", "ge",
    "eq", "ne", "logical_and", "logical_or", "logical_not", "dot", "matmul", "sum_", "transpose",
    "log1p", "expm1", "softplus", "log_sigmoid", "logaddexp", "logsumexp",
    "asin", "acos", "atan", "atan2", "hypot", "sinh", "cosh", "asinh", "acosh", "atanh",
    "log2", "log10", "erf", "erfc", "floor", "ceil", "trunc", "sign", "amax", "amin", "prod", "mean",
]  # fmt: skip

add = get_op("add")
sub = get_op("sub")
mul = get_op("mul")
truediv = get_op("truediv")
floordiv = get_op("floordiv")
mod = get_op("mod")
pow = get_op("pow")  # noqa: A001 - the op's name
neg = get_op("neg")
abs = get_op("abs")  # noqa: A001
exp = get_op("exp")
log = get_op("log")
sqrt = get_op("sqrt")
sin = get_op("sin")
cos = get_op("cos")
tan = get_op("tan")
tanh = get_op("tanh")
sigmoid = get_op("sigmoid")
maximum = get_op("maximum")
minimum = get_op("minimum")
where = get_op("where")
lt = get_op("lt")
le = get_op("le")
gt = get_op("gt")
ge = get_op("ge")
eq = get_op("eq")
ne = get_op("ne")
logical_and = get_op("logical_and")
logical_or = get_op("logical_or")
logical_not = get_op("logical_not")
dot = get_op("dot")
matmul = get_op("matmul")
sum = get_op("sum")  # noqa: A001
transpose = get_op("transpose")
log1p = get_op("log1p")
expm1 = get_op("expm1")
softplus = get_op("softplus")
log_sigmoid = get_op("log_sigmoid")
logaddexp = get_op("logaddexp")
logsumexp = get_op("logsumexp")
amax = get_op("amax")
amin = get_op("amin")
prod = get_op("prod")
mean = get_op("mean")

# exported under names that shadow no builtin (see the module docstring)
abs_, pow_, sum_ = abs, pow, sum
asin = get_op("asin")
acos = get_op("acos")
atan = get_op("atan")
atan2 = get_op("atan2")
hypot = get_op("hypot")
sinh = get_op("sinh")
cosh = get_op("cosh")
asinh = get_op("asinh")
acosh = get_op("acosh")
atanh = get_op("atanh")
log2 = get_op("log2")
log10 = get_op("log10")
erf = get_op("erf")
erfc = get_op("erfc")
floor = get_op("floor")
ceil = get_op("ceil")
trunc = get_op("trunc")
sign = get_op("sign")
