"""Right-hand sides of kernel statements as core terms: tensor reads, the language's operators and functions.

A right-hand side is an ordinary term of the op table. A tensor read ``B[n, c, p + r]`` is the
core's ``access`` op applied to the tensor (a symbol carrying the tensor's shape and dtype) and the
index terms (int64 terms over the loop variables); every other node is an op of the table. The
kernel language writes ``+ - * / // %`` infix and calls any elementwise op of the table by name
(``exp(x)``, ``max(a, b)``, ``where(c, a, b)``): :data:`OPERATORS` says which op each infix symbol
stands for in ``float`` and in ``int`` kernels, and :func:`function` finds the op a name calls.

Walks treat a read as a leaf of the value (:func:`value_nodes`), and every walk is iterative.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from ..core import Symbol, Term, const, substitute
from ..core.dtypes import FLOAT64
from ..core.op import PREC_ADD, PREC_ATOM, PREC_MUL, PREC_UNARY, Op, find_op, get_op
from ..core.printing import format_const
from ..errors import KernelError

__all__ = [
    "ACCESS",
    "OPERATORS",
    "MAX_TREE",
    "read",
    "is_access",
    "tensor_name",
    "index_of",
    "value_nodes",
    "accesses",
    "map_accesses",
    "function",
    "format_rhs",
    "tree_size",
    "number",
    "split_accumulator",
]

#: the indexed-access op: ``access(T, i, j)`` is ``T[i, j]``
ACCESS: Op = get_op("access")

#: infix operators of the kernel language: symbol -> (precedence, op in float kernels, op in int kernels);
#: ``/`` and ``%`` are C's (``truncdiv``/``fmod`` on ints, true division and fmodf on floats)
OPERATORS: dict[str, tuple[int, str, str]] = {
    "+": (PREC_ADD, "add", "add"),
    "-": (PREC_ADD, "sub", "sub"),
    "*": (PREC_MUL, "mul", "mul"),
    "/": (PREC_MUL, "truediv", "truncdiv"),
    "//": (PREC_MUL, "floordiv", "floordiv"),
    "%": (PREC_MUL, "fmod", "fmod"),
}

#: most nodes a right-hand side may have once written out as a tree (text expands shared nodes)
MAX_TREE = 1_000_000

_SYMBOL = get_op("symbol")
_NEG = get_op("neg")


def read(tensor: Term, index: Sequence[Term]) -> Term:
    """The read ``tensor[index]`` (no index: the one element of a ``<1>`` tensor)."""
    return Term(ACCESS, (tensor, *index))


def is_access(term: Term) -> bool:
    """True for a tensor read."""
    return term.op is ACCESS


def tensor_name(access: Term) -> str:
    """The name of the tensor a read reads."""
    return access.args[0].attr[0]


def index_of(access: Term) -> tuple[Term, ...]:
    """The index terms of a read."""
    return access.args[1:]


def value_nodes(root: Term) -> list[Term]:
    """Distinct nodes of a right-hand side, operands first, reads as leaves (their indices not entered)."""
    out: list[Term] = []
    seen: set[Term] = {root}
    stack: list[tuple[Term, int]] = [(root, 0)]
    while stack:
        node, i = stack[-1]
        args = () if node.op is ACCESS else node.args
        while i < len(args) and args[i] in seen:
            i += 1
        if i < len(args):
            stack[-1] = (node, i + 1)
            seen.add(args[i])
            stack.append((args[i], 0))
        else:
            stack.pop()
            out.append(node)
    return out


def accesses(root: Term) -> list[Term]:
    """The distinct reads of a right-hand side, left to right."""
    return [t for t in value_nodes(root) if t.op is ACCESS]


def map_accesses(root: Term, fn: Callable[[Term], Term]) -> Term:
    """``root`` with every read ``a`` replaced by ``fn(a)``."""
    mapping = {a: fn(a) for a in accesses(root)}
    mapping = {a: b for a, b in mapping.items() if a is not b}
    return substitute(root, mapping) if mapping else root


def number(value: int | float, data_type: str) -> Term:
    """A constant of the kernel's type: an int64 constant in ``int`` kernels, a float64 one in ``float``."""
    return const(int(value)) if data_type == "int" else const(float(value))


def _elementwise(op: Op) -> bool:
    """Whether ``op`` applies element by element (probed on operands of shapes (2, 3) and ())."""
    if op.notation in ("leaf", "index") or op.attr_name is not None or (op.impl is None and op.ufunc is None):
        return False
    lo = max(op.arity[0], 1)
    try:
        wide = op.check((Symbol("eg_w", FLOAT64, (2, 3)),) * lo, None)[1]
        mixed = op.check((Symbol("eg_w", FLOAT64, (2, 3)), *(Symbol("eg_s", FLOAT64),) * (lo - 1)), None)[1]
    except (TypeError, ValueError):
        return False
    return tuple(wide) == (2, 3) and tuple(mixed) == (2, 3)


