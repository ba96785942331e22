"""Templates: the right-hand side of a rule (``V.x``, ``2 * V.x``) filled in with the bindings.

A template is compiled once into a small stack program, so filling it never recurses. Imports
core and match only.
"""

from __future__ import annotations

from typing import Any

from ..core import Term, const
from ..errors import PatternError
from ..match import Choice, OpPattern, Pattern, Segment, Star, Var, Where
from ..match.patterns import _DotType, format_pattern

__all__ = ["Template", "literal_for"]

_BOOL_INT_FLOAT = (bool, int, float)


class _Splice:
    __slots__ = ("items",)

    def __init__(self, items: Any) -> None:
        self.items = tuple(items)


def _template_children(t: Any) -> tuple:
    cls = t.__class__
    if cls is OpPattern:
        return (*t.args, t.attr) if isinstance(t.attr, Pattern) else t.args
    if cls is tuple or cls is list:
        return tuple(t)
    if cls is dict:
        return tuple(t.values())
    return ()


class Template:
    """A right-hand side compiled to a small stack program (no recursion, any depth)."""

    __slots__ = ("source", "program", "names", "root_literal", "_literals")

    def __init__(self, source: Any) -> None:
        self.source = source
        program: list[tuple] = []
        names: set[str] = set()
        number: list[bool] = []  # per value the program has pushed: whether it is a number literal
        stack: list[tuple[Any, bool]] = [(source, False)]
        while stack:
            node, expanded = stack.pop()
            added = len(program)
            cls = node.__class__
            if cls is Var:
                names.add(node.name)
                program.append(("var", node.name))
            elif cls is Segment:
                names.add(node.name)
                program.append(("seg", node.name))
            elif (
                cls is _DotType
                or isinstance(node, (Star, Choice, Where))
                or (isinstance(node, Pattern) and cls is not OpPattern)
            ):
                raise PatternError(f"{format_pattern(node)} cannot appear on the right-hand side of a rule")
            elif cls in (OpPattern, tuple, list, dict):
                if expanded:
                    if cls is OpPattern:
                        attr_var = isinstance(node.attr, Pattern)
                        if attr_var and node.attr.__class__ is not Var:
                            raise PatternError("an attr on the right-hand side must be a value or a variable")
                        op = node.op
                        if op.__class__ is Var:  # the op a variable bound on the left: V.f(...)
                            names.add(op.name)
                        n = len(node.args)
                        flags = number[len(number) - n - attr_var : len(number) - attr_var]
                        weak = tuple(k for k, f in enumerate(flags) if f)
                        program.append(("op", op, n, node.attr if not attr_var else None, attr_var, weak))
                    elif cls is dict:
                        program.append(("dict", tuple(node)))
                    else:
                        program.append((cls.__name__, len(node)))
                else:
                    stack.append((node, True))
                    stack.extend((k, False) for k in reversed(_template_children(node)))
            else:
                program.append(("lit", node))
            if len(program) > added:
                _track(program, number)
        self.program = tuple(program)
        self.names = frozenset(names)
        self.root_literal = source if source.__class__ in _BOOL_INT_FLOAT else None
        self._literals: dict[str, Any] = {}  # dtype -> the root literal as a constant of that dtype

    def fill(self, b: dict[str, Any], matched: Any = None) -> Any:
        """The template with its variables replaced by the bindings ``b``."""
        lit = self.root_literal
        if lit is not None:
            if matched.__class__ is not Term:
                return lit
            found = self._literals.get(matched.dtype)
            if found is None:
                found = self._literals[matched.dtype] = _literal_like(lit, matched)
            return found
        program = self.program
        if len(program) == 1 and program[0][0] == "var":
            return b[program[0][1]]
        vals: list[Any] = []
        for ins in program:
            kind = ins[0]
            if kind == "var":
                vals.append(b[ins[1]])
            elif kind == "lit":
                vals.append(ins[1])
            elif kind == "seg":
                vals.append(_Splice(b[ins[1]]))
            elif kind == "op":
                _, op, n, attr, attr_var, weak = ins
                if attr_var:
                    attr = vals.pop()
                if op.__class__ is Var:
                    op = b[op.name]
                if weak:
                    _weaken(vals, n, weak)
                args = _unsplice(vals[len(vals) - n :])
                del vals[len(vals) - n :]
                vals.append(op(*args, attr=attr))
            elif kind == "dict":
                keys = ins[1]
                items = vals[len(vals) - len(keys) :]
                del vals[len(vals) - len(keys) :]
                vals.append(dict(zip(keys, items, strict=True)))
            else:
                n = ins[1]
                items = _unsplice(vals[len(vals) - n :])
                del vals[len(vals) - n :]
                vals.append(tuple(items) if kind == "tuple" else list(items))
        return vals[0]


def _track(program: list[tuple], number: list[bool]) -> None:
    """Keep ``number`` (one flag per value on the stack) in step with the instruction just added."""
    ins = program[-1]
    kind = ins[0]
    if kind == "op":
        del number[len(number) - ins[2] - ins[4] :]
        number.append(False)
    elif kind == "dict":
        del number[len(number) - len(ins[1]) :]
        number.append(False)
    elif kind in ("tuple", "list"):
        del number[len(number) - ins[1] :]
        number.append(False)
    elif kind == "lit":
        v = ins[1]
        if v.__class__ is Term:
            v = v.attr if v.op.name == "const" else None
        number.append(v.__class__ in (int, float))
    else:
        number.append(False)


def _weaken(vals: list, n: int, weak: tuple[int, ...]) -> None:
    """Number literals among the last ``n`` values become float32 next to float32 operands (weak, as numpy 2's)."""
    start = len(vals) - n
    dtypes = []
    for k in range(n):
        if k in weak:
            continue
        v = vals[start + k]
        if v.__class__ is Term:
            dtypes.append(v.dtype)
        elif v.__class__ is _Splice:
            dtypes.extend(t.dtype for t in v.items if t.__class__ is Term)
    if "float32" not in dtypes or "float64" in dtypes or "int64" in dtypes:
        return
    for k in weak:
        lit = vals[start + k]
        value = lit.attr if lit.__class__ is Term else lit
        single = const(value, "float32")
        if float(single.attr) == value:  # only when float32 holds the number exactly
            vals[start + k] = single


def _unsplice(items: list) -> list:
    if not any(v.__class__ is _Splice for v in items):
        return items
    out: list = []
    for v in items:
        if v.__class__ is _Splice:
            out.extend(v.items)
        else:
            out.append(v)
    return out


def _literal_like(value: Any, matched: Any) -> Any:
    """A literal result; for a matched term, a constant of its dtype when int/float casting loses nothing."""
    if matched.__class__ is not Term:
        return value
    return literal_for(value, matched.dtype)


def literal_for(value: Any, dtype: str) -> Term:
    """A result literal in ``dtype`` when the cast loses nothing (``2`` in a float rule is ``2.0``), else as given."""
    if value.__class__ is bool or dtype == "bool":
        return const(value)
    try:
        c = const(value, dtype=dtype)
    except (TypeError, ValueError, OverflowError):
        return const(value)
    return c if c.attr == value else const(value)


# -- rules ------------------------------------------------------------------------------------------------
