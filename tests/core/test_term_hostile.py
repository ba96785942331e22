"""Hostile calls of the term constructor: every one is an error, none a crash, a hang or a bad intern.

Each case here crashed, hung or poisoned the intern table before issue 26; run on the C base and on
the pure Python twin (``make test`` runs tests/core on both).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import exprgraph as eg
from exprgraph.core import Op, get_op, register_op, termbase
from exprgraph.core.inference import same
from exprgraph.errors import TermTableError

x, y = eg.symbols("x y")
_counter = iter(range(10**9))


@pytest.mark.parametrize("op", [1, None, 1.5, object(), b"add", Op, x, ("add",), get_op])
def test_an_op_that_is_not_an_op_is_a_type_error(op: object) -> None:
    with pytest.raises(TypeError, match="must be an Op or the name"):
        eg.Term(op, ())
    with pytest.raises(TypeError, match="must be an Op or the name"):
        eg.Term(op, (x, y))


def test_an_unknown_op_name_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        eg.Term("no_such_op", (x,))


def test_op_fields_are_read_only() -> None:
    sin = get_op("sin")
    with pytest.raises(AttributeError, match="read-only"):
        sin.name = 1.5  # type: ignore[assignment]
    with pytest.raises(AttributeError, match="cannot be deleted"):
        del sin.arity
    assert sin.name == "sin" and eg.Term(sin, (x,)) is eg.sin(x)


def _fresh_op(**fields: object) -> Op:
    return Op(f"hostile{next(_counter)}", 1, same, **fields)  # type: ignore[arg-type]


def test_a_field_forced_to_a_bad_value_gives_an_error_not_a_crash() -> None:
    # object.__setattr__ gets past the read-only check: the C base must still not trust the field
    op = _fresh_op()
    object.__setattr__(op, "name", 1.5)
    with pytest.raises(TypeError, match=r"1\.5 takes 1 operands, got 2"):
        eg.Term(op, (x, y))
    object.__setattr__(op, "name", b"bytes")
    with pytest.raises(TypeError, match="takes 1 operands"):
        eg.Term(op, ())


def test_an_op_with_an_emptied_slot_is_refused() -> None:
    op = _fresh_op()
    object.__delattr__(op, "infer")
    with pytest.raises((TypeError, AttributeError)):
        eg.Term(op, (x,))
    bare = Op.__new__(Op)
    with pytest.raises((TypeError, AttributeError)):
        eg.Term(bare, (x,))


def test_only_term_is_interned() -> None:
    class Sub(eg.Term):
        pass

    with pytest.raises(TypeError, match="only Term terms"):
        termbase.TermBase("add", (x, y))
    with pytest.raises(TypeError, match="only Term terms"):
        Sub("add", (x, y))
    with pytest.raises(TypeError, match="only Term terms"):
        Sub(get_op("add"), [x, y])
    s = x + y
    assert type(s) is eg.Term and s is eg.Term("add", (x, y))


class _Rebuilding:
    """An attr whose comparison builds a new term of its own op every time (and frees it)."""

    op: Op

    def __hash__(self) -> int:
        return 7

    def __eq__(self, other: object) -> bool:
        eg.Term(self.op, (x,), float(next(_counter)) + 0.5)
        return False


def test_an_attr_whose_eq_builds_terms_raises_instead_of_spinning() -> None:
    op = register_op(_fresh_op(attr_name="k"))
    _Rebuilding.op = op
    keep = [eg.Term(op, (x,), _Rebuilding())]
    with pytest.raises(TermTableError):
        for _ in range(4):
            keep.append(eg.Term(op, (x,), _Rebuilding()))
    # the table is still sound afterwards
    assert eg.sin(x) is eg.sin(x) and type(x * y) is eg.Term


class _Raising:
    def __init__(self, where: str) -> None:
        self.where = where

    def __hash__(self) -> int:
        if self.where == "hash":
            raise RuntimeError("hash")
        return 3

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq")


def test_an_attr_whose_hash_or_eq_raises_passes_the_error_on() -> None:
    op = register_op(_fresh_op(attr_name="k"))
    with pytest.raises(RuntimeError, match="hash"):
        eg.Term(op, (x,), _Raising("hash"))
    keep = eg.Term(op, (x,), _Raising("eq"))
    with pytest.raises(RuntimeError, match="eq"):
        eg.Term(op, (x,), _Raising("eq"))
    assert keep.attr.where == "eq"
    with pytest.raises(TypeError):
        eg.Term(op, (x,), [1, 2])  # unhashable


@pytest.mark.parametrize(
    "args",
    [(1, 2), (x, None), [x, "y"], (x, eg.Symbol), 5, None, "xy"],
    ids=repr,
)
def test_operands_that_are_not_terms_are_a_type_error(args: object) -> None:
    with pytest.raises(TypeError):
        eg.Term("add", args)


def test_operands_from_a_raising_iterable_pass_the_error_on() -> None:
    def gen():  # type: ignore[no-untyped-def]
        yield x
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        eg.Term("add", gen())


def test_the_crashes_of_issue_26_in_a_child_process() -> None:
    # the original reproducers, each in its own interpreter: a crash is a signal exit, not an exception
    script = textwrap.dedent(
        """
        import exprgraph as eg
        from exprgraph.core import get_op
        x, y = eg.symbols("x y")
        for op in (1, None):
            try:
                eg.Term(op, ())
            except TypeError:
                pass
        sin = get_op("sin")
        try:
            sin.name = 1.5
        except AttributeError:
            pass
        try:
            eg.Term(sin, (x, y))
        except TypeError:
            pass
        print("survived")
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "survived"