_FUNCTIONS: dict[str, tuple[Op, Op | None]] = {}


def function(name: str) -> Op | None:
    """The op a kernel calls by ``name`` (an elementwise op of the table, or an alias), else None."""
    op = find_op(name)
    if op is None:
        return None
    cached = _FUNCTIONS.get(name)
    if cached is None or cached[0] is not op:
        cached = _FUNCTIONS[name] = (op, op if _elementwise(op) else None)
    return cached[1]


# -- printing in the kernel language ----------------------------------------------------------------


def _infix_of(data_type: str) -> dict[str, tuple[str, int]]:
    return {(entry[2] if data_type == "int" else entry[1]): (symbol, entry[0]) for symbol, entry in OPERATORS.items()}


def format_rhs(root: Term, data_type: str, ref: Callable[[Term], str]) -> str:
    """Kernel-language text of a right-hand side (fewest parentheses; ``ref`` prints reads)."""
    infix = _infix_of(data_type)
    done: dict[Term, tuple[str, int]] = {}
    for node in value_nodes(root):
        op = node.op
        if op is ACCESS:
            done[node] = (ref(node), PREC_ATOM)
        elif not node.args:
            text = format_const(node.attr) if node.is_const else node.attr[0]
            done[node] = (text, PREC_UNARY if text.startswith("-") else PREC_ATOM)
        elif op is _NEG:
            text, prec = done[node.args[0]]
            # -(-x) must not print as --x (a decrement in C)
            inner = text if prec >= PREC_UNARY and not text.startswith("-") else f"({text})"
            done[node] = (f"-{inner}", PREC_UNARY)
        elif op.name in infix and len(node.args) == 2:
            symbol, prec = infix[op.name]
            (lt, lp), (rt, rp) = done[node.args[0]], done[node.args[1]]
            left = lt if lp >= prec else f"({lt})"
            # operators associate to the left: a right operand of equal precedence needs parentheses
            right = rt if rp > prec else f"({rt})"
            done[node] = (f"{left} {symbol} {right}", prec)
        elif op.name in infix:  # a variadic sum or product: left to right
            symbol, prec = infix[op.name]
            parts = [done[a] for a in node.args]
            text = parts[0][0] if parts[0][1] >= prec else f"({parts[0][0]})"
            for t, p in parts[1:]:
                text += f" {symbol} " + (t if p > prec else f"({t})")
            done[node] = (text, prec)
        else:
            done[node] = (f"{op.name}({', '.join(done[a][0] for a in node.args)})", PREC_ATOM)
    return done[root][0]


def tree_size(roots: Iterable[Term], limit: int) -> int:
    """Nodes of the right-hand sides written out as trees (reads count 1); KernelError beyond ``limit``."""
    total = 0
    for root in roots:
        size: dict[Term, int] = {}
        for node in value_nodes(root):
            n = 1 if node.op is ACCESS else 1 + sum(size[a] for a in node.args)
            if n > limit:
                raise KernelError(f"a right-hand side written out as a tree has more than {limit} nodes")
            size[node] = n
        total += size[root]
        if total > limit:
            raise KernelError(f"the right-hand sides written out as trees have more than {limit} nodes")
    return total


_ACC_ADD, _ACC_SUB = get_op("add"), get_op("sub")


def split_accumulator(rhs: Term, target: Term, data_type: str = "float") -> Term | None:
    """``rest`` when ``rhs`` is ``target + rest`` (up to the order of a +/- chain), else None."""
    terms: list[tuple[Term, int]] = []
    stack: list[tuple[Term, int]] = [(rhs, 1)]
    while stack:
        node, sign = stack.pop()
        if node.op is _ACC_ADD:
            stack.extend((a, sign) for a in reversed(node.args))
        elif node.op is _ACC_SUB:
            stack.append((node.args[1], -sign))
            stack.append((node.args[0], sign))
        else:
            terms.append((node, sign))
    for k, (node, sign) in enumerate(terms):
        if sign > 0 and node is target:
            rest = terms[:k] + terms[k + 1 :]
            if not rest:
                return number(0, data_type)
            first, s0 = rest[0]
            acc = first if s0 > 0 else Term(_NEG, (first,))
            for t, s in rest[1:]:
                acc = Term(_ACC_ADD if s > 0 else _ACC_SUB, (acc, t))
            return acc
    return None
