"""``cgra_top``: the CGRA array, the global buffer and two host ports, an AXI4-Lite slave and an
AXI4 burst slave (docs/design.md §5.4, thesis §7.1 Fig. 7.1).

Ports: ``clk``, ``rst``, the AXI4-Lite slave ``s_axil_*`` (32-bit data) and the AXI4 slave
``s_axi_*`` (64-bit data, bursts; :mod:`.axi4`), both with byte addresses into one address map
(:func:`top_address_map` exports it as data; docs/top.md describes it):

* ``0x0000_0000 + 4*i``: control/status registers :data:`CONTROL` (``START``, ``STALL``,
  ``DONE``, ``CYCLE``, ``ERROR``, ``DONE_CYCLE``, ``INFO``) and the performance counters
  ``FIRST_WRITE``, ``LAST_WRITE``, ``WRITES`` (:mod:`.counters`);
* ``0x1000_0000 + 4*w``: global-buffer word ``w`` (16 bits, bank-major: ``w = bank *
  bank_words + offset``); only while not running (``START`` = 0), or with ``SHARE`` = 1 in a
  cycle no IO tile of the bank uses that port (:class:`~ubgen.glb.global_buffer.GlobalBuffer`);
* ``0x2000_0000 + 2*w``: the same words packed, four to a 64-bit row (the burst port moves a
  row per beat); byte strobes; only while not running;
* ``0x8000_0000 | tile_id << 18 | reg_offset << 2``: tile configuration register (write and
  read-back), for every register of :func:`ubgen.array.graph.full_regmap`;
* anything else, a write to a read-only register, a GLB access while running, a write of part
  of a 32-bit register or (AXI4-Lite) an unaligned address: SLVERR, and nothing changes.

Both ports reach the decoder through :class:`~.hostbus.HostArbiter` (the AXI4-Lite port's
accesses first); every write takes effect in the cycle it is taken and every read is answered
one cycle later (:mod:`.hostbus`).

A run: configure the tiles, load the GLB, write ``DONE_CYCLE`` (the compiler's completion
cycle), write ``START`` = 1; poll ``DONE`` (= running and ``CYCLE >= DONE_CYCLE``); write
``START`` = 0 (which resets the cycle counter and restarts every controller); read the GLB.
``STALL`` = 1 freezes the array (every datapath register, counter and controller).
"""
from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring

from ..arch import Arch
from ..array.cgra import CGRA
from ..array.tilespec import TILE_ADDR_WIDTH
from ..glb.global_buffer import GlobalBuffer, bank_addr_width
from ..glb.spec import ROW_BYTES, ROW_WORDS, WORD_WIDTH, host_row_width
from .axi4 import AXI4Slave, axi4_members
from .axil import AXILiteSlave, axil_members
from .hostbus import HostArbiter
from .spec import (AXI_ID_WIDTH, CONTROL, GLB_BASE, GLB_ROWS_BASE, REGION_SHIFT, TILE_BASE,
                   TILE_ID_BITS, TILE_ID_SHIFT, TILE_REGION_BIT, WORD_SHIFT, ControlRegister,
                   control_address, glb_address, tile_address, tile_spans, top_address_map)
from .counters import WriteCounters

__all__ = ["CGRATop", "CONTROL", "ControlRegister", "GLB_BASE", "TILE_BASE", "top_address_map",
           "tile_address", "glb_address", "control_address"]

AXIL_PREFIX = "s_axil"
AXI_PREFIX = "s_axi"
HALF = 32                   # a 32-bit register's half of the host bus's 64-bit data


