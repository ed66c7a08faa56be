"""A Halide-style DSL that lowers to the Program IR (thesis §3.2, paper Fig. 1 and §V-A;
docs/design.md §3.1, docs/apps.md "Write your own app").

Algorithm::

    x, y, c = Var("x"), Var("y"), Var("c")
    inp = Input("input", u16, (64, 64, 16))
    brighten, blur = Func("brighten"), Func("blur")
    brighten[x, y, c] = inp[x, y, c] * 2
    blur[x, y, c] = (brighten[x, y, c] + brighten[x + 1, y, c]
                     + brighten[x, y + 1, c] + brighten[x + 1, y + 1, c]) / 4
    brighten.compute_at(blur, c)
    prog = Pipeline(blur).lower("brighten_blur", (63, 63, 16))

Values are typed (:class:`~compiler.ir.types.IntType`, 16 bits at most: the PE's word);
integer literals take the type of the other operand, operands of different types need an
explicit :func:`cast`. ``/`` and ``%`` by a power of two become shifts and masks (Halide's
division rounds down, like ``ashr``); other divisors are rejected. Comparisons give ``u1``;
``abs``/``absd`` give the unsigned type (as in Halide). Loop variables can only be used in
(quasi-affine) indices.

Schedule (a subset of Halide's, plus the accelerator commands of the thesis):

* ``split(v, outer, inner, factor)`` (the factor must divide the extent), ``tile``,
  ``reorder`` (innermost first, as in Halide), ``unroll(v)``: an unrolled pure dimension
  replicates the op (one op per value); unrolled reduction dimensions of an update that reads
  the function only where it writes are folded into ONE op with many loads (a fully unrolled
  reduction becomes one op);
* ``compute_root()``, ``compute_at(f, v)``, ``store_at(f, v)``, ``compute_inline()`` (the
  default for pure functions, as in Halide): a function computed at ``f``'s loop ``v`` gets its
  own loops inside that loop, over the region ``f`` needs in one iteration of ``v``, in local
  coordinates (loops start at 0; loops of extent 1 are dropped); its buffer covers the region needed in one iteration of the
  store loop, dimensions of extent 1 dropped (so the thesis' ``brighten[x, y]`` inside ``t``);
* ``hw_accelerate(xi, xo)`` on the output: the accelerated region is the loops inside ``xo``;
  functions computed at the root (outside it) are stored in the GLB, except the accelerator's
  inputs: a ``stream_to_accelerator()`` function (computed at the root) is the input stream of
  the accelerator (paper §V-A): its op reads the GLB inputs through IO streams and writes the
  buffer its consumers read on the array, whose level buffer mapping chooses (MEM or REG, like
  the apps' ``hw_input``, docs/apps.md); ``store_in("GLB"|"MEM"|"REG")`` sets a buffer's
  memory level (``BufferDecl.level``), which buffer mapping obeys or refuses with a one-line
  error (docs/mapping.md); ``unit(name)``/``share(other)`` set the compute unit (``Op.unit``,
  thesis §4.3.3).

Lowering (:meth:`Pipeline.lower`) infers rectangular bounds from the consumers' accesses
(halos included, interval arithmetic over the consumers' loops), orders the loops as scheduled
(Halide's default: the first variable innermost; reduction variables inside the pure ones in
updates), emits producers before consumers and turns each definition into an op whose kernel is
a :class:`~compiler.ir.expr.Kernel` DAG (identical loads are shared). A function with update
definitions (a reduction over an ``RDom``) is never inlined: wherever it is computed (root,
``compute_at``, ``store_at``) it gets its pure definition and then each update, each with its
own loops over the region its consumers need, as Halide computes it; an update's reads of its
own function are not consumers, and an update must write and read inside that region (Halide
would grow the region of the earlier stages; this lowering refuses it). A pure variable in an
update keeps its position in the arguments (as in Halide). Loop names are
``<func>_<dim>`` (``<func>_u<i>_<dim>`` for update ``i``), op names ``<func>`` / ``<func>_u<i>``.
Errors are one-line :class:`HalideError` naming the function.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Sequence

from ..ir.expr import Arg, Call, Const, Expr, Kernel, Lookup
from ..ir.index import Index, IndexError_, var as ivar
from ..ir.program import Program
from ..ir.types import IntType, u1, u16

__all__ = ["HalideError", "Var", "RVar", "RDom", "Func", "Input", "Pipeline", "cast", "select",
           "min_", "max_", "abs_", "absd", "lookup", "FExpr", "typeof", "UInt", "Int", "Bool"]


class HalideError(ValueError):
    """A DSL program that cannot be lowered (one line, naming the function)."""


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
    target: "Func | Input"
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


def _unsigned(t: IntType) -> IntType:
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
        return None if t is None else _unsigned(t)
    if isinstance(e, SelE):
        ct = typeof(e.c, where)
        if ct is not None and ct != u1:
            raise HalideError(f"{where}select condition has type {ct}, expected a comparison")
        return _unify(typeof(e.a, where), typeof(e.b, where), "select", where)
    if isinstance(e, BinE):
        ta, tb = typeof(e.a, where), typeof(e.b, where)
        if e.op in ("<<", ">>"):
            return ta
        t = _unify(ta, tb, e.op, where)
        if e.op in COMPARE:
            return u1
        if e.op == "absd":
            return None if t is None else _unsigned(t)
        return t
    raise HalideError(f"{where}unknown expression {e!r}")


def _unify(ta, tb, op, where):
    if ta is not None and tb is not None and ta != tb:
        raise HalideError(f"{where}operands of '{op}' have types {ta} and {tb}; use cast()")
    return ta if ta is not None else tb


def _walk(e: FExpr):
    yield e
    for c in _children(e):
        yield from _walk(c)


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


def _rebuild(e: FExpr, fn, memo: dict | None = None) -> FExpr:
    """Apply ``fn`` bottom-up (``fn`` returns a replacement or None to keep the node); a node
    shared in ``e`` stays shared in the result."""
    memo = {} if memo is None else memo
    if id(e) in memo:
        return memo[id(e)][1]
    r = lambda c: _rebuild(c, fn, memo)
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


def _subst(e: FExpr, mapping: dict) -> FExpr:
    return _rebuild(e, lambda n: mapping.get(n) if isinstance(n, (Var, RVar)) else None)


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
class _Def:
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
        self.defs: list[_Def] = []
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
            self.defs.append(_Def(args, value))
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
            for n in _walk(e):
                if isinstance(n, RVar) and n not in rvars:
                    rvars.append(n)
        pure = [a.name for a in args if isinstance(a, Var)]
        for n in itertools.chain(*(_walk(e) for e in list(args) + [value])):
            if isinstance(n, Var) and n.name not in pure:
                raise HalideError(f"func {self.name}: update uses {n.name}, which is not a "
                                  f"pure argument of the update")
        self.defs.append(_Def(args, value, rvars))
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


# --- lowering ------------------------------------------------------------------------------------

@dataclass
class _Region:
    mins: list[Index]     # per dimension, affine in enclosing loop names
    extents: list[int]


class Pipeline:
    """The pipeline computing ``output``; :meth:`lower` builds the Program."""

    def __init__(self, output: Func):
        self.output = output

    def lower(self, name: str, sizes: Sequence[int]) -> Program:
        """The Program computing the output over ``[0, sizes)``. The Program remembers where
        it came from (``program.halide = (output Func, sizes)``) so that an app file without
        a reference is cross-checked with real Halide (:func:`compiler.source.golden`)."""
        sizes = tuple(int(s) for s in sizes)
        prog = _Lowering(self.output, sizes).lower(name)
        prog.halide = (self.output, sizes)
        return prog


def _inlined(f) -> bool:
    return isinstance(f, Func) and f.compute is None and len(f.defs) == 1


class _Lowering:
    def __init__(self, output: Func, sizes: tuple[int, ...]):
        self.out = output
        self.sizes = sizes
        if output.pure_vars is None:
            raise HalideError(f"func {output.name}: the output is never defined")
        if len(sizes) != len(output.pure_vars):
            raise HalideError(f"func {output.name}: {len(sizes)} sizes for "
                              f"{len(output.pure_vars)} dimensions")
        output.compute = "root"
        self.expanded: dict[int, FExpr] = {}        # id(_Def) -> value with inlines expanded
        self.order: list = []                       # non-inlined funcs and inputs, producers 1st
        self._visit(output, [])
        self.funcs = [f for f in self.order if isinstance(f, Func)]
        self.loop_ext: dict[str, int] = {}
        self.region: dict[Func, _Region] = {}       # compute region (global coordinates)
        self.enclosing: dict[Func, list[str]] = {}  # loop names enclosing the compute level
        self.store_enclosing: dict[Func, list[str]] = {}
        self.storage: dict = {}                     # func/input -> _Region of its buffer
        self.dims_of: dict = {}                     # (func, stage) -> [(dim, ext)] outer 1st
        self.orig: dict = {}                        # (func, stage) -> {var name: Index}
        self.calls: dict = {}                       # func -> [(consumer stage, CallE)]
        self.compute_stage: dict = {}               # func -> (consumer Stage, dim) if at

    # --- graph -------------------------------------------------------------------------
    def expand(self, f: Func, d: _Def) -> FExpr:
        key = id(d)
        if key not in self.expanded:
            def inline(n):
                if isinstance(n, CallE) and _inlined(n.target):
                    g = n.target
                    if len(n.args) != len(g.pure_vars):
                        raise HalideError(f"func {g.name}: called with {len(n.args)} "
                                          f"arguments, defined with {len(g.pure_vars)}")
                    body = self.expand(g, g.defs[0])
                    return _subst(body, dict(zip(g.pure_vars, n.args)))
                return None
            self.expanded[key] = _rebuild(d.value, inline)
            self.expanded[(key, "args")] = tuple(_rebuild(a, inline) for a in d.args)
        return self.expanded[key]

    def _visit(self, f, stack):
        if f in self.order:
            return
        if f in stack:
            raise HalideError(f"func {f.name}: is defined in terms of itself through "
                              f"{', '.join(g.name for g in stack)}")
        if isinstance(f, Func):
            if not f.defs:
                raise HalideError(f"func {f.name}: is used but never defined")
            for d in f.defs:
                for n in list(_walk(self.expand(f, d))) + \
                        [m for a in self.expanded[(id(d), "args")] for m in _walk(a)]:
                    if isinstance(n, CallE) and n.target is not f:
                        self._visit(n.target, stack + [f])
        self.order.append(f)

    # --- indices -----------------------------------------------------------------------
    def to_index(self, e: FExpr, env: dict, where: str) -> Index:
        """A DSL index expression -> Index over loop names (``env``: var name -> Index)."""
        try:
            return self._index(e, env, where)
        except IndexError_ as err:
            raise HalideError(f"{where}non-affine index: {err}") from None

    def _index(self, e, env, where) -> Index:
        if isinstance(e, (Var, RVar)):
            if e.name not in env:
                raise HalideError(f"{where}uses {e.name}, which is not a variable here")
            return env[e.name]
        if isinstance(e, ConstE):
            return Index.of(e.value)
        if isinstance(e, BinE) and e.op in ("+", "-", "*", "/", "%"):
            a, b = self._index(e.a, env, where), self._index(e.b, env, where)
            return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
                    "/": lambda: a // b, "%": lambda: a % b}[e.op]()
        raise IndexError_(f"{_show(e)} is not a quasi-affine function of the loop variables")

    # --- bounds --------------------------------------------------------------------------
    def bounds(self, idx: Index, fixed: set[str], where: str) -> tuple[Index, int]:
        """(min, extent) of ``idx`` with the loops in ``fixed`` symbolic, others ranging."""
        lo, hi = self._range(idx, fixed, where)
        if str(lo - hi) != str(Index.of(lo.const - hi.const)) or hi.const < lo.const:
            raise HalideError(f"{where}cannot infer a constant extent for index {idx}")
        return lo, hi.const - lo.const + 1

    def _range(self, idx: Index, fixed: set[str], where: str) -> tuple[Index, Index]:
        lo = hi = Index.of(idx.const)
        for v, c in idx.terms:
            if v in fixed:
                lo, hi = lo + c * ivar(v), hi + c * ivar(v)
            else:
                ext = self.loop_ext[v]
                lo, hi = lo + min(0, c * (ext - 1)), hi + max(0, c * (ext - 1))
        for n, d, c in idx.floors:
            nlo, nhi = self._range(n, fixed, where)
            flo, fhi = self._floor_range(nlo, nhi, d)
            lo, hi = (lo + c * flo, hi + c * fhi) if c > 0 else (lo + c * fhi, hi + c * flo)
        return lo, hi

    @staticmethod
    def _floor_range(nlo: Index, nhi: Index, d: int) -> tuple[Index, Index]:
        """Bounds of ``floor(n / d)`` for ``nlo <= n <= nhi`` (``nhi - nlo`` constant)."""
        span = nhi.const - nlo.const
        if span == 0:
            return nlo // d, nlo // d
        if not nlo.floors and all(c % d == 0 for _, c in nlo.terms):
            sym = Index._make(0, {v: c // d for v, c in nlo.terms}, {})
            return sym + nlo.const // d, sym + nhi.const // d
        lo = nlo // d       # the symbolic part's alignment is unknown: over-approximate
        return lo, lo + span // d + 1

    def union(self, boxes: list[tuple[list[Index], list[int]]], where: str) -> _Region:
        mins, exts = [], []
        for dim in zip(*[list(zip(m, e)) for m, e in boxes]):
            sym = {str(m - m.const) for m, _ in dim}
            if len(sym) > 1:
                raise HalideError(f"{where}accesses at {', '.join(sorted(str(m) for m, _ in dim))}"
                                  f" do not have a common rectangular bound")
            lo = min(m.const for m, _ in dim)
            hi = max(m.const + e - 1 for m, e in dim)
            base = dim[0][0] - dim[0][0].const
            mins.append(base + lo)
            exts.append(hi - lo + 1)
        return _Region(mins, exts)

    def lower(self, name: str) -> Program:
        """The Program: call graph, compute levels, bounds (consumers first), then emission."""
        self.collect_calls()
        self.check_hw_accelerate()
        for f in reversed(self.funcs):     # consumers first
            if isinstance(f.compute, tuple):
                self.compute_stage[f] = self.compute_level(f)
        self.infer_bounds()
        return self.build(name)

    def collect_calls(self) -> None:
        """``calls[g]``: the (stage, call) pairs reading ``g`` from another function; an
        update's reads of its own function are not consumers (they do not set its region)."""
        self.calls = {f: [] for f in self.order}
        for c in self.funcs:
            for s, d in enumerate(c.defs):
                for n in list(_walk(self.expand(c, d))) + \
                        [m for a in self.expanded[(id(d), "args")] for m in _walk(a)]:
                    if isinstance(n, CallE) and not _inlined(n.target) and n.target is not c:
                        self.calls[n.target].append((c.stages[s], n))
        for f in self.funcs:
            if f.compute is None:      # functions with updates cannot be inlined
                f.compute = "root"

    def check_hw_accelerate(self) -> None:
        if self.out.hw is not None:
            for v in self.out.hw:
                if v not in self.out.stages[0].dims:
                    raise HalideError(f"func {self.out.name}: hw_accelerate: no loop {v}")

    def compute_level(self, f: Func) -> tuple[Stage, str]:
        """The (stage, loop) ``f.compute_at(cf, v)`` names: the stage of ``cf`` that uses
        ``f``, directly or through functions computed at the same loop."""
        cf, v = f.compute
        if cf not in self.funcs:
            why = ("is inlined, so it has no loops (schedule it with compute_root or "
                   "compute_at)" if _inlined(cf) else "is not in the pipeline")
            raise HalideError(f"func {f.name}: compute_at({cf.name}, {v}): {cf.name} {why}")
        levels = []
        for st, _ in self.calls[f]:
            if st.func is cf:
                levels.append(st)
            elif st.func.compute == f.compute and st.func in self.compute_stage:
                levels.append(self.compute_stage[st.func][0])
            else:
                raise HalideError(f"func {f.name}: is computed at {cf.name}'s loop "
                                  f"{v} but used by {st.func.name}, which is not")
        if len(set(map(id, levels))) > 1:
            raise HalideError(f"func {f.name}: is computed at {cf.name}'s loop {v} "
                              f"but used by several stages of {cf.name}")
        if v not in levels[0].dims or v in levels[0].unrolled:
            raise HalideError(f"func {f.name}: compute_at({cf.name}, {v}): {v} is not "
                              f"a loop of {levels[0].label}")
        return levels[0], v

    def infer_bounds(self) -> None:
        """Regions, storage and loops of every function and input, consumers first."""
        out = self.out
        for f in reversed(self.order):
            if f is out:
                self.region[f] = _Region([Index.of(0)] * len(self.sizes), list(self.sizes))
                self.enclosing[f] = []
                self.store_enclosing[f] = []
            elif isinstance(f, Input):
                self.infer_input(f)
                continue
            else:
                self.infer_func(f)
            self.make_loops(f)
            self.check_updates(f)
        self.storage[out] = self.region[out]

    def build(self, name: str) -> Program:
        prog = Program(name)
        for f in self.order:
            if isinstance(f, Input):
                prog.add_input(f.name, self.storage[f].extents, f.type)
        for f in self.funcs:
            shape = [e for e, keep in zip(self.storage[f].extents, self.kept_dims(f)) if keep]
            prog.add_buffer(f.name, shape, f.value_type(),
                            "output" if f is self.out else "temp", self.level_of(f))
        for f in self.funcs:
            if f.compute == "root" and f is not self.out:
                self.emit(f, prog)
        self.emit(self.out, prog)
        return prog.validate()

    def level_of(self, f: Func) -> str | None:
        """``store_in``'s level; under ``hw_accelerate``, GLB for the functions computed at
        the root (outside the accelerated loops) other than the streamed inputs."""
        if f.level is None and not f.streamed and self.out.hw and f is not self.out \
                and f.compute == "root":
            return "GLB"
        return f.level

    def check_updates(self, f: Func) -> None:
        """Every update writes and reads ``f`` inside the region its consumers need (Halide
        would grow the earlier stages' region; this lowering does not)."""
        reg = self.region[f]
        fixed = set(self.enclosing[f])
        for stage, d in zip(f.stages[1:], f.defs[1:]):
            env = self.orig[(f, stage.index)]
            where = f"func {f.name}: "
            sites = [("writes", self.expanded[(id(d), "args")])]
            sites += [("reads", n.args) for n in _walk(self.expand(f, d))
                      if isinstance(n, CallE) and n.target is f]
            for what, args in sites:
                for k, a in enumerate(args):
                    lo, ext = self.bounds(self.to_index(a, env, where), fixed, where)
                    off = lo - reg.mins[k]
                    if off.terms or off.floors or off.const < 0 or \
                            off.const + ext > reg.extents[k]:
                        raise HalideError(f"func {f.name}: {stage.label} {what} dimension {k} "
                                          f"outside the region its consumers need "
                                          f"(updates must stay inside it)")

    def fixed_for(self, level, f) -> list[str]:
        """Loop names enclosing ``level`` = (consumer stage, dim) or None (root)."""
        if level is None:
            return []
        stage, v = level
        outer = [d for d, _ in self.dims_of[(stage.func, stage.index)]]
        names = outer[:outer.index(self.loop_name(stage, v)) + 1]
        if any(self.loop_name(stage, u) in names for u in stage.unrolled):
            raise HalideError(f"func {f.name}: computed or stored inside an unrolled loop of "
                              f"{stage.label}")
        return self.enclosing[stage.func] + names

    def infer_func(self, f: Func):
        level = self.compute_stage.get(f)
        self.enclosing[f] = self.fixed_for(level, f)
        self.region[f] = self.required(f, set(self.enclosing[f]))
        if f.store is not None:
            sf, v = f.store
            if level is None or sf is not level[0].func:
                raise HalideError(f"func {f.name}: store_at({sf.name}, {v}) needs "
                                  f"compute_at at or inside {sf.name}'s loop {v}")
            lv = (level[0], v)
            if v not in level[0].dims:
                raise HalideError(f"func {f.name}: store_at({sf.name}, {v}): no such loop")
            self.store_enclosing[f] = self.fixed_for(lv, f)
            if not set(self.store_enclosing[f]) <= set(self.enclosing[f]):
                raise HalideError(f"func {f.name}: store_at level is inside its compute_at "
                                  f"level")
        else:
            self.store_enclosing[f] = self.enclosing[f]
        self.storage[f] = self.required(f, set(self.store_enclosing[f]))

    def infer_input(self, f: Input):
        reg = self.required(f, set())
        if any(m.const < 0 for m in reg.mins):
            raise HalideError(f"input {f.name}: read at negative coordinates "
                              f"{[m.const for m in reg.mins]}")
        need = [m.const + e for m, e in zip(reg.mins, reg.extents)]
        if f.shape is not None:
            if len(f.shape) != len(need) or any(n > s for n, s in zip(need, f.shape)):
                raise HalideError(f"input {f.name}: accesses need shape at least {need}, "
                                  f"declared {list(f.shape)}")
            shape = list(f.shape)
        else:
            shape = need
        self.storage[f] = _Region([Index.of(0)] * len(shape), shape)

    def required(self, f, fixed: set[str]) -> _Region:
        """The box of ``f`` accessed by its consumers, with the loops in ``fixed`` symbolic."""
        boxes = []
        where = f"func {f.name}: " if isinstance(f, Func) else f"input {f.name}: "
        for stage, call in self.calls[f]:
            env = self.orig[(stage.func, stage.index)]
            here = f"func {stage.func.name}: "
            mins, exts = [], []
            for a in call.args:
                idx = self.to_index(a, env, here)
                lo, ext = self.bounds(idx, fixed, here)
                mins.append(lo)
                exts.append(ext)
            boxes.append((mins, exts))
        if not boxes:   # pragma: no cover - only the output has no consumer
            raise HalideError(f"{where}is never used")
        return self.union(boxes, where)

    def loop_name(self, stage: Stage, dim: str) -> str:
        return f"{stage.label}_{dim}"

    def make_loops(self, f: Func):
        """Extents of every stage's loops, and each original variable as an Index."""
        reg = self.region[f]
        for stage, d in zip(f.stages, f.defs):
            ext: dict[str, int] = {}
            expr: dict[str, Index] = {}
            for k, v in enumerate(f.pure_vars):
                if stage.index == 0 or v.name in stage.dims or any(
                        s.old == v.name for s in stage.splits):
                    ext[v.name] = reg.extents[k]
                    expr[v.name] = ivar(v.name)
            for r in d.rvars:
                ext[r.name] = r.extent
                expr[r.name] = ivar(r.name)
            for sp in stage.splits:
                e = ext.pop(sp.old)
                if e % sp.factor:
                    raise HalideError(f"func {f.name}: split of {sp.old} (extent {e}) by "
                                      f"{sp.factor}: the factor must divide the extent")
                ext[sp.outer], ext[sp.inner] = e // sp.factor, sp.factor
                sub = ivar(sp.outer) * sp.factor + ivar(sp.inner)
                expr = {k: _subst_index(x, {sp.old: sub}) for k, x in expr.items()}
            names = {dm: self.loop_name(stage, dm) for dm in stage.dims}
            dims = [(names[dm], ext[dm]) for dm in reversed(stage.dims)]   # outer first
            for n, e in dims:
                self.loop_ext[n] = e
            env = {}
            for k, v in enumerate(f.pure_vars):
                if v.name in expr:
                    env[v.name] = reg.mins[k] + _rename(expr[v.name], names)
            for r in d.rvars:
                env[r.name] = r.min + _rename(expr[r.name], names)
            unit = {n: Index.of(0) for n, e in dims if e == 1}   # extent-1 loops are dropped
            env = {k: _subst_index(x, unit) for k, x in env.items()}
            self.orig[(f, stage.index)] = env
            self.dims_of[(f, stage.index)] = dims

    # --- emission ------------------------------------------------------------------------
    def kept_dims(self, f) -> list[bool]:
        """Buffer dimensions kept: a function stored inside a loop drops extent-1 dims."""
        ext = self.storage[f].extents
        if not isinstance(f, Func) or f is self.out or not self.store_enclosing.get(f):
            return [True] * len(ext)
        return [e != 1 for e in ext]

    def buffer_index(self, f, coords: list[Index]) -> list[Index]:
        st = self.storage[f]
        return [c - m for c, m, keep in zip(coords, st.mins, self.kept_dims(f)) if keep]

    def emit(self, f: Func, parent):
        for stage, d in zip(f.stages, f.defs):
            node = parent
            unrolled = {self.loop_name(stage, u) for u in stage.unrolled}
            inner_prods = {}
            for g, (st, v) in self.compute_stage.items():
                if st is stage:
                    inner_prods.setdefault(self.loop_name(stage, v), []).append(g)
            for n, e in self.dims_of[(f, stage.index)]:
                if n in unrolled:
                    if n in inner_prods:
                        raise HalideError(f"func {f.name}: cannot compute inside unrolled "
                                          f"loop {n}")
                    continue
                if e > 1:
                    node = node.add_loop(n, 0, e)
                for g in [g for g in self.funcs if g in inner_prods.get(n, [])]:
                    self.emit(g, node)
            self.emit_ops(f, stage, d, node, [(n, self.loop_ext[n]) for n, _ in
                                              self.dims_of[(f, stage.index)] if n in unrolled])

    def emit_ops(self, f: Func, stage: Stage, d: _Def, node, unrolled: list[tuple[str, int]]):
        env = self.orig[(f, stage.index)]
        where = f"func {f.name}: "
        value = self.expand(f, d)
        args = self.expanded[(id(d), "args")]
        store = [self.to_index(a, env, where) for a in args]
        combos = list(itertools.product(*[range(e) for _, e in unrolled]))
        fold = (stage.index > 0 and unrolled and
                not any(v for idx in store for v in idx.variables() if v in dict(unrolled))
                and self._self_reads_at(f, value, args))
        groups = [combos] if fold else [[c] for c in combos]
        for gi, group in enumerate(groups):
            name = stage.label if len(groups) == 1 else f"{stage.label}_{gi}"
            kb = _KernelBuilder(self, f, where)
            acc = None
            for combo in group:
                fix = {n: Index.of(v) for (n, _), v in zip(unrolled, combo)}
                e_env = {k: _subst_index(x, fix) for k, x in env.items()}
                acc = kb.value(value, e_env, self_value=acc if fold else None)
            op = node.add_op(name)
            for buf, idx in kb.loads:
                op.add_load(buf, *idx)
            fix = {n: Index.of(v) for (n, _), v in zip(unrolled, group[-1])}
            op.add_store(f.name, *self.buffer_index(f, [_subst_index(i, fix) for i in store]))
            body = kb.finish(acc, f.value_type())
            op.add_function(Kernel(f"{name}_kernel", len(kb.loads), body,
                                   tuple(kb.arg_types)), f.unit_name)

    def _self_reads_at(self, f: Func, value: FExpr, args) -> bool:
        key = [_show(a) for a in args]
        return all([_show(a) for a in n.args] == key for n in _walk(value)
                   if isinstance(n, CallE) and n.target is f)


