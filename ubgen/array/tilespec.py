"""What a tile kind is, as data (docs/design.md §5.3, docs/array.md): its core's routed ports and
registers, its switch boxes and connection boxes, and the tile's register map (the core's, then
the interconnect's). Amaranth-free: the RTL (:mod:`ubgen.array.tile`), the full register map and
the routing graph (:mod:`ubgen.array.graph`) are built from the same :class:`TileSpec`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from ..interconnect.spec import ConnectionBoxSpec, SwitchBoxSpec, check_edges
from ..pe.contexts import context_port, context_ports, ctx_port, split_port
from ..arch import WORD_WIDTH
from ..regmap import Register, RegisterMap

__all__ = ["TILE_ADDR_WIDTH", "TileSpec", "track_port", "edge_suffix"]

TILE_ADDR_WIDTH = 16     # tile-local register offset bits of the global config address


@dataclass(frozen=True)
class TileSpec:
    """Everything the RTL, the register map and the routing graph need to know of a tile kind."""
    kind: str                                   # "io" | "pe" | "mem"
    ports: dict                                 # the core's PORTS: name -> (direction, width)
    core_regmap: RegisterMap = field(compare=False)
    tracks: int = 5
    topology: str = "wilton"
    pipeline: bool = True
    word_width: int = WORD_WIDTH
    contexts: int = 1                           # PE input contexts (ubgen.pe.contexts)

    @classmethod
    def for_core(cls, kind: str, core, arch) -> "TileSpec":
        a = arch.array
        ports, contexts = dict(core.PORTS), 1
        if kind == "pe" and a.pe_contexts > 1:
            contexts = a.pe_contexts
            ports.update(context_ports(core.PORTS, contexts))
        spec = cls(kind=kind, ports=ports, core_regmap=core.regmap,
                   tracks=a.tracks, topology=a.switch_box, pipeline=a.pipeline_registers,
                   word_width=arch.pub.word_width, contexts=contexts)
        for name, (direction, width) in spec.ports.items():
            if direction not in ("in", "out"):
                raise ValueError(f"{kind} core port {name}: direction must be in/out")
            if width not in spec.widths:
                raise ValueError(f"{kind} core port {name}: width {width} is not a network "
                                 f"width {spec.widths}")
        return spec

    @property
    def widths(self) -> tuple[int, int]:
        return (self.word_width, 1)

    def inputs(self, width: int | None = None) -> list[str]:
        return [p for p, (d, w) in self.ports.items() if d == "in" and width in (None, w)]

    def outputs(self, width: int | None = None) -> list[str]:
        return [p for p, (d, w) in self.ports.items() if d == "out" and width in (None, w)]

    def core_inputs(self) -> list[str]:
        """The core's own routed inputs (without the context sources and ``ctx`` bits)."""
        if self.contexts == 1:
            return self.inputs()
        ctx = set(self.ctx_inputs())
        return [p for p in self.inputs() if split_port(p)[1] == 0 and p not in ctx]

    def context_selects(self, port: str) -> list[str]:
        """The connection-box select registers of core input ``port``, context 0 first."""
        return [ConnectionBoxSpec(context_port(port, k), self.ports[port][1],
                                  self.tracks).sel_reg for k in range(self.contexts)]

    def ctx_inputs(self) -> list[str]:
        """The 1-bit inputs that select contexts 1 .. contexts-1."""
        return [ctx_port(k) for k in range(1, self.contexts)]

    @cached_property
    def sbs(self) -> dict[int, SwitchBoxSpec]:
        return {w: SwitchBoxSpec(width=w, tracks=self.tracks, topology=self.topology,
                                 core_outputs=tuple(self.outputs(w)), pipeline=self.pipeline)
                for w in self.widths}

    @cached_property
    def cbs(self) -> dict[str, ConnectionBoxSpec]:
        return {p: ConnectionBoxSpec(port=p, width=self.ports[p][1], tracks=self.tracks)
                for p in self.inputs()}

    @cached_property
    def core_span(self) -> int:
        """Offsets taken by the core (registers and windows); the interconnect follows."""
        rm = self.core_regmap
        return max([0] + [r.offset + 1 for r in rm.registers]
                   + [w.offset + w.size for w in rm.windows])

    @cached_property
    def interconnect_regmap(self) -> RegisterMap:
        rm = RegisterMap(f"{self.kind}_interconnect")
        for w in self.widths:
            for reg in self.sbs[w].registers():
                rm.add(*reg)
        for cb in self.cbs.values():
            for reg in cb.registers():
                rm.add(*reg)
        return rm

    @cached_property
    def regmap(self) -> RegisterMap:
        """The tile's register map: the core's, then the interconnect's at ``core_span``."""
        rm = RegisterMap(f"{self.kind}_tile")
        rm.registers = list(self.core_regmap.registers) + [
            Register(r.name, r.width, r.offset + self.core_span, r.reset, r.doc)
            for r in self.interconnect_regmap.registers]
        rm.windows = list(self.core_regmap.windows)
        names = [r.name for r in rm.registers]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.kind} tile: a core register name clashes with an "
                             f"interconnect register")
        if self.core_span + len(self.interconnect_regmap.registers) > 1 << TILE_ADDR_WIDTH:
            raise ValueError(f"{self.kind} tile: register map exceeds {TILE_ADDR_WIDTH} bits")
        return rm


def track_port(width: int, direction: str, side: str, track: int) -> str:
    """Name of a tile track port, e.g. ``sb16_in_N_0``."""
    return f"sb{width}_{direction}_{side}_{track}"


def edge_suffix(edges) -> str:
    """The module-name suffix of a tile built for ``edges`` (:class:`Tile`): ``""`` for none,
    else ``_`` and the sides in N, S, E, W order, lower case (``_n``, ``_nw``, ``_se``)."""
    edges = check_edges(edges)
    return "".join(["_"] + [s.lower() for s in "NSEW" if s in edges]) if edges else ""
