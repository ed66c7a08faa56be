"""The kernels of lowered definitions: a Halide-style expression as a Program kernel DAG
(:class:`~compiler.ir.expr.Kernel`), identical loads shared, constants typed."""
from __future__ import annotations

from ...ir.expr import Arg, Call, Const, Expr, Lookup
from ...ir.index import Index
from ...ir.types import IntType, u16
from .expr import (COMPARE, CallE, CastE, ConstE, FExpr, HalideError, LutE, RVar, SelE, UnE,
                   Var, show, typeof, unify, unsigned_of)
from .func import Func

_ARITH = {"+": "add", "-": "sub", "*": "mul", "&": "and", "|": "or", "^": "xor"}


class KernelBuilder:
    """Turns a DSL value into a kernel DAG; each distinct (buffer, index) becomes one load."""

    def __init__(self, low, f: Func, where: str):
        # low: the Lowering (compiler.frontend.halide.lower) that builds this kernel
        self.low, self.f, self.where = low, f, where
        self.loads: list[tuple[str, list[Index]]] = []
        self.arg_types: list[IntType] = []
        self.args: dict[str, Arg] = {}

    def load(self, target, idx: list[Index]) -> Expr:
        idx = self.low.buffer_index(target, idx)
        key = f"{target.name}[{', '.join(map(str, idx))}]"
        if key not in self.args:
            t = target.value_type()
            self.args[key] = Arg(len(self.loads), t)
            self.loads.append((target.name, idx))
            self.arg_types.append(t)
        return self.args[key]

    def value(self, e: FExpr, env, self_value: Expr | None = None) -> Expr:
        """Convert ``e`` with loop variables ``env``; with ``self_value``, reads of the
        function itself (at the store location) are that value (folded unrolled updates)."""
        self.env, self.self_value = env, self_value
        self.memo: dict = {}
        return self.conv(e, self.f.value_type())

    def finish(self, e: Expr, t: IntType) -> Expr:
        if e.type != t:
            raise HalideError(f"{self.where}definition has type {e.type}, the function "
                              f"{t}; use cast()")
        return e

    def conv(self, e: FExpr, hint: IntType | None) -> Expr:
        """``e`` as a kernel node; a DSL node used twice becomes one shared DAG node."""
        key = (id(e), hint)
        if key not in self.memo:
            self.memo[key] = (e, self._conv(e, hint))   # e kept alive: ids stay unique
        return self.memo[key][1]

    def _conv(self, e: FExpr, hint: IntType | None) -> Expr:
        w = self.where
        if isinstance(e, (Var, RVar)):
            raise HalideError(f"{w}uses loop variable {e.name} as a value (only indices may "
                              f"use loop variables)")
        t = typeof(e, w) or hint or u16
        if t.bits > 16:
            raise HalideError(f"{w}type {t} is wider than the PE's 16-bit word")
        if isinstance(e, ConstE):
            return Const(e.value, t)
        if isinstance(e, CallE):
            if e.target is self.f and self.self_value is not None:
                return self.self_value
            idx = [self.low.to_index(a, self.env, w) for a in e.args]
            return self.load(e.target, idx)
        if isinstance(e, CastE):
            a = self.conv(e.a, None)
            return Call("pass", (a,), e.type)
        if isinstance(e, LutE):
            return Lookup(e.table, self.conv(e.a, None), e.type)
        if isinstance(e, UnE):
            a = self.conv(e.a, hint)
            return Call("abs", (a,), t) if a.type.signed else a   # abs of unsigned: itself
        if isinstance(e, SelE):
            return Call("select", (self.conv(e.c, None), self.conv(e.a, t), self.conv(e.b, t)))
        op = e.op
        k = _const_of(e.b)
        if op == "/" and (k is None or k <= 0 or k & (k - 1)):
            if t.signed:
                raise HalideError(f"{w}division of signed values: the PE divides unsigned "
                                  f"words only (UDIV): {show(e)}")
            return Call("udiv", (self.conv(e.a, t), self.conv(e.b, t)))
        if op in ("<<", ">>", "/", "%"):
            a = self.conv(e.a, t)
            if k is None:
                raise HalideError(f"{w}'{op}' needs a constant right operand: {show(e)}")
            if op in ("/", "%"):
                if k <= 0 or k & (k - 1):
                    raise HalideError(f"{w}division by the constant {k}: only powers of two "
                                      f"are supported: {show(e)}")
                if op == "%":
                    return Call("and", (a, Const(k - 1, t)))
                k = k.bit_length() - 1
                op = ">>"
            if not 0 <= k < 16:
                raise HalideError(f"{w}shift by {k} outside 0..15: {show(e)}")
            name = "shl" if op == "<<" else ("ashr" if t.signed else "lshr")
            return Call(name, (a, Const(k, t)))
        ta = (unify(typeof(e.a, w), typeof(e.b, w), op, w)
              or (hint if op not in COMPARE else None) or u16)
        a, b = self.conv(e.a, ta), self.conv(e.b, ta)
        if op in _ARITH:
            return Call(_ARITH[op], (a, b))
        if op in ("min", "max"):
            return Call(("s" if ta.signed else "u") + op, (a, b))
        if op == "absd":
            return Call("absdiff", (a, b), unsigned_of(ta))
        if op in ("==", "!="):
            return Call("eq" if op == "==" else "ne", (a, b))
        cmp = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge"}[op]
        return Call(("s" if ta.signed else "u") + cmp, (a, b))


def _const_of(e: FExpr) -> int | None:
    if isinstance(e, ConstE):
        return e.value
    return None
