"""Reading dimension text straight into its polynomial normal form: the fast path for text.

``simplify_expression`` takes text and gives text. For the short expressions of shape inference,
building the core term of the text and then walking it (:mod:`.simplify`) costs more than the
algebra, so this module reads the tokens once and keeps, for each operand, what the general walk
would know about the same node:

- a name or an integer literal, as it is;
- an open *region*, as the general walk defines them (a chain of one kind of node, see
  :mod:`.simplify`): the summands of a chain of ``+``, ``-``, unary ``-`` and ``k*x``, each with
  its coefficient; the factors of a chain of products; the arguments of a chain of ``^`` (``&``);
- a closed polynomial: a floor division, modulo or ceiling division already simplified (by
  :mod:`.division`), or a region closed because its parent is of another kind.

A region is closed by the same algebra as in the general walk, with the same operands in the same
order: summands and factors right to left, max/min arguments left to right. So the polynomial is
the one ``to_poly(parse_expression(text))`` gives on cold caches, dict order included, and the
opaque atoms (floor divisions, max...) are the same interned terms.

The general walk runs on the interned DAG, where a subexpression written twice is one node: a
node used twice is its own region there, while here each occurrence is read again. That makes no
difference, except when such a node is merged into a region of its own kind; every node gets an
id (equal nodes, equal ids, as for interned terms) so that this case is seen, and the fast path
then declines. It also declines (returns None, and the caller takes the general path, which gives
the answer or the error with its position) on text the parser would reject, on text of more than
``MAX_TOKENS`` tokens (but a flat sum, see below, is read whatever its length), and on a result
over a limit of :mod:`.normal`.

Work charged to the budget of :mod:`.normal` is never less than the general walk's (a repeated
subexpression is worked out again here, once there), so whatever the fast path finishes, the
general walk finishes too.

Text without floor division, modulo, max, min or calls of two arguments or more (sums and
products of names and integers) makes no atom, and needs none of this: no rule across the terms
of a sum can apply (they need opaque atoms), the order of the terms never reaches the output
(printing sorts them), and a region boundary changes nothing. Such text is read as its exact
polynomial, up to the order of its terms: a flat sum of products (``2*batch*seq - s0 + 1``, the
commonest shape expression) by one scan of its tokens, anything else by the operator loop with
_LightReader. A product of two sums makes the light reader decline; without one, the general
walk's work on at most MAX_TOKENS tokens stays below ``_LIGHT_WORK``, so neither path reaches the
budget (when a test lowers MAX_WORK below that, the exact reader takes the text). A flat sum is
read over the names themselves, not their atoms: a monomial of names sorted by name is its own
print key, so ``read_value`` prints it without building anything.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

from ..core.leaves import RESERVED_NAMES
from ..core.op import Op
from ..core.term import REGISTRY
from ..errors import TermTooLargeError
from . import normal
from .combine import combine_terms
from .context import Context
from .division import ceil_poly, floordiv_poly, mod_poly
from .factored import product_poly
from .maxmin import maxmin_poly
from .normal import ONE, Budget, Poly, mono_mul, mono_of_powers, p_const
from .parse import _BINARY, _CALLS, _UNARY_PREC  # one grammar table for both readers
from .polyprint import fits_int64, poly_value
from .terms import CEIL_DIV, INT64_MAX, dim_name

__all__ = ["read_polynomial", "read_value", "clear_name_cache", "MAX_TOKENS"]

_T = TypeVar("_T")

#: longer texts take the general path (linear in the size of its input, however large)
MAX_TOKENS = 256

# names, numbers, "//", and any other single non-blank character (an operator, a bracket, a comma,
# or a character the grammar does not have, which makes the fast path decline); names first, as
# the commonest tokens (no token starts with both a letter and a digit, so the order changes nothing)
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|//|\S")
_DIGITS = frozenset("0123456789")
_NAME_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")

_ADD, _SUB, _MUL, _NEG = REGISTRY["add"], REGISTRY["sub"], REGISTRY["mul"], REGISTRY["neg"]
_FLOORDIV, _MOD = REGISTRY["floordiv"], REGISTRY["mod"]
_MAX, _MIN = REGISTRY["maximum"], REGISTRY["minimum"]

_OPAQUE = {_FLOORDIV: floordiv_poly, _MOD: mod_poly, CEIL_DIV: ceil_poly}

#: the operators and calls this reader takes (a '/' and any other call send the text the general way)
_FAST_BINARY = {
    token: entry
    for token, entry in _BINARY.items()
    if entry[1] in _OPAQUE or entry[1] in (_ADD, _SUB, _MUL, _MAX, _MIN)
}
_FAST_CALLS = {name: entry for name, entry in _CALLS.items() if entry[0] in _OPAQUE or entry[0] in (_MAX, _MIN)}

# Operands are tuples (kind, node id, payload). Kinds, and their payloads:
_CONST = 0  # an integer literal: its value
_NAME = 1  # a name: its polynomial (one atom)
_POLY = 2  # a closed polynomial
_SUM = 3  # an open sum region: its summands [(polynomial, coefficient)], left to right
_PRODUCT = 4  # an open product region: [coefficient, {atom: power}, [(node id, sum)]] (see _Reader.product)
_MAXIMUM = 5  # an open max region: its arguments [polynomial], left to right
_MINIMUM = 6  # an open min region: likewise
_REGION = _SUM  # kinds from here on are open regions

#: tokens that make atoms (a call with one argument makes no node: Max(a) is a)
_ATOM_TOKENS = frozenset(["//", "%", "^", "&", ","])

#: a bound on the general walk's work on a text the light reader takes: at most 2*MAX_TOKENS
#: references to sums of at most MAX_TOKENS terms, and as many products of a sum by a monomial
_LIGHT_WORK = 4 * MAX_TOKENS**2

#: node ids of operator nodes start here: above every int64, so they never equal the id of a
#: literal (its value) and never the id of a name (its term)
_FIRST_NODE_ID = 2**64


class _DeclineError(Exception):
    """The fast path does not take this text: the general path will."""


class _Reader:
    """One reading: the node ids given so far, their edges, and the nodes merged into regions."""

    __slots__ = ("ctx", "ids", "edges", "merged", "atoms")

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        #: whether an opaque atom (floor division, max...) may be in a polynomial: only then can the
        #: rules across the terms of a sum (combine_terms) apply
        self.atoms = False
        #: (op, operand ids) -> node id: equal nodes get equal ids, as equal terms are one term
        self.ids: dict[tuple, int] = {}
        #: region node id -> number of (distinct parent node, operand) references to it
        self.edges: dict[int, int] = {}
        #: ids of region nodes merged into the region of their parent
        self.merged: list[int] = []

    def node_id(self, key: tuple, operands: tuple) -> int:
        """Id of the node ``key`` = ``(op, operand ids...)``; a new node counts its edges to regions."""
        ids = self.ids
        nid = ids.get(key)
        if nid is None:
            nid = ids[key] = _FIRST_NODE_ID + len(ids)
            edges = self.edges
            for kind, oid, _ in operands:
                if kind >= _REGION:
                    edges[oid] = edges.get(oid, 0) + 1
        return nid

    def negate(self, a: tuple) -> tuple:
        """``-a``: a sum node."""
        nid = self.node_id((_NEG, a[1]), (a,))
        if a[0] == _SUM:
            self.merged.append(a[1])
            return (_SUM, nid, [(p, -k) for p, k in a[2]])
        return (_SUM, nid, [(self.close(a), -1)])

    def binary(self, op: Op, a: tuple, b: tuple) -> tuple:
        """The operand for ``op(a, b)``: an open region (merging ``a`` or ``b`` if of its kind) or a polynomial."""
        akind, aid, apay = a
        bkind, bid, bpay = b
        # the node id (node_id, inlined: this runs for every operator)
        ids = self.ids
        key = (op, aid, bid)
        nid = ids.get(key)
        if nid is None:
            nid = ids[key] = _FIRST_NODE_ID + len(ids)
            if akind >= _REGION or bkind >= _REGION:
                edges = self.edges
                if akind >= _REGION:
                    edges[aid] = edges.get(aid, 0) + 1
                if bkind >= _REGION:
                    edges[bid] = edges.get(bid, 0) + 1
        if op is _ADD or op is _SUB:
            if akind == _SUM:
                self.merged.append(aid)
                summands = apay  # a is used up: its list is reused
            else:
                summands = [(apay if _NAME <= akind <= _POLY else self.close(a), 1)]
            k = 1 if op is _ADD else -1
            if bkind == _SUM:
                self.merged.append(bid)
                summands += bpay if k == 1 else [(p, -c) for p, c in bpay]
            else:
                summands.append((bpay if _NAME <= bkind <= _POLY else self.close(b), k))
            return (_SUM, nid, summands)
        if op is _MUL:
            # a product with an integer literal is a scaling (a sum node); with two, a constant
            if akind == _CONST or bkind == _CONST:
                if akind == _CONST and bkind == _CONST:
                    return (_SUM, nid, [(p_const(apay * bpay), 1)])
                k, x = (apay, b) if akind == _CONST else (bpay, a)
                if x[0] == _SUM:
                    self.merged.append(x[1])
                    return (_SUM, nid, [(p, c * k) for p, c in x[2]])
                return (_SUM, nid, [(self.close(x), k)])
            return (_PRODUCT, nid, self.product(a, b))
        if op is _MAX or op is _MIN:
            kind = _MAXIMUM if op is _MAX else _MINIMUM
            if akind == kind:
                self.merged.append(aid)
                arguments = apay
            else:
                arguments = [apay if _NAME <= akind <= _POLY else self.close(a)]
            if bkind == kind:
                self.merged.append(bid)
                arguments += bpay
            else:
                arguments.append(bpay if _NAME <= bkind <= _POLY else self.close(b))
            return (kind, nid, arguments)
        # floor division, modulo, ceiling division: opaque, on closed operands
        p = self.ctx.unwrap(
            _OPAQUE[op](
                apay if _NAME <= akind <= _POLY else self.close(a),
                bpay if _NAME <= bkind <= _POLY else self.close(b),
                self.ctx,
            )
        )
        self.atoms = True  # from here on, polynomials may hold atoms
        return (_POLY, nid, p)

    def product(self, a: tuple, b: tuple) -> list:
        """The product region of ``a*b`` (neither a literal): ``[coefficient, {atom: power}, sums]``.

        The single-term factors are multiplied at once (monomials commute, so the order does not
        matter, and MAX_TOKENS keeps the degree and constant-power limits of p_product out of
        reach: a factor repeated e times needs 5 tokens a copy, so e*64 < 4096). The sums are kept
        as ``(node id, polynomial)`` in text order, to be multiplied in when the region closes.
        """
        if a[0] == _PRODUCT:
            acc = a[2]  # a is used up: its region is extended
            if acc[2]:
                self.merged.append(a[1])  # see below
        else:
            acc = [1, {}, []]
            self.factor(acc, a)
        if b[0] == _PRODUCT:
            coef, powers, sums = b[2]
            acc[0] *= coef
            acc_powers = acc[1]
            for atom, q in powers.items():
                acc_powers[atom] = acc_powers.get(atom, 0) + q
            if sums:
                # merging a shared product node is harmless when its factors are single terms: the
                # general walk then multiplies the same monomials, with no work charged and no sums
                # moved (see the module docstring); otherwise the check at the end declines
                self.merged.append(b[1])
                acc[2] += sums
        else:
            self.factor(acc, b)
        return acc

    def factor(self, acc: list, a: tuple) -> None:
        """Multiply the product region ``acc`` by the operand ``a`` (not a product)."""
        kind, nid, payload = a
        p = payload if _NAME <= kind <= _POLY else self.close(a)
        if len(p) == 1:
            ((m, c),) = p.items()
            acc[0] *= c
            powers = acc[1]
            for atom, q in m:
                powers[atom] = powers.get(atom, 0) + q
        elif p:
            acc[2].append((nid, p))
        else:
            acc[0] = 0  # a zero factor

    def close(self, a: tuple) -> Poly:
        """The polynomial of an operand (closing its region)."""
        kind, _, payload = a
        if kind <= _POLY:
            return p_const(payload) if kind == _CONST else payload
        if kind == _SUM:
            return self.close_sum(payload)
        if kind == _PRODUCT:
            return self.close_product(payload)
        p = self.ctx.unwrap(maxmin_poly(payload, kind == _MAXIMUM, self.ctx))
        self.atoms = True  # from here on, polynomials may hold atoms
        return p

    def close_sum(self, summands: list) -> Poly:
        """``sum(k*p)``, added right to left as the general walk does, then the cross-term rules."""
        acc: Poly = {}
        get = acc.get
        work = 0
        for p, k in summands[::-1]:
            if not k:
                continue  # a summand times 0 is left out, unvisited
            work += len(p)
            for m, c in p.items():  # acc += k*p
                v = get(m, 0) + k * c
                if v:
                    acc[m] = v
                elif m in acc:
                    del acc[m]
        self.ctx.budget.spend(work)
        if len(acc) < 2 or not self.atoms:
            return acc  # no rule across terms applies: they need two terms, one with an opaque atom
        return combine_terms(acc, self.ctx)

    def close_product(self, region: list) -> Poly:
        """The product: the monomial, then the sums as the general walk meets them (see factored.product_poly).

        The walk meets the factors right to left, and an equal node once, with its power (p_product).
        """
        coef, powers, sums = region
        if not coef:
            return {}  # a zero factor
        monomial: Poly = {mono_of_powers(powers): coef}
        if not sums:
            return monomial
        counts: dict[int, list] = {}
        for nid, p in sums[::-1]:
            entry = counts.get(nid)
            if entry is None:
                counts[nid] = [p, 1]
            else:
                entry[1] += 1
        self.atoms = True  # sum atoms may be made: the rules across terms apply from here on
        factors: list[tuple[Poly, int]] = [(monomial, 1)]
        for p, e in counts.values():
            factors.append((p, e))
        return product_poly(factors, self.ctx)

    def check_sharing(self) -> None:
        """Decline if a node used twice was merged into a region: the general walk keeps it apart."""
        edges = self.edges
        for nid in self.merged:
            if edges.get(nid, 0) != 1:
                raise _DeclineError


class _LightReader:
    """Reads text without atoms: every operand is its exact polynomial, a dict of its own."""

    __slots__ = ()
    merged = ()  # no region is merged: no sharing to check

    @staticmethod
    def poly(a: tuple) -> Poly:
        """The polynomial of an operand (read only)."""
        kind, _, payload = a
        return p_const(payload) if kind == _CONST else payload

    @staticmethod
    def owned(a: tuple) -> Poly:
        """The polynomial of an operand, as a dict that may be changed (names share theirs)."""
        kind, _, payload = a
        if kind == _POLY:
            return payload
        return dict(payload) if kind == _NAME else p_const(payload)

    def negate(self, a: tuple) -> tuple:
        """``-a``."""
        p = self.owned(a)
        for m, c in p.items():
            p[m] = -c
        return (_POLY, None, p)

    def binary(self, op: Op, a: tuple, b: tuple) -> tuple:
        """``a + b``, ``a - b`` or ``a * b``."""
        if op is _MUL:
            p, q = self.poly(a), self.poly(b)
            if len(p) < len(q):
                p, q = q, p
            if len(q) != 1:
                if q:
                    raise _DeclineError  # a product of two sums: the general path charges its work
                return (_POLY, None, {})  # a zero factor
            ((mq, cq),) = q.items()
            if mq and len(p) > 1:
                raise _DeclineError  # a sum times a non-constant stays a product (a sum atom): the general way
            # p*(cq*mq): multiplying by a monomial keeps distinct monomials distinct
            return (_POLY, None, {mono_mul(m, mq): c * cq for m, c in p.items()})
        p = self.owned(a)
        get = p.get
        k = 1 if op is _ADD else -1
        for m, c in self.poly(b).items():  # p += k*q
            v = get(m, 0) + k * c
            if v:
                p[m] = v
            else:
                del p[m]
        return (_POLY, None, p)

    def close(self, a: tuple) -> Poly:
        """The polynomial of the whole text."""
        return self.poly(a)


#: name -> its operand (the name's term and polynomial); cleared with the other caches
_names: dict[str, tuple] = {}


def clear_name_cache() -> None:
    """Forget the operands of names."""
    _names.clear()


def _name(text: str) -> tuple:
    operand = _names.get(text)
    if operand is None:
        if text in RESERVED_NAMES:
            raise _DeclineError  # the parser rejects it
        t = dim_name(text)
        operand = (_NAME, t, {((t, 1),): 1})
        if len(_names) > 65536:
            _names.clear()
        _names[text] = operand
    return operand


#: a monomial of names: ``((name, power), ...)`` sorted by name, which is its mono_key; ``()`` is 1
NameMono = tuple
#: a polynomial over names: ``{NameMono: coefficient}``, no zero coefficients
NamePoly = dict


def _flat_sum(tokens: list[str]) -> NamePoly | None:
    """The polynomial of a flat sum (``2*batch*seq - s0 + -1``) over names, or None if the tokens are not one.

    A flat sum is terms with their signs in front, each a product of names and integers. Its
    polynomial is just the sum of the terms. ``tokens`` ends with _END.
    """
    acc: NamePoly = {}
    get = acc.get
    sign = 1  # of the next term: the binary '+' or '-' before it
    i = 0
    while True:
        tok = tokens[i]
        i += 1
        # the unary signs of the term; the parser reads a '-' right before a literal as its sign
        # (so -9223372036854775808 is a literal, but not in a - 9223372036854775808)
        negated = False
        while tok == "-" or tok == "+":
            negated = tok == "-"
            if negated:
                sign = -sign
            tok = tokens[i]
            i += 1
        coef = sign
        powers: dict[str, int] = {}
        while True:  # factors joined by '*'
            first = tok[:1]
            if first in _DIGITS:
                value = int(tok)
                if value > INT64_MAX + negated:
                    raise _DeclineError  # the parser rejects it
                coef *= value
            elif first in _NAME_START:
                if tok in RESERVED_NAMES:
                    raise _DeclineError  # the parser rejects it
                powers[tok] = powers.get(tok, 0) + 1
            else:
                return None  # not a flat sum
            negated = False
            tok = tokens[i]
            i += 1
            if tok != "*":
                break
            tok = tokens[i]
            i += 1
        if coef:
            m = tuple(sorted(powers.items())) if len(powers) > 1 else tuple(powers.items())
            v = get(m, 0) + coef
            if v:
                acc[m] = v
            else:
                del acc[m]
        if tok == "+":
            sign = 1
        elif tok == "-":
            sign = -1
        elif tok == _END:
            return acc
        else:
            return None  # not a flat sum


def _name_poly(named: NamePoly) -> Poly:
    """The polynomial over the names' atoms."""
    return {mono_of_powers({_name(n)[1]: p for n, p in m}): c for m, c in named.items()}


