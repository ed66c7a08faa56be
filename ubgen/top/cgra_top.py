"""``cgra_top``: the CGRA array, the global buffer and an AXI4-Lite slave for the host
(docs/design.md §5.4, thesis §7.1 Fig. 7.1).

Ports: ``clk``, ``rst`` and the AXI4-Lite slave ``s_axil_*`` (32-bit data, byte addresses).
Address map (:func:`top_address_map` exports it as data; docs/top.md describes it):

* ``0x0000_0000 + 4*i``: control/status registers :data:`CONTROL` (``START``, ``STALL``,
  ``DONE``, ``CYCLE``, ``ERROR``, ``DONE_CYCLE``, ``INFO``) and the performance counters
  ``FIRST_WRITE``, ``LAST_WRITE``, ``WRITES`` (:mod:`.counters`);
* ``0x1000_0000 + 4*w``: global-buffer word ``w`` (16 bits, bank-major: ``w = bank *
  bank_words + offset``); only while not running (``START`` = 0);
* ``0x8000_0000 | tile_id << 18 | reg_offset << 2``: tile configuration register (write and
  read-back), for every register of :func:`ubgen.array.graph.full_regmap`;
* anything else, a write to a read-only register, a GLB access while running, a partial-strobe
  write or an unaligned address: SLVERR, and nothing changes.

A run: configure the tiles, load the GLB, write ``DONE_CYCLE`` (the compiler's completion
cycle), write ``START`` = 1; poll ``DONE`` (= running and ``CYCLE >= DONE_CYCLE``); write
``START`` = 0 (which resets the cycle counter and restarts every controller); read the GLB.
``STALL`` = 1 freezes the array (every datapath register, counter and controller).
"""
from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Signal
from amaranth.lib import wiring

from ..arch import Arch
from ..array.cgra import CGRA
from ..array.tilespec import TILE_ADDR_WIDTH
from ..glb.global_buffer import GlobalBuffer, bank_addr_width, host_addr_width
from .axil import AXILiteSlave, axil_members
from .spec import (CONTROL, GLB_BASE, REGION_SHIFT, TILE_BASE, TILE_ID_BITS, TILE_ID_SHIFT,
                   TILE_REGION_BIT, WORD_SHIFT, ControlRegister, control_address, glb_address,
                   tile_address, tile_spans, top_address_map)
from .counters import WriteCounters

__all__ = ["CGRATop", "CONTROL", "ControlRegister", "GLB_BASE", "TILE_BASE", "top_address_map",
           "tile_address", "glb_address", "control_address"]

AXIL_PREFIX = "s_axil"


