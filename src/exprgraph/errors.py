"""Every error class exprgraph raises, in one place.

Input errors subclass the standard class callers already catch (``SyntaxError`` or
``ValueError``) and carry the position of the fault with a caret line.
"""

from __future__ import annotations

__all__ = [
    "ExprgraphError",
    "ParseError",
    "CommandError",
    "ShapeError",
    "DTypeError",
    "EvaluationError",
    "TermTooLargeError",
    "DimExpressionError",
    "MatchError",
    "PatternError",
    "RewriteLimitError",
    "RuleSyntaxError",
    "DifferentiationError",
    "CompileError",
    "CompilerNotFoundError",
    "KernelError",
    "InconsistencyError",
    "ReplacementTypeError",
    "MissingInputError",
    "NotInGraphError",
    "FeatureError",
    "RewriteDatabaseError",
    "RewriteWarning",
    "SizeLimitError",
    "CacheSecurityError",
    "BuildTimeoutError",
    "OptionalDependencyError",
    "ConversionError",
    "TermTableError",
    "SettingError",
    "DimOverflowError",
    "ExternalDataError",
    "MissingValueError",
    "UnusedInputError",
    "UnusedInputWarning",
    "UnsupportedUfuncError",
    "RewritePositionError",
    "DimContradictionError",
    "ShapeInferenceWarning",
    "ProblemError",
    "NonFiniteError",
    "IndexOutOfRangeError",
    "AssumptionError",
    "ScalariseError",
    "VMUnsupportedError",
    "IpoptLibraryError",
    "IpoptOptionError",
    "TooManyOperandsError",
    "DimConstantOverflowError",
]


class ExprgraphError(Exception):
    """Base class of all exprgraph errors."""


#: characters of the faulty line shown on each side of the caret (a megabyte line is not echoed whole)
CARET_WINDOW = 60


def caret_line(text: str, pos: int) -> str:
    """Return the line of ``text`` holding ``pos`` (cut to a window around it) and a caret under that column."""
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    end = end if end >= 0 else len(text)
    left, right = max(start, pos - CARET_WINDOW), min(end, pos + CARET_WINDOW)
    head, tail = ("..." if left > start else ""), ("..." if right < end else "")
    return f"{head}{text[left:right]}{tail}\n{' ' * (len(head) + pos - left)}^"


def located(message: str, text: str, pos: int) -> str:
    """``message`` with the position of the fault and the caret line under it."""
    return f"{message} at position {pos}\n{caret_line(text, pos)}"


class ParseError(ExprgraphError, SyntaxError, ValueError):
    """Text that does not parse; ``pos`` is the 0-based offset of the fault."""

    def __init__(self, message: str, text: str = "", pos: int = 0) -> None:
        self.msg = message
        self.text = text
        self.pos = pos
        line_start = text.rfind("\n", 0, pos) + 1
        self.lineno = text.count("\n", 0, pos) + 1
        self.offset = pos - line_start + 1
        self.args = (located(message, text, pos),)

    def __str__(self) -> str:
        return self.args[0]


class CommandError(ExprgraphError, ValueError):
    """Bad command-line input that is not an expression (a malformed ``name=value``, say)."""


class ShapeError(ExprgraphError, ValueError):
    """Operands whose shapes cannot combine under an op's shape rule."""


class DTypeError(ExprgraphError, TypeError):
    """An operand of a dtype the op does not accept, or an unknown dtype."""


class EvaluationError(ExprgraphError, ValueError):
    """Evaluation failed: a missing symbol, a value of the wrong shape, an unsupported op."""


class TermTooLargeError(ExprgraphError, ValueError):
    """Expanding a shared DAG into a tree (printing, say) would exceed the size limit."""


class DimExpressionError(ParseError, RuntimeError):
    """A dimension expression that does not parse (a SyntaxError and a RuntimeError, like the references')."""


class MatchError(ExprgraphError, ValueError):
    """A pattern does not match an expression (raised by ``exprgraph.match.match``)."""


class PatternError(ExprgraphError, TypeError, ValueError):
    """A malformed pattern: a segment outside a sequence, a bad name, an unknown op (a TypeError and a ValueError)."""


class RewriteLimitError(ExprgraphError, RuntimeError):
    """A rewrite did not terminate within its step budget (or cycled); names the rule and the step count."""

    def __init__(self, message: str, rule: str = "", steps: int = 0) -> None:
        super().__init__(message)
        self.rule = rule
        self.steps = steps


