"""The seed's node rewriter, shared by the seed's examples and the PyTensor compatibility tests."""

from __future__ import annotations

from exprgraph import get_op
from exprgraph.graph import NodeRewriter

mul, truediv = get_op("mul"), get_op("truediv")


class LocalSimplify(NodeRewriter):
    """The seed's node rewriter."""

    def transform(self, fgraph, node):
        if node.op == truediv:
            x, y = node.args
            if x.op == mul:
                a, b = x.args
                if y == a:
                    return [b]
                elif y == b:
                    return [a]
        return False

    def tracks(self):
        return [truediv]
