"""A CGRA tile: core + connection boxes + switch boxes + the tile's configuration decoder
(docs/design.md §5.3, paper Fig. 11, thesis §7.1 Fig. 7.2).

A tile has one switch box per network (the word-wide data network and the 1-bit network),
one connection box per routed core input (``in_<port>``), and its core (PE, MEM or IO). Core
outputs (``out_<port>``) feed the switch-box muxes of their network. The tile's register map
is the core's register map (offsets ``0 .. core_span-1``, windows included) followed by the
interconnect's (switch-box selects and pipeline enables, connection-box selects), see
:meth:`TileSpec.regmap`.

Tile ports (``<w>`` = network width, ``<s>`` = side N/E/S/W, ``<t>`` = track):
``sb<w>_in_<s>_<t>`` (from the neighbour on side ``s``), ``sb<w>_out_<s>_<t>`` (to it),
``cfg`` (tile-local config bus, 16-bit word address, combinational ``rdata``), ``run``,
``stall``, and when the core has them ``error`` and ``glb``.
"""
from __future__ import annotations

from amaranth.hdl import Module, Mux
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..config import ConfigRegisters, config_bus_signature
from ..interconnect.connection_box import ConnectionBox
from ..interconnect.spec import SIDES, check_edges
from ..interconnect.switch_box import SwitchBox
from .tilespec import TILE_ADDR_WIDTH, TileSpec, edge_suffix, track_port

def tile_signature_members(spec: TileSpec, core) -> dict:
    members = {"cfg": In(config_bus_signature(TILE_ADDR_WIDTH)), "run": In(1), "stall": In(1)}
    for w in spec.widths:
        for s in SIDES:
            for t in range(spec.tracks):
                members[track_port(w, "in", s, t)] = In(w)
                members[track_port(w, "out", s, t)] = Out(w)
    if "error" in core.signature.members:
        members["error"] = Out(1)
    if "glb" in core.signature.members:
        members["glb"] = Out(core.signature.members["glb"].signature)
    return members


class Tile(wiring.Component):
    """One tile around ``core`` (an Amaranth component following the core contract).

    ``edges`` (default none): the sides of the tile's position that lie on the array edge,
    for FPGA synthesis (:mod:`ubgen.fpga`, ``cgra_4x4``). The array ties those sides' incoming
    tracks to 0 and reads none of their outgoing tracks; a tile built with ``edges`` does the
    same inside (:class:`~ubgen.interconnect.SwitchBox` / :class:`~ubgen.interconnect.ConnectionBox`
    ``edges``): its muxes see 0 for those inputs and those outputs are 0, so synthesis, which
    works module by module and cannot carry the array's tie-offs into a tile module, drops
    their muxes and pipeline registers. Ports, register map and select encodings are the same
    for every ``edges`` (the registers of the dropped outputs remain, readable): inside the
    array the tile behaves identically.
    """

    def __init__(self, spec: TileSpec, core, edges=()):
        self.spec = spec
        self.core = core
        self.edges = check_edges(edges)
        super().__init__(tile_signature_members(spec, core))

    def elaborate(self, platform):
        m = Module()
        spec, core = self.spec, self.core
        m.submodules.core = core
        ic = m.submodules.ic_regs = ConfigRegisters(spec.interconnect_regmap)
        f = ic.fields

        # configuration decode: core offsets first, then the interconnect registers
        base, n_ic = spec.core_span, len(spec.interconnect_regmap.registers)
        addr = self.cfg.addr
        to_ic = (addr >= base) & (addr < base + n_ic)
        to_core = addr < base
        core_aw = len(core.cfg.addr)
        m.d.comb += [
            core.cfg.addr.eq(addr[:core_aw]), core.cfg.wdata.eq(self.cfg.wdata),
            core.cfg.we.eq(self.cfg.we & to_core),
            ic.bus.addr.eq(addr - base), ic.bus.wdata.eq(self.cfg.wdata),
            ic.bus.we.eq(self.cfg.we & to_ic),
            self.cfg.rdata.eq(Mux(to_ic, ic.bus.rdata, Mux(to_core, core.cfg.rdata, 0))),
            core.run.eq(self.run), core.stall.eq(self.stall),
        ]
        if "error" in self.signature.members:
            m.d.comb += self.error.eq(core.error)
        if "glb" in self.signature.members:
            wiring.connect(m, wiring.flipped(self.glb), core.glb)

        for w, sbspec in spec.sbs.items():
            sb = m.submodules[f"sb{w}"] = SwitchBox(sbspec, self.edges)
            m.d.comb += sb.stall.eq(self.stall)
            for s, t in sbspec.outputs():
                m.d.comb += [
                    getattr(sb, f"in_{s}_{t}").eq(getattr(self, track_port(w, "in", s, t))),
                    getattr(self, track_port(w, "out", s, t)).eq(getattr(sb, f"out_{s}_{t}")),
                    getattr(sb, f"sel_{s}_{t}").eq(f[sbspec.sel_reg(s, t)]),
                ]
                if sbspec.pipeline:
                    m.d.comb += getattr(sb, f"pipe_{s}_{t}").eq(f[sbspec.pipe_reg(s, t)])
            for p in sbspec.core_outputs:
                m.d.comb += getattr(sb, f"core_{p}").eq(getattr(core, f"out_{p}"))

        # the ctx inputs of a PE with input contexts (ubgen.pe.contexts) feed only the selects
        ctx_bits = [self.connection_box(m, p, f[spec.cbs[p].sel_reg]).out
                    for p in spec.ctx_inputs()]
        for p in spec.core_inputs():
            sels = [f[r] for r in spec.context_selects(p)]
            sel = sels[0]
            for k in range(spec.contexts - 1, 0, -1):     # the lowest active context wins
                sel = Mux(ctx_bits[k - 1] & (sels[k] != 0), sels[k], sel)
            m.d.comb += getattr(core, f"in_{p}").eq(self.connection_box(m, p, sel).out)
        return m

    def connection_box(self, m: Module, port: str, sel) -> ConnectionBox:
        """The connection box of input ``port``, its select driven by ``sel``."""
        spec = self.spec
        cbspec = spec.cbs[port]
        cb = m.submodules[f"cb_{port}"] = ConnectionBox(cbspec, self.edges)
        m.d.comb += cb.sel.eq(sel)
        for s in SIDES:
            for t in range(spec.tracks):
                m.d.comb += getattr(cb, f"in_{s}_{t}").eq(
                    getattr(self, track_port(cbspec.width, "in", s, t)))
        return cb


