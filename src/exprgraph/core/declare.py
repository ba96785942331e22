"""Declaring an op of the standard table in one call: an infix operator or a called function.

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


def _infix(name: str, symbol: str, prec: int, infer: Any, ufunc: Any, c: str | None = None, **kw: Any) -> Op:
    assoc = kw.pop("assoc", "left")
    arity = kw.pop("arity", 2)
    impl = kw.pop("impl", _nary(ufunc) if arity != 2 else None)
    return register_op(
        Op(
            name,
            arity,
            infer,
            ufunc=ufunc,
            impl=impl,
            notation="infix",
            symbol=symbol,
            precedence=prec,
            assoc=assoc,
            c_render=c,
            **kw,
        )
    )


def _call(name: str, arity: Any, infer: Any, c: str | None = None, ufunc: Any = None, **kw: Any) -> Op:
    return register_op(Op(name, arity, infer, ufunc=ufunc, notation="call", c_render=c, **kw))
