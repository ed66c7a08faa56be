"""Connection box: routes one core input from the tile's incoming tracks (docs/design.md §5.3,
paper Fig. 11).

One connection box per routed core input port (``in_<port>``): a mux over a constant 0
(select 0, the reset value, so an unconfigured input reads 0) and every incoming track of all
four sides of the port's network (select ``1 + i`` for the ``i``-th of :meth:`inputs`, sides in
order N, E, S, W, tracks ascending); a select value past the last track reads 0 too. Purely
combinational (latency 0), a :func:`~.mux.mux_tree`.
Register: ``cb_<port>_sel``.
"""
from __future__ import annotations

from dataclasses import dataclass

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .mux import mux_tree
from .switch_box import SIDES, Source, check_edges, track_name


@dataclass(frozen=True)
class ConnectionBoxSpec:
    """Everything that defines one connection box: RTL, register and routing-graph edges."""
    port: str
    width: int
    tracks: int

    def inputs(self) -> list[Source | None]:
        """Mux inputs; index = select value; ``None`` is the constant 0."""
        return [None] + [Source("track", side=s, track=t) for s in SIDES
                         for t in range(self.tracks)]

    @property
    def sel_reg(self) -> str:
        return f"cb_{self.port}_sel"

    @property
    def sel_width(self) -> int:
        return max(1, (len(self.inputs()) - 1).bit_length())

    def registers(self) -> list[tuple[str, int, int, str]]:
        return [(self.sel_reg, self.sel_width, 0,
                 f"connection box of in_{self.port}: 0 = constant 0, 1 + side*{self.tracks} "
                 f"+ track = incoming track (side N=0, E=1, S=2, W=3)")]


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
