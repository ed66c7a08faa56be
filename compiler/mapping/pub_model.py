"""Cycle-level model of a mapped buffer (docs/design.md §6 level 2), driven only by register values.

The controllers are replayed from their *encoded registers* (:mod:`.decode`, the hardware's
recurrence of thesis Fig. 6.2b), not from the affine form or the isl maps.
:func:`simulate_pub` runs one PUB (or a chain of tiles) with the timing contract of
``ubgen.pub.pub``: an ``in2agg`` write at cycle ``c`` is visible to ``agg2sram`` from ``c+1``; an
``agg2sram`` SRAM write at ``c`` is visible to reads issued from ``c+1``; ``sram2tb`` reads at
``c`` and writes the TB at the end of ``c+1`` (visible from ``c+2``); ``tb2out`` drives
``data_out`` during its fire cycle. Two SRAM accesses in one cycle are a conflict (the sticky
error flag of the hardware), recorded by cycle. :func:`simulate_rf_tile` runs one MEM tile in
register-file mode (docs/mem_rf.md) from the registers the compiler encodes for it.
:func:`run_impl` evaluates a whole :class:`~compiler.ir.ubimpl.UBImpl` stream graph and
:func:`check_buffer` compares every output port, at every scheduled read, with what the unified
buffer's isl maps require: the value of the latest write of the element read that landed by
that cycle.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import islpy as isl
import numpy as np

from ubgen.arch import MemParams, PUBParams
from ubgen.mem.spec import RF_ENABLE, rf_ports
from ubgen.pub import pub_layouts
from ubgen.pub.spec import agg_events

from ..ir.ubimpl import DPBlock, UBImpl
from ..ir.ubuf import UnifiedBuffer
from .common import port_time
from .decode import PUBRun, decode_arrays, decode_extents
from .registers import RFTile, pack_register_files, rf_tile_registers


def decode_input_side(regs: dict[str, int], params: PUBParams, p: int
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Input port ``p`` of a PUB from its registers, with the fixed input side of
    ``ubgen.pub.spec`` (docs/pub.md): ``in2agg_<p>``'s fire cycles and the aggregator word each
    writes (lane = its index in its level-0 loop mod FW, a new slot after lane FW-1 and after a
    loop's last word), then ``agg2sram_<p>``'s fire cycles (``1 + slack`` after each filled
    word, ``1 + row_slack`` after a row's partial last word; as many as its iteration domain
    has) and addresses (``sram`` from its generator, ``agg`` the slots in order)."""
    lay = pub_layouts(params)
    li, la = lay[f"in2agg_{p}"], lay[f"agg2sram_{p}"]
    fw, depth = params.fetch_width, params.agg_depth
    cycles, _ = decode_arrays(regs, li)
    ext = decode_extents(regs, li)
    if ext:
        event, full = agg_events(ext, fw)
    else:
        event = full = np.zeros(0, dtype=bool)
    lane = np.arange(len(cycles), dtype=np.int64) % max(ext[:1] or [1]) % fw
    slot = (np.cumsum(event) - event) % depth
    words = slot * fw + lane
    n = la.name
    wait = np.where(full[event], regs.get(f"{n}_slack", 0), regs.get(f"{n}_row_slack", 0))
    _, addrs = decode_arrays(regs, la)
    k = min(int(event.sum()), len(addrs["sram"]))
    fires = cycles[event][:k] + 1 + wait[:k]
    return cycles, words, fires, {"sram": addrs["sram"][:k],
                                  "agg": np.arange(k, dtype=np.int64) % depth}