def _name_text(named: NamePoly) -> int | str:
    """``poly_value`` of the polynomial over names: the same text, printed without atoms.

    A name is its own key and never takes brackets, and a monomial over names is its own mono_key,
    so the terms print in the order of their monomials, each as ``c*f1*f2...`` (see :mod:`.polyprint`).
    """
    const = named.pop(ONE, 0)
    if not named:
        return fits_int64(const)
    out: list[str] = []
    for m, c in sorted(named.items()):  # monomials are distinct: only they are compared
        factors = "*".join([n for n, p in m for _ in range(p)]) if len(m) > 1 or m[0][1] > 1 else m[0][0]
        if out:
            # a later term: its sign, then its size
            if c < 0:
                out.append("-")
                c = -c
            else:
                out.append("+")
            out.append(factors if c == 1 else f"{fits_int64(c)}*{factors}")
        elif c == 1:
            out.append(factors)  # f1*f2
        elif c == -1:
            out.append("-" + factors)  # -f1*f2
        else:
            out.append(f"{fits_int64(c)}*{factors}")  # c*f1*f2, a negative c too
    if const > 0:
        out.append(f"+{fits_int64(const)}")
    elif const < 0:
        out.append(f"-{fits_int64(-const)}")
    return "".join(out)


def _is_light(text: str) -> bool:
    """Whether the text makes no atom and the light reader may take it (see the module docstring)."""
    # a token of _ATOM_TOKENS is in the tokens exactly when its text is in the text: no other
    # token holds any of their characters, and two '/' in a row always read as '//'
    return (
        normal.MAX_WORK >= _LIGHT_WORK
        and "//" not in text
        and "%" not in text
        and "^" not in text
        and "&" not in text
        and "," not in text
    )


