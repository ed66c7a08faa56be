"""DNN-pipeline scheduling: coarse-grained modulo scheduling with double buffering (thesis
§4.3.1–4.3.5, Algorithm 1, Figs. 4.5–4.12; paper §V-B "DNN Pipeline").

1. The coarse-grained pipeline loops are the loops walked from the root while a body is a single
   loop; they are flattened into one tile counter (§4.3.4). The children of the innermost of them
   are the *pipeline stages*.
2. Each stage gets its own schedule: loop perfection + flattening at II = 1 (raised only if a
   recurrence inside the stage needs it), else the HLS scheduler with pipelined inner loops.
3. The resource reservation table (RRT) lists per stage its compute units and the read/write
   ports of the unified buffers it touches (global-buffer inputs and outputs are streams, not
   array ports); isomorphic stages (same kernels and extents) share a port entry (Fig. 4.12).
   The lower bound of the tile II is the largest per-resource total latency.
4. Stages are placed in topological order at the earliest start meeting their dependences
   (exactly, with isl, including the tile loop at the current II) and the first start from there
   that is free in the modulo reservation table (MRT); the least feasible II is found by binary
   search between the lower bound and the sequential tile latency (always feasible).
5. The wide-fetch SRAM (thesis §5.5.3; §7.2, Table 7.4 text) when ``pad``/``sram_gap`` are
   given (:mod:`.select` passes ``FW`` and ``2 x FW``): each stage's rows are padded to whole
   fetches (:mod:`.fetch_pad`), a load a memory serves (:func:`memory_served`) starts
   ``2 x FW`` producer writes plus its row's fetch lead after the value lands
   (:func:`gap_cycles`), and the tile II is a multiple of ``FW``.
A buffer written by tile t+1 before tile t's last read is double buffered: :mod:`.storage`
computes the copies each buffer needs (recorded by :func:`.select.schedule` in
``info["storage_copies"]``); the extra words appear in the live capacity.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import islpy as isl

from ..ir.poly import PolyProgram
from ..ir.program import Loop, Op, Program
from ..ir.schedule import OpSchedule, Schedule
from ..poly.deps import Dependence, dependency_graph, raw_dependences, topo_order
from .fetch_pad import compacted, padded_row, read_lead, shift_gaps, stage_rows
from .hls import Block, schedule_node
from .offsets import min_distance, write_interval
from ..ir.hw import HwParams
from .perfect_flatten import flatten, spine

BIG = 1 << 40


def pipeline_loops(program: Program, loop_opt: bool = True) -> tuple[list[Loop], list]:
    """(coarse-grained pipeline loops outermost first, stage nodes). Loop perfection runs
    first (Algorithm 1 line 2): if the innermost collected loop is a perfectable spine
    (Fig. 4.16a) it is one flattened stage rather than a pipeline of its children
    (``loop_opt`` False: never, the ablation of §4.3.4)."""
    loops, node = [], program
    while len(node.children) == 1 and isinstance(node.children[0], Loop):
        node = node.children[0]
        loops.append(node)
    if loop_opt and loops and len(node.children) > 1 and spine(node) is not None:
        return loops[:-1], [node]
    return loops, list(node.children)


def stage_ops(node) -> list[Op]:
    if isinstance(node, Op):
        return [node]
    out = []
    for c in node.children:
        out += stage_ops(c)
    return out


@dataclass
class Stage:
    name: str
    ops: list[str]
    block: Block
    resources: list[tuple[str, str]]
    group: tuple
    start: int = 0

    @property
    def latency(self) -> int:
        return self.block.latency

    def to_dict(self) -> dict:
        return {"name": self.name, "ops": self.ops, "start": self.start,
                "latency": self.latency, "resources": [f"{k}:{n}" for k, n in self.resources]}


@dataclass
class MRT:
    """Modulo reservation table: per resource the (group, start mod II, length) entries."""
    ii: int
    capacity: dict[tuple[str, str], int]
    entries: dict[tuple[str, str], list[tuple[tuple, int, int]]] = field(default_factory=dict)

    def _segments(self, start: int, length: int) -> list[tuple[int, int]]:
        if length >= self.ii:
            return [(0, self.ii)]
        a = start % self.ii
        b = a + length
        return [(a, b)] if b <= self.ii else [(a, self.ii), (0, b - self.ii)]

    def fits(self, stage: Stage, start: int) -> bool:
        for res in stage.resources:
            mine = self.user(stage, res)
            segs = self._segments(start, stage.latency)
            others = [(g, s) for g, st, ln in self.entries.get(res, []) if g != mine
                      for s in self._segments(st, ln)]
            for a, b in segs:
                groups = {g for g, (c, d) in others if c < b and a < d}
                if not groups:
                    continue
                # distinct groups active at one point: check at every boundary inside [a, b)
                points = {a} | {c for _, (c, _) in others if a <= c < b}
                for p in points:
                    active = {g for g, (c, d) in others if c <= p < d} | {mine}
                    if len(active) > self.capacity[res]:
                        return False
        return True

    def candidates(self, stage: Stage, est: int) -> list[int]:
        """Starts worth trying, in order: ``est`` and every end of a reservation on one of the
        stage's resources, taken into ``[est, est + II)`` (the earliest free start is one of
        them)."""
        out = {est}
        for res in stage.resources:
            for _, st, ln in self.entries.get(res, []):
                out.add(est + (st + ln - est) % self.ii)
        return sorted(out)

    @staticmethod
    def user(stage: Stage, res: tuple[str, str]):
        """Isomorphic stages share a buffer port entry; a compute unit is never shared."""
        return stage.name if res[0] == "unit" else stage.group

    def reserve(self, stage: Stage, start: int) -> None:
        for res in stage.resources:
            self.entries.setdefault(res, []).append((self.user(stage, res), start,
                                                     stage.latency))


def stage_row(node, program: Program, pad: int, depth: int = 0
              ) -> tuple[int | None, dict[str, int]]:
    """The padded innermost interval of a flattenable stage (:mod:`.fetch_pad`, thesis §5.5.3),
    or ``None`` when nothing is padded (``pad <= 1``, no spine, or every row already fits), and
    the cycles per iteration the outer loops that move a compacted row's start lane need
    (:func:`.fetch_pad.shift_gaps`; ``depth``: the TB's wide words, 0: no compaction)."""
    if pad <= 1 or isinstance(node, Op):
        return None, {}
    sp = spine(node)
    if sp is None:
        return None, {}
    inner = sp[0][-1]
    memory = {n for n, b in program.buffers.items() if b.kind not in ("input", "output")}
    shapes = {n: b.shape for n, b in program.buffers.items() if b.shape is not None}
    rows = stage_rows(stage_ops(node), inner, memory, pad, shapes)
    row = padded_row(rows, inner.extent, pad, depth)
    gaps = shift_gaps(stage_ops(node), inner, rows, pad, depth) if depth else {}
    return (row if row > inner.extent else None), gaps


def stage_block(node, poly: PolyProgram, deps: list[Dependence],
                program: Program | None = None, pad: int = 1,
                served: set[tuple[str, int]] = frozenset(), sram_gap: int = 0,
                depth: int = 0, gap_scale: dict[str, int] | None = None,
                loop_opt: bool = True) -> Block:
    """Perfected+flattened schedule of one stage at the least II its recurrences allow, rows
    padded to the fetch width ``pad`` (:func:`stage_row`); recurrences through a memory-served
    load (``served``: ``(consumer, slot)`` pairs) keep ``sram_gap`` writes (§5.5.3).
    ``loop_opt`` False: the HLS schedule (innermost loops pipelined, every outer loop
    iteration waits for the pipeline to drain), the ablation of §4.3.4 / Fig. 7.8."""
    if isinstance(node, Op) or not loop_opt:
        return schedule_node(node, poly, pipelined=True)
    names = {o.name for o in stage_ops(node)}
    inner = [d for d in deps if d.producer in names and d.consumer in names]
    max_lat = max(poly.ops[n].latency for n in names)
    row, gaps = stage_row(node, program, pad, depth) if program is not None else (None, {})
    # the gap first; a recurrence too tight for any memory (an accumulation one iteration
    # apart) keeps the least II without it: buffer mapping then reports the load it cannot serve
    for gap in dict.fromkeys((sram_gap, 0)):
        for ii in range(1, max_lat + 2):
            blk = flatten(node, poly, ii, row, gaps)
            if blk is None:
                return schedule_node(node, poly, pipelined=True)
            if _stage_ok(blk, poly, inner, served, gap, program, pad, gap_scale):
                return blk
    return schedule_node(node, poly, pipelined=True)


def gap_cycles(d: Dependence, prod: OpSchedule, program: Program, sram_gap: int,
               pad: int, gap_scale: dict[str, int] | None = None) -> int:
    """Cycles a memory-served load keeps after its value lands: ``sram_gap`` producer writes
    (§5.5.3, :func:`.offsets.write_interval`) plus the lead of a misaligned row's fetches
    (:func:`.fetch_pad.read_lead`). ``gap_scale[buffer]`` multiplies the writes: a bank of the
    buffer receives one of every ``k`` writes (its wide words fill ``k`` times slower than the
    producer writes; the pipeline driver sets it when buffer mapping finds a read too soon,
    :func:`compiler.pipeline.map_scheduled`)."""
    if not sram_gap:
        return 0
    scale = (gap_scale or {}).get(d.buffer, 1)
    return (sram_gap * scale * write_interval(prod)
            + read_lead(program.op(d.consumer), d.slot, pad))


def _stage_ok(blk: Block, poly: PolyProgram, inner: list[Dependence],
              served: set[tuple[str, int]] = frozenset(), sram_gap: int = 0,
              program: Program | None = None, pad: int = 1,
              gap_scale: dict[str, int] | None = None) -> bool:
    scheds = _op_scheds(blk, poly, {}, BIG, 0)
    for d in inner:
        p, c = scheds[d.producer], scheds[d.consumer]
        extra = gap_cycles(d, p, program, sram_gap, pad, gap_scale) \
            if (d.consumer, d.slot) in served and program is not None else 0
        if min_distance(d, p, c, poly.ctx) < p.latency + extra:
            return False
    return True


def memory_served(deps: list[Dependence], constant: dict[int, bool]) -> set[tuple[str, int]]:
    """The loads ``(consumer, slot)`` that buffer mapping serves from a memory (thesis §5.1.1,
    §5.5.3): those fed by more than one producer op (an accumulator read after its
    initialization and after its own updates: no single delay line carries both) or at a
    non-constant dependence distance (``constant[id(d)]`` False). A load fed by one producer
    at one constant distance is a wire, a shift register or a delay line instead."""
    producers: dict[tuple[str, int], set[str]] = {}
    for d in deps:
        producers.setdefault((d.consumer, d.slot), set()).add(d.producer)
    return {(d.consumer, d.slot) for d in deps
            if len(producers[(d.consumer, d.slot)]) > 1 or not constant.get(id(d), False)}


def _op_scheds(blk: Block, poly: PolyProgram, tile_coeffs: dict[str, int], ii: int,
               start: int) -> dict[str, OpSchedule]:
    out = {}
    for name, (coeffs, off) in blk.ops.items():
        op = poly.ops[name]
        c = dict(coeffs)
        for v, k in tile_coeffs.items():
            c[v] = k * ii
        out[name] = OpSchedule(name, op.dims, op.bounds, tuple(c.get(d, 0) for d in op.dims),
                               off + start, op.latency)
    return out


def _resources(ops: list[Op], program: Program) -> list[tuple[str, str]]:
    res = []
    for op in ops:
        res.append(("unit", op.compute_unit))
        if program.buffers[op.store.buffer].kind != "output":
            res.append(("wr", op.store.buffer))
        for ld in op.loads:
            if program.buffers[ld.buffer].kind != "input":
                res.append(("rd", ld.buffer))
    return list(dict.fromkeys(res))


def _tile_coeffs(tiles: list[Loop]) -> tuple[dict[str, int], int]:
    """The linear tile number's coefficient of every pipeline loop, and the number of tiles."""
    coeffs, stride = {}, 1
    for lp in reversed(tiles):
        coeffs[lp.name] = stride
        stride *= lp.extent
    return coeffs, stride


def _served_loads(program: Program, poly: PolyProgram, deps: list[Dependence], nodes, pad: int,
                  tile_coeffs: dict[str, int], depths: list[int] | None = None,
                  loop_opt: bool = True) -> set[tuple[str, int]]:
    """The loads a memory serves, from the (padded) stage schedules before any gap is applied
    (:func:`memory_served`; ``depths``: per stage, :func:`stage_depth`)."""
    plain: dict[str, OpSchedule] = {}
    for k, node in enumerate(nodes):
        depth = depths[k] if depths else 0
        plain.update(_op_scheds(stage_block(node, poly, deps, program, pad, depth=depth,
                                            loop_opt=loop_opt), poly, {}, 0, 0))
    return memory_served(deps, {id(d): constant_tile_distance(d, plain, tile_coeffs, poly)
                                for d in deps})


def stage_depth(node, depth: int, fetch_dims: int) -> int:
    """``depth`` when a compact fetch of the stage's reads fits the fetch controller, else 0
    (its rows padded, thesis §5.5.3): the compact pattern takes two levels for the row's
    fetches (:func:`.fetch_pad.compact_fetch`), one more than the padded fetch, unless its
    groups continue from row to row in the buffer's layout (which mapping decides), so every
    op of the stage keeps at most ``fetch_dims - 1`` loops of more than one iteration."""
    if not depth or isinstance(node, Op):
        return 0
    levels = max((sum(lp.extent > 1 for lp in op.loops) for op in stage_ops(node)), default=0)
    return depth if levels + 1 <= fetch_dims else 0


def _compact_reads(node, program: Program, pad: int, depth: int) -> set[str]:
    """Buffers a stage reads with a compact (unpadded, slack-free) fetch (:func:`.fetch_pad
    .compacted`)."""
    sp = spine(node) if depth and pad > 1 and not isinstance(node, Op) else None
    if sp is None:
        return set()
    memory = {n for n, b in program.buffers.items() if b.kind not in ("input", "output")}
    shapes = {n: b.shape for n, b in program.buffers.items() if b.shape is not None}
    return compacted(stage_rows(stage_ops(node), sp[0][-1], memory, pad, shapes), pad, depth)


def _stages(program: Program, poly: PolyProgram, deps: list[Dependence], nodes, pad: int,
            served: set[tuple[str, int]], sram_gap: int, depths: list[int] | None = None,
            gap_scale: dict[str, int] | None = None, loop_opt: bool = True
            ) -> list[Stage]:
    """The pipeline stages with their blocks and resources. A buffer read by a compact fetch
    gets one more resource, its SRAM (capacity 1), taken by that reader and by every stage
    writing the buffer: the slack-free fetches leave no SRAM cycle for concurrent writes."""
    stages = []
    depths = depths or [0] * len(nodes)
    compact = {k: _compact_reads(node, program, pad, depths[k]) for k, node in enumerate(nodes)}
    shared = set().union(*compact.values()) if compact else set()
    for k, node in enumerate(nodes):
        ops = stage_ops(node)
        blk = stage_block(node, poly, deps, program, pad, served, sram_gap, depths[k],
                          gap_scale, loop_opt)
        group = (tuple(sorted(poly.ops[o.name].kernel for o in ops)), blk.latency,
                 tuple(poly.ops[o.name].bounds for o in ops[:1]))
        res = _resources(ops, program)
        res += [("sram", b) for b in sorted(shared)
                if b in compact[k] or any(o.store.buffer == b for o in ops)]
        stages.append(Stage(getattr(node, "name", f"stage{k}"), [o.name for o in ops], blk,
                            res, group))
    return stages


def _stage_order(graph, poly: PolyProgram, stage_of: dict[str, Stage]) -> list[Stage]:
    """Stages in a topological order of the forward op dependences."""
    seen, order = set(), []
    for o in topo_order(graph, poly):
        s = stage_of[o]
        if id(s) not in seen:
            seen.add(id(s))
            order.append(s)
    return order


def _capacity(stages: list[Stage], params: HwParams) -> dict[tuple[str, str], int]:
    """Units of every resource of the reservation table: one compute unit, the memories'
    write and read ports."""
    per_kind = {"unit": 1, "wr": params.write_ports, "rd": params.read_ports, "sram": 1}
    return {res: per_kind[res[0]] for st in stages for res in st.resources}


def _ii_lower_bound(stages: list[Stage], capacity: dict) -> int:
    """The resource bound of the tile interval: every resource's busy cycles per tile over its
    units."""
    lower = 1
    for res, cap in capacity.items():
        users: dict = {}
        for st in stages:
            if res in st.resources:
                u = MRT.user(st, res)
                users[u] = max(users.get(u, 0), st.latency)
        lower = max(lower, -(-sum(users.values()) // cap))
    return lower


@dataclass
class _ModuloProblem:
    """What one attempt at a tile interval needs (:meth:`attempt`)."""
    poly: PolyProgram
    deps: list[Dependence]
    stage_order: list[Stage]
    stage_of: dict[str, Stage]
    capacity: dict
    tile_coeffs: dict[str, int]
    dist: dict[int, list[tuple[int, int]]]      # per dependence: (tile delta, min distance)
    extra: dict[int, int]                       # per memory-served dependence: gap cycles

    def earliest(self, st: Stage, ii: int, scheds: dict[str, OpSchedule]) -> int:
        """The earliest start of ``st`` meeting its dependences on the stages placed so far."""
        est = 0
        for d in self.deps:
            if d.consumer in st.ops and d.producer in scheds and d.producer not in st.ops:
                lat = self.poly.ops[d.producer].latency + self.extra.get(id(d), 0)
                gap = min(m + ii * dk for dk, m in self.dist[id(d)])
                est = max(est, lat - gap + self.stage_of[d.producer].start)
        return est

    def attempt(self, ii: int):
        """Place every stage at its earliest start the reservation table allows with tile
        interval ``ii``: ``(op schedules, table)``, or None when a stage finds no slot."""
        mrt = MRT(ii, self.capacity)
        scheds: dict[str, OpSchedule] = {}
        for st in self.stage_order:
            est = self.earliest(st, ii, scheds)
            start = next((c for c in mrt.candidates(st, est) if mrt.fits(st, c)), None)
            if start is None:
                return None
            st.start = start
            mrt.reserve(st, start)
            scheds.update(_op_scheds(st.block, self.poly, self.tile_coeffs, ii, start))
        return scheds, mrt


def _search_ii(problem: _ModuloProblem, stages: list[Stage], lower: int, upper: int, q: int):
    """The least feasible tile interval, a multiple of ``q``, by bisection between ``lower``
    and ``upper`` (feasible by construction); the stages keep the best attempt's starts."""
    upper = -(-upper // q) * q
    best = problem.attempt(upper)
    if best is None:
        raise RuntimeError("dnn scheduler: sequential tile interval infeasible")
    best_ii, starts = upper, {st.name: st.start for st in stages}
    lo, hi = -(-lower // q), upper // q - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        got = problem.attempt(mid * q)
        if got is None:
            lo = mid + 1
        else:
            best, best_ii, hi = got, mid * q, mid - 1
            starts = {st.name: st.start for st in stages}
    for st in stages:
        st.start = starts[st.name]
    return best, best_ii


def schedule_dnn(program: Program, poly: PolyProgram, params: HwParams | None = None,
                 deps: list[Dependence] | None = None, pad: int = 1,
                 sram_gap: int = 0, depth: int = 0, gap_scale: dict[str, int] | None = None,
                 fetch_dims: int = 6, loop_opt: bool = True) -> Schedule:
    """``pad``: the fetch width the rows of every stage are padded to (:mod:`.fetch_pad`;
    1: no padding). ``sram_gap``: producer writes kept between a write and a load that a memory
    serves (:func:`memory_served`; thesis §5.5.3: ``2 x FW``,
    :func:`.offsets.required_offset`). ``depth``: the transpose buffer's wide words; a read row
    the compact fetch of :func:`.fetch_pad.compact_fetch` serves is then not padded (0: every
    row padded, thesis §5.5.3) where the fetch controller's ``fetch_dims`` levels hold it
    (:func:`stage_depth`). ``gap_scale``: see :func:`gap_cycles`. ``loop_opt`` False: the
    stages without loop perfection and flattening (§4.3.4; the policy ``dnn-db``: double
    buffering alone, Fig. 7.8)."""
    params = params or HwParams()
    deps = raw_dependences(poly) if deps is None else deps
    tiles, nodes = pipeline_loops(program, loop_opt)
    tile_coeffs, n_tiles = _tile_coeffs(tiles)
    depths = [stage_depth(node, depth, fetch_dims) for node in nodes]
    served = (_served_loads(program, poly, deps, nodes, pad, tile_coeffs, depths, loop_opt)
              if sram_gap else set())
    stages = _stages(program, poly, deps, nodes, pad, served, sram_gap, depths, gap_scale,
                     loop_opt)
    stage_of = {o: st for st in stages for o in st.ops}
    capacity = _capacity(stages, params)
    lower = _ii_lower_bound(stages, capacity)
    upper = max(lower, sum(st.latency for st in stages) + 1)
    # per dependence between stages: min distance as a function of II (see tile_distances)
    base = {}
    for st in stages:
        base.update(_op_scheds(st.block, poly, {}, 0, 0))
    problem = _ModuloProblem(
        poly, deps, _stage_order(dependency_graph(poly, deps), poly, stage_of), stage_of,
        capacity, tile_coeffs,
        {id(d): tile_distances(d, base, tile_coeffs, poly)
         for d in deps if stage_of[d.producer] is not stage_of[d.consumer]},
        {id(d): gap_cycles(d, base[d.producer], program, sram_gap, pad, gap_scale)
         for d in deps if (d.consumer, d.slot) in served})
    # the tile II is a multiple of the fetch width (§5.5.3: the padding "was done in the II
    # calculation"), so every tile meets the wide words at the same SRAM phase
    q = max(1, pad)
    if n_tiles == 1:          # nothing repeats: the table is not modulo anything
        upper = lower = BIG
        q = 1
    (scheds, _mrt), best_ii = _search_ii(problem, stages, lower, upper, q)
    info = {"ii": best_ii if n_tiles > 1 else None,
            "ii_lower_bound": lower if n_tiles > 1 else None, "tiles": n_tiles,
            "pipeline_loops": [lp.name for lp in tiles],
            "stages": [st.to_dict() for st in stages], "fetch_padding": pad,
            "sram_gap": sram_gap, "memory_served": sorted(f"{c}:{k}" for c, k in served),
            "compact_fetch": depth, "gap_scale": dict(gap_scale or {}),
            "sram_exclusive": sorted({b for st in stages for k, b in st.resources
                                      if k == "sram"})}
    return Schedule(program.name, "dnn" if loop_opt else "dnn-db",
                    {o.name: scheds[o.name] for o in program.ops()}, info)


def _tile_deltas(d: Dependence, base: dict[str, OpSchedule], tile_coeffs: dict[str, int],
                 poly: PolyProgram) -> isl.Set:
    """``{ [T0_cons(j) - T0_prod(i), tile(j) - tile(i)] }`` over the dependent pairs."""
    def with_tile(s: OpSchedule) -> isl.Map:
        tile = " + ".join(f"{k}*{v}" for v, k in tile_coeffs.items() if v in s.dims) or "0"
        cons = " and ".join(f"{st} <= {v} < {st + e}" for v, (st, e) in zip(s.dims, s.bounds))
        return isl.Map.read_from_str(
            poly.ctx, f"{{ {s.op}[{', '.join(s.dims)}] -> [{s.expr()}, {tile}]"
            + (f" : {cons} }}" if cons else " }"))

    pair = with_tile(base[d.producer]).reverse().apply_range(
        d.relation.apply_range(with_tile(base[d.consumer])))
    return pair.deltas()


def constant_tile_distance(d: Dependence, base: dict[str, OpSchedule],
                           tile_coeffs: dict[str, int], poly: PolyProgram) -> bool:
    """Every dependent pair is the same number of cycles apart at any tile interval: one tile
    distance and one within-tile distance (cf. :func:`.offsets.is_constant_distance`)."""
    return _tile_deltas(d, base, tile_coeffs, poly).is_singleton()


def tile_distances(d: Dependence, base: dict[str, OpSchedule], tile_coeffs: dict[str, int],
                   poly: PolyProgram) -> list[tuple[int, int]]:
    """``[(dk, m)]``: for each tile distance ``dk`` between dependent instances, the least
    ``T0_cons(j) - T0_prod(i)`` of the within-tile times (stage starts 0). The exact minimum
    distance at interval II is then ``min(m + II * dk)``, so the binary search over II needs
    isl only once per dependence."""
    delta = _tile_deltas(d, base, tile_coeffs, poly)
    dks = delta.project_out(isl.dim_type.set, 0, 1)

    def coord(st: isl.Set, k: int) -> int:
        return st.sample_point().get_coordinate_val(isl.dim_type.set, k).to_python()

    lo, hi = coord(dks.lexmin(), 0), coord(dks.lexmax(), 0)
    out = []
    for dk in range(lo, hi + 1):
        fixed = delta.intersect(isl.Set.read_from_str(poly.ctx, f"{{ [a, b] : b = {dk} }}"))
        if not fixed.is_empty():
            out.append((dk, coord(fixed.lexmin(), 0)))
    return out
