"""One output tile of a Program with its halo: the instances it needs and the Program that
computes exactly those (Halide's ``tile`` with bounds inference; thesis §7.1: "the data tiles
required by the CGRA are first brought into the global buffer and then streamed into the CGRA").

:func:`required_instances` starts from every instance that writes an element of the output
box and walks the read-after-write dependences backwards (value-based, so a buffer rewritten by
every iteration of an outer loop, resnet's ``in_mem`` per output-channel block, needs only the
iterations whose values the tile reads). :func:`restrict` turns the result into a Program:

* every loop is narrowed to the hull of the iterations its ops need (an op none of whose
  instances is needed is removed: dead code, its values are never read), and rebased to start
  at 0;
* every buffer is narrowed to the hull of the elements the narrowed program touches and
  rebased to start at 0 (its ``lows`` are where the tile's buffer sits in the whole one);
* every index is rewritten for both rebasings.

Kernels cannot read loop variables (docs/apps.md), so a tile's values do not depend on where
it sits: two tiles whose restricted Programs are equal run on one configuration
(:mod:`.plan` checks this, tile by tile).
"""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from ..ir.index import Index
from ..ir.poly import PolyProgram
from ..ir.program import Access, Loop, Op, Program
from ..poly.deps import Dependence

Box = tuple[tuple[int, int], ...]          # per dimension (low, high), inclusive


class TilingError(ValueError):
    """A Program cannot be tiled as asked (one line naming the cause)."""


def box_set(ctx, name: str, box: Box) -> isl.Set:
    dims = [f"i{d}" for d in range(len(box))]
    cons = " and ".join(f"{lo} <= {v} <= {hi}" for v, (lo, hi) in zip(dims, box))
    return isl.Set.read_from_str(ctx, f"{{ {name}[{', '.join(dims)}]"
                                 + (f" : {cons} }}" if cons else " }"))


def _closure(rel: isl.Map) -> isl.Map:
    """The transitive closure of a self-dependence (exact for the uniform distances of a
    reduction; isl over-approximates otherwise, which keeps more instances, never fewer)."""
    clo, _exact = rel.transitive_closure()
    return clo


def required_instances(poly: PolyProgram, deps: list[Dependence], boxes: dict[str, Box]
                       ) -> dict[str, isl.Set]:
    """Per op, the instances the output ``boxes`` (output buffer -> element box) need: every
    write of an element in a box, and transitively every producer instance whose value a
    needed instance reads (the last writer: the dependences are value-based)."""
    ctx = poly.ctx
    need = {name: isl.Set.empty(op.domain.get_space()) for name, op in poly.ops.items()}
    for name, op in poly.ops.items():
        box = boxes.get(op.store.buffer)
        if box is not None:
            elems = box_set(ctx, op.store.buffer, box)
            need[name] = op.store.access.intersect_domain(op.domain).intersect_range(
                elems).domain()
    selfdep = {}
    for d in deps:
        if d.producer == d.consumer:
            r = d.relation
            selfdep[d.producer] = r if d.producer not in selfdep else selfdep[d.producer].union(r)
    closures = {n: _closure(r) for n, r in selfdep.items()}
    changed = True
    while changed:
        changed = False
        for n, clo in closures.items():
            grown = need[n].union(clo.intersect_range(need[n]).domain()).coalesce()
            if not grown.is_subset(need[n]):
                need[n], changed = grown, True
        for d in deps:
            if d.producer == d.consumer:
                continue
            pre = d.relation.intersect_range(need[d.consumer]).domain()
            if not pre.is_subset(need[d.producer]):
                need[d.producer] = need[d.producer].union(pre).coalesce()
                changed = True
    return need


def set_hull(s: isl.Set) -> Box | None:
    """The bounding box of a non-empty set (``None`` when empty)."""
    if s.is_empty():
        return None
    out = []
    for d in range(s.dim(isl.dim_type.set)):
        out.append((s.dim_min_val(d).to_python(), s.dim_max_val(d).to_python()))
    return tuple(out)


def index_range(ix: Index, box: dict[str, tuple[int, int]]) -> tuple[int, int]:
    """Exact ``(min, max)`` of an affine index over a box of its variables; a floor term is
    bounded by its numerator's range (monotone), so quasi-affine indices get a hull."""
    lo = hi = ix.const
    for v, c in ix.terms:
        a, b = box[v]
        lo += min(c * a, c * b)
        hi += max(c * a, c * b)
    for n, d, c in ix.floors:
        a, b = index_range(n, box)
        a, b = a // d, b // d
        lo += min(c * a, c * b)
        hi += max(c * a, c * b)
    return lo, hi