def read_polynomial(text: str, ctx: Context) -> Poly | None:
    """The polynomial ``to_poly(parse_expression(text), ctx)`` gives on cold caches, or None to decline.

    Its terms are in the same order too, except for text without atoms (read by _LightReader).
    """
    return _read_text(text, ctx, _name_poly, _as_is)


def read_value(text: str, ctx: Context) -> int | str | None:
    """``poly_value(read_polynomial(text, ctx))``: what simplify_expression gives, or None to decline.

    A flat sum is printed straight from its monomials over names, without their atoms.
    """
    return _read_text(text, ctx, _name_text, poly_value)


def _as_is(p: Poly) -> Poly:
    return p


def _read_text(text: str, ctx: Context, flat: Callable[[NamePoly], _T], general: Callable[[Poly], _T]) -> _T | None:
    """``flat`` of the polynomial over names of a flat sum, else ``general`` of the polynomial; None to decline."""
    tokens = _TOKEN.findall(text)
    tokens.append(_END)
    long = len(tokens) > MAX_TOKENS + 1
    try:
        if _is_light(text):
            if not long or len(tokens) <= normal.MAX_WORK:
                # a flat sum is read in one scan, however long: the general walk's work on it is one
                # operation a term, within MAX_WORK
                named = _flat_sum(tokens)
                if named is not None:
                    return flat(named)
            if long:
                return None
            return general(_read(tokens, _LIGHT))
        if long:
            return None
        ctx.budget = Budget()
        return general(_read(tokens, _Reader(ctx)))
    except (_DeclineError, TermTooLargeError, OverflowError):
        return None


