"""Lowering a Halide-style pipeline to the Program IR (:meth:`Pipeline.lower`): bounds
inference, loop order, compute and store levels, one op per definition."""
from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass
from typing import Sequence

from ...ir.expr import Kernel
from ...ir.index import Index, IndexError_, var as ivar
from ...ir.program import Program
from .expr import (BinE, CallE, ConstE, FExpr, HalideError, HalideWarning, RVar, Var, rebuild,
                   show, subst, walk)
from .func import Func, Input, Stage, Definition
from .kernel import KernelBuilder

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
        a reference is cross-checked with real Halide (:func:`compiler.frontend.source.golden`)."""
        sizes = tuple(int(s) for s in sizes)
        low = Lowering(self.output, sizes)
        prog = low.lower(name)
        prog.halide = (self.output, sizes)
        for message in low.warnings():
            warnings.warn(message, HalideWarning, stacklevel=2)
        return prog


def _inlined(f) -> bool:
    return isinstance(f, Func) and f.compute is None and len(f.defs) == 1


class Lowering:
    def __init__(self, output: Func, sizes: tuple[int, ...]):
        self.out = output
        self.sizes = sizes
        if output.pure_vars is None:
            raise HalideError(f"func {output.name}: the output is never defined")
        if len(sizes) != len(output.pure_vars):
            raise HalideError(f"func {output.name}: {len(sizes)} sizes for "
                              f"{len(output.pure_vars)} dimensions")
        output.compute = "root"
        self.expanded: dict[int, FExpr] = {}        # id(Definition) -> value with inlines expanded
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
        self.direct_reads: dict[str, list[str]] = {}   # input -> reading ops not streamed

    # --- graph -------------------------------------------------------------------------
    def expand(self, f: Func, d: Definition) -> FExpr:
        key = id(d)
        if key not in self.expanded:
            def inline(n):
                if isinstance(n, CallE) and _inlined(n.target):
                    g = n.target
                    if len(n.args) != len(g.pure_vars):
                        raise HalideError(f"func {g.name}: called with {len(n.args)} "
                                          f"arguments, defined with {len(g.pure_vars)}")
                    body = self.expand(g, g.defs[0])
                    return subst(body, dict(zip(g.pure_vars, n.args)))
                return None
            self.expanded[key] = rebuild(d.value, inline)
            self.expanded[(key, "args")] = tuple(rebuild(a, inline) for a in d.args)
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
                for n in list(walk(self.expand(f, d))) + \
                        [m for a in self.expanded[(id(d), "args")] for m in walk(a)]:
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
        raise IndexError_(f"{show(e)} is not a quasi-affine function of the loop variables")

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
                for n in list(walk(self.expand(c, d))) + \
                        [m for a in self.expanded[(id(d), "args")] for m in walk(a)]:
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
                self.direct_reads[f.name] = []
        for f in self.funcs:
            shape = [e for e, keep in zip(self.storage[f].extents, self.kept_dims(f)) if keep]
            prog.add_buffer(f.name, shape, f.value_type(),
                            "output" if f is self.out else "temp", self.level_of(f))
        for f in self.funcs:
            if f.compute == "root" and f is not self.out:
                self.emit(f, prog)
        self.emit(self.out, prog)
        return prog.validate()

    def warnings(self) -> list[str]:
        """An input read at several places by functions that are not
        ``stream_to_accelerator()`` copies: every such read is its own IO stream from the
        global buffer (paper §V-A streams each input once into the array's memories)."""
        out = []
        for name, readers in self.direct_reads.items():
            if len(readers) > 1:
                dims = len(self.storage[next(f for f in self.order if f.name == name)].extents)
                v = ", ".join("xyzw"[:dims]) if dims <= 4 else "..."
                by = ", ".join(dict.fromkeys(readers))
                out.append(f"input {name}: read at {len(readers)} places by {by} without "
                           f"stream_to_accelerator(), so each read is its own IO stream; add "
                           f"hw_{name}[{v}] = {name}[{v}]; hw_{name}.stream_to_accelerator() "
                           f"and read hw_{name} instead")
        return out

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
            sites += [("reads", n.args) for n in walk(self.expand(f, d))
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

    def emit_ops(self, f: Func, stage: Stage, d: Definition, node, unrolled: list[tuple[str, int]]):
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
            kb = KernelBuilder(self, f, where)
            acc = None
            for combo in group:
                fix = {n: Index.of(v) for (n, _), v in zip(unrolled, combo)}
                e_env = {k: _subst_index(x, fix) for k, x in env.items()}
                acc = kb.value(value, e_env, self_value=acc if fold else None)
            op = node.add_op(name)
            for buf, idx in kb.loads:
                op.add_load(buf, *idx)
                if not f.streamed and buf in self.direct_reads:
                    self.direct_reads[buf].append(f.name)
            fix = {n: Index.of(v) for (n, _), v in zip(unrolled, group[-1])}
            op.add_store(f.name, *self.buffer_index(f, [_subst_index(i, fix) for i in store]))
            body = kb.finish(acc, f.value_type())
            op.add_function(Kernel(f"{name}_kernel", len(kb.loads), body,
                                   tuple(kb.arg_types)), f.unit_name)

    def _self_reads_at(self, f: Func, value: FExpr, args) -> bool:
        key = [show(a) for a in args]
        return all([show(a) for a in n.args] == key for n in walk(value)
                   if isinstance(n, CallE) and n.target is f)


def _subst_index(idx: Index, mapping: dict[str, Index]) -> Index:
    out = Index.of(idx.const)
    for v, c in idx.terms:
        out = out + c * mapping.get(v, ivar(v))
    for n, d, c in idx.floors:
        out = out + c * (_subst_index(n, mapping) // d)
    return out


def _rename(idx: Index, names: dict[str, str]) -> Index:
    return _subst_index(idx, {k: ivar(v) for k, v in names.items()})
