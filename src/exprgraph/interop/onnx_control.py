"""Control flow and model-local functions in ONNX shape inference: ``If``, ``Loop``, ``Scan``, ``SequenceMap``
and calls of ``model.functions``.

A rule here is a generator: it yields ``inf.subgraph(graph, slots)`` (a walk of a subgraph whose inputs
hold ``slots``; outer-scope values stay visible) and receives the subgraph outputs' slots, so that the
engine's driver runs nested subgraphs from an explicit stack, never by recursion. Loop-carried values
keep the dims that stay the same through the body (others are fresh); scan outputs get the trip count
or the scanned length in front. A function call is inlined: its nodes renamed into the caller's
names (``ref_attr_name`` attributes take the caller's) and walked as a subgraph. Imports: errors,
onnx_dims, onnx_sequences.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any

from ..errors import ShapeError
from .onnx_dims import Dim, _attr, _axis, _int_attr, _ints_attr
from .onnx_sequences import Seq, Slot, merge_shapes, same_dim

if TYPE_CHECKING:
    from .onnx_shapes import Inference

__all__ = ["CONTROL_RULES", "call_function", "drive", "MAX_INLINED_NODES"]

#: most nodes that inlining model-local functions may create in one model
MAX_INLINED_NODES = 1_000_000

Walk = Generator[Any, Any, list[Any]]


def drive(root: Generator[Any, Any, Any]) -> Any:
    """Run a walk whose steps yield walks of subgraphs: each runs from this stack, its result sent back."""
    stack = [root]
    send: Any = None
    error: BaseException | None = None
    while stack:
        try:
            request = stack[-1].throw(error) if error is not None else stack[-1].send(send)
        except StopIteration as stop:
            stack.pop()
            send, error = stop.value, None
            continue
        except Exception as exc:
            stack.pop()
            if not stack:
                raise
            send, error = None, exc
            continue
        stack.append(request)
        send, error = None, None
    return send


def _graph(inf: Inference, node: Any, name: str) -> Any:
    g = _attr(node, name)
    if not isinstance(g, inf.onnx.GraphProto):
        raise ShapeError(f"attribute {name!r} must be a graph, not {type(g).__name__}")
    return g


def merge_slots(inf: Inference, node: Any, slots: list[Slot], what: str) -> Slot:
    """A slot that covers each of ``slots``: equal dims kept, others fresh; a value when all are the same."""
    if all(s.seq is not None for s in slots):
        seqs = [s.seq for s in slots if s.seq is not None]
        elem = merge_shapes(inf, node, [q.elem for q in seqs], what)
        length = seqs[0].length if all(same_dim(inf, seqs[0].length, q.length) for q in seqs) else None
        return Slot(seq=Seq(None, elem, length, seqs[0].optional))
    shape = merge_shapes(inf, node, [s.shape for s in slots], what)
    first = slots[0].value
    same = first is not None and all(s.value == first for s in slots)
    return Slot(shape, first if same else None)


def _if(inf: Inference, node: Any) -> Walk:
    # If(c): the branch c names; when c is not known, what both branches agree on
    cond = inf.tensor(node, 0)
    known = cond.entries[0] if cond is not None and len(cond.entries) == 1 else None
    then_g, else_g = _graph(inf, node, "then_branch"), _graph(inf, node, "else_branch")
    if known in (0, 1) and known.__class__ is int:
        return (yield inf.subgraph(then_g if known else else_g, []))
    a = yield inf.subgraph(then_g, [])
    b = yield inf.subgraph(else_g, [])
    if len(a) != len(b):
        raise ShapeError(f"the branches have {len(a)} and {len(b)} outputs")
    return [merge_slots(inf, node, [x, y], f"{i}_") for i, (x, y) in enumerate(zip(a, b, strict=True))]


def _loop_state(inf: Inference, node: Any, body: Any, around: tuple[list[Slot], list[Slot]], init: list[Slot],
                skip: int) -> Generator[Any, Any, tuple[list[Slot], list[Slot]]]:  # fmt: skip
    """(final carried slots, body outputs): carried dims the body changes become fresh, then walked again.

    The body's inputs are ``around[0]``, the carried values, then ``around[1]``; its outputs from ``skip`` on
    are the carried values."""
    before, after = around
    outs = yield inf.subgraph(body, [*before, *init, *after])
    n = len(init)
    if len(outs) < skip + n:
        raise ShapeError(f"the body has {len(outs)} outputs, fewer than {skip + n}")
    general = [
        merge_slots(inf, node, [a, b], f"c{i}_")
        for i, (a, b) in enumerate(zip(init, outs[skip : skip + n], strict=True))
    ]
    if any(g.shape != a.shape or g.seq != a.seq for g, a in zip(general, init, strict=True)):
        general = [Slot(g.shape, None, g.seq) for g in general]
        outs = yield inf.subgraph(body, [*before, *general, *after])
        again = [
            merge_slots(inf, node, [a, b], f"c{i}_")
            for i, (a, b) in enumerate(zip(general, outs[skip : skip + n], strict=False))
        ]
        general = [g if g.shape == h.shape else h for g, h in zip(general, again, strict=True)]
    else:
        general = [g if g.value is not None and g.value == a.value else Slot(g.shape, None, g.seq)
                   for g, a in zip(general, init, strict=True)]  # fmt: skip
    return general, outs


def _trip_count(inf: Inference, node: Any, body_cond: Slot | None) -> Dim:
    """The number of iterations of a Loop: M when nothing stops it earlier, else a fresh dim up to M."""
    m = inf.value(node, 0)
    most = m.entries[0] if m is not None and len(m.entries) == 1 else None
    has_cond = len(node.input) > 1 and bool(node.input[1])
    cond_in = inf.value(node, 1) if has_cond else None
    always = body_cond is not None and body_cond.value is not None and body_cond.value.entries == (1,)
    if most is not None and (not has_cond or (always and cond_in is not None and cond_in.entries == (1,))):
        return most if most.__class__ is not int else max(most, 0)
    high = most if most is not None and (most.__class__ is not int or most >= 0) else None
    return inf.fresh_dim(node, "trips", 0, high)


def _loop(inf: Inference, node: Any) -> Walk:
    # Loop(M, cond, v...): carried values as the body keeps them; scan outputs stacked: (trips, ...)
    body = _graph(inf, node, "body")
    n = len(node.input) - 2
    if n < 0:
        raise ShapeError("a Loop needs inputs M and cond (either may be empty)")
    init = [inf.slot(name, values=False) for name in node.input[2:]]
    carried, outs = yield from _loop_state(inf, node, body, ([Slot(()), Slot(())], []), init, 1)
    trips = _trip_count(inf, node, outs[0] if outs else None)
    scans = [Slot(None if s.shape is None else (trips, *s.shape)) for s in outs[1 + n :]]
    return [*carried, *scans]


def _scan(inf: Inference, node: Any) -> Walk:
    # Scan(states..., xs...): each x sliced along its scan axis; scan outputs stacked along theirs
    if inf.opset() < 9:
        return [Slot()] * len(node.output)  # the opset-8 Scan (batched, with sequence lengths) is not followed
    body = _graph(inf, node, "body")
    m = _int_attr(node, "num_scan_inputs")
    if m is None or not 0 <= m <= len(node.input):
        raise ShapeError(f"num_scan_inputs {m} for {len(node.input)} inputs")
    n = len(node.input) - m
    in_axes = _ints_attr(node, "scan_input_axes") or [0] * m
    if len(in_axes) != m:
        raise ShapeError(f"{len(in_axes)} scan_input_axes for {m} scan inputs")
    slices: list[Slot] = []
    lengths: list[Dim] = []
    for j, axis in enumerate(in_axes):
        x = inf.shape(node, n + j)
        if x is None:
            slices.append(Slot())
            continue
        a = _axis(axis, len(x))
        lengths.append(x[a])
        slices.append(Slot((*x[:a], *x[a + 1 :])))
    length = next((d for d in lengths if d.__class__ is int), lengths[0] if lengths else None)
    init = [inf.slot(name, values=False) for name in node.input[:n]]
    states, outs = yield from _loop_state(inf, node, body, ([], slices), init, 0)
    scans = outs[n:]
    out_axes = _ints_attr(node, "scan_output_axes") or [0] * len(scans)
    if len(out_axes) != len(scans):
        raise ShapeError(f"{len(out_axes)} scan_output_axes for {len(scans)} scan outputs")
    stacked = []
    for s, axis in zip(scans, out_axes, strict=True):
        if s.shape is None:
            stacked.append(Slot())
            continue
        a = _axis(axis, len(s.shape) + 1)
        stacked.append(Slot((*s.shape[:a], length, *s.shape[a:])))
    return [*states, *stacked]


def _sequence_map(inf: Inference, node: Any) -> Walk:
    # SequenceMap(s, extras...): the body applied to each element; each output a sequence of s's length
    body = _graph(inf, node, "body")
    first = inf.sequences.get(node.input[0]) if node.input and node.input[0] else None
    slots = []
    for name in node.input:
        q = inf.sequences.get(name)
        slots.append(Slot(q.elem) if q is not None else inf.slot(name, values=False))
    outs = yield inf.subgraph(body, slots)
    length = first.length if first is not None else None
    return [Slot(seq=Seq(None, o.shape, length)) for o in outs]


def call_function(inf: Inference, node: Any, fn: Any) -> Walk:
    """A call of the model-local function ``fn``: its nodes inlined under the caller's names and walked."""
    key = (fn.domain, fn.name)
    if key in inf.calling:
        raise ShapeError(f"function {fn.domain}:{fn.name} calls itself")
    nodes = _inlined(inf, node, fn)
    inf.calling.add(key)
    try:
        return (yield inf.subgraph(nodes, [], list(node.output)))
    finally:
        inf.calling.discard(key)


