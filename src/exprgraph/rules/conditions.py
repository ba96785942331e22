"""Conditions of textual rules (``where y != 0``), decided conservatively on the bindings.

Imports core, match and :mod:`.rule_parser`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core import Term
from ..core.parsing import tokenize
from ..errors import ParseError, PatternError, RuleSyntaxError
from ..match import OpPattern, Segment, Var
from .rule_parser import (
    _num,
    _parse_part,
    _PredCall,
)

__all__ = ["parse_condition"]


def parse_condition(
    text: str, *, functions: dict[str, Callable] | None = None, names: set[str] | None = None
) -> Callable[[dict], bool]:
    """A condition string compiled to ``test(bindings) -> bool`` (True only when it surely holds)."""
    if not isinstance(text, str):
        raise TypeError(f"a condition is a string, not {type(text).__name__}")
    try:
        tokens = tokenize(text)
        cond, parser = _parse_part(text, tokens[:-1], len(text), functions, True, "condition", 0)
        if parser.wild_pos is not None:
            raise ParseError("'_' cannot be used in a condition", text, parser.wild_pos)
        if names is not None:
            for nm, pos in parser.name_pos.items():
                if nm not in names:
                    raise ParseError(f"{nm!r} in the condition is not a variable of the left-hand side", text, pos)
    except RuleSyntaxError:
        raise
    except ParseError as exc:
        raise RuleSyntaxError(exc.msg, text, exc.pos) from None
    return _condition_test(cond, text)


def _condition_program(cond: Any) -> tuple:
    program: list[tuple] = []
    stack: list[tuple[Any, bool]] = [(cond, False)]
    while stack:
        node, expanded = stack.pop()
        cls = node.__class__
        if cls is Var:
            program.append(("var", node.name))
        elif cls is Segment:
            raise PatternError("a segment cannot appear in a condition")
        elif cls is OpPattern or cls is _PredCall:
            if expanded:
                program.append(
                    (
                        "op" if cls is OpPattern else "pred",
                        node.op if cls is OpPattern else node.pred.fn,
                        len(node.args),
                        getattr(node, "attr", None),
                    )
                )
            else:
                stack.append((node, True))
                stack.extend((a, False) for a in reversed(node.args))
        else:
            program.append(("lit", node))
    return tuple(program)


_COMPARE = {
    "lt": (np.less, False),
    "le": (np.less_equal, True),
    "gt": (np.greater, False),
    "ge": (np.greater_equal, True),
    "eq": (np.equal, True),
    "ne": (np.not_equal, False),
}


def _apply(op: Any, args: list, attr: Any) -> Any:
    """One op of a condition on values (numbers, terms, or None for unknown)."""
    name = op.name
    if name == "logical_not":
        v = _truth(args[0])
        return None if v is None else not v
    if name in ("logical_and", "logical_or"):
        vals = [_truth(a) for a in args]
        if name == "logical_and":
            return False if False in vals else (None if None in vals else True)
        return True if True in vals else (None if None in vals else False)
    if any(a is None for a in args):
        return None
    nums = [_num(a) for a in args]
    if name in _COMPARE:
        fn, on_identical = _COMPARE[name]
        a, b = nums
        if a is not None and b is not None:
            with np.errstate(all="ignore"):
                return bool(fn(a, b))
        if args[0].__class__ is Term and args[0] is args[1]:
            return on_identical
        return None
    if all(n is not None for n in nums):
        impl = op.impl if op.impl is not None else op.ufunc
        if impl is not None:
            try:
                with np.errstate(all="ignore"):
                    out = impl(*nums, attr=attr) if op.impl is not None and op.attr_name else impl(*nums)
                return out.item() if isinstance(out, np.generic) else out
            except Exception:
                return None
    try:
        return op(*args, attr=attr)
    except Exception:
        return None


def _truth(v: Any) -> bool | None:
    if v is None:
        return None
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    n = _num(v)
    if n is not None:
        return bool(n)
    return None


def _condition_test(cond: Any, text: str) -> Callable[[dict], bool]:
    program = _condition_program(cond)

    def test(b: dict) -> bool:
        vals: list[Any] = []
        for kind, *rest in program:
            if kind == "var":
                vals.append(b.get(rest[0]))
            elif kind == "lit":
                vals.append(rest[0])
            else:
                fn, n, attr = rest
                args = vals[len(vals) - n :]
                del vals[len(vals) - n :]
                if kind == "op":
                    vals.append(_apply(fn, args, attr))
                else:
                    try:
                        vals.append(None if any(a is None for a in args) else fn(*args))
                    except Exception:
                        vals.append(None)
        return _truth(vals[0]) is True

    test.__name__ = f"where {text}"
    test._is_condition = True  # type: ignore[attr-defined]
    return test
