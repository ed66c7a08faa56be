"""The Halide-style DSL's functions: inputs, ``Func`` with its definitions and updates, and the
schedule (``split``, ``tile``, ``reorder``, ``unroll``, ``compute_at``, ``store_in``, ...)."""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Sequence

from ...ir.types import IntType, u16
from .expr import CallE, FExpr, HalideError, RVar, Var, walk, as_fexpr, typeof

# --- functions and inputs ------------------------------------------------------------------------

class Input:
    """An input image (Halide ``ImageParam``/``Buffer``): read from the GLB. ``shape=None``
    infers the shape from the accesses (which must not go below 0)."""

    def __init__(self, name: str, type: IntType = u16, shape: Sequence[int] | None = None):
        self.name, self.type = name, type
        self.shape = tuple(shape) if shape is not None else None

    def value_type(self) -> IntType:
        return self.type

    def __getitem__(self, args) -> CallE:
        args = args if isinstance(args, tuple) else (args,)
        if self.shape is not None and len(args) != len(self.shape):
            raise HalideError(f"input {self.name}: {len(args)} indices for "
                              f"{len(self.shape)} dimensions")
        return CallE(self, tuple(as_fexpr(a) for a in args))

    def __repr__(self): return self.name


@dataclass
class _Split:
    old: str
    outer: str
    inner: str
    factor: int


@dataclass
class Definition:
    args: tuple[FExpr, ...]
    value: FExpr
    rvars: list[RVar] = field(default_factory=list)


class Stage:
    """The loop schedule of one definition (pure or update) of a function."""

    def __init__(self, func: "Func", index: int, dims: list[str]):
        self.func, self.index = func, index
        self.dims = dims            # innermost first, as in Halide
        self.splits: list[_Split] = []
        self.unrolled: list[str] = []

    @property
    def label(self) -> str:
        return self.func.name if self.index == 0 else f"{self.func.name}_u{self.index - 1}"

    def _dim(self, v) -> str:
        n = v if isinstance(v, str) else v.name
        if n not in self.dims:
            raise HalideError(f"func {self.func.name}: {self.label} has no dimension '{n}' "
                              f"(dimensions: {', '.join(self.dims)})")
        return n

    def split(self, v, outer, inner, factor: int) -> "Stage":
        old = self._dim(v)
        o, i = (x if isinstance(x, str) else x.name for x in (outer, inner))
        if int(factor) < 1:
            raise HalideError(f"func {self.func.name}: split factor {factor} must be >= 1")
        k = self.dims.index(old)
        self.dims[k:k + 1] = [i, o]
        self.splits.append(_Split(old, o, i, int(factor)))
        return self

    def tile(self, x, y, xo, yo, xi, yi, fx: int, fy: int) -> "Stage":
        self.split(x, xo, xi, fx).split(y, yo, yi, fy)
        return self.reorder(xi, yi, xo, yo)

    def reorder(self, *vs) -> "Stage":
        names = [self._dim(v) for v in vs]
        slots = sorted(self.dims.index(n) for n in names)
        for s, n in zip(slots, names):
            self.dims[s] = n
        return self

    def unroll(self, v, factor: int | None = None) -> "Stage":
        n = self._dim(v)
        if factor is not None:
            self.split(n, f"{n}_o", f"{n}_i", factor)
            n = f"{n}_i"
        self.unrolled.append(n)
        return self


