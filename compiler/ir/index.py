"""Quasi-affine index expressions over loop variables (thesis §4.1: ``add_load("brighten",
"x_bl+1", "y_bl")``).

An :class:`Index` is ``const + sum(coeff * var) + sum(coeff * floor(Index / d))`` with integer
constants, which is exactly what isl accepts as a quasi-affine expression. Products of two
variables, division by a variable and the like are rejected with :class:`IndexError_`
("non-affine index"). ``str(index)`` is valid isl syntax.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field


class IndexError_(ValueError):
    """An index expression is not (quasi-)affine in the loop variables."""


@dataclass(frozen=True)
class Index:
    const: int = 0
    terms: tuple[tuple[str, int], ...] = ()            # (var, coeff), sorted, no zero coeffs
    floors: tuple[tuple["Index", int, int], ...] = ()  # (numerator, divisor, coeff)

    # --- construction -------------------------------------------------------------------
    @staticmethod
    def of(value) -> "Index":
        if isinstance(value, Index):
            return value
        if isinstance(value, bool) or not isinstance(value, int):
            raise IndexError_(f"non-affine index: {value!r} is not an integer or loop variable")
        return Index(const=value)

    @staticmethod
    def _make(const, terms: dict, floors: dict) -> "Index":
        return Index(const, tuple(sorted((v, c) for v, c in terms.items() if c)),
                     tuple(sorted(((n, d, c) for (n, d), c in floors.items() if c),
                                  key=lambda t: (str(t[0]), t[1]))))

    def __add__(self, other) -> "Index":
        o = Index.of(other)
        terms, floors = dict(self.terms), {(n, d): c for n, d, c in self.floors}
        for v, c in o.terms:
            terms[v] = terms.get(v, 0) + c
        for n, d, c in o.floors:
            floors[(n, d)] = floors.get((n, d), 0) + c
        return Index._make(self.const + o.const, terms, floors)

    __radd__ = __add__

    def __neg__(self) -> "Index":
        return self * -1

    def __sub__(self, other) -> "Index":
        return self + (-Index.of(other))

    def __rsub__(self, other) -> "Index":
        return Index.of(other) - self

    def __mul__(self, other) -> "Index":
        if isinstance(other, Index):
            if other.is_constant:
                other = other.const
            elif self.is_constant:
                return other * self.const
            else:
                raise IndexError_(f"non-affine index: ({self}) * ({other})")
        if isinstance(other, bool) or not isinstance(other, int):
            raise IndexError_(f"non-affine index: ({self}) * {other!r}")
        return Index._make(self.const * other, {v: c * other for v, c in self.terms},
                           {(n, d): c * other for n, d, c in self.floors})

    __rmul__ = __mul__

    def __floordiv__(self, other) -> "Index":
        if isinstance(other, Index) and other.is_constant:
            other = other.const
        if isinstance(other, bool) or not isinstance(other, int) or other <= 0:
            raise IndexError_(f"non-affine index: ({self}) // {other} (divisor must be a "
                              f"positive integer constant)")
        if other == 1:
            return self
        if self.is_constant:
            return Index(self.const // other)
        return Index._make(0, {}, {(self, other): 1})

    def __mod__(self, other) -> "Index":
        return self - (self // other) * other

    # --- queries --------------------------------------------------------------------------
    @property
    def is_constant(self) -> bool:
        return not self.terms and not self.floors

    def variables(self) -> set[str]:
        out = {v for v, _ in self.terms}
        for n, _, _ in self.floors:
            out |= n.variables()
        return out

    def coeff(self, var_name: str) -> int:
        return dict(self.terms).get(var_name, 0)

    def evaluate(self, env: dict[str, int]) -> int:
        value = self.const + sum(c * env[v] for v, c in self.terms)
        return value + sum(c * (n.evaluate(env) // d) for n, d, c in self.floors)

    def __str__(self) -> str:
        parts = [f"{c}*{v}" if c != 1 else v for v, c in self.terms]
        parts += [f"{c}*floor(({n})/{d})" if c != 1 else f"floor(({n})/{d})"
                  for n, d, c in self.floors]
        if self.const or not parts:
            parts.append(str(self.const))
        return " + ".join(parts).replace("+ -", "- ")

    def __repr__(self) -> str:
        return f"Index({self})"


def var(name: str) -> Index:
    return Index(terms=((name, 1),))


def parse_index(text: str | int | Index, variables: set[str] | None = None) -> Index:
    """Parse ``"x_bl+1"``, ``"2*x - 1"``, ``"x // 2"``, ``"x % 4"`` into an :class:`Index`.

    Raises :class:`IndexError_` for non-affine forms or unknown variables.
    """
    if isinstance(text, (Index, int)):
        idx = Index.of(text)
    else:
        try:
            tree = ast.parse(str(text).strip(), mode="eval").body
        except SyntaxError:
            raise IndexError_(f"malformed index expression '{text}'") from None
        idx = _from_ast(tree, str(text))
    if variables is not None:
        unknown = idx.variables() - variables
        if unknown:
            raise IndexError_(f"index '{text}' uses {', '.join(sorted(unknown))}, which is "
                              f"not an enclosing loop variable")
    return idx


def _from_ast(node, text: str) -> Index:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return Index(const=node.value)
    if isinstance(node, ast.Name):
        return var(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_from_ast(node.operand, text)
    if isinstance(node, ast.BinOp):
        a, b = _from_ast(node.left, text), _from_ast(node.right, text)
        try:
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            if isinstance(node.op, ast.Mult):
                return a * b
            if isinstance(node.op, (ast.FloorDiv, ast.Div)):
                return a // b
            if isinstance(node.op, ast.Mod):
                return a % b
        except IndexError_:
            raise IndexError_(f"non-affine index '{text}'") from None
    raise IndexError_(f"non-affine index '{text}'")