def _inlined(inf: Inference, node: Any, fn: Any) -> list[Any]:
    """Copies of ``fn``'s nodes: its inputs and outputs renamed to the call's, its own names made unique."""
    inf.inlined += len(fn.node)
    if inf.inlined > MAX_INLINED_NODES:
        raise ShapeError(f"inlining functions makes more than {MAX_INLINED_NODES} nodes")
    prefix = f"{fn.name}#{inf.inlined}/"
    rename = {formal: "" for formal in fn.input}
    rename.update(zip(fn.input, node.input, strict=False))
    rename.update(zip(fn.output, node.output, strict=False))
    given = {a.name: a for a in node.attribute}
    given.update({a.name: a for a in fn.attribute_proto if a.name not in given})
    out = []
    for n in fn.node:
        copy = type(n)()
        copy.CopyFrom(n)
        copy.input[:] = [rename.get(x, prefix + x) if x else "" for x in n.input]
        copy.output[:] = [rename.get(x, prefix + x) if x else "" for x in n.output]
        del copy.attribute[:]
        for a in n.attribute:
            source = given.get(a.ref_attr_name) if a.ref_attr_name else a
            if source is not None:
                copy.attribute.add().CopyFrom(source)
                copy.attribute[-1].name = a.name
        out.append(copy)
    return out


CONTROL_RULES: dict[str, Callable[[Inference, Any], Walk]] = {
    "If": _if,
    "Loop": _loop,
    "Scan": _scan,
    "SequenceMap": _sequence_map,
}