class PUBTile:
    """One PUB tile replayed cycle by cycle from its register values, with the timing contract
    of ``ubgen.pub.pub`` (module docstring). Per cycle ``c``: :meth:`outputs` gives what the
    ``tb2out`` fires of ``c`` read (start-of-cycle state), then :meth:`commit` takes the
    ``data_in`` words of ``c`` and applies the end-of-cycle writes (AGG, SRAM, TB). Used by
    :func:`simulate_pub` and by the netlist model (``compiler.backend.netlist_model``)."""

    def __init__(self, regs: dict[str, int], params: PUBParams):
        self.params = params
        self.chain_en = bool(regs.get("chain_en", 0))
        self.tile_id = regs.get("tile_id", 0)
        self.events: dict[int, list] = defaultdict(list)
        streams = []
        for p in range(params.input_ports):
            t_in, words, t_a, a_addrs = decode_input_side(regs, params, p)
            streams += [("in2agg", p, t_in, {"agg": words}), ("agg2sram", p, t_a, a_addrs)]
        for name, layout in pub_layouts(params).items():
            kind, k = name.rsplit("_", 1)
            if kind in ("sram2tb", "tb2out"):
                cycles, addrs = decode_arrays(regs, layout)
                if kind == "sram2tb":            # the TB slot: the SRAM address's low bits
                    addrs["tb"] = addrs["sram"] & (params.tb_depth - 1)
                streams.append((kind, int(k), cycles, addrs))
        for kind, k, cycles, addrs in streams:
            cols = [(a, v.tolist()) for a, v in addrs.items()]
            for i, cyc in enumerate(cycles.tolist()):
                self.events[cyc].append((kind, k, {a: v[i] for a, v in cols}))
        self.last = max(self.events, default=-1) + 1        # the last cycle with an effect
        fw = params.fetch_width
        self.agg = [[None] * params.agg_words for _ in range(params.input_ports)]
        self.tb = [[(None,) * fw for _ in range(params.tb_depth)]
                   for _ in range(params.output_ports)]
        self.tb_owned = [[False] * params.tb_depth for _ in range(params.output_ports)]
        self.sram: dict[int, tuple] = {}
        self.pending: dict[int, list] = defaultdict(list)
        self.conflicts: list[int] = []

    def _match(self, addr: int) -> bool:
        return not self.chain_en or (addr >> self.params.sram_addr_width) == self.tile_id

    def outputs(self, c: int) -> list[tuple[int | None, bool] | None]:
        """Per output port: ``(word, owned)`` when ``tb2out`` fires at ``c``, else ``None``."""
        out: list = [None] * self.params.output_ports
        fw = self.params.fetch_width
        for kind, k, a in self.events.get(c, ()):
            if kind == "tb2out":
                word = a["tb"]
                out[k] = (self.tb[k][word // fw][word % fw], self.tb_owned[k][word // fw])
        return out

    def commit(self, c: int, data_in: list[int | None]) -> None:
        """The SRAM reads and writes of cycle ``c`` and its end-of-cycle register writes."""
        prm = self.params
        fw, depth = prm.fetch_width, prm.sram_depth
        accesses = 0
        sram_writes, agg_writes = [], []
        for kind, k, a in self.events.get(c, ()):
            if kind == "agg2sram":
                s = a["agg"]
                if self._match(a["sram"]):
                    accesses += 1
                    sram_writes.append((a["sram"] & (depth - 1),
                                        tuple(self.agg[k][s * fw:(s + 1) * fw])))
            elif kind == "sram2tb":
                if self._match(a["sram"]):
                    accesses += 1
                    data = self.sram.get(a["sram"] & (depth - 1), (None,) * fw)
                    self.pending[c + 1].append((k, a["tb"], data, True))
                else:
                    self.pending[c + 1].append((k, a["tb"], (None,) * fw, False))
            elif kind == "in2agg":
                agg_writes.append((k, a["agg"], data_in[k] if k < len(data_in) else None))
        if accesses > 1:
            self.conflicts.append(c)
        for k, w, v in agg_writes:
            self.agg[k][w] = v
        for addr, data in sram_writes:
            self.sram[addr] = data
        for k, slot, data, owned in self.pending.pop(c, []):
            self.tb[k][slot] = data
            self.tb_owned[k][slot] = owned


def _simulate_tile(regs: dict[str, int], params: PUBParams, data_in: list[dict[int, int]]):
    tile = PUBTile(regs, params)
    own = [dict() for _ in range(params.output_ports)]
    cycles = sorted(set(tile.events) | {c + 1 for c, ev in tile.events.items()
                                         if any(e[0] == "sram2tb" for e in ev)})
    for c in cycles:
        for q, o in enumerate(tile.outputs(c)):
            if o is not None:
                own[q][c] = o
        tile.commit(c, [d.get(c) for d in data_in])
    return own, tile.conflicts, tile.chain_en


def simulate_pub(tile_regs: list[dict[str, int]], params: PUBParams,
                 data_in: list[dict[int, int]]) -> PUBRun:
    """Run a PUB (or a chain: tile ``t``'s ``chain_in`` is tile ``t-1``'s ``data_out``); every
    tile sees the same ``data_in`` streams (cycle -> value)."""
    chain: list[dict] = [dict() for _ in range(params.output_ports)]
    conflicts: list[int] = []
    for regs in tile_regs:
        own, conf, chain_en = _simulate_tile(regs, params, data_in)
        conflicts += conf
        nxt = []
        for q in range(params.output_ports):
            if chain_en:
                out = dict(chain[q])
                out.update({c: v for c, (v, owned) in own[q].items() if owned})
            else:
                out = {c: v for c, (v, _owned) in own[q].items()}
            nxt.append(out)
        chain = nxt
    return PUBRun(chain, sorted(set(conflicts)))


class RegisterFileTile:
    """One MEM tile in register-file mode (docs/mem_rf.md) replayed cycle by cycle from its
    register values (the PUB controllers its ports borrow, ``ubgen.mem.spec.rf_ports``): with
    ``rf_en``, an ``rf_write_p`` fire at ``c`` stores ``data_in[p]`` of ``c`` in word ``addr``
    (the low ``clog2(rf_words)`` bits of the borrowed generator); an ``rf_read_q`` fire at ``c``
    outputs word ``addr`` including the writes of cycle ``c`` (write-through; the highest write
    port wins). Two writes of one word in one cycle are a conflict (the tile's error flag).
    Used by :func:`simulate_rf_tile` and the netlist model."""

    def __init__(self, regs: dict[str, int], params: PUBParams, mem: MemParams):
        self.ports = params.output_ports
        self.events: dict[int, list] = defaultdict(list)
        if regs.get(RF_ENABLE):
            for port in rf_ports(params, mem).values():
                cycles, _ = decode_arrays(regs, port.timing)
                _, addrs = decode_arrays(regs, port.layout)
                words = addrs[port.ag] & ((1 << port.addr_width) - 1)
                for cyc, a in zip(cycles.tolist(), words.tolist()):      # the shorter one
                    self.events[cyc].append((port.is_read, port.index, port.context, a))
            for ev in self.events.values():
                ev.sort()                          # writes first, by port number and context
        self.state: dict[int, int | None] = {}
        self.conflicts: list[int] = []

    def step(self, c: int, data_in: list[int | None],
             data_in_c1: list[int | None] = ()) -> list[int | None | bool]:
        """The writes and reads of cycle ``c``; per output port the word read (``False``
        when the port does not fire). A port's second context (``[mem] rf_contexts`` = 2)
        writes ``data_in_c1`` (the tile's ``chain_in``); both contexts of one port in a cycle
        are a conflict, the second context's access is the one made (as in the RTL)."""
        out: list = [False] * self.ports
        ports = {}
        for is_read, k, ctx, a in self.events.get(c, ()):
            if (is_read, k) in ports:
                self.conflicts.append(c)
            ports[(is_read, k)] = (ctx, a)
        written = set()
        for (is_read, k), (ctx, a) in sorted(ports.items()):
            if is_read:
                continue
            if a in written:
                self.conflicts.append(c)
            written.add(a)
            data = data_in_c1 if ctx else data_in
            self.state[a] = data[k] if k < len(data) else None
        for (is_read, k), (ctx, a) in ports.items():
            if is_read:
                out[k] = self.state.get(a)
        return out


def simulate_rf_tile(regs: dict[str, int], params: PUBParams, mem: MemParams,
                     data_in: list[dict[int, int]]) -> PUBRun:
    """Run one MEM tile in register-file mode over whole streams (:class:`RegisterFileTile`)."""
    tile = RegisterFileTile(regs, params, mem)
    outs: list[dict[int, int | None]] = [dict() for _ in range(params.output_ports)]
    for c in sorted(tile.events):
        for q, v in enumerate(tile.step(c, [d.get(c) for d in data_in])):
            if v is not False:
                outs[q][c] = v
    return PUBRun(outs, sorted(set(tile.conflicts)))


@dataclass
class ModelResult:
    streams: dict[str, dict[int, int | None]]
    conflicts: dict[str, list[int]]


def run_impl(impl: UBImpl, params: PUBParams, inputs: dict[str, dict[int, int]],
             mem: MemParams | None = None) -> ModelResult:
    """Evaluate the stream graph of ``impl`` given each logical input port's stream; its
    register files run as the MEM tiles that
    :func:`~compiler.mapping.registers.pack_register_files` places them in, its dual-port
    SRAMs on :func:`compiler.mapping.dp_model.simulate_dp`."""
    from .dp_model import simulate_dp
    mem = mem or MemParams()
    streams: dict[str, dict] = dict(inputs)
    conflicts: dict[str, list[int]] = {}
    todo_sr = list(impl.shift_registers)
    todo_pub = (list(impl.blocks)
                + pack_register_files(impl.register_files, params, mem))
    todo_sel = list(impl.selects)
    while todo_sr or todo_pub or todo_sel:
        progress = False
        for sel in list(todo_sel):
            if all(n in streams for n in sel.srcs):
                merged: dict[int, int | None] = {}
                for n in sel.srcs:
                    clash = merged.keys() & streams[n].keys()
                    if clash:
                        raise ValueError(f"buffer {impl.buffer}: select {sel.dst} has two "
                                         f"sources at cycle {min(clash)}")
                    merged.update(streams[n])
                streams[sel.dst] = merged
                todo_sel.remove(sel)
                progress = True
        for sr in list(todo_sr):
            if sr.src in streams:
                streams[sr.dst] = {c + sr.delay: v for c, v in streams[sr.src].items()}
                todo_sr.remove(sr)
                progress = True
        for pub in list(todo_pub):
            if all(n in streams for n in pub.inputs):
                ins = [streams[n] for n in pub.inputs]
                if isinstance(pub, RFTile):
                    run = simulate_rf_tile(rf_tile_registers(pub, params, mem), params, mem, ins)
                elif isinstance(pub, DPBlock):
                    run = simulate_dp(pub.registers(), pub.params, ins[0])
                else:
                    run = simulate_pub(pub.registers(params), params, ins)
                for q, node in enumerate(pub.outputs):
                    streams[node] = run.outputs[q]
                conflicts[pub.name] = run.conflicts
                todo_pub.remove(pub)
                progress = True
        if not progress:
            raise ValueError(f"buffer {impl.buffer}: stream graph has a cycle or a dangling "
                             f"source")
    return ModelResult(streams, conflicts)


def _points(m: isl.Map) -> np.ndarray:
    """Integer points ``[t, a0, a1, ...]`` of a ``{ [t] -> elem[a] }`` map."""
    pts: list[list[int]] = []
    n = m.dim(isl.dim_type.in_) + m.dim(isl.dim_type.out)

    def add(p):
        pts.append([p.get_coordinate_val(isl.dim_type.set, i).to_python() for i in range(n)])
    m.wrap().foreach_point(add)
    return np.array(pts, dtype=np.int64).reshape(-1, n)


def port_points(port) -> np.ndarray:
    """``[t, a0, a1, ...]`` of every access of a unified-buffer port: the points of
    :func:`~compiler.mapping.common.t2addr`, enumerated over the port's iteration domain
    (``{ i -> [[t] -> elem[a]] }`` wrapped) so that isl scans the domain's box rather than the
    cycle range (a tile loop's large cycle stride makes the ``[t] -> elem`` form slow to scan)."""
    acc = port.access.intersect_domain(port.domain)
    m = port_time(port).range_product(acc)
    n_in = m.dim(isl.dim_type.in_)
    n = 1 + acc.dim(isl.dim_type.out)
    pts: list[list[int]] = []

    def add(p):
        pts.append([p.get_coordinate_val(isl.dim_type.set, n_in + i).to_python()
                    for i in range(n)])
    m.wrap().foreach_point(add)
    return np.array(pts, dtype=np.int64).reshape(-1, n)


@dataclass
class CheckReport:
    buffer: str
    checked: int = 0
    mismatches: list[str] = field(default_factory=list)
    conflicts: dict[str, list[int]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.mismatches and not any(self.conflicts.values())

    def summary(self) -> str:
        conf = {k: v[:3] for k, v in self.conflicts.items() if v}
        return (f"{self.buffer}: {self.checked} reads checked, {len(self.mismatches)} "
                f"mismatches {self.mismatches[:3]}, SRAM conflicts {conf}")


def check_buffer(ub: UnifiedBuffer, impl: UBImpl, params: PUBParams | None = None,
                 seed: int = 0, mem: MemParams | None = None) -> CheckReport:
    """Feed random values into ``ub``'s input ports, run the model of ``impl`` and compare each
    output port's value at each of its scheduled reads with the unified-buffer specification."""
    params = params or PUBParams()
    rng = np.random.default_rng(seed)
    inputs: dict[str, dict[int, int]] = {}
    written: dict[tuple, list[tuple[int, int]]] = defaultdict(list)
    for p in ub.inputs:
        pts = port_points(p)
        vals = rng.integers(0, 1 << 16, len(pts))
        inputs[p.name] = {int(r[0]): int(v) for r, v in zip(pts, vals)}
        for r, v in zip(pts, vals):
            written[tuple(r[1:])].append((int(r[0]), int(v)))
    for lst in written.values():
        lst.sort()
    model = run_impl(impl, params, inputs, mem)
    rep = CheckReport(ub.name, conflicts=model.conflicts)
    for p in ub.outputs:
        got = model.streams.get(impl.connections.get(p.name, ""), {})
        for r in port_points(p):
            t, elem = int(r[0]), tuple(r[1:])
            hist = written.get(elem)
            if not hist or hist[0][0] > t:
                continue                   # reads a value this buffer never received
            want = None
            for tw, v in hist:
                if tw > t:
                    break
                want = v
            rep.checked += 1
            if got.get(t) != want:
                rep.mismatches.append(f"{p.name}@{t} {elem}: got {got.get(t)} want {want}")
    return rep
