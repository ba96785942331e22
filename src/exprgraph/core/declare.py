"""Declaring an op of the standard table in one call: an infix or prefix operator, or a called function.

Imports op only (and numpy for the variadic evaluation of binary ufuncs).
"""

from __future__ import annotations

from typing import Any

from .op import Op, register_op


def _nary(ufunc: Any) -> Any:
    def apply(*values: Any) -> Any:
        out = ufunc(values[0], values[1])
        for v in values[2:]:
            out = ufunc(out, v)
        return out

    return apply


def _operator(name: str, arity: Any, infer: Any, notation: str, symbol: str, prec: int, c: str | None, **kw: Any) -> Op:
    op = Op(name, arity, infer, notation=notation, symbol=symbol, precedence=prec, c_render=c, **kw)
    return register_op(op)


def _infix(name: str, symbol: str, prec: int, infer: Any, ufunc: Any, c: str | None = None, **kw: Any) -> Op:
    arity = kw.pop("arity", 2)
    kw.setdefault("assoc", "left")
    kw.setdefault("impl", _nary(ufunc) if arity != 2 else None)
    return _operator(name, arity, infer, "infix", symbol, prec, c, ufunc=ufunc, **kw)


def _prefix(name: str, symbol: str, prec: int, infer: Any, ufunc: Any, c: str, **kw: Any) -> Op:
    return _operator(name, 1, infer, "prefix", symbol, prec, c, ufunc=ufunc, **kw)


def _call(name: str, arity: Any, infer: Any, c: str | None = None, ufunc: Any = None, **kw: Any) -> Op:
    return register_op(Op(name, arity, infer, ufunc=ufunc, notation="call", c_render=c, **kw))
