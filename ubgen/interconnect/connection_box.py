"""Connection box: the RTL of a :class:`~ubgen.interconnect.spec.ConnectionBoxSpec`, which routes
one core input from the tile's incoming tracks (docs/design.md §5.3, paper Fig. 11)."""
from __future__ import annotations

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .mux import mux_tree
from .spec import SIDES, ConnectionBoxSpec, check_edges, track_name

__all__ = ["ConnectionBox", "ConnectionBoxSpec"]


class ConnectionBox(wiring.Component):
    """The RTL of a :class:`ConnectionBoxSpec`: ``in_<side>_<t>`` tracks, ``sel``, ``out``.

    ``edges``: sides on the array edge, whose incoming tracks are taken as the constant 0 the
    array ties them to (ports ignored; select encoding unchanged), see
    :class:`~.switch_box.SwitchBox`.
    """

    def __init__(self, spec: ConnectionBoxSpec, edges=()):
        self.spec = spec
        self.edges = check_edges(edges)
        members = {"sel": In(spec.sel_width), "out": Out(spec.width)}
        for s in SIDES:
            for t in range(spec.tracks):
                members[track_name("in", s, t)] = In(spec.width)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        inputs = [None if src is None or src.side in self.edges
                  else getattr(self, track_name("in", src.side, src.track))
                  for src in self.spec.inputs()]
        # tree_bits=1: 2:1 muxes of input pairs on sel[0], the other select bits decoded once
        # per box; of the splits measured, the smallest on ECP5 (docs/fpga.md)
        m.d.comb += self.out.eq(mux_tree(self.sel, inputs, tree_bits=1))
        return m
