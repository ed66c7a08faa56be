"""Cross-checks of the Halide-style DSL against REAL Halide (PyPI ``halide``).

:func:`to_halide` rebuilds a DSL pipeline's *algorithm* with ``halide`` objects (the schedule
does not change Halide's results, so it is not translated): every constant gets the type the
DSL inferred for it, ``/`` and ``%`` stay Halide's own division and modulo, a lookup becomes a
clamped read of a constant ``hl.Buffer``. :func:`realize_halide` runs it on numpy inputs, and
:func:`crosscheck` compares it with the reference interpreter on the lowered Program.

Index order: our arrays are ``arr[x, y, ...]`` (first index innermost, like Halide's buffers).
``np.asarray(hl.Buffer)`` is a view with the axes reversed, so arrays go in by copying ``arr.T``
into that view of a Halide-owned buffer of ``arr.shape`` (:func:`to_hl_buffer`; dim 0 = x) and
come out as ``np.asarray(buf).T`` (:func:`from_hl_buffer`).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ...interp import numpy_dtype, run
from ...ir.types import IntType
from .expr import (BinE, CallE, CastE, ConstE, FExpr, HalideError, LutE, RVar, SelE, UnE, Var,
                   typeof)
from .func import Func, Input
from .lower import Pipeline

__all__ = ["to_halide", "realize_halide", "crosscheck", "to_hl_buffer", "from_hl_buffer"]


def _hl():
    import halide as hl  # imported lazily: an optional dependency
    return hl


def hl_type(t: IntType):
    hl = _hl()
    if t.bits == 1:
        return hl.Bool()
    return hl.Int(t.bits) if t.signed else hl.UInt(t.bits)


def to_hl_buffer(arr: np.ndarray, name: str = ""):
    """numpy ``arr[x, y, ...]`` -> ``hl.Buffer`` with dim 0 = x. The buffer owns a copy of the
    data (an ``hl.Buffer`` made from an ndarray does not keep the array alive)."""
    hl = _hl()
    arr = np.asarray(arr)
    types = {np.dtype(np.uint16): hl.UInt(16), np.dtype(np.int16): hl.Int(16),
             np.dtype(np.uint8): hl.UInt(8), np.dtype(np.int8): hl.Int(8),
             np.dtype(np.int32): hl.Int(32), np.dtype(bool): hl.Bool()}
    if arr.dtype not in types:
        raise HalideError(f"to_hl_buffer: unsupported dtype {arr.dtype}")
    buf = hl.Buffer(types[arr.dtype], list(arr.shape), name)
    np.asarray(buf)[...] = arr.T
    return buf


def from_hl_buffer(buf) -> np.ndarray:
    """``hl.Buffer`` -> numpy ``arr[x, y, ...]`` (a copy)."""
    return np.array(np.asarray(buf).T)


class _Translator:
    def __init__(self, inputs: dict[str, np.ndarray]):
        self.hl = _hl()
        self.inputs = inputs
        self.vars: dict[str, object] = {}
        self.rdoms: dict[int, object] = {}
        self.funcs: dict[Func, object] = {}
        self.bufs: dict[str, object] = {}
        self.keep: list = []   # keep tables alive

    def var(self, v: Var):
        if v.name not in self.vars:
            self.vars[v.name] = self.hl.Var(v.name)
        return self.vars[v.name]

    def func(self, f: Func):
        if f not in self.funcs:
            g = self.hl.Func(f.name)
            self.funcs[f] = g
            for d in f.defs:
                args = [self.expr(a, None, index=True) for a in d.args]
                g[args] = self.expr(d.value, f.value_type())
        return self.funcs[f]

    def rvar(self, r: RVar):
        key = id(r.rdom)
        if key not in self.rdoms:
            self.rdoms[key] = self.hl.RDom([self.hl.Range(m, e) for m, e in r.rdom.ranges],
                                           r.rdom.name)
        return self.rdoms[key][r.dim]

    def input(self, i: Input):
        if i.name not in self.bufs:
            if i.name not in self.inputs:
                raise HalideError(f"input {i.name}: no array given")
            arr = np.asarray(self.inputs[i.name]).astype(numpy_dtype(i.type))
            self.bufs[i.name] = to_hl_buffer(arr, i.name)
        return self.bufs[i.name]

    def expr(self, e: FExpr, hint: IntType | None, index: bool = False):
        hl = self.hl
        if isinstance(e, Var):
            return self.var(e)
        if isinstance(e, RVar):
            return self.rvar(e)
        if isinstance(e, ConstE):
            t = e.type or (None if index else hint)
            return e.value if t is None else hl.cast(hl_type(t), e.value)
        if isinstance(e, CallE):
            args = [self.expr(a, None, index=True) for a in e.args]
            target = self.input(e.target) if isinstance(e.target, Input) else \
                self.func(e.target)
            return target[args]
        if isinstance(e, CastE):
            return hl.cast(hl_type(e.type), self.expr(e.a, None))
        if isinstance(e, LutE):
            table = np.array(e.table, dtype=np.int64) & ((1 << e.type.bits) - 1)
            buf = to_hl_buffer(table.astype(numpy_dtype(e.type)))
            self.keep.append(buf)
            i = hl.cast(hl.Int(32), self.expr(e.a, None))
            return buf[hl.clamp(i, 0, len(e.table) - 1)]
        if isinstance(e, UnE):
            return hl.abs(self.expr(e.a, hint))
        if isinstance(e, SelE):
            t = typeof(e, "") or hint
            return hl.select(self.expr(e.c, None), self.expr(e.a, t), self.expr(e.b, t))
        assert isinstance(e, BinE)
        if index:
            a, b = self.expr(e.a, None, True), self.expr(e.b, None, True)
        elif e.op in ("<<", ">>", "/", "%"):
            t = typeof(e.a, "") or hint
            a, b = self.expr(e.a, t), self.expr(e.b, t)
        else:
            t = typeof(e.a, "") or typeof(e.b, "") or (hint if e.op not in
                                                        ("<", "<=", ">", ">=", "==", "!=")
                                                        else None)
            a, b = self.expr(e.a, t), self.expr(e.b, t)
        op = e.op
        if op == "min":
            return hl.min(a, b)
        if op == "max":
            return hl.max(a, b)
        if op == "absd":
            return hl.absd(a, b)
        return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
                "/": lambda: a / b, "%": lambda: a % b, "<<": lambda: a << b,
                ">>": lambda: a >> b, "&": lambda: a & b, "|": lambda: a | b,
                "^": lambda: a ^ b, "<": lambda: a < b, "<=": lambda: a <= b,
                ">": lambda: a > b, ">=": lambda: a >= b, "==": lambda: a == b,
                "!=": lambda: a != b}[op]()


def to_halide(output: Func, inputs: dict[str, np.ndarray]):
    """The real-Halide ``hl.Func`` computing ``output`` (algorithm only), reading ``inputs``,
    and the object holding the ``hl.Buffer`` s it reads (keep it alive while using the Func)."""
    tr = _Translator(inputs)
    return tr.func(output), tr


def realize_halide(output: Func, inputs: dict[str, np.ndarray], sizes: Sequence[int]
                   ) -> np.ndarray:
    """Run the pipeline in real Halide (JIT) over ``[0, sizes)``; returns ``arr[x, y, ...]``."""
    hl = _hl()
    g, _keep = to_halide(output, inputs)
    buf = hl.Buffer(hl_type(output.value_type()), list(sizes))
    g.realize(buf)
    return from_hl_buffer(buf)


def crosscheck(output: Func, inputs: dict[str, np.ndarray], sizes: Sequence[int],
               name: str = "crosscheck") -> tuple[np.ndarray, np.ndarray]:
    """Lower ``output`` over ``sizes``, run the interpreter and real Halide on ``inputs``;
    raises AssertionError naming the first mismatching element. Returns (ours, halide's)."""
    prog = Pipeline(output).lower(name, sizes)
    ours = run(prog, inputs)[output.name]
    theirs = realize_halide(output, inputs, sizes)
    if ours.shape != theirs.shape or ours.dtype != theirs.dtype:
        raise AssertionError(f"{name}: interpreter gives {ours.dtype}{list(ours.shape)}, "
                             f"Halide {theirs.dtype}{list(theirs.shape)}")
    if not np.array_equal(ours, theirs):
        bad = tuple(int(i) for i in np.argwhere(ours != theirs)[0])
        raise AssertionError(f"{name}: at {list(bad)} the interpreter gives {ours[bad]}, "
                             f"Halide {theirs[bad]} ({int((ours != theirs).sum())} "
                             f"mismatches)")
    return ours, theirs