class Func:
    """A Halide function: one pure definition ``f[x, y] = e`` and update definitions."""

    _counter = itertools.count()

    def __init__(self, name: str | None = None):
        self.name = name or f"f{next(Func._counter)}"
        self.pure_vars: list[Var] | None = None
        self.defs: list[Definition] = []
        self.stages: list[Stage] = []
        self.compute: tuple | str | None = None    # None (inline), "root", (func, var)
        self.store: tuple | None = None
        self.level: str | None = None
        self.unit_name: str | None = None
        self.hw: tuple[str, str] | None = None
        self.streamed = False

    def __repr__(self): return self.name

    # --- definitions ---------------------------------------------------------------------
    def __getitem__(self, args) -> CallE:
        args = args if isinstance(args, tuple) else (args,)
        return CallE(self, tuple(as_fexpr(a) for a in args))

    def __setitem__(self, args, value) -> None:
        args = tuple(as_fexpr(a) for a in (args if isinstance(args, tuple) else (args,)))
        value = as_fexpr(value)
        if self.pure_vars is None:
            if not all(isinstance(a, Var) for a in args) or len(set(args)) != len(args):
                raise HalideError(f"func {self.name}: a pure definition needs distinct Vars "
                                  f"as arguments")
            self.pure_vars = list(args)
            self.defs.append(Definition(args, value))
            self.stages.append(Stage(self, 0, [v.name for v in args]))
            return
        if len(args) != len(self.pure_vars):
            raise HalideError(f"func {self.name}: update has {len(args)} arguments, the pure "
                              f"definition {len(self.pure_vars)}")
        for k, a in enumerate(args):
            if isinstance(a, Var) and a.name != self.pure_vars[k].name:
                raise HalideError(f"func {self.name}: update has pure variable {a.name} at "
                                  f"position {k}, the pure definition "
                                  f"{self.pure_vars[k].name} (as in Halide, a pure variable "
                                  f"keeps its position)")
        rvars: list[RVar] = []
        for e in list(args) + [value]:
            for n in walk(e):
                if isinstance(n, RVar) and n not in rvars:
                    rvars.append(n)
        pure = [a.name for a in args if isinstance(a, Var)]
        for n in itertools.chain(*(walk(e) for e in list(args) + [value])):
            if isinstance(n, Var) and n.name not in pure:
                raise HalideError(f"func {self.name}: update uses {n.name}, which is not a "
                                  f"pure argument of the update")
        self.defs.append(Definition(args, value, rvars))
        self.stages.append(Stage(self, len(self.stages), [r.name for r in rvars] + pure))

    def value_type(self) -> IntType:
        if not self.defs:
            raise HalideError(f"func {self.name}: is used but never defined")
        return typeof(self.defs[0].value, f"func {self.name}: ") or u16

    def update(self, i: int = 0) -> Stage:
        if i + 1 >= len(self.stages):
            raise HalideError(f"func {self.name}: has no update {i}")
        return self.stages[i + 1]

    # --- schedule (pure stage) ------------------------------------------------------------
    def _stage0(self) -> Stage:
        if not self.stages:
            raise HalideError(f"func {self.name}: schedule before definition")
        return self.stages[0]

    def split(self, v, outer, inner, factor):
        self._stage0().split(v, outer, inner, factor); return self

    def tile(self, x, y, xo, yo, xi, yi, fx, fy):
        self._stage0().tile(x, y, xo, yo, xi, yi, fx, fy); return self

    def reorder(self, *vs):
        self._stage0().reorder(*vs); return self

    def unroll(self, v, factor=None):
        self._stage0().unroll(v, factor); return self

    def compute_root(self):
        self.compute = "root"; return self

    def compute_inline(self):
        self.compute = None; return self

    def compute_at(self, f: "Func", v):
        self.compute = (f, v if isinstance(v, str) else v.name); return self

    def store_root(self):
        self.store = None; return self

    def store_at(self, f: "Func", v):
        self.store = (f, v if isinstance(v, str) else v.name); return self

    def store_in(self, level: str):
        if level not in ("GLB", "MEM", "REG"):
            raise HalideError(f"func {self.name}: store_in level must be GLB, MEM or REG")
        self.level = level; return self

    def unit(self, name: str):
        self.unit_name = name; return self

    def share(self, other: "Func"):
        """Compute sharing (thesis §4.3.3): this function's ops run on ``other``'s unit."""
        if other.unit_name is None:
            other.unit_name = other.name
        self.unit_name = other.unit_name; return self

    def hw_accelerate(self, xi, xo):
        self.hw = tuple(v if isinstance(v, str) else v.name for v in (xi, xo)); return self

    def stream_to_accelerator(self):
        self.streamed = True
        if self.compute is None:
            self.compute = "root"
        return self
