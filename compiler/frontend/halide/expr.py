"""The Halide-style DSL's expressions (thesis §3.2): typed values, variables, reduction
domains, operators and their type rules, and the rewriting helpers the lowering uses."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from ...ir.program import ProgramWarning
from ...ir.types import IntType, u1, u16

class HalideError(ValueError):
    """A DSL program that cannot be lowered (one line, naming the function)."""


class HalideWarning(ProgramWarning):
    """A DSL program that lowers but probably not as meant (one line, naming the input or
    function and what to add); ``ubc`` prints each on stderr once."""


def UInt(bits: int) -> IntType:
    return IntType(bits, False)


def Int(bits: int) -> IntType:
    return IntType(bits, True)


def Bool() -> IntType:
    return u1


# --- expressions -------------------------------------------------------------------------------

class FExpr:
    """A DSL expression (values and indices); Python operators build nodes."""

    __hash__ = object.__hash__

    def _b(self, op, other, swap=False):
        a, b = as_fexpr(self), as_fexpr(other)
        return BinE(op, b, a) if swap else BinE(op, a, b)


def _operators(op: str):
    """The forward and reflected Python operator methods building ``BinE(op, ...)``."""
    return (lambda self, o: self._b(op, o)), (lambda self, o: self._b(op, o, True))


for _dunder, _op in (("add", "+"), ("sub", "-"), ("mul", "*"), ("floordiv", "/"),
                     ("truediv", "/"), ("mod", "%"), ("lshift", "<<"), ("rshift", ">>"),
                     ("and", "&"), ("or", "|"), ("xor", "^")):
    _fwd, _rev = _operators(_op)
    setattr(FExpr, f"__{_dunder}__", _fwd)
    setattr(FExpr, f"__r{_dunder}__", _rev)
for _dunder, _op in (("lt", "<"), ("le", "<="), ("gt", ">"), ("ge", ">=")):
    setattr(FExpr, f"__{_dunder}__", _operators(_op)[0])
FExpr.eq, FExpr.ne = _operators("==")[0], _operators("!=")[0]
FExpr.__neg__ = lambda self: BinE("-", ConstE(0), self)
FExpr.__abs__ = lambda self: UnE("abs", self)


@dataclass(eq=False)
class Var(FExpr):
    """A pure variable (a dimension of a function)."""
    name: str

    def __repr__(self): return self.name


@dataclass(eq=False)
class RVar(FExpr):
    """One dimension of a reduction domain: ``min <= v < min + extent``."""
    name: str
    min: int
    extent: int
    rdom: "RDom | None" = field(default=None, repr=False)
    dim: int = 0

    def __repr__(self): return self.name


class RDom:
    """A reduction domain: ``RDom([(min, extent), ...], name)``; ``r.x``, ``r.y`` or ``r[i]``."""

    def __init__(self, ranges: Sequence[tuple[int, int]], name: str = "r"):
        self.name = name
        self.ranges = [(int(m), int(e)) for m, e in ranges]
        self.vars = [RVar(f"{name}_{n}", int(m), int(e), self, i)
                     for i, (n, (m, e)) in enumerate(zip("xyzw" if len(ranges) <= 4 else
                                          [str(i) for i in range(len(ranges))], ranges))]
        for v in self.vars:
            if v.extent < 1:
                raise HalideError(f"RDom {name}: extent {v.extent} of {v.name} must be >= 1")

    def __getitem__(self, i) -> RVar: return self.vars[i]
    def __len__(self): return len(self.vars)
    x = property(lambda self: self.vars[0])
    y = property(lambda self: self.vars[1])
    z = property(lambda self: self.vars[2])
    w = property(lambda self: self.vars[3])


@dataclass(eq=False)
class ConstE(FExpr):
    value: int
    type: IntType | None = None   # None: an untyped literal (takes the other operand's type)


@dataclass(eq=False)
class CallE(FExpr):
    target: object                # the Func or Input called (compiler.frontend.halide.func)
    args: tuple[FExpr, ...]


@dataclass(eq=False)
class BinE(FExpr):
    op: str
    a: FExpr
    b: FExpr


@dataclass(eq=False)
class UnE(FExpr):
    op: str          # abs
    a: FExpr


@dataclass(eq=False)
class SelE(FExpr):
    c: FExpr
    a: FExpr
    b: FExpr


@dataclass(eq=False)
class CastE(FExpr):
    type: IntType
    a: FExpr


@dataclass(eq=False)
class LutE(FExpr):
    table: tuple[int, ...]
    a: FExpr
    type: IntType


def as_fexpr(v) -> FExpr:
    if isinstance(v, FExpr):
        return v
    if isinstance(v, bool) or not isinstance(v, int):
        raise HalideError(f"cannot use {v!r} in an expression")
    return ConstE(v)


def cast(t: IntType, e) -> FExpr:
    return CastE(t, as_fexpr(e))


def select(c, a, b) -> FExpr:
    return SelE(as_fexpr(c), as_fexpr(a), as_fexpr(b))


def min_(a, b) -> FExpr:
    return BinE("min", as_fexpr(a), as_fexpr(b))


def max_(a, b) -> FExpr:
    return BinE("max", as_fexpr(a), as_fexpr(b))


def abs_(a) -> FExpr:
    return UnE("abs", as_fexpr(a))


def absd(a, b) -> FExpr:
    return BinE("absd", as_fexpr(a), as_fexpr(b))


def lookup(table: Sequence[int], index, type: IntType = u16) -> FExpr:
    """``table[index]`` (a lookup table; ``index`` a value expression)."""
    return LutE(tuple(int(v) for v in table), as_fexpr(index), type)


COMPARE = {"<", "<=", ">", ">=", "==", "!="}


def unsigned_of(t: IntType) -> IntType:
    return IntType(t.bits, False)


def typeof(e: FExpr, where: str = "") -> IntType | None:
    """The value type of ``e`` (None for untyped literals and index arithmetic)."""
    if isinstance(e, ConstE):
        return e.type
    if isinstance(e, (Var, RVar)):
        return None
    if isinstance(e, CallE):
        return e.target.value_type()
    if isinstance(e, CastE):
        return e.type
    if isinstance(e, LutE):
        return e.type
    if isinstance(e, UnE):
        t = typeof(e.a, where)
        return None if t is None else unsigned_of(t)
    if isinstance(e, SelE):
        ct = typeof(e.c, where)
        if ct is not None and ct != u1:
            raise HalideError(f"{where}select condition has type {ct}, expected a comparison")
        return unify(typeof(e.a, where), typeof(e.b, where), "select", where)
    if isinstance(e, BinE):
        ta, tb = typeof(e.a, where), typeof(e.b, where)
        if e.op in ("<<", ">>"):
            return ta
        t = unify(ta, tb, e.op, where)
        if e.op in COMPARE:
            return u1
        if e.op == "absd":
            return None if t is None else unsigned_of(t)
        return t
    raise HalideError(f"{where}unknown expression {e!r}")


def unify(ta, tb, op, where):
    if ta is not None and tb is not None and ta != tb:
        raise HalideError(f"{where}operands of '{op}' have types {ta} and {tb}; use cast()")
    return ta if ta is not None else tb


def walk(e: FExpr):
    yield e
    for c in _children(e):
        yield from walk(c)


def _children(e: FExpr) -> tuple:
    if isinstance(e, CallE):
        return e.args
    if isinstance(e, BinE):
        return (e.a, e.b)
    if isinstance(e, SelE):
        return (e.c, e.a, e.b)
    if isinstance(e, (UnE, CastE, LutE)):
        return (e.a,)
    return ()


def rebuild(e: FExpr, fn, memo: dict | None = None) -> FExpr:
    """Apply ``fn`` bottom-up (``fn`` returns a replacement or None to keep the node); a node
    shared in ``e`` stays shared in the result."""
    memo = {} if memo is None else memo
    if id(e) in memo:
        return memo[id(e)][1]
    r = lambda c: rebuild(c, fn, memo)
    if isinstance(e, CallE):
        n = CallE(e.target, tuple(r(a) for a in e.args))
    elif isinstance(e, BinE):
        n = BinE(e.op, r(e.a), r(e.b))
    elif isinstance(e, SelE):
        n = SelE(r(e.c), r(e.a), r(e.b))
    elif isinstance(e, UnE):
        n = UnE(e.op, r(e.a))
    elif isinstance(e, CastE):
        n = CastE(e.type, r(e.a))
    elif isinstance(e, LutE):
        n = LutE(e.table, r(e.a), e.type)
    else:
        n = e
    out = fn(n)
    out = n if out is None else out
    memo[id(e)] = (e, out)
    return out


def subst(e: FExpr, mapping: dict) -> FExpr:
    return rebuild(e, lambda n: mapping.get(n) if isinstance(n, (Var, RVar)) else None)


def show(e: FExpr) -> str:
    if isinstance(e, (Var, RVar)):
        return e.name
    if isinstance(e, ConstE):
        return str(e.value)
    if isinstance(e, CallE):
        return f"{e.target.name}[{', '.join(map(show, e.args))}]"
    if isinstance(e, BinE):
        return f"({show(e.a)} {e.op} {show(e.b)})"
    if isinstance(e, SelE):
        return f"select({show(e.c)}, {show(e.a)}, {show(e.b)})"
    if isinstance(e, UnE):
        return f"{e.op}({show(e.a)})"
    if isinstance(e, CastE):
        return f"cast({e.type}, {show(e.a)})"
    return f"lookup({show(e.a)})"
