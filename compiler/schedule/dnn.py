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
A buffer written by tile t+1 before tile t's last read is double buffered: :mod:`.storage`
computes the copies each buffer needs (recorded by :func:`.select.schedule` in
``info["storage_copies"]``); the extra words appear in the live capacity.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..ir.poly import PolyProgram
from ..ir.program import Loop, Op, Program
from ..ir.schedule import OpSchedule, Schedule
from ..poly.deps import Dependence, dependency_graph, raw_dependences, topo_order
from .hls import Block, schedule_node
from .offsets import min_distance
from .params import HwParams
from .perfect_flatten import flatten, spine

BIG = 1 << 40


def pipeline_loops(program: Program) -> tuple[list[Loop], list]:
    """(coarse-grained pipeline loops outermost first, stage nodes). Loop perfection runs
    first (Algorithm 1 line 2): if the innermost collected loop is a perfectable spine
    (Fig. 4.16a) it is one flattened stage rather than a pipeline of its children."""
    loops, node = [], program
    while len(node.children) == 1 and isinstance(node.children[0], Loop):
        node = node.children[0]
        loops.append(node)
    if loops and len(node.children) > 1 and spine(node) is not None:
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


def stage_block(node, poly: PolyProgram, deps: list[Dependence]) -> Block:
    """Perfected+flattened schedule of one stage at the least II its recurrences allow."""
    if isinstance(node, Op):
        return schedule_node(node, poly, pipelined=True)
    names = {o.name for o in stage_ops(node)}
    inner = [d for d in deps if d.producer in names and d.consumer in names]
    max_lat = max(poly.ops[n].latency for n in names)
    for ii in range(1, max_lat + 2):
        blk = flatten(node, poly, ii)
        if blk is None:
            break
        if _stage_ok(blk, poly, inner):
            return blk
    return schedule_node(node, poly, pipelined=True)


def _stage_ok(blk: Block, poly: PolyProgram, inner: list[Dependence]) -> bool:
    scheds = _op_scheds(blk, poly, {}, BIG, 0)
    for d in inner:
        p, c = scheds[d.producer], scheds[d.consumer]
        if min_distance(d, p, c, poly.ctx) < p.latency:
            return False
    return True


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


def schedule_dnn(program: Program, poly: PolyProgram, params: HwParams | None = None,
                 deps: list[Dependence] | None = None) -> Schedule:
    params = params or HwParams()
    deps = raw_dependences(poly) if deps is None else deps
    graph = dependency_graph(poly, deps)
    tiles, nodes = pipeline_loops(program)
    tile_coeffs, stride = {}, 1
    for lp in reversed(tiles):
        tile_coeffs[lp.name] = stride
        stride *= lp.extent
    n_tiles = stride

    stages: list[Stage] = []
    for k, node in enumerate(nodes):
        ops = stage_ops(node)
        blk = stage_block(node, poly, deps)
        group = (tuple(sorted(poly.ops[o.name].kernel for o in ops)), blk.latency,
                 tuple(poly.ops[o.name].bounds for o in ops[:1]))
        stages.append(Stage(getattr(node, "name", f"stage{k}"), [o.name for o in ops], blk,
                            _resources(ops, program), group))
    stage_of = {o: s for s in stages for o in s.ops}

    # stage order: topological over forward op dependences
    order = topo_order(graph, poly)
    seen, stage_order = set(), []
    for o in order:
        s = stage_of[o]
        if id(s) not in seen:
            seen.add(id(s))
            stage_order.append(s)

    capacity = {}
    for s in stages:
        for kind, name in s.resources:
            capacity[(kind, name)] = {"unit": 1, "wr": params.write_ports,
                                      "rd": params.read_ports}[kind]
    lower = 1
    for res, cap in capacity.items():
        users: dict = {}
        for s in stages:
            if res in s.resources:
                u = MRT.user(s, res)
                users[u] = max(users.get(u, 0), s.latency)
        lower = max(lower, -(-sum(users.values()) // cap))
    upper = max(lower, sum(s.latency for s in stages) + 1)

    # per dependence between stages: min distance as a function of II (see tile_distances)
    base = {}
    for s in stages:
        base.update(_op_scheds(s.block, poly, {}, 0, 0))
    dist = {id(d): tile_distances(d, base, tile_coeffs, poly)
            for d in deps if stage_of[d.producer] is not stage_of[d.consumer]}

    def attempt(ii: int):
        mrt = MRT(ii, capacity)
        scheds: dict[str, OpSchedule] = {}
        for s in stage_order:
            est = 0
            for d in deps:
                if d.consumer in s.ops and d.producer in scheds and d.producer not in s.ops:
                    lat = poly.ops[d.producer].latency
                    gap = min(m + ii * dk for dk, m in dist[id(d)])
                    est = max(est, lat - gap + stage_of[d.producer].start)
            start = next((c for c in mrt.candidates(s, est) if mrt.fits(s, c)), None)
            if start is None:
                return None
            s.start = start
            mrt.reserve(s, start)
            scheds.update(_op_scheds(s.block, poly, tile_coeffs, ii, start))
        return scheds, mrt

    if n_tiles == 1:          # nothing repeats: the table is not modulo anything
        upper = lower = BIG
    best = attempt(upper)
    if best is None:
        raise RuntimeError("dnn scheduler: sequential tile interval infeasible")
    best_ii, starts = upper, {s.name: s.start for s in stages}
    lo, hi = lower, upper - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        got = attempt(mid)
        if got is None:
            lo = mid + 1
        else:
            best, best_ii, hi = got, mid, mid - 1
            starts = {s.name: s.start for s in stages}
    for s in stages:
        s.start = starts[s.name]
    scheds, mrt = best
    info = {"ii": best_ii if n_tiles > 1 else None,
            "ii_lower_bound": lower if n_tiles > 1 else None, "tiles": n_tiles,
            "pipeline_loops": [lp.name for lp in tiles],
            "stages": [s.to_dict() for s in stages]}
    return Schedule(program.name, "dnn", {o.name: scheds[o.name] for o in program.ops()}, info)


def tile_distances(d: Dependence, base: dict[str, OpSchedule], tile_coeffs: dict[str, int],
                   poly: PolyProgram) -> list[tuple[int, int]]:
    """``[(dk, m)]``: for each tile distance ``dk`` between dependent instances, the least
    ``T0_cons(j) - T0_prod(i)`` of the within-tile times (stage starts 0). The exact minimum
    distance at interval II is then ``min(m + II * dk)``, so the binary search over II needs
    isl only once per dependence."""
    import islpy as isl

    def with_tile(s: OpSchedule) -> isl.Map:
        tile = " + ".join(f"{k}*{v}" for v, k in tile_coeffs.items() if v in s.dims) or "0"
        cons = " and ".join(f"{st} <= {v} < {st + e}" for v, (st, e) in zip(s.dims, s.bounds))
        return isl.Map.read_from_str(
            poly.ctx, f"{{ {s.op}[{', '.join(s.dims)}] -> [{s.expr()}, {tile}]"
            + (f" : {cons} }}" if cons else " }"))

    pair = with_tile(base[d.producer]).reverse().apply_range(
        d.relation.apply_range(with_tile(base[d.consumer])))
    delta = pair.deltas()
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