class RuleSyntaxError(ParseError):
    """A textual rule (``"x*1 -> x"``) that does not parse; ``pos`` is the offset in the rule text."""

    def __init__(self, message: str, text: str = "", pos: int = 0) -> None:
        super().__init__(message, text, pos)
        #: the whole rule text (``text`` is the offending line, as SyntaxError expects)
        self.source = text
        start = text.rfind("\n", 0, pos) + 1
        end = text.find("\n", pos)
        self.text = text[start : end if end >= 0 else len(text)]


class DifferentiationError(ExprgraphError, ValueError):
    """A term cannot be differentiated: an op without a gradient rule, or a non-scalar ``f`` for ``grad``."""


class CompileError(ExprgraphError, RuntimeError):
    """Compiling a term failed: an op the backend cannot render, or the C compiler reported an error."""


class CompilerNotFoundError(CompileError):
    """The C backend found no C compiler (set ``$CC`` or install gcc/clang), or it cannot build libraries."""


class KernelError(ExprgraphError, ValueError):
    """A tensor index kernel that is malformed or inconsistent; ``pos`` is the offset in ``text`` (or None)."""

    def __init__(self, message: str, text: str = "", pos: int | None = None) -> None:
        self.msg = message
        self.text = text
        self.pos = pos
        detail = message
        if pos is not None and text:
            pos = max(0, min(pos, len(text)))
            self.pos = pos
            detail = located(message, text, pos)
        super().__init__(detail)

    def __str__(self) -> str:
        return self.args[0]


class InconsistencyError(ExprgraphError, ValueError):
    """A graph change was rejected: a validator refused the graph, or a replacement would make a cycle."""


class ReplacementTypeError(ExprgraphError, TypeError):
    """A replacement whose dtype or shape differs from the term it replaces."""


class MissingInputError(ExprgraphError, ValueError):
    """A graph's outputs (or a replacement) use a symbol that is not one of the graph's inputs."""


class NotInGraphError(ExprgraphError, ValueError):
    """A term that is not (or no longer) a node of the graph was asked to be replaced or inspected."""


class FeatureError(ExprgraphError, ValueError):
    """A graph feature cannot be attached: it is attached elsewhere, or a name it provides is taken."""


class RewriteDatabaseError(ExprgraphError, ValueError):
    """A rewrite database misuse: a duplicate name, a name that clashes with a tag, an unknown entry."""


class RewriteWarning(UserWarning):
    """A graph rewrite failed and was skipped (the ``"warn"`` failure callback)."""


class SizeLimitError(ExprgraphError, ValueError):
    """A request would allocate more than a limit allows; says the limit and how to raise it."""

    def __init__(self, message: str, *, size: int = 0, limit: int = 0, setting: str = "") -> None:
        super().__init__(message)
        #: what the request needed, the limit it exceeded, and the option or variable that raises it
        self.size = size
        self.limit = limit
        self.setting = setting


class CacheSecurityError(CompileError):
    """The build cache (a directory or a library in it) is not safe to use: wrong owner, mode or a symlink."""


class BuildTimeoutError(CompileError):
    """The C compiler ran past the build time limit and was stopped (with every process it started)."""


class OptionalDependencyError(ExprgraphError, ImportError):
    """An optional package is not installed; the message names the extra to install (``exprgraph[sympy]``)."""


class ConversionError(ExprgraphError, ValueError):
    """A foreign expression or graph (sympy, PyTensor, ONNX) uses something exprgraph cannot represent, or back."""


class TermTableError(ExprgraphError, RuntimeError):
    """A term's attr changed the intern table while it was compared (its ``__eq__`` builds or frees terms)."""


class SettingError(ExprgraphError, ValueError):
    """A setting (an environment variable or a keyword such as ``build_timeout=``) out of its allowed range."""

    def __init__(self, message: str, *, setting: str = "") -> None:
        super().__init__(message)
        #: the variable (``$EXPRGRAPH_BUILD_TIMEOUT``) or keyword (``build_timeout=``) at fault
        self.setting = setting


class DimOverflowError(ShapeError):
    """A dimension or shape value outside int64, a negative dimension, or a rank past the limit (ONNX input)."""


class ExternalDataError(ShapeError):
    """ONNX tensor data stored in a file that may not be read: a location outside the base directory, say."""


class MissingValueError(EvaluationError, KeyError):
    """No value for a symbol an evaluation needs: a ``KeyError`` too, like any missing mapping entry."""

    def __str__(self) -> str:
        # KeyError's text is the repr of its key; this error's text is its message
        return str(self.args[0]) if self.args else ""


class UnusedInputError(EvaluationError):
    """An env entry an evaluation does not need: a name no symbol has, or a term cut off (``on_unused_input``)."""


class UnusedInputWarning(UserWarning):
    """An env entry an evaluation does not need, with ``on_unused_input="warn"``."""


