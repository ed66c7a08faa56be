"""The interconnect as data (docs/design.md §5.3, paper Fig. 11, thesis §7.1 Fig. 7.2).

Switch boxes: one per network (16-bit or 1-bit) of an island-style CGRA tile.

A switch box has ``tracks`` (W) incoming and W outgoing tracks on each side N, E, S, W. Every
outgoing track (side ``o``, track ``t``) is a mux over

* one incoming track from each of the three other sides ``s``: the track ``u`` with
  ``track_map(topology, W, s, u, o) == t`` (the topology is a bijection per side pair, so
  there is exactly one), in side order N, E, S, W, then
* the tile core's outputs of the network's width, in the core's ``PORTS`` order,

(select value ``3 + len(core outputs)``, the first past the last input, is the constant 0 and
the reset value, :attr:`SwitchBoxSpec.zero_sel`; any higher value gives 0 too; the mux is a
:func:`~.mux.mux_tree`), followed
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
``sb<width>_<side>_<track>_sel`` (mux select; reset: the constant 0,
:attr:`SwitchBoxSpec.zero_sel`, so an output no route configures passes nothing on) and, when
pipeline registers exist, ``sb<width>_<side>_<track>_pipe`` (1 bit, reset 0 = bypass).

Connection boxes: one connection box per routed core input port (``in_<port>``): a mux over a constant 0
(select 0, the reset value, so an unconfigured input reads 0) and every incoming track of all
four sides of the port's network (select ``1 + i`` for the ``i``-th of :meth:`inputs`, sides in
order N, E, S, W, tracks ascending); a select value past the last track reads 0 too. Purely
combinational (latency 0), a :func:`~.mux.mux_tree`.
Register: ``cb_<port>_sel``.

This module is the interconnect as data (Amaranth-free): the same specs build the RTL
(:mod:`.switch_box`, :mod:`.connection_box`), the configuration registers and the routing graph
(:mod:`ubgen.array.graph`) (docs/design.md §2).
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SIDES", "OPPOSITE", "TOPOLOGIES", "track_map", "Source", "SwitchBoxSpec",
           "track_name", "check_edges", "ConnectionBoxSpec"]

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
    def zero_sel(self) -> int:
        """The select value of the constant 0: the first value past the mux inputs
        (:meth:`mux_inputs`). It is the reset value, so every output no route selects (of an
        unused tile or an unused output of a used one) drives 0: nothing is passed on to the
        neighbour, which therefore sees traffic only on the tracks its own routes use
        (docs/energy.md "An unused tile")."""
        return 3 + len(self.core_outputs)

    @property
    def sel_width(self) -> int:
        """Bits of a select register: the mux inputs and the constant 0 (:attr:`zero_sel`)."""
        return max(1, self.zero_sel.bit_length())

    @property
    def sel_reset(self) -> int:
        """The select's reset value: the constant 0 (:attr:`zero_sel`)."""
        return self.zero_sel

    def registers(self) -> list[tuple[str, int, int, str]]:
        """``(name, width, reset, doc)`` of every configuration register, in address order."""
        regs = []
        for s, t in self.outputs():
            names = ", ".join([_describe(x) for x in self.mux_inputs(s, t)] + ["0"])
            regs.append((self.sel_reg(s, t), self.sel_width, self.sel_reset,
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