_LIGHT = _LightReader()


def _literal(digits: str, sign: int) -> tuple:
    value = int(digits)
    if value > INT64_MAX + (sign < 0):
        raise _DeclineError  # the parser rejects it
    value *= sign
    return (_CONST, value, value)


_END = ""  # appended after the last token: looking one token ahead never runs off the list
_BOTTOM = (-1, None)  # the bottom of the operator stack
_BRACKET = (0, "(")
_NEGATE = (_UNARY_PREC, None)


def _read(tokens: list[str], reader: _Reader | _LightReader) -> Poly:
    """The operator-precedence loop of :mod:`.parse`, on operands of the fast path (tokens end with _END)."""
    names = _names
    operands: list[tuple] = []
    push = operands.append
    # operator stack entries: (precedence, op) for binary operators, (5, None) for unary minus,
    # (0, "(") for a bracket, (0, name, operand height) for a call, and (-1, None) at the bottom;
    # a bracket, a call and the bottom stop reductions
    stack: list[tuple] = [_BOTTOM]
    i = 0
    while True:
        # an operand is expected
        tok = tokens[i]
        i += 1
        operand = names.get(tok)
        if operand is None or tokens[i] == "(":  # not a name read before (the most common operand)
            first = tok[:1]
            if first in _DIGITS:
                operand = _literal(tok, 1)
            elif tok == "(":
                stack.append(_BRACKET)
                continue
            elif tok == "-":
                if tokens[i][:1] in _DIGITS:
                    operand = _literal(tokens[i], -1)  # a minus sign on a literal is part of it
                    i += 1
                else:
                    stack.append(_NEGATE)
                    continue
            elif tok == "+":
                continue  # unary plus changes nothing
            elif first in _NAME_START:
                if tokens[i] == "(":
                    if tok not in _FAST_CALLS or tokens[i + 1] == ")":
                        raise _DeclineError
                    stack.append((0, tok, len(operands)))
                    i += 1
                    continue
                operand = _name(tok)
            else:
                raise _DeclineError  # the end, or not an operand
        push(operand)
        # an operator, a comma, a closing bracket or the end is expected
        while True:
            tok = tokens[i]
            i += 1
            entry = _FAST_BINARY.get(tok)
            # reduce: apply the operators on top that bind at least as tightly as this one to their
            # operands; anything else closes, and reduces every operator (the loosest binds at 1)
            prec = 1 if entry is None else entry[0]
            top = stack[-1]
            while top[0] >= prec:
                stack.pop()
                op = top[1]
                if op is None:
                    operands[-1] = reader.negate(operands[-1])
                else:
                    b = operands.pop()
                    operands[-1] = reader.binary(op, operands[-1], b)
                top = stack[-1]
            if entry is not None:
                stack.append(entry)
                break
            if tok == _END:
                if top[0] >= 0:  # not the bottom
                    raise _DeclineError  # a bracket was never closed
                if reader.merged:
                    reader.check_sharing()
                return reader.close(operands[0])
            if tok != ")" and tok != ",":
                raise _DeclineError
            if top[0] < 0:  # the bottom
                raise _DeclineError  # an unmatched ')' or a ',' outside a call
            if tok == ",":
                if len(top) != 3:
                    raise _DeclineError  # a ',' inside a bracket
                break
            stack.pop()
            if len(top) == 3:
                _call(top, operands, reader)


def _call(entry: tuple, operands: list, reader: _Reader | _LightReader) -> None:
    _, name, height = entry
    args = operands[height:]
    del operands[height:]
    op, lo, hi = _FAST_CALLS[name]
    if len(args) < lo or (hi is not None and len(args) > hi):
        raise _DeclineError
    acc = args[0]  # Max(a) is a
    for a in args[1:]:
        acc = reader.binary(op, acc, a)  # Max(a, b, c) is (a^b)^c
    operands.append(acc)
