"""Switch box of one network (16-bit or 1-bit) of an island-style CGRA tile (docs/design.md §5.3,
paper Fig. 11, thesis §7.1 Fig. 7.2).

A switch box has ``tracks`` (W) incoming and W outgoing tracks on each side N, E, S, W. Every
outgoing track (side ``o``, track ``t``) is a mux over

* one incoming track from each of the three other sides ``s``: the track ``u`` with
  ``track_map(topology, W, s, u, o) == t`` (the topology is a bijection per side pair, so
  there is exactly one), in side order N, E, S, W, then
* the tile core's outputs of the network's width, in the core's ``PORTS`` order,

(a select value past the last input gives 0; the mux is a :func:`~.mux.mux_tree`), followed
by an optional pipeline register (config bit ``pipe``: 0 = combinational bypass,
1 = registered, one cycle of latency; the register freezes while ``stall`` is high). The
pipeline registers double as short delay lines for the compiler.

Topologies (track permutations for a track ``t`` entering on side ``from`` and leaving on
side ``to``; all arithmetic mod W; straight-through connections N<->S and E<->W keep the track
index in every topology):

* ``disjoint`` (subset switch box, Xilinx XC4000 style): ``t -> t`` for every pair of sides.
  Tracks form W disjoint routing domains.
* ``wilton`` (S. Wilton, PhD thesis, 1997): the turns rotate the track index so that a path
  that turns around a loop of switch boxes reaches a different domain:
  W->S ``t -> W - t``; S->E ``t -> t + 1``; E->N ``t -> 2W - 2 - t``; N->W ``t -> t + 1``;
  the reverse directions use the inverses (S->W ``W - t``, E->S ``t - 1``, N->E ``2W - 2 - t``,
  W->N ``t - 1``).
* ``imran`` (M. I. Masud and S. Wilton, "A new switch block for segmented FPGAs", 1999; the
  variant CGRA generators offer next to Wilton's): W->N ``t -> W - t``; N->E ``t -> t + 1``;
  S->E ``t -> W - t - 2``; W->S ``t -> t - 1``; reverses: N->W ``W - t``, E->N ``t - 1``,
  E->S ``W - t - 2``, S->W ``t + 1``.

Configuration registers (one 32-bit word each, see :meth:`SwitchBoxSpec.registers`):
``sb<width>_<side>_<track>_sel`` (mux select, reset 0) and, when pipeline registers exist,
``sb<width>_<side>_<track>_pipe`` (1 bit, reset 0 = bypass).
"""
from __future__ import annotations

from dataclasses import dataclass

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .mux import mux_tree

SIDES = ("N", "E", "S", "W")
OPPOSITE = {"N": "S", "S": "N", "E": "W", "W": "E"}
TOPOLOGIES = ("wilton", "disjoint", "imran")

# (from, to) -> f(t, W) for the turns; the reverse direction of each pair is its inverse.
_TURNS = {
    "wilton": {("W", "S"): lambda t, w: w - t, ("S", "E"): lambda t, w: t + 1,
               ("E", "N"): lambda t, w: 2 * w - 2 - t, ("N", "W"): lambda t, w: t + 1},
    "imran": {("W", "N"): lambda t, w: w - t, ("N", "E"): lambda t, w: t + 1,
              ("S", "E"): lambda t, w: w - t - 2, ("W", "S"): lambda t, w: t - 1},
}


def track_map(topology: str, tracks: int, from_side: str, from_track: int, to_side: str) -> int:
    """The track on ``to_side`` that incoming track ``from_track`` of ``from_side`` reaches."""
    if topology not in TOPOLOGIES:
        raise ValueError(f"unknown switch-box topology {topology!r} "
                         f"(expected one of {', '.join(TOPOLOGIES)})")
    if from_side == to_side:
        raise ValueError(f"a switch box does not connect side {from_side} to itself")
    if topology == "disjoint" or OPPOSITE[from_side] == to_side:
        return from_track
    turns = _TURNS[topology]
    if (from_side, to_side) in turns:
        return turns[(from_side, to_side)](from_track, tracks) % tracks
    forward = turns[(to_side, from_side)]
    for u in range(tracks):     # inverse of a bijection on W tracks
        if forward(u, tracks) % tracks == from_track:
            return u
    raise AssertionError("switch-box turn is not a bijection")


@dataclass(frozen=True)
class Source:
    """One input of a switch-box output mux: an incoming track or a core output port."""
    kind: str           # "track" | "core"
    side: str = ""
    track: int = 0
    port: str = ""


@dataclass(frozen=True)
class SwitchBoxSpec:
    """Everything that defines one switch box: RTL, registers and routing-graph edges."""
    width: int
    tracks: int
    topology: str
    core_outputs: tuple[str, ...] = ()
    pipeline: bool = True

    def __post_init__(self):
        if self.topology not in TOPOLOGIES:
            raise ValueError(f"unknown switch-box topology {self.topology!r} "
                             f"(expected one of {', '.join(TOPOLOGIES)})")
        if self.tracks < 1:
            raise ValueError(f"a switch box needs at least one track, got {self.tracks}")

    @property
    def prefix(self) -> str:
        return f"sb{self.width}"

    def mux_inputs(self, side: str, track: int) -> list[Source]:
        """Inputs of the mux driving outgoing ``track`` of ``side``; index = select value."""
        srcs = []
        for s in SIDES:
            if s == side:
                continue
            hits = [u for u in range(self.tracks)
                    if track_map(self.topology, self.tracks, s, u, side) == track]
            assert len(hits) == 1, (self.topology, s, side, track, hits)
            srcs.append(Source("track", side=s, track=hits[0]))
        srcs += [Source("core", port=p) for p in self.core_outputs]
        return srcs

    def outputs(self):
        return [(s, t) for s in SIDES for t in range(self.tracks)]

    def sel_reg(self, side: str, track: int) -> str:
        return f"{self.prefix}_{side}_{track}_sel"

    def pipe_reg(self, side: str, track: int) -> str:
        return f"{self.prefix}_{side}_{track}_pipe"

    @property
    def sel_width(self) -> int:
        n = 3 + len(self.core_outputs)
        return max(1, (n - 1).bit_length())

    def registers(self) -> list[tuple[str, int, int, str]]:
        """``(name, width, reset, doc)`` of every configuration register, in address order."""
        regs = []
        for s, t in self.outputs():
            names = ", ".join(_describe(x) for x in self.mux_inputs(s, t))
            regs.append((self.sel_reg(s, t), self.sel_width, 0,
                         f"{self.width}-bit SB output {s}{t} select: {names}"))
            if self.pipeline:
                regs.append((self.pipe_reg(s, t), 1, 0,
                             f"{self.width}-bit SB output {s}{t}: 1 = pipeline register "
                             f"(latency 1), 0 = bypass"))
        return regs


def _describe(src: Source) -> str:
    return f"{src.side}{src.track}" if src.kind == "track" else src.port


def track_name(direction: str, side: str, track: int) -> str:
    """Port name of an incoming (``in``) or outgoing (``out``) track."""
    return f"{direction}_{side}_{track}"


def check_edges(edges) -> frozenset[str]:
    """``edges`` as a set of sides; a one-line :class:`ValueError` for anything but N/E/S/W."""
    edges = frozenset(edges)
    bad = sorted(str(e) for e in edges - set(SIDES))
    if bad:
        raise ValueError(f"unknown side(s) {', '.join(bad)} in edges (expected N, E, S, W)")
    return edges


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
