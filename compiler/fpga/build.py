"""``build_fpga_design(program, schedule, buffers, impls, arch) -> FPGADesign``: the FPGA
backend (thesis §6.3, Fig. 6.6, Table 6.1 "BRAM + LUTs"; docs/fpga.md "Applications on the
FPGA").

The same unified-buffer implementation and the same static schedule as the CGRA, built as an
application-specific design instead of a configuration of the array. The thesis generated C
for an HLS tool from the unified buffers; here the compiler describes the hardware directly
(:mod:`.design`) and ubgen builds it:

* the timing is the CGRA netlist's (:class:`compiler.backend.build.NetlistBuilder`: every
  stream a source with an offset, every consumer an edge of exact latency; shift registers
  become edge latency), so the design runs the schedule cycle for cycle;
* a kernel is its PE graph (``compiler.backend.kernel_map``: constants folded, CSE, MAC fusion)
  as a datapath of one operator per node, registered like the PE's output register; a lookup
  is a ROM;
* a memory block is a dual-port RAM addressed word by word (the DP-SRAM + AG form of Table 6.1,
  :attr:`compiler.ir.ubimpl.PUBBlock.writes` / ``reads``): a write controller per input
  stream and a read controller per output stream (ubgen's recurrence controllers, thesis
  §6.1.2), no aggregator or transpose buffer (an FPGA's block RAM has two ports, so the
  wide-fetch vectorization of the single-port SRAM is not needed); chained tiles are one
  deeper RAM;
* a register file (§5.4) is its own small bank of registers with its controllers;
* a bank select (§5.2) takes its select bits from its sources' valid bits (a RAM's or
  register file's read), else from schedule-only controllers (``timer``);
* host buffers are streams in the order the schedule reads (writes) them: the host supplies
  each input word when the design takes it and receives each output word with a valid bit.
"""
from __future__ import annotations

import numpy as np

from ubgen.arch import Arch, ControllerParams
from ubgen.controller import (AffineMap, ControllerConfig, ControllerLayout, EncodeError,
                              encode_controller)
from ubgen.pe.ops import PEOp

from ..backend.build import NetlistBuilder
from ..backend.netlist import Netlist, NetlistError
from ..backend.sources import Source
from ..ir.program import Program
from ..ir.schedule import Schedule
from ..ir.ubimpl import UBImpl
from ..ir.ubuf import UBPort, UnifiedBuffer
from ..mapping.common import Affine, Stream
from ..mapping.vectorize import enumerate_affine
from .design import KINDS, FEdge, FNode, FPGADesign, FPGADesignError

__all__ = ["build_fpga_design", "stream_dict", "fire_cycles"]

_DATA = ("data0", "data1", "data2", "bit0", "bit1", "bit2")


class FPGANetlist(Netlist):
    """The graph the FPGA builder fills: the FPGA design's node kinds."""
    kinds = KINDS


def counter_width(completion: int) -> int:
    """Bits of the design's cycle counter for a run whose last fire is at ``completion``: the
    count ``completion + 1`` with one spare bit, so the counter never wraps before the last
    output (at least 2 bits)."""
    return max(2, (completion + 1).bit_length() + 1)


def stream_dict(st: Stream) -> dict:
    """A host stream as data: extents (innermost first), cycle and per buffer dimension the
    element index of every fire, as affine maps."""
    aff = lambda a: {"start": a.start, "strides": list(a.strides)}   # noqa: E731
    return {"extents": list(st.extents), "time": aff(st.time), "addr": [aff(a) for a in st.addr]}


def fire_cycles(cfg: ControllerConfig) -> np.ndarray:
    """The fire cycles of an affine controller, in order."""
    return enumerate_affine(cfg.extents, Affine(cfg.schedule.start, cfg.schedule.strides))


def _values(cfg: ControllerConfig, ag: str) -> np.ndarray:
    """The values of address generator ``ag`` at every fire, in order."""
    a = cfg.addresses[ag]
    return enumerate_affine(cfg.extents, Affine(a.start, a.strides))


def _hardware(cfg: ControllerConfig) -> ControllerConfig:
    """``cfg`` with its RAM address only (``elem`` is not hardware)."""
    return ControllerConfig(cfg.extents, cfg.schedule, {"addr": cfg.addresses["addr"]})


def _disjoint(cfgs: list[ControllerConfig]) -> bool:
    """No two of the controllers fire in the same cycle."""
    if len(cfgs) < 2:
        return True
    cycles = np.concatenate([fire_cycles(c) for c in cfgs])
    return len(np.unique(cycles)) == len(cycles)


