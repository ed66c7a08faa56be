"""``cgra_top``: the CGRA array, the global buffer and an AXI4-Lite slave for the host
(DESIGN §5.4, thesis §7.1 Fig. 7.1).

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

from dataclasses import dataclass

from amaranth.hdl import Cat, Const, Module, Signal
from amaranth.lib import wiring

from ..arch import Arch
from ..array.cgra import CGRA
from ..array.layout import ArrayLayout
from ..array.tile import TILE_ADDR_WIDTH
from ..glb.global_buffer import GlobalBuffer, bank_addr_width, host_addr_width
from .axil import AXILiteSlave, axil_members
from .counters import WriteCounters

__all__ = ["CGRATop", "CONTROL", "ControlRegister", "GLB_BASE", "TILE_BASE", "top_address_map",
           "tile_address", "glb_address", "control_address"]

AXIL_PREFIX = "s_axil"
GLB_BASE = 0x1000_0000
TILE_BASE = 0x8000_0000
TILE_ID_SHIFT = 18          # byte address bits: reg_offset << 2 occupies bits 17..2
TILE_ID_BITS = 13           # bits 30..18


@dataclass(frozen=True)
class ControlRegister:
    name: str
    index: int
    access: str           # "rw" | "ro"
    width: int
    doc: str


CONTROL = [
    ControlRegister("START", 0, "rw", 1, "bit 0 = run: write 1 to start, 0 to stop (stopping "
                    "resets the cycle counter and restarts every controller)"),
    ControlRegister("STALL", 1, "rw", 1, "bit 0 = stall: freezes every datapath register, "
                    "counter and controller of the array"),
    ControlRegister("DONE", 2, "ro", 1, "bit 0: running and CYCLE >= DONE_CYCLE"),
    ControlRegister("CYCLE", 3, "ro", 32, "unstalled cycles since START (0 while stopped)"),
    ControlRegister("ERROR", 4, "ro", 2, "bit 0: an array error flag (MEM SRAM conflict or IO "
                    "port collision); bit 1: two IO tiles hit one GLB bank in one cycle"),
    ControlRegister("DONE_CYCLE", 5, "rw", 32, "cycle count at which the application is done"),
    ControlRegister("INFO", 6, "ro", 32, "rows[7:0], columns[15:8], GLB banks[23:16], "
                    "log2(GLB bank words)[31:24]"),
    ControlRegister("FIRST_WRITE", 7, "ro", 32, "CYCLE at the array's first GLB write of the "
                    "run (valid when WRITES > 0; cleared by START = 1, held after the run)"),
    ControlRegister("LAST_WRITE", 8, "ro", 32, "CYCLE at the array's last GLB write of the run "
                    "(valid when WRITES > 0; cleared by START = 1, held after the run)"),
    ControlRegister("WRITES", 9, "ro", 32, "GLB words the array wrote during the run (cleared "
                    "by START = 1, held after the run)"),
]


def control_address(name: str) -> int:
    return next(r.index for r in CONTROL if r.name == name) * 4


def glb_address(word: int) -> int:
    return GLB_BASE + 4 * word


def tile_address(tile_id: int, reg_offset: int) -> int:
    return TILE_BASE | tile_id << TILE_ID_SHIFT | reg_offset << 2


def tile_spans(layout: ArrayLayout) -> dict[int, int]:
    """Tile id -> number of configuration offsets (registers and windows) it answers."""
    spans = {}
    for pos in layout.positions():
        rm = layout.specs[pos.kind].regmap
        spans[pos.tile_id] = max([r.offset + 1 for r in rm.registers] +
                                 [w.offset + w.size for w in rm.windows] + [0])
    return spans


def top_address_map(arch: Arch, cores=None) -> dict:
    """The top's AXI address map as data (RegisterMap-like JSON)."""
    layout = ArrayLayout(arch, cores)
    g = arch.glb
    kinds = {kind: {"registers": [{"name": r.name, "offset": r.offset, "width": r.width,
                                   "reset": r.reset, "doc": r.doc} for r in spec.regmap.registers],
                    "windows": [{"name": w.name, "offset": w.offset, "size": w.size,
                                 "width": w.width, "doc": w.doc} for w in spec.regmap.windows]}
             for kind, spec in layout.specs.items()}
    tiles = [{"tile_id": pos.tile_id, "row": pos.row, "col": pos.col, "kind": pos.kind,
              "base": tile_address(pos.tile_id, 0)} for pos in layout.positions()]
    return {
        "block": "cgra_top", "arch": arch.name, "data_width": 32, "address_unit": "byte",
        "control": [{"name": r.name, "address": r.index * 4, "access": r.access,
                     "width": r.width, "doc": r.doc} for r in CONTROL],
        "glb": {"base": GLB_BASE, "stride": 4, "word_width": 16, "banks": g.banks,
                "bank_words": g.bank_words, "order": "bank-major",
                "doc": "host access only while START = 0"},
        "tiles": {"base": TILE_BASE, "tile_id_shift": TILE_ID_SHIFT, "reg_offset_shift": 2,
                  "doc": "register address = tile base + 4 * offset", "kinds": kinds,
                  "list": tiles},
        "illegal": "SLVERR on read and write",
    }


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
        arch, g = self.arch, self.arch.glb
        array = m.submodules.array = self.array
        glb = m.submodules.glb = self.glb
        axil = m.submodules.axil = AXILiteSlave(AXIL_PREFIX)
        for name in axil_members(AXIL_PREFIX):
            if axil.signature.members[name].flow == wiring.In:
                m.d.comb += getattr(axil, name).eq(getattr(self, name))
            else:
                m.d.comb += getattr(self, name).eq(getattr(axil, name))
        for c in self.io_columns:
            wiring.connect(m, getattr(array, f"glb_{c}"), glb.io_port(c))

        run, stall = Signal(), Signal()
        target = Signal(32)
        m.d.comb += [array.run.eq(run), array.stall.eq(stall), glb.run.eq(run)]
        done = Signal()
        m.d.comb += done.eq(run & (array.cycle_count >= target))
        perf = m.submodules.perf = WriteCounters(max(1, len(self.io_columns)))
        m.d.comb += [perf.run.eq(run), perf.cycle.eq(array.cycle_count)]
        for i, c in enumerate(self.io_columns):
            m.d.comb += perf.we[i].eq(getattr(array, f"glb_{c}").we)

        bus = axil.bus
        addr = bus.addr
        region_ctrl = addr[28:] == 0
        region_glb = addr[28:] == GLB_BASE >> 28
        region_tile = addr[31]
        ack, err, rdata = bus.ack, bus.err, bus.rdata

        # --- control/status registers (ack in the strobe's cycle)
        values = {"START": run, "STALL": stall, "DONE": done, "CYCLE": array.cycle_count,
                  "ERROR": Cat(array.error, glb.error), "DONE_CYCLE": target,
                  "INFO": Const(arch.array.rows | arch.array.columns << 8 | g.banks << 16 |
                                bank_addr_width(g) << 24, 32),
                  "FIRST_WRITE": perf.first, "LAST_WRITE": perf.last, "WRITES": perf.writes}
        writable = {"START": run, "STALL": stall, "DONE_CYCLE": target}
        assert set(writable) == {r.name for r in CONTROL if r.access == "rw"}
        with m.If(region_ctrl & (bus.we | bus.re)):
            m.d.comb += [ack.eq(1), err.eq(1)]
            with m.Switch(addr[2:28]):
                for r in CONTROL:
                    with m.Case(r.index):
                        m.d.comb += [rdata.eq(values[r.name]),
                                     err.eq(bus.we & (r.access == "ro"))]
                        if r.name in writable:
                            reg = writable[r.name]
                            with m.If(bus.we):
                                m.d.sync += reg.eq(bus.wdata[:len(reg)])
                        if r.name == "START":      # a run starts: the counters restart
                            m.d.comb += perf.clear.eq(bus.we & bus.wdata[0] & ~run)

        # --- global buffer: host port, only while stopped; reads answer one cycle later
        glb_words = g.banks * g.bank_words
        glb_index = addr[2:28]
        glb_ok = ~run & (glb_index < glb_words)
        glb_read = Signal()
        m.d.comb += [glb.host.addr.eq(glb_index[:host_addr_width(g)]),
                     glb.host.wdata.eq(bus.wdata)]
        with m.If(region_glb & (bus.we | bus.re)):
            with m.If(glb_ok):
                m.d.comb += [glb.host.we.eq(bus.we), glb.host.re.eq(bus.re), ack.eq(bus.we)]
            with m.Else():
                m.d.comb += [ack.eq(1), err.eq(1)]
        m.d.sync += glb_read.eq(region_glb & bus.re & glb_ok)
        with m.If(glb_read):
            m.d.comb += [ack.eq(1), rdata.eq(glb.host.rdata)]

        # --- tile configuration: writes ack at once, read-back is registered in the array
        tile_id = addr[TILE_ID_SHIFT:TILE_ID_SHIFT + TILE_ID_BITS]
        reg_off = addr[2:TILE_ID_SHIFT]
        spans = tile_spans(self.array.layout)
        tile_ok = Signal()
        by_span: dict[int, list[int]] = {}
        for tid, span in spans.items():
            by_span.setdefault(span, []).append(tid)
        with m.Switch(tile_id):
            for span, tids in by_span.items():
                with m.Case(*tids):
                    m.d.comb += tile_ok.eq(reg_off < span)
        tile_read = Signal()
        m.d.comb += [array.cfg.addr.eq(Cat(reg_off[:TILE_ADDR_WIDTH],
                                           tile_id)),
                     array.cfg.wdata.eq(bus.wdata)]
        with m.If(region_tile & (bus.we | bus.re)):
            with m.If(tile_ok):
                m.d.comb += [array.cfg.we.eq(bus.we), ack.eq(bus.we)]
            with m.Else():
                m.d.comb += [ack.eq(1), err.eq(1)]
        m.d.sync += tile_read.eq(region_tile & bus.re & tile_ok)
        with m.If(tile_read):
            m.d.comb += [ack.eq(1), rdata.eq(array.cfg.rdata)]

        # --- anything else
        with m.If(~region_ctrl & ~region_glb & ~region_tile & (bus.we | bus.re)):
            m.d.comb += [ack.eq(1), err.eq(1)]
        return m
