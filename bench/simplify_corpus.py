"""The simplification corpus: textbook problems with a known simple form (issue 30's benchmark).

Each template is ``(family, input, simplest, assumptions)`` written with the placeholders
``{u}``, ``{v}`` (arguments) or over the symbols ``x, y, z, a, b, c``; :func:`problems` instantiates
each template with several arguments (``x``, ``2*x``, ``x + y``...), substituting the same text into
the input and into its simple form, so the known form stays an equal form of the instance (and an
upper bound on the size of its simplest form). Assumptions are SymPy's names (``positive``,
``nonnegative``, ``real``, ``nonzero``) for the symbols they list; exprgraph has none yet (issue 30
item 2), so those problems measure what is missing. The identities are standard tables: the
Pythagorean, double-angle, sum and product formulas, hyperbolic identities, exp/log/power laws,
factoring and cancellation of polynomials, radicals, abs/sign/min/max.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Problem", "problems", "TEMPLATES"]


@dataclass(frozen=True)
class Problem:
    """One problem: its family, input text, a known simple form, and assumptions per symbol."""

    family: str
    text: str
    simplest: str
    assumptions: tuple[tuple[str, str], ...] = ()


#: arguments for one-argument templates: a symbol, a multiple, a sum
ARGS_1 = ("x", "2*x", "x + y")
#: argument pairs for two-argument templates
ARGS_2 = (("x", "y"), ("2*x", "y"), ("x", "y + z"))
#: renamings for templates over x, y (and z): the template itself, a scaled x, a compound x
SUBST = ({}, {"x": "(2*x)"}, {"x": "(x + z)"})

# -- trigonometric (one argument u) ----------------------------------------------------------------
TRIG_1 = [
    ("sin({u})**2 + cos({u})**2", "1"),
    ("1 - sin({u})**2", "cos({u})**2"),
    ("1 - cos({u})**2", "sin({u})**2"),
    ("sin({u})/cos({u})", "tan({u})"),
    ("cos({u})/sin({u})", "1/tan({u})"),
    ("(cos({u}) - 1)*(cos({u}) + 1)", "-sin({u})**2"),
    ("2*sin({u})*cos({u})", "sin(2*({u}))"),
    ("cos({u})**2 - sin({u})**2", "cos(2*({u}))"),
    ("1 + tan({u})**2", "1/cos({u})**2"),
    ("tan({u})*cos({u})", "sin({u})"),
    ("sin({u})**4 - cos({u})**4", "-cos(2*({u}))"),
    ("(sin({u}) + cos({u}))**2", "1 + sin(2*({u}))"),
    ("sin(-({u})) + sin({u})", "0"),
    ("cos(-({u})) - cos({u})", "0"),
    ("sin({u})**2/(1 - cos({u}))", "1 + cos({u})"),
    ("1/cos({u})**2 - tan({u})**2", "1"),
    ("sin({u})*tan({u}) + cos({u})", "1/cos({u})"),
    ("(1 - cos(2*({u})))/2", "sin({u})**2"),
    ("(1 + cos(2*({u})))/2", "cos({u})**2"),
    ("cos({u})**4 - sin({u})**4", "cos(2*({u}))"),
    ("tan({u}) + 1/tan({u})", "2/sin(2*({u}))"),
    ("sin({u})/tan({u})", "cos({u})"),
    ("sin({u})**3 + sin({u})*cos({u})**2", "sin({u})"),
    ("cos({u})**3 + cos({u})*sin({u})**2", "cos({u})"),
    ("(1 - sin({u}))*(1 + sin({u}))", "cos({u})**2"),
    ("sin({u})*cos({u})/(cos({u})**2 - sin({u})**2)", "tan(2*({u}))/2"),
    ("2*cos({u})**2 - 1", "cos(2*({u}))"),
    ("1 - 2*sin({u})**2", "cos(2*({u}))"),
    ("3*sin({u}) - 4*sin({u})**3", "sin(3*({u}))"),
    ("4*cos({u})**3 - 3*cos({u})", "cos(3*({u}))"),
]

# -- trigonometric (two arguments u, v) ------------------------------------------------------------
TRIG_2 = [
    ("sin({u})*cos({v}) + cos({u})*sin({v})", "sin({u} + {v})"),
    ("sin({u})*cos({v}) - cos({u})*sin({v})", "sin({u} - ({v}))"),
    ("cos({u})*cos({v}) - sin({u})*sin({v})", "cos({u} + {v})"),
    ("cos({u})*cos({v}) + sin({u})*sin({v})", "cos({u} - ({v}))"),
    ("sin({u} + {v}) - sin({u})*cos({v})", "cos({u})*sin({v})"),
    ("cos({u} + {v}) + sin({u})*sin({v})", "cos({u})*cos({v})"),
    ("sin({u} + {v}) + sin({u} - ({v}))", "2*sin({u})*cos({v})"),
    ("cos({u} - ({v})) - cos({u} + {v})", "2*sin({u})*sin({v})"),
]

# -- hyperbolic (one argument u) -------------------------------------------------------------------
HYPERBOLIC = [
    ("cosh({u})**2 - sinh({u})**2", "1"),
    ("sinh({u})/cosh({u})", "tanh({u})"),
    ("(exp({u}) + exp(-({u})))/2", "cosh({u})"),
    ("(exp({u}) - exp(-({u})))/2", "sinh({u})"),
    ("2*sinh({u})*cosh({u})", "sinh(2*({u}))"),
    ("cosh({u}) + sinh({u})", "exp({u})"),
    ("cosh({u}) - sinh({u})", "exp(-({u}))"),
    ("1 - tanh({u})**2", "1/cosh({u})**2"),
    ("cosh({u})**2 + sinh({u})**2", "cosh(2*({u}))"),
    ("tanh({u})*cosh({u})", "sinh({u})"),
]

# -- polynomials over x, y, z ----------------------------------------------------------------------
POLYNOMIAL = [
    ("(x + 1)*(x + 1) - x*x", "2*x + 1"),
    ("(x + y)**2 - (x - y)**2", "4*x*y"),
    ("(x + y)*(x - y) + y**2", "x**2"),
    ("(x + 1)**3 - x**3 - 3*x**2 - 3*x", "1"),
    ("x*(x + 1) - x**2", "x"),
    ("(2*x + 3*y)**2 - 4*x**2 - 9*y**2", "12*x*y"),
    ("x**2 + 2*x*y + y**2", "(x + y)**2"),
    ("x**3 + 3*x**2*y + 3*x*y**2 + y**3", "(x + y)**3"),
    ("(x + y + 1)**2 - (x + y)**2 - 2*(x + y)", "1"),
    ("x*y + x*z", "x*(y + z)"),
    ("x**2 - y**2 - (x - y)*(x + y)", "0"),
    ("(x - y)*(x**2 + x*y + y**2)", "x**3 - y**3"),
    ("x**4 - 2*x**2*y**2 + y**4", "(x**2 - y**2)**2"),
    ("(x + 2)*(x - 2) + 4", "x**2"),
    ("x*(y + 1) - x*y", "x"),
    ("(x + y)*(x + y) - x*(x + 2*y)", "y**2"),
    ("3*x*y - 2*x*y - x*y", "0"),
    ("x**2*y + x*y**2", "x*y*(x + y)"),
    ("(x - 1)**2 + 2*(x - 1) + 1", "x**2"),
    ("x**2 + 6*x + 9", "(x + 3)**2"),
]

# -- rational functions over x, y, z ---------------------------------------------------------------
RATIONAL = [
    ("(x**2 - 1)/(x + 1)", "x - 1"),
    ("1/x + 1/y", "(x + y)/(x*y)"),
    ("(x**2 + 2*x + 1)/(x + 1)", "x + 1"),
    ("(x**3 - y**3)/(x - y)", "x**2 + x*y + y**2"),
    ("(x**2 - 4)/(x - 2)", "x + 2"),
    ("1/(x - 1) - 1/(x + 1)", "2/(x**2 - 1)"),
    ("(x*y + x)/(y + 1)", "x"),
    ("(1/x - 1/y)/(y - x)", "1/(x*y)"),
    ("(x**2 + x)/(x**2 - 1)", "x/(x - 1)"),
    ("x/(x + 1) + 1/(x + 1)", "1"),
    ("(x**2 - y**2)/(x - y)", "x + y"),
    ("(x*y - y)/(x - 1)", "y"),
    ("1/(1 + 1/x)", "x/(x + 1)"),
    ("(x**2 - 3*x + 2)/(x - 1)", "x - 2"),
    ("(x + y)/(x**2 + 2*x*y + y**2)", "1/(x + y)"),
    ("x/y + y/x - (x**2 + y**2)/(x*y)", "0"),
]

# -- exp, log and powers (with assumptions where the law needs them) -------------------------------
POWERS = [
    ("exp(x)*exp(y)", "exp(x + y)", ()),
    ("exp(x)/exp(y)", "exp(x - y)", ()),
    ("log(exp(x))", "x", ()),
    ("exp(log(x))", "x", (("x", "positive"),)),
    ("log(x) + log(y) - log(x*y)", "0", (("x", "positive"), ("y", "positive"))),
    ("log(x**2) - 2*log(x)", "0", (("x", "positive"),)),
    ("x**a*x**b", "x**(a + b)", (("x", "positive"),)),
    ("sqrt(x**2)", "x", (("x", "nonnegative"),)),
    ("sqrt(x**2)", "abs(x)", (("x", "real"),)),
    ("sqrt(x)*sqrt(x)", "x", (("x", "nonnegative"),)),
    ("exp(2*log(x))", "x**2", (("x", "positive"),)),
    ("log(exp(x)*exp(y))", "x + y", ()),
    ("exp(x)**2", "exp(2*x)", ()),
    ("log(2*x) - log(2)", "log(x)", (("x", "positive"),)),
    ("x**2*x**3", "x**5", ()),
    ("(x*y)**2/x**2", "y**2", ()),
    ("exp(x + log(y))", "y*exp(x)", (("y", "positive"),)),
    ("log(x**3)/log(x)", "3", (("x", "positive"),)),
    ("(x**2)**3", "x**6", ()),
    ("x**3/x", "x**2", ()),
    ("sqrt(x)**2", "x", (("x", "nonnegative"),)),
    ("exp(x)*exp(-x)", "1", ()),
    ("log(x/y) + log(y)", "log(x)", (("x", "positive"), ("y", "positive"))),
    ("(exp(x) - 1)/(exp(x/2) - 1)", "exp(x/2) + 1", ()),
    ("sqrt(x**2*y**2)", "x*y", (("x", "positive"), ("y", "positive"))),
]

# -- radicals and exact numbers --------------------------------------------------------------------
EXACT = [
    ("sqrt(2)*sqrt(2)", "2"),
    ("sqrt(8)", "2*sqrt(2)"),
    ("(sqrt(3) + 1)*(sqrt(3) - 1)", "2"),
    ("1/3 + 1/6", "1/2"),
    ("sqrt(12) - 2*sqrt(3)", "0"),
    ("(1 + sqrt(2))**2 - 2*sqrt(2)", "3"),
    ("2**(1/2)*2**(1/2)", "2"),
    ("1/(sqrt(2) - 1) - sqrt(2)", "1"),
    ("x/2 + x/3", "5*x/6"),
    ("x/3 + x/3 + x/3", "x"),
    ("sqrt(18)/sqrt(2)", "3"),
    ("(x/3)*3", "x"),
    ("2*x/4 - x/2", "0"),
    # radicals: rationalised denominators, products, denesting (textbook exercises)
    ("1/(1 + sqrt(2))", "sqrt(2) - 1"),
    ("1/(sqrt(3) - sqrt(2))", "sqrt(3) + sqrt(2)"),
    ("1/(2 + sqrt(3))", "2 - sqrt(3)"),
    ("(sqrt(5) + sqrt(3))*(sqrt(5) - sqrt(3))", "2"),
    ("sqrt(2)*sqrt(6)", "2*sqrt(3)"),
    ("sqrt(3)*sqrt(15)", "3*sqrt(5)"),
    ("(1 + sqrt(2))**(-2)", "3 - 2*sqrt(2)"),
    ("(sqrt(2) + 1)**3", "5*sqrt(2) + 7"),
    ("sqrt(9/4 - sqrt(2))", "sqrt(2) - 1/2"),
    ("sqrt(7 + 4*sqrt(3))", "sqrt(3) + 2"),
    ("sqrt(12 + 2*sqrt(35))", "sqrt(5) + sqrt(7)"),
    ("sqrt(3/2 + sqrt(2))", "1 + sqrt(2)/2"),
    ("1/(sqrt(2) + 1) + 1/(sqrt(2) - 1)", "2*sqrt(2)"),
    ("(3 + sqrt(5))/(3 - sqrt(5))", "(3*sqrt(5) + 7)/2"),
    ("sqrt(2)/(sqrt(2) + sqrt(6))", "(sqrt(3) - 1)/2"),
    ("1/(sqrt(2) + sqrt(3)) + 1/(sqrt(2) - sqrt(3))", "-2*sqrt(2)"),
    ("(sqrt(6) - sqrt(2))/(sqrt(6) + sqrt(2))", "2 - sqrt(3)"),
    ("x*sqrt(2)*sqrt(8)", "4*x"),
    ("x*sqrt(3)*sqrt(6)", "3*sqrt(2)*x"),
]

# -- abs, sign, min, max ---------------------------------------------------------------------------
PIECEWISE = [
    ("abs(x)**2", "x**2"),
    ("abs(abs(x))", "abs(x)"),
    ("abs(-x)", "abs(x)"),
    ("max(x, x)", "x"),
    ("min(x, max(x, y))", "x"),
    ("sign(x)*abs(x)", "x"),
    ("abs(x)*abs(y)", "abs(x*y)"),
    ("max(x, y) + min(x, y)", "x + y"),
    ("abs(exp(x))", "exp(x)"),
    ("max(x, y) - max(y, x)", "0"),
    ("abs(x*x)", "x**2"),
    ("max(x + 1, x)", "x + 1"),
]

#: every template: (family, input, simplest, assumptions)
TEMPLATES: list[tuple[str, str, str, tuple[tuple[str, str], ...]]] = [
    *[("trig", a, b, ()) for a, b in TRIG_1],
    *[("trig2", a, b, ()) for a, b in TRIG_2],
    *[("hyperbolic", a, b, ()) for a, b in HYPERBOLIC],
    *[("polynomial", a, b, ()) for a, b in POLYNOMIAL],
    *[("rational", a, b, ()) for a, b in RATIONAL],
    *[("powers", a, b, asm) for a, b, asm in POWERS],
    *[("exact", a, b, ()) for a, b in EXACT],
    *[("piecewise", a, b, ()) for a, b in PIECEWISE],
]


def _rename(text: str, mapping: dict[str, str]) -> str:
    """``text`` with whole-word symbol names replaced (x -> (2*x)), left to right in one pass."""
    out, word = [], []
    for ch in text + " ":
        if ch.isalnum() or ch == "_":
            word.append(ch)
            continue
        if word:
            name = "".join(word)
            out.append(mapping.get(name, name))
            word = []
        out.append(ch)
    return "".join(out)[:-1]


def problems() -> list[Problem]:
    """Every template instantiated: one-argument ones with ARGS_1, two-argument ones with ARGS_2,
    the others with SUBST (problems with assumptions on a renamed symbol keep only the plain one)."""
    out: list[Problem] = []
    for family, text, simplest, asm in TEMPLATES:
        if "{v}" in text:
            out += [Problem(family, text.format(u=u, v=v), simplest.format(u=u, v=v)) for u, v in ARGS_2]
        elif "{u}" in text:
            out += [Problem(family, text.format(u=u), simplest.format(u=u)) for u in ARGS_1]
        else:
            for mapping in SUBST:
                if asm and mapping:
                    continue  # an assumption on x says nothing of 2*x's sign in SymPy's terms
                out.append(Problem(family, _rename(text, mapping), _rename(simplest, mapping), asm))
    return out