class _FPGABuilder(NetlistBuilder):
    netlist = FPGANetlist

    def __init__(self, program: Program, schedule: Schedule,
                 buffers: dict[str, UnifiedBuffer], impls: dict[str, UBImpl], arch: Arch):
        super().__init__(program, schedule, buffers, impls, arch)
        self.cycle_width = counter_width(schedule.completion)
        self.n_timers = 0

    # --- controllers ----------------------------------------------------------------------
    def controller(self, name: str, cfg: ControllerConfig, what: str,
                   addr_widths: dict[str, int] | None = None) -> dict:
        """``cfg`` encoded for a controller exactly as wide as it needs (module
        :mod:`.design`): its own dimensions and extent width, the design's cycle width."""
        if not cfg.extents:
            raise FPGADesignError(f"{what}: a stream without fires")
        params = ControllerParams(max_dims=cfg.dims,
                                  extent_width=max(1, max((e - 1).bit_length()
                                                          for e in cfg.extents)),
                                  cycle_width=self.cycle_width)
        layout = ControllerLayout(name, dict(addr_widths or {}), params)
        try:
            regs = encode_controller(cfg, layout)
        except EncodeError as e:
            raise FPGADesignError(f"{what}: {e}") from None
        return {"name": name, "max_dims": params.max_dims, "extent_width": params.extent_width,
                "cycle_width": params.cycle_width, "addr_widths": dict(layout.addr_widths),
                "registers": regs}

    # --- leaves of the netlist builder ---------------------------------------------------------
    def kernel_node(self, name: str, kn, attrs: dict, op: str) -> None:
        if kn.kind == "pe":
            super().kernel_node(name, kn, attrs, op)
            return
        self.net.add_node(name, "rom", label=f"{op}: {kn.label} (ROM)",
                          params={"table": [int(w) for w in kn.table]}, **attrs)

    def pub_block(self, B: str, pub, base: str) -> None:
        words = pub.words
        if not words or len(pub.writes) != len(pub.inputs) or len(pub.reads) != len(pub.outputs):
            raise FPGADesignError(f"buffer {B}: memory block {pub.name} has no word-level "
                                  f"streams")
        aw = max(1, (words - 1).bit_length())
        self._check_distance(B, pub)
        writes = [self.controller(f"wr{p}", _hardware(c), f"buffer {B}: {pub.name} write {p}",
                                  {"addr": aw}) for p, c in enumerate(pub.writes)]
        # a read is issued one cycle early so that the block RAM's word is out in the read cycle
        early = []
        for q, c in enumerate(pub.reads):
            if c.schedule.start < 1:
                raise FPGADesignError(f"buffer {B}: {pub.name} reads at cycle 0")
            early.append(ControllerConfig(c.extents, AffineMap(c.schedule.start - 1,
                                                               c.schedule.strides),
                                          _hardware(c).addresses))
        reads = [self.controller(f"rd{q}", c, f"buffer {B}: {pub.name} read {q}", {"addr": aw})
                 for q, c in enumerate(early)]
        self.net.add_node(base, "ram", label=f"{B}: {pub.name} ({words} words)", buffer=B,
                          params={"words": words, "addr_width": aw, "writes": writes,
                                  "reads": reads, "share_write": _disjoint(pub.writes),
                                  "share_read": _disjoint(pub.reads)})
        self.memory_ports(B, base, pub.inputs, pub.outputs)

    @staticmethod
    def _check_distance(B: str, pub) -> None:
        """A read is issued one cycle early, so the write of the element it reads (the latest
        one landed by the read's cycle ``t``, the unified buffer's semantics) must land by
        ``t - 2``: a block RAM read returns the word before a write of the same cycle. The
        buffer's own schedule keeps several cycles between them for the single-port SRAM
        (thesis §5.5.3); this checks it for every read (element identity: ``elem``)."""
        wt = np.concatenate([fire_cycles(c) for c in pub.writes])
        we = np.concatenate([_values(c, "elem") for c in pub.writes])
        span = int(max(wt.max(), *(fire_cycles(c).max() for c in pub.reads))) + 1
        wkey = np.sort(we * span + wt)
        for q, c in enumerate(pub.reads):
            rt, re = fire_cycles(c), _values(c, "elem")
            k = np.searchsorted(wkey, re * span + rt, side="right") - 1
            ok = k >= 0
            prev = np.where(ok, wkey[np.maximum(k, 0)], -1)
            same = ok & (prev // span == re)
            late = same & (prev % span > rt - 2)
            if late.any():
                i = int(np.argmax(late))
                raise FPGADesignError(
                    f"buffer {B}: {pub.name} read {q} at cycle {int(rt[i])} reads a word written "
                    f"at cycle {int(prev[i] % span)}: a dual-port RAM needs the write two cycles "
                    f"before the read")

    def register_files(self, B: str, impl: UBImpl) -> None:
        for i, rf in enumerate(impl.register_files):
            name = f"{B}.rf{i}"
            aw = rf.addr_width
            writes = [self.controller(f"wr{p}", c, f"buffer {B}: {rf.name} write {p}",
                                      {"addr": aw}) for p, c in enumerate(rf.writes)]
            reads = [self.controller(f"rd{q}", c, f"buffer {B}: {rf.name} read {q}",
                                     {"addr": aw}) for q, c in enumerate(rf.reads)]
            self.net.add_node(name, "regfile", label=f"{B}: register file {rf.name} "
                              f"({rf.words} words)", buffer=B,
                              params={"words": rf.words, "addr_width": aw, "writes": writes,
                                      "reads": reads})
            self.memory_ports(B, name, rf.inputs, rf.outputs)

    def host_node(self, kind: str, ub: UnifiedBuffer, port: UBPort) -> tuple[str, Stream]:
        st = self.host_stream(port)
        name = f"{kind}.{port.name}"
        cfg = ControllerConfig(st.extents, AffineMap(st.time.start, st.time.strides))
        self.net.add_node(name, kind, label=(f"{ub.name} -> {port.op}" if kind == "in"
                                             else f"{port.op} -> {ub.name}"), buffer=ub.name,
                          params={"controller": self.controller(kind, cfg, f"buffer {ub.name}: "
                                                                f"stream {port.name}"),
                                  "buffer": ub.name, "port": port.name,
                                  "stream": stream_dict(st)})
        return name, st

    def input_stream(self, ub: UnifiedBuffer, port: UBPort) -> None:
        name, _ = self.host_node("in", ub, port)
        self.streams[(ub.name, port.name)] = Source(name, "data", 1)

    def output_stream(self, ub: UnifiedBuffer, port: UBPort) -> None:
        name, _ = self.host_node("out", ub, port)
        self.demand((ub.name, port.name), name, "data", 0)

    def spare_controller(self, cfg: ControllerConfig, what: str, buffer: str | None) -> Source:
        """A schedule generator of the design's own (a ``timer`` node: a controller with no
        address generator), 1 exactly at ``cfg``'s cycles (bank selects and loop phases)."""
        name = f"timer.{self.n_timers}"
        self.n_timers += 1
        label = f"{buffer}: bank select" if buffer else "loop phase"
        self.net.add_node(name, "timer", label=label, buffer=buffer,
                          params={"controller": self.controller(
                              "timer", ControllerConfig(cfg.extents, cfg.schedule), what)})
        return Source(name, "valid", 0, 1)

    # --- the design ------------------------------------------------------------------------------
    def design(self) -> FPGADesign:
        try:
            net = self.build()
        except NetlistError as e:
            raise FPGADesignError(str(e)) from None
        nodes = []
        for n, d in net.graph.nodes(data=True):
            if d["kind"] == "pe":
                params = _pe_params(n, d["config"])
            else:
                params = d["params"]
            nodes.append(FNode(n, d["kind"], params, d.get("label", "")))
        order = {k: i for i, k in enumerate(KINDS)}
        nodes.sort(key=lambda x: (order[x.kind], x.id))
        edges = [FEdge(u, d["src_port"], v, d["dst_port"], d["width"], d["latency"])
                 for u, v, d in sorted(net.graph.edges(data=True),
                                       key=lambda e: (e[1], e[2]["dst_port"]))]
        return FPGADesign(net.app, net.cycles_predicted, self.cycle_width, nodes, edges)


def _pe_params(name: str, cfg: dict) -> dict:
    op = PEOp(cfg["op"])
    if op.stateful:
        raise FPGADesignError(f"node {name}: {op.name} has state; the FPGA datapath has none")
    if cfg.get("lut"):
        raise FPGADesignError(f"node {name}: LUT3 tables are not built")
    consts = {p: int(cfg[f"{p}_const"]) for p in _DATA if cfg.get(f"{p}_const_en")}
    return {"op": op.name, "out_reg": int(cfg.get("out_reg", 0)), "consts": consts}


def build_fpga_design(program: Program, schedule: Schedule, buffers: dict[str, UnifiedBuffer],
                      impls: dict[str, UBImpl], arch: Arch) -> FPGADesign:
    """The FPGA design of a scheduled and mapped application (module docstring); a design
    that cannot be built raises a one-line :class:`FPGADesignError`."""
    return _FPGABuilder(program, schedule, buffers, impls, arch).design()