def substitute(ix: Index, shift: dict[str, int]) -> Index:
    """``ix`` with every variable ``v`` replaced by ``v + shift[v]``, the whole multiples of a
    divisor taken out of each floor (``floor((x + 2) / 2) - 1`` is ``floor(x / 2)``), so that
    equal indices print equally."""
    out = Index(ix.const + sum(c * shift.get(v, 0) for v, c in ix.terms), ix.terms)
    for n, d, c in ix.floors:
        n = substitute(n, shift)
        whole = n.const // d
        out = out + (Index(n.const - whole * d, n.terms, n.floors) // d) * c + whole * c
    return out


@dataclass
class Restricted:
    """A tile's Program and where its buffers sit in the whole ones: ``lows[buffer]`` is the
    whole buffer's index of the tile buffer's element 0 (per dimension)."""
    program: Program
    lows: dict[str, tuple[int, ...]]
    removed: list[str]                       # ops with no needed instance (dead code)


def _loop_ranges(program: Program, need: dict[str, isl.Set]
                 ) -> tuple[dict[str, tuple[int, int]], set[str]]:
    """The hull of the needed iterations of every loop over the ops beneath it, and the ops
    that keep at least one instance."""
    ranges: dict[str, tuple[int, int]] = {}
    alive = set()
    for op in program.ops():
        hull = set_hull(need[op.name])
        if hull is None:
            continue
        alive.add(op.name)
        for lp, (a, b) in zip(op.loops, hull):
            lo, hi = ranges.get(lp.name, (a, b))
            ranges[lp.name] = (min(lo, a), max(hi, b))
    return ranges, alive


def _access_hulls(program: Program, ranges: dict[str, tuple[int, int]], alive: set[str]
                  ) -> dict[str, list[tuple[int, int]]]:
    hulls: dict[str, list[tuple[int, int]]] = {}
    for op in program.ops():
        if op.name not in alive:
            continue
        box = {lp.name: ranges[lp.name] for lp in op.loops}
        for acc in op.loads + [op.store]:
            rs = [index_range(ix, box) for ix in acc.index]
            old = hulls.get(acc.buffer)
            hulls[acc.buffer] = rs if old is None else [
                (min(a, c), max(b, d)) for (a, b), (c, d) in zip(old, rs)]
    return hulls


def restrict(program: Program, need: dict[str, isl.Set], name: str | None = None,
             rebase: bool = True) -> Restricted:
    """The Program computing the ``need``ed instances (module docstring): loops narrowed to
    their needed hull, dead ops removed; with ``rebase`` (a tile), loops start at 0 and every
    buffer is narrowed to what the narrowed program touches, starting at 0; without (dead-code
    elimination of a whole program), loops keep their coordinates, the host buffers their
    shapes, and temporary buffers no op touches any more are dropped."""
    ranges, alive = _loop_ranges(program, need)
    if not any(program.buffers[op.store.buffer].kind == "output"
               for op in program.ops() if op.name in alive):
        raise TilingError(f"{program.name}: no needed instance writes an output element")
    hulls = _access_hulls(program, ranges, alive)
    out = Program(name or program.name)
    if rebase:
        lows = {b: tuple(a for a, _ in h) for b, h in hulls.items()}
        shapes = {b: tuple(hi - lo + 1 for lo, hi in h) for b, h in hulls.items()}
        shift = {v: lo for v, (lo, _hi) in ranges.items()}
    else:
        keep = set(hulls) | {b for b, d in program.buffers.items() if d.kind != "temp"}
        lows = {b: (0,) * len(d.shape or hulls.get(b, ())) for b, d in program.buffers.items()
                if b in keep}
        shapes = {b: program.buffers[b].shape for b in lows}
        shift = {}
    for b, decl in program.buffers.items():
        if b in shapes:
            out.add_buffer(b, shapes[b], decl.type, decl.kind, decl.level)

    def acc(a: Access) -> list[Index]:
        return [substitute(ix, shift) - lo for ix, lo in zip(a.index, lows[a.buffer])]

    def copy(parent, nodes) -> None:
        for n in nodes:
            if isinstance(n, Loop):
                if n.name not in ranges:
                    continue                      # no op beneath it is needed
                lo, hi = ranges[n.name]
                copy(parent.add_loop(n.name, 0 if rebase else lo, hi - lo + 1), n.children)
            elif n.name in alive:
                op = parent.add_op(n.name)
                for ld in n.loads:
                    op.add_load(ld.buffer, *acc(ld))
                op.add_store(n.store.buffer, *acc(n.store))
                op.add_function(n.kernel, n.unit)

    copy(out, program.children)
    removed = [op.name for op in program.ops() if op.name not in alive]
    return Restricted(out.validate(), lows, removed)


def dead_ops(program: Program, poly: PolyProgram, deps: list[Dependence]) -> list[str]:
    """Ops none of whose instances contributes to an output: values nothing reads."""
    boxes = {b: tuple((0, s - 1) for s in d.shape) for b, d in program.buffers.items()
             if d.kind == "output" and d.shape is not None}
    need = required_instances(poly, deps, boxes)
    return [op.name for op in program.ops() if need[op.name].is_empty()]
