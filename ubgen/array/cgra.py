"""The CGRA array (docs/design.md §5.3, paper Fig. 11, thesis §7.1 Fig. 7.1).

``CGRA(arch)``: IO tiles on row 0 (north edge), PE tiles, MEM tiles in MEM columns, every tile
with a connection box per core input and a switch box per network. Neighbouring tiles are
wired track to track (outgoing track ``t`` of side ``s`` drives incoming track ``t`` of the
neighbour's opposite side); at the array edges the incoming tracks are tied to 0.

Members:

* ``cfg``: global configuration bus, 32-bit word address ``{tile_id[15:0], reg_offset[15:0]}``,
  ``wdata`` (32), ``we``; ``rdata`` is *registered*: it holds the register addressed in the
  previous cycle (present the address, read ``rdata`` one cycle later). Unknown tile ids read 0
  and ignore writes.
* ``run``, ``stall``: broadcast to every tile (contract: datapath registers freeze while
  ``stall``; controllers restart while ``run`` is 0).
* ``glb_<col>``: the GLB port of the IO tile of column ``col`` (E1's IO core contract).
* ``error``: OR of the tiles' error flags (the MEM tiles' sticky SRAM-conflict flags).
* ``cycle_count`` (32): unstalled cycles since ``run`` rose (0 while ``run`` is 0), the same
  count every MEM/IO controller sees.
"""
from __future__ import annotations

from typing import Callable

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..arch import Arch
from ..config import config_bus_signature
from ..interconnect.mux import mux_tree
from ..interconnect.switch_box import OPPOSITE, SIDES
from .layout import ArrayLayout
from .tile import TILE_ADDR_WIDTH, Tile, TileInstance, edge_suffix, track_port

CONFIG_ADDR_WIDTH = 32
CYCLE_COUNT_WIDTH = 32


class CGRA(wiring.Component):
    """The array. ``cores`` maps a tile kind (io/pe/mem) to a core factory ``f(arch)``.

    With ``tile_modules`` (kind -> Verilog module name) the tiles are instances of separately
    generated modules (:class:`TileInstance`, used for Verilog output, see
    :func:`ubgen.array.write_verilog`); without, they are Amaranth :class:`Tile` objects (used by
    the Amaranth simulator; ``self.tiles[row, col].core`` reaches each core).

    ``edge_tiles`` (for FPGA synthesis, :mod:`ubgen.fpga`): every tile is built for the sides
    of its position on the array edge (:class:`Tile` ``edges``; same ports, registers and
    behaviour in the array, fewer muxes), and with ``tile_modules`` a tile instantiates
    ``tile_modules[kind]`` + :func:`~ubgen.array.tile.edge_suffix` of its edges.
    ``tile_modules`` may also be a function ``(position, edges) -> module name``: one module
    per position (an FPGA design with each tile's configuration folded in, :mod:`ubgen.fpga.fold`).
    """

    def __init__(self, arch: Arch, cores=None,
                 tile_modules: dict[str, str] | Callable | None = None,
                 edge_tiles: bool = False):
        self.arch = arch
        self.layout = ArrayLayout(arch, cores)
        members = {"cfg": In(config_bus_signature(CONFIG_ADDR_WIDTH)), "run": In(1),
                   "stall": In(1), "error": Out(1), "cycle_count": Out(CYCLE_COUNT_WIDTH)}
        io_proto = self.layout.prototypes["io"]
        if "glb" in io_proto.signature.members:
            for col in range(self.layout.columns):
                members[f"glb_{col}"] = Out(io_proto.signature.members["glb"].signature)
        super().__init__(members)
        self.tiles: dict[tuple[int, int], Tile] = {}
        for pos in self.layout.positions():
            spec = self.layout.specs[pos.kind]
            edges = self.layout.edges(pos.row, pos.col) if edge_tiles else frozenset()
            if tile_modules is None:
                tile = Tile(spec, self.layout.cores[pos.kind](arch), edges)
            else:
                module = (tile_modules(pos, edges) if callable(tile_modules)
                          else tile_modules[pos.kind] + edge_suffix(edges))
                tile = TileInstance(spec, self.layout.prototypes[pos.kind], module)
            self.tiles[pos.row, pos.col] = tile

    def elaborate(self, platform):
        m = Module()
        lay = self.layout
        tile_sel = self.cfg.addr[TILE_ADDR_WIDTH:]
        rdata = Signal(32)
        errors = []
        for pos in lay.positions():
            tile = self.tiles[pos.row, pos.col]
            m.submodules[f"tile_r{pos.row}_c{pos.col}"] = tile
            m.d.comb += [
                tile.cfg.addr.eq(self.cfg.addr[:TILE_ADDR_WIDTH]),
                tile.cfg.wdata.eq(self.cfg.wdata),
                tile.cfg.we.eq(self.cfg.we & (tile_sel == pos.tile_id)),
                tile.run.eq(self.run), tile.stall.eq(self.stall),
            ]
            if "error" in tile.signature.members:
                errors.append(tile.error)
            if pos.kind == "io" and "glb" in tile.signature.members:
                wiring.connect(m, wiring.flipped(getattr(self, f"glb_{pos.col}")), tile.glb)
            for w in tile.spec.widths:
                for s in SIDES:
                    nb = lay.neighbour(pos.row, pos.col, s)
                    for t in range(tile.spec.tracks):
                        dst = getattr(tile, track_port(w, "in", s, t))
                        if nb is None:
                            m.d.comb += dst.eq(0)
                        else:
                            src = self.tiles[nb]
                            m.d.comb += dst.eq(getattr(src, track_port(w, "out", OPPOSITE[s], t)))

        # registered read-back: rdata is valid the cycle after the address is presented; a mux
        # tree over the tile ids (tile_id = row * columns + col, no holes), 0 past the last
        by_id = [self.tiles[pos.row, pos.col].cfg.rdata
                 for pos in sorted(lay.positions(), key=lambda p: p.tile_id)]
        m.d.comb += rdata.eq(mux_tree(tile_sel, by_id))
        m.d.sync += self.cfg.rdata.eq(rdata)

        if errors:
            m.d.comb += self.error.eq(Cat(*errors).any())

        with m.If(~self.run):
            m.d.sync += self.cycle_count.eq(0)
        with m.Elif(~self.stall):
            m.d.sync += self.cycle_count.eq(self.cycle_count + 1)
        return m