class CGRATop(wiring.Component):
    """AXI4-Lite and AXI4 slaves -> control/status registers, GLB host port, array config bus.

    ``cores``, ``tile_modules`` and ``edge_tiles`` are passed to :class:`~ubgen.array.cgra.CGRA`
    (tests may use other cores; Verilog output uses separately generated tile modules, FPGA
    synthesis tiles built for their edges).
    """

    def __init__(self, arch: Arch, cores=None, tile_modules=None, edge_tiles: bool = False):
        self.arch = arch
        self.array = CGRA(arch, cores, tile_modules, edge_tiles)
        self.io_columns = [c for c in range(arch.array.columns)
                           if f"glb_{c}" in self.array.signature.members]
        self.glb = GlobalBuffer(arch.glb, self.io_columns)
        super().__init__({**axil_members(AXIL_PREFIX), **axi4_members(AXI_PREFIX, AXI_ID_WIDTH)})

    def _expose(self, m: Module, port, members: dict) -> None:
        for name in members:
            if port.signature.members[name].flow == wiring.In:
                m.d.comb += getattr(port, name).eq(getattr(self, name))
            else:
                m.d.comb += getattr(self, name).eq(getattr(port, name))

    def elaborate(self, platform):
        m = Module()
        m.submodules.array, m.submodules.glb = self.array, self.glb
        axil = m.submodules.axil = AXILiteSlave(AXIL_PREFIX)
        axi = m.submodules.axi = AXI4Slave(AXI_PREFIX, AXI_ID_WIDTH, wide_shift=REGION_SHIFT,
                                           wide_value=GLB_ROWS_BASE >> REGION_SHIFT)
        arb = m.submodules.arbiter = HostArbiter()
        self._expose(m, axil, axil_members(AXIL_PREFIX))
        self._expose(m, axi, axi4_members(AXI_PREFIX, AXI_ID_WIDTH))
        wiring.connect(m, axil.bus, arb.lite)
        wiring.connect(m, axi.bus, arb.burst)
        for c in self.io_columns:
            wiring.connect(m, getattr(self.array, f"glb_{c}"), self.glb.io_port(c))
        run = Signal(name="run")
        m.d.comb += [self.array.run.eq(run), self.glb.run.eq(run)]
        bus = arb.target
        m.d.comb += bus.gnt.eq(1)                  # the decoder takes every request
        addr = bus.addr
        region = addr[REGION_SHIFT:]
        regions = {"ctrl": region == 0, "glb": region == GLB_BASE >> REGION_SHIFT,
                   "rows": region == GLB_ROWS_BASE >> REGION_SHIFT,
                   "tile": addr[TILE_REGION_BIT]}
        # a 32-bit register: its half of the data and of the strobes
        half = addr[WORD_SHIFT]
        wdata32 = bus.wdata.word_select(half, HALF)
        whole = bus.wstrb.word_select(half, HALF // 8) == (1 << HALF // 8) - 1
        # every read is answered one cycle later: what it read and whether it was refused
        rsel = {k: Signal(name=f"read_{k}") for k in regions}
        rerr, rdata_ctrl = Signal(name="read_err"), Signal(HALF, name="read_ctrl")
        m.d.sync += [bus.rvalid.eq(bus.re), rerr.eq(bus.re)]     # refused unless a region takes it
        m.d.sync += [r.eq(0) for r in rsel.values()]
        ctx = _Decode(m, bus, wdata32, whole, rsel, rerr)
        self._control(m, ctx, regions["ctrl"], run, rdata_ctrl)
        self._glb_port(m, ctx, regions["glb"], regions["rows"], run)
        self._tile_port(m, ctx, regions["tile"])
        with m.If(~regions["ctrl"] & ~regions["glb"] & ~regions["rows"] & ~regions["tile"]):
            m.d.comb += bus.werr.eq(bus.we)                      # anything else
        host = self.glb.host
        word = Signal(WORD_WIDTH, name="read_glb_word")
        lane = Signal(range(ROW_WORDS), name="read_glb_lane")
        with m.If(bus.re):
            m.d.sync += lane.eq(addr[WORD_SHIFT:WORD_SHIFT + len(lane)])
        m.d.comb += word.eq(host.rdata.word_select(lane, WORD_WIDTH))
        m.d.comb += bus.rerr.eq(rerr)
        with m.If(rsel["ctrl"]):
            m.d.comb += bus.rdata.eq(Cat(rdata_ctrl, rdata_ctrl))
        with m.Elif(rsel["glb"]):
            m.d.comb += bus.rdata.eq(Cat(word, Const(0, HALF - WORD_WIDTH), word,
                                         Const(0, HALF - WORD_WIDTH)))
        with m.Elif(rsel["rows"]):
            m.d.comb += bus.rdata.eq(host.rdata)
        with m.Elif(rsel["tile"]):
            m.d.comb += bus.rdata.eq(Cat(self.array.cfg.rdata, self.array.cfg.rdata))
        return m

    def _control(self, m: Module, ctx: "_Decode", selected, run: Signal, rdata) -> None:
        """The control/status registers :data:`CONTROL` (the read value registered)."""
        arch, g, array, bus = self.arch, self.arch.glb, self.array, ctx.bus
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
        share = Signal(name="share")
        m.d.comb += self.glb.share.eq(share)
        values["SHARE"] = share
        writable = {"START": run, "STALL": stall, "DONE_CYCLE": target, "SHARE": share}
        assert set(writable) == {r.name for r in CONTROL if r.access == "rw"}
        with m.If(selected):
            m.d.comb += bus.werr.eq(bus.we)
            with m.Switch(bus.addr[WORD_SHIFT:REGION_SHIFT]):
                for r in CONTROL:
                    with m.Case(r.index):
                        ok = ctx.whole if r.name in writable else Const(0)
                        ctx.accept(selected, "ctrl", write_ok=ok, read_ok=Const(1))
                        m.d.sync += rdata.eq(values[r.name])
                        if r.name in writable:
                            reg = writable[r.name]
                            with m.If(bus.we & ok):
                                m.d.sync += reg.eq(ctx.wdata32[:len(reg)])
                        if r.name == "START":      # a run starts: the counters restart
                            m.d.comb += perf.clear.eq(bus.we & ok & ctx.wdata32[0] & ~run)

    def _glb_port(self, m: Module, ctx: "_Decode", words, rows, run: Signal) -> None:
        """The global buffer's host port, only while stopped: the word window (one 16-bit
        word per 32-bit register, whole writes) and the row window (a row under the byte
        strobes); the read data comes from the GLB one cycle later."""
        g, host, bus = self.arch.glb, self.glb.host, ctx.bus
        addr = bus.addr
        word = addr[WORD_SHIFT:REGION_SHIFT]
        row = addr[3:REGION_SHIFT]
        nrows = g.banks * g.bank_words // ROW_WORDS
        # while running only with SHARE = 1 and the bank's port free (GlobalBuffer.host_wok/rok)
        word_in, row_in = word < g.banks * g.bank_words, row < nrows
        wok, rok = self.glb.host_wok, self.glb.host_rok
        lane = word[:(ROW_WORDS - 1).bit_length()]
        per_word = ROW_BYTES // ROW_WORDS
        lane_be = Cat(*(Cat(*([lane == i] * per_word)) for i in range(ROW_WORDS)))
        with m.If(words):
            m.d.comb += [host.addr.eq(word[(ROW_WORDS - 1).bit_length():][:host_row_width(g)]),
                         host.wdata.eq(Cat(*([ctx.wdata32[:WORD_WIDTH]] * ROW_WORDS))),
                         host.be.eq(lane_be)]
            ctx.accept(words, "glb", write_ok=word_in & wok & ctx.whole, read_ok=word_in & rok)
            m.d.comb += [host.we.eq(bus.we & word_in & wok & ctx.whole),
                         host.re.eq(bus.re & word_in & rok)]
        with m.If(rows):
            m.d.comb += [host.addr.eq(row[:host_row_width(g)]), host.wdata.eq(bus.wdata),
                         host.be.eq(bus.wstrb)]
            ctx.accept(rows, "rows", write_ok=row_in & wok, read_ok=row_in & rok)
            m.d.comb += [host.we.eq(bus.we & row_in & wok), host.re.eq(bus.re & row_in & rok)]

    def _tile_port(self, m: Module, ctx: "_Decode", selected) -> None:
        """Tile configuration: writes take effect at once, the read-back is registered in the
        array; an offset beyond the tile's registers and windows is an error.

        The array's configuration bus carries an access only in its cycle: the address in a
        cycle with a read or write of the tile region, the data with a write, 0 otherwise. So
        every other access (polling ``DONE``, the GLB, the control registers) leaves the bus
        that reaches every tile still, and no tile's register decoders switch with it
        (docs/energy.md "An unused tile"). The read-back needs the address only in the read's
        cycle (the array registers it), so no access takes a cycle more."""
        cfg, bus = self.array.cfg, ctx.bus
        tile_id = bus.addr[TILE_ID_SHIFT:TILE_ID_SHIFT + TILE_ID_BITS]
        reg_off = bus.addr[WORD_SHIFT:TILE_ID_SHIFT]
        ok = Signal(name="tile_ok")
        by_span: dict[int, list[int]] = {}
        for tid, span in tile_spans(self.array.layout).items():
            by_span.setdefault(span, []).append(tid)
        with m.Switch(tile_id):
            for span, tids in by_span.items():
                with m.Case(*tids):
                    m.d.comb += ok.eq(reg_off < span)
        with m.If(selected & (bus.we | bus.re)):
            m.d.comb += cfg.addr.eq(Cat(reg_off[:TILE_ADDR_WIDTH], tile_id))
        with m.If(selected & bus.we):
            m.d.comb += cfg.wdata.eq(ctx.wdata32)
        with m.If(selected):
            ctx.accept(selected, "tile", write_ok=ok & ctx.whole, read_ok=ok)
            m.d.comb += cfg.we.eq(bus.we & ok & ctx.whole)


class _Decode:
    """The decoder's shared view of the host bus: the request, the addressed 32-bit half of the
    write data and whether its strobes are whole, and the bookkeeping of the read answers."""

    def __init__(self, m: Module, bus, wdata32, whole, rsel: dict, rerr: Signal):
        self.m, self.bus, self.wdata32, self.whole = m, bus, wdata32, whole
        self.rsel, self.rerr = rsel, rerr

    def accept(self, selected, region: str, *, write_ok, read_ok) -> None:
        """In ``region`` (selected): a write is refused unless ``write_ok``; a read is answered
        from the region, refused unless ``read_ok``."""
        m, bus = self.m, self.bus
        with m.If(selected):
            m.d.comb += bus.werr.eq(bus.we & ~write_ok)
            with m.If(bus.re):
                m.d.sync += [self.rsel[region].eq(1), self.rerr.eq(~read_ok)]
