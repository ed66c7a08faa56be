"""Switch box of one network (16-bit or 1-bit) of an island-style CGRA tile: the RTL of a
:class:`~ubgen.interconnect.spec.SwitchBoxSpec` (docs/design.md §5.3, paper Fig. 11, thesis §7.1
Fig. 7.2). The mux inputs, topologies and registers are defined with the spec in
:mod:`ubgen.interconnect.spec`.
"""
from __future__ import annotations

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .mux import mux_tree
from .spec import (OPPOSITE, SIDES, TOPOLOGIES, Source, SwitchBoxSpec, check_edges,
                   track_map, track_name)

__all__ = ["SwitchBox", "SwitchBoxSpec", "Source", "SIDES", "OPPOSITE", "TOPOLOGIES",
           "track_map", "track_name", "check_edges"]


class SwitchBox(wiring.Component):
    """The RTL of a :class:`SwitchBoxSpec`.

    Ports: ``in_<side>_<t>`` / ``out_<side>_<t>`` tracks, ``core_<port>`` core outputs,
    ``stall``, and the configuration inputs ``sel_<side>_<t>`` / ``pipe_<side>_<t>`` (driven
    by the tile's configuration registers of the same meaning).

    ``edges``: sides on the array edge (no neighbour), for FPGA synthesis, which cannot carry
    the array's tie-offs into a tile module (:class:`ubgen.array.tile.Tile`). The incoming
    tracks of those sides are taken as the constant 0 the array ties them to (their ports are
    ignored) and the outgoing tracks of those sides, which nothing reads, are 0 without a mux or
    pipeline register. Ports, select encodings and every other output are unchanged.
    """

    def __init__(self, spec: SwitchBoxSpec, edges=()):
        self.spec = spec
        self.edges = check_edges(edges)
        members = {"stall": In(1)}
        for s, t in spec.outputs():
            members[track_name("in", s, t)] = In(spec.width)
            members[track_name("out", s, t)] = Out(spec.width)
            members[f"sel_{s}_{t}"] = In(spec.sel_width)
            if spec.pipeline:
                members[f"pipe_{s}_{t}"] = In(1)
        for p in spec.core_outputs:
            members[f"core_{p}"] = In(spec.width)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        spec = self.spec
        for s, t in spec.outputs():
            if s in self.edges:
                continue                    # out_<s>_<t> stays 0: no neighbour reads it
            mux = Signal(spec.width, name=f"mux_{s}_{t}")
            inputs = [None if src.kind == "track" and src.side in self.edges   # tied to 0
                      else getattr(self, track_name("in", src.side, src.track))
                      if src.kind == "track" else getattr(self, f"core_{src.port}")
                      for src in spec.mux_inputs(s, t)]
            # one balanced tree: of the splits measured, the smallest on ECP5 (docs/fpga.md)
            m.d.comb += mux.eq(mux_tree(getattr(self, f"sel_{s}_{t}"), inputs))
            out = getattr(self, track_name("out", s, t))
            if spec.pipeline:
                reg = Signal(spec.width, name=f"reg_{s}_{t}")
                with m.If(~self.stall):
                    m.d.sync += reg.eq(mux)
                m.d.comb += out.eq(mux)
                with m.If(getattr(self, f"pipe_{s}_{t}")):
                    m.d.comb += out.eq(reg)
            else:
                m.d.comb += out.eq(mux)
        return m