class UnsupportedUfuncError(ExprgraphError, TypeError):
    """A numpy ufunc (or ufunc method) called on terms that no op stands for; ``ufunc`` is its name."""

    def __init__(self, message: str, *, ufunc: str = "") -> None:
        super().__init__(message)
        #: the ufunc's name (``"cbrt"``, ``"multiply.accumulate"``)
        self.ufunc = ufunc


class RewritePositionError(RewriteDatabaseError, TypeError):
    """A rewrite database position that is not a number: a ``TypeError`` too, as upstream raises."""


class DimContradictionError(ExprgraphError, ValueError):
    """Dimension facts that no values satisfy (``a == a + 1``, ``a >= 5`` with ``a`` in ``[0, 3]``)."""


class ShapeInferenceWarning(UserWarning):
    """ONNX shape inference met ops it has no rule for (custom domains): their outputs get fresh dims or none."""


class ProblemError(ExprgraphError, ValueError):
    """An optimisation problem that cannot be solved as given: bounds with ``lb > ub``, a length that
    does not match, an undeclared symbol; ``item`` names the variable or constraint at fault."""

    def __init__(self, message: str, *, item: str = "") -> None:
        super().__init__(message)
        #: the variable or constraint named by the message ("" when the problem as a whole is at fault)
        self.item = item


class NonFiniteError(ExprgraphError, ArithmeticError):
    """A nan or an infinity in a value the solver needs (objective, constraint, derivative); ``item``
    names the constraint, variable or Hessian entry, ``where`` the callback."""

    def __init__(self, message: str, *, item: str = "", where: str = "") -> None:
        super().__init__(message)
        #: the constraint, variable or entry whose value is not finite
        self.item = item
        #: the callback that computed it ("objective", "gradient", "constraints", "jacobian", "hessian")
        self.where = where


class IndexOutOfRangeError(ShapeError, IndexError):
    """An index of a shaped term outside its axis (``x[5]`` of a length-3 ``x``); names the index and the axis."""

    def __init__(self, message: str, *, index: object = None, axis: int | None = None) -> None:
        super().__init__(message)
        #: the offending index (an int, or the first bad entry of an index array)
        self.index = index
        #: the axis it indexes
        self.axis = axis


class EinsumSpecError(ShapeError):
    """An einsum spec that names no contraction (``"ij,jk"`` without ``->``, ``"ii->i"``); ``pos`` is
    the position of the fault in ``spec``."""

    def __init__(self, message: str, *, spec: str = "", pos: int = 0) -> None:
        caret = f"\n    {spec}\n    {' ' * pos}^" if spec else ""
        super().__init__(message + caret)
        #: the spec text
        self.spec = spec
        #: the position of the fault in ``spec``
        self.pos = pos


class AssumptionError(ExprgraphError, ValueError):
    """Assumptions on a symbol that contradict each other (``positive=True, negative=True``, or
    ``lower=2, upper=1``) or that its dtype cannot hold; ``facts`` names the clashing ones."""

    def __init__(self, message: str, *, facts: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        #: the names of the assumptions that clash
        self.facts = facts


class ScalariseError(CompileError, DifferentiationError):
    """A vector term that cannot be read entry by entry into scalar terms (an op whose entries depend on
    values, a symbolic length) for a scalar backend or a sparse derivative; ``op`` names the op."""

    def __init__(self, message: str, *, op: str = "") -> None:
        super().__init__(message)
        #: the name of the op at fault
        self.op = op


class VMUnsupportedError(CompileError):
    """The vm backend cannot run an op of the program (an op without a vm instruction, a float32 value);
    raised by ``compile(..., backend="vm")`` before any call; ``op`` names the op."""

    def __init__(self, message: str, *, op: str = "") -> None:
        super().__init__(message)
        #: the name of the op at fault
        self.op = op


class IpoptLibraryError(OptionalDependencyError):
    """A libipopt that cannot be found or loaded, or that lacks IPOPT's C interface (``CreateIpoptProblem``,
    ``IpoptSolve``, ...); ``path`` names the file tried ("" when none was found)."""

    def __init__(self, message: str, *, path: str = "") -> None:
        super().__init__(message)
        #: the file tried
        self.path = path


class IpoptOptionError(ProblemError, TypeError):
    """An option IPOPT refused (an unknown name, a value of the wrong type or out of range); ``item`` names
    the option. A ``TypeError`` too, as cyipopt raises for the same."""


class TooManyOperandsError(ExprgraphError, ValueError):
    """A C term built with more operands than its count field holds (2**26 - 1); build a sum or product of
    that many terms as a sum of partial sums."""


class DimConstantOverflowError(DimOverflowError, OverflowError):
    """A dimension constant outside int64, met while simplifying (``9223372036854775807 + 1``); an
    ``OverflowError`` too, as dims raised before it was named."""