class CGRATop(wiring.Component):
    """AXI4-Lite slave -> control/status registers, GLB host port, array config bus.

    ``cores``, ``tile_modules`` and ``edge_tiles`` are passed to :class:`~ubgen.array.cgra.CGRA`
    (tests may use other cores; Verilog output uses separately generated tile modules, FPGA
    synthesis tiles built for their edges).
    """

    def __init__(self, arch: Arch, cores=None, tile_modules: dict[str, str] | None = None,
                 edge_tiles: bool = False):
        self.arch = arch
        self.array = CGRA(arch, cores, tile_modules, edge_tiles)
        self.io_columns = [c for c in range(arch.array.columns)
                           if f"glb_{c}" in self.array.signature.members]
        self.glb = GlobalBuffer(arch.glb, self.io_columns)
        super().__init__(axil_members(AXIL_PREFIX))

    def elaborate(self, platform):
        m = Module()
        m.submodules.array, m.submodules.glb = self.array, self.glb
        axil = m.submodules.axil = AXILiteSlave(AXIL_PREFIX)
        for name in axil_members(AXIL_PREFIX):
            if axil.signature.members[name].flow == wiring.In:
                m.d.comb += getattr(axil, name).eq(getattr(self, name))
            else:
                m.d.comb += getattr(self, name).eq(getattr(axil, name))
        for c in self.io_columns:
            wiring.connect(m, getattr(self.array, f"glb_{c}"), self.glb.io_port(c))
        run = Signal(name="run")
        m.d.comb += [self.array.run.eq(run), self.glb.run.eq(run)]
        bus, addr = axil.bus, axil.bus.addr
        regions = {"ctrl": addr[REGION_SHIFT:] == 0,
                   "glb": addr[REGION_SHIFT:] == GLB_BASE >> REGION_SHIFT,
                   "tile": addr[TILE_REGION_BIT]}
        self._control(m, bus, regions["ctrl"], run)
        self._glb_port(m, bus, regions["glb"], run)
        self._tile_port(m, bus, regions["tile"])
        with m.If(~regions["ctrl"] & ~regions["glb"] & ~regions["tile"] & (bus.we | bus.re)):
            m.d.comb += [bus.ack.eq(1), bus.err.eq(1)]       # anything else
        return m

    def _control(self, m: Module, bus, selected, run: Signal) -> None:
        """The control/status registers :data:`CONTROL` (ack in the strobe's cycle)."""
        arch, g, array = self.arch, self.arch.glb, self.array
        stall, done = Signal(name="stall"), Signal(name="done")
        target = Signal(32, name="target")
        m.d.comb += [array.stall.eq(stall), done.eq(run & (array.cycle_count >= target))]
        perf = m.submodules.perf = WriteCounters(max(1, len(self.io_columns)))
        m.d.comb += [perf.run.eq(run), perf.cycle.eq(array.cycle_count)]
        for i, c in enumerate(self.io_columns):
            m.d.comb += perf.we[i].eq(getattr(array, f"glb_{c}").we)
        values = {"START": run, "STALL": stall, "DONE": done, "CYCLE": array.cycle_count,
                  "ERROR": Cat(array.error, self.glb.error), "DONE_CYCLE": target,
                  "INFO": Const(arch.array.rows | arch.array.columns << 8 | g.banks << 16 |
                                bank_addr_width(g) << 24, 32),
                  "FIRST_WRITE": perf.first, "LAST_WRITE": perf.last, "WRITES": perf.writes}
        writable = {"START": run, "STALL": stall, "DONE_CYCLE": target}
        assert set(writable) == {r.name for r in CONTROL if r.access == "rw"}
        with m.If(selected & (bus.we | bus.re)):
            m.d.comb += [bus.ack.eq(1), bus.err.eq(1)]
            with m.Switch(bus.addr[WORD_SHIFT:REGION_SHIFT]):
                for r in CONTROL:
                    with m.Case(r.index):
                        m.d.comb += [bus.rdata.eq(values[r.name]),
                                     bus.err.eq(bus.we & (r.access == "ro"))]
                        if r.name in writable:
                            reg = writable[r.name]
                            with m.If(bus.we):
                                m.d.sync += reg.eq(bus.wdata[:len(reg)])
                        if r.name == "START":      # a run starts: the counters restart
                            m.d.comb += perf.clear.eq(bus.we & bus.wdata[0] & ~run)

    def _glb_port(self, m: Module, bus, selected, run: Signal) -> None:
        """The global buffer's host port, only while stopped; reads answer one cycle later."""
        g, host = self.arch.glb, self.glb.host
        index = bus.addr[WORD_SHIFT:REGION_SHIFT]
        ok = ~run & (index < g.banks * g.bank_words)
        read = Signal(name="glb_read")
        m.d.comb += [host.addr.eq(index[:host_addr_width(g)]), host.wdata.eq(bus.wdata)]
        with m.If(selected & (bus.we | bus.re)):
            with m.If(ok):
                m.d.comb += [host.we.eq(bus.we), host.re.eq(bus.re), bus.ack.eq(bus.we)]
            with m.Else():
                m.d.comb += [bus.ack.eq(1), bus.err.eq(1)]
        m.d.sync += read.eq(selected & bus.re & ok)
        with m.If(read):
            m.d.comb += [bus.ack.eq(1), bus.rdata.eq(host.rdata)]

    def _tile_port(self, m: Module, bus, selected) -> None:
        """Tile configuration: writes ack at once, the read-back is registered in the array;
        an offset beyond the tile's registers and windows is an error."""
        cfg = self.array.cfg
        tile_id = bus.addr[TILE_ID_SHIFT:TILE_ID_SHIFT + TILE_ID_BITS]
        reg_off = bus.addr[WORD_SHIFT:TILE_ID_SHIFT]
        ok, read = Signal(name="tile_ok"), Signal(name="tile_read")
        by_span: dict[int, list[int]] = {}
        for tid, span in tile_spans(self.array.layout).items():
            by_span.setdefault(span, []).append(tid)
        with m.Switch(tile_id):
            for span, tids in by_span.items():
                with m.Case(*tids):
                    m.d.comb += ok.eq(reg_off < span)
        m.d.comb += [cfg.addr.eq(Cat(reg_off[:TILE_ADDR_WIDTH], tile_id)),
                     cfg.wdata.eq(bus.wdata)]
        with m.If(selected & (bus.we | bus.re)):
            with m.If(ok):
                m.d.comb += [cfg.we.eq(bus.we), bus.ack.eq(bus.we)]
            with m.Else():
                m.d.comb += [bus.ack.eq(1), bus.err.eq(1)]
        m.d.sync += read.eq(selected & bus.re & ok)
        with m.If(read):
            m.d.comb += [bus.ack.eq(1), bus.rdata.eq(cfg.rdata)]