def packed_tracks(spec: TileSpec) -> list[tuple[str, int]]:
    """The order of the tracks in a packed track port ``sb<w>_in`` / ``sb<w>_out`` (any
    network ``w``): sides N, E, S, W, tracks ascending; entry ``k`` is bits
    ``[k*w, (k+1)*w)``."""
    return [(s, t) for s in SIDES for t in range(spec.tracks)]


def packed_members(spec: TileSpec, core) -> dict:
    """The tile module's Verilog ports: :func:`tile_signature_members` with the tracks of each
    network packed into one input and one output vector (:func:`packed_tracks`)."""
    members = {k: v for k, v in tile_signature_members(spec, core).items()
               if not k.startswith("sb")}
    for w in spec.widths:
        n = len(packed_tracks(spec)) * w
        members[f"sb{w}_in"] = In(n)
        members[f"sb{w}_out"] = Out(n)
    return members


class PackedTile(wiring.Component):
    """The tile module as written to Verilog (:func:`ubgen.array.write_verilog`): a
    :class:`Tile` whose track ports are packed per network and direction
    (:func:`packed_members`). Pure wiring: same behaviour, ~90 ports fewer, which makes the
    per-instance code Verilator generates around a hierarchical block (and its run-time
    marshalling) smaller (docs/array.md "Verilator"). ``edges``: see :class:`Tile`."""

    def __init__(self, spec: TileSpec, core, edges=()):
        self.spec = spec
        self.tile = Tile(spec, core, edges)
        super().__init__(packed_members(spec, core))

    def elaborate(self, platform):
        m = Module()
        tile = m.submodules.tile = self.tile
        for name, member in self.signature.members.items():
            if name.startswith("sb"):
                continue
            if member.is_signature:                       # cfg, glb
                wiring.connect(m, wiring.flipped(getattr(self, name)), getattr(tile, name))
            elif member.flow == wiring.In:
                m.d.comb += getattr(tile, name).eq(getattr(self, name))
            else:
                m.d.comb += getattr(self, name).eq(getattr(tile, name))
        for w in self.spec.widths:
            packed_in, packed_out = getattr(self, f"sb{w}_in"), getattr(self, f"sb{w}_out")
            for k, (s, t) in enumerate(packed_tracks(self.spec)):
                m.d.comb += [
                    getattr(tile, track_port(w, "in", s, t)).eq(packed_in[k * w:(k + 1) * w]),
                    packed_out[k * w:(k + 1) * w].eq(getattr(tile, track_port(w, "out", s, t))),
                ]
        return m


class TileInstance(wiring.Component):
    """A tile as an instance of its separately generated Verilog module ``module`` (a
    :class:`PackedTile`).

    Same signature as :class:`Tile`. The array uses it for Verilog output so that each tile
    kind is generated once (fast generation, small Verilog) and so that the structural
    combinational loops of the mesh (through bypassed switch boxes of neighbouring tiles;
    never closed by a legal configuration) lie between modules, where the netlist checker
    does not see them. Port names follow Amaranth's flattening (``cfg__addr``, ...); the
    track ports are packed (:func:`packed_members`).
    """

    def __init__(self, spec: TileSpec, core, module: str):
        self.spec = spec
        self.module = module
        super().__init__(tile_signature_members(spec, core))

    def elaborate(self, platform):
        from amaranth.hdl import Cat, Instance, ClockSignal, ResetSignal, Signal
        m = Module()
        ports = {"i_clk": ClockSignal(), "i_rst": ResetSignal()}
        for path, member, value in self.signature.flatten(self):
            name = "__".join(str(p) for p in path)
            if name.startswith("sb"):
                continue
            ports[("i_" if member.flow == wiring.In else "o_") + name] = value
        for w in self.spec.widths:
            order = packed_tracks(self.spec)
            ports[f"i_sb{w}_in"] = Cat(getattr(self, track_port(w, "in", s, t)) for s, t in order)
            packed_out = Signal(len(order) * w, name=f"sb{w}_out")
            ports[f"o_sb{w}_out"] = packed_out
            for k, (s, t) in enumerate(order):
                m.d.comb += getattr(self, track_port(w, "out", s, t)).eq(
                    packed_out[k * w:(k + 1) * w])
        m.submodules.tile = Instance(self.module, **ports)
        return m