def _show(e: FExpr) -> str:
    if isinstance(e, (Var, RVar)):
        return e.name
    if isinstance(e, ConstE):
        return str(e.value)
    if isinstance(e, CallE):
        return f"{e.target.name}[{', '.join(map(_show, e.args))}]"
    if isinstance(e, BinE):
        return f"({_show(e.a)} {e.op} {_show(e.b)})"
    if isinstance(e, SelE):
        return f"select({_show(e.c)}, {_show(e.a)}, {_show(e.b)})"
    if isinstance(e, UnE):
        return f"{e.op}({_show(e.a)})"
    if isinstance(e, CastE):
        return f"cast({e.type}, {_show(e.a)})"
    return f"lookup({_show(e.a)})"


def _subst_index(idx: Index, mapping: dict[str, Index]) -> Index:
    out = Index.of(idx.const)
    for v, c in idx.terms:
        out = out + c * mapping.get(v, ivar(v))
    for n, d, c in idx.floors:
        out = out + c * (_subst_index(n, mapping) // d)
    return out


def _rename(idx: Index, names: dict[str, str]) -> Index:
    return _subst_index(idx, {k: ivar(v) for k, v in names.items()})


_ARITH = {"+": "add", "-": "sub", "*": "mul", "&": "and", "|": "or", "^": "xor"}


class _KernelBuilder:
    """Turns a DSL value into a kernel DAG; each distinct (buffer, index) becomes one load."""

    def __init__(self, low: _Lowering, f: Func, where: str):
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
                                  f"words only (UDIV): {_show(e)}")
            return Call("udiv", (self.conv(e.a, t), self.conv(e.b, t)))
        if op in ("<<", ">>", "/", "%"):
            a = self.conv(e.a, t)
            k = _const_of(e.b)
            if k is None:
                raise HalideError(f"{w}'{op}' needs a constant right operand: {_show(e)}")
            if op in ("/", "%"):
                if k <= 0 or k & (k - 1):
                    raise HalideError(f"{w}division by the constant {k}: only powers of two "
                                      f"are supported: {_show(e)}")
                if op == "%":
                    return Call("and", (a, Const(k - 1, t)))
                k = k.bit_length() - 1
                op = ">>"
            if not 0 <= k < 16:
                raise HalideError(f"{w}shift by {k} outside 0..15: {_show(e)}")
            name = "shl" if op == "<<" else ("ashr" if t.signed else "lshr")
            return Call(name, (a, Const(k, t)))
        ta = (_unify(typeof(e.a, w), typeof(e.b, w), op, w)
              or (hint if op not in COMPARE else None) or u16)
        a, b = self.conv(e.a, ta), self.conv(e.b, ta)
        if op in _ARITH:
            return Call(_ARITH[op], (a, b))
        if op in ("min", "max"):
            return Call(("s" if ta.signed else "u") + op, (a, b))
        if op == "absd":
            return Call("absdiff", (a, b), _unsigned(ta))
        if op in ("==", "!="):
            return Call("eq" if op == "==" else "ne", (a, b))
        cmp = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge"}[op]
        return Call(("s" if ta.signed else "u") + cmp, (a, b))


def _const_of(e: FExpr) -> int | None:
    if isinstance(e, ConstE):
        return e.value
    return None
