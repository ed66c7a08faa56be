"""``cgra_top``: the CGRA array, the global buffer and an AXI4-Lite slave for the host
(docs/design.md §5.4, thesis §7.1 Fig. 7.1).

Ports: ``clk``, ``rst`` and the AXI4-Lite slave ``s_axil_*`` (32-bit data, byte addresses).
Address map (:func:`top_address_map` exports it as data; docs/top.md describes it):

* ``0x0000_0000 + 4*i``: control/status registers :data:`CONTROL` (``START``, ``STALL``,
  ``DONE``, ``CYCLE``, ``ERROR``, ``DONE_CYCLE``, ``INFO``);
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

from ..arch import WORD_WIDTH, Arch
from ..array.cgra import CGRA
from ..array.layout import ArrayLayout
from ..array.tilespec import TILE_ADDR_WIDTH
from ..glb.global_buffer import GlobalBuffer, bank_addr_width, host_addr_width
from .axil import AXILiteSlave, axil_members

__all__ = ["CGRATop", "CONTROL", "ControlRegister", "GLB_BASE", "TILE_BASE", "top_address_map",
           "tile_address", "glb_address", "control_address"]

AXIL_PREFIX = "s_axil"
WORD_SHIFT = 2              # byte address = word index << 2 (32-bit words)
REGION_SHIFT = 28           # bits 31..28 select the control (0) or GLB (1) region
TILE_REGION_BIT = 31        # bit 31 set: the tile configuration region
GLB_BASE = 1 << REGION_SHIFT                                  # 0x1000_0000
TILE_BASE = 1 << TILE_REGION_BIT                              # 0x8000_0000
TILE_ID_SHIFT = WORD_SHIFT + TILE_ADDR_WIDTH                  # reg_offset << 2: bits 17..2
TILE_ID_BITS = TILE_REGION_BIT - TILE_ID_SHIFT                # bits 30..18


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
]


def control_address(name: str) -> int:
    return next(r.index for r in CONTROL if r.name == name) << WORD_SHIFT


def glb_address(word: int) -> int:
    return GLB_BASE + (word << WORD_SHIFT)


def tile_address(tile_id: int, reg_offset: int) -> int:
    return TILE_BASE | tile_id << TILE_ID_SHIFT | reg_offset << WORD_SHIFT


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
        "control": [{"name": r.name, "address": control_address(r.name), "access": r.access,
                     "width": r.width, "doc": r.doc} for r in CONTROL],
        "glb": {"base": GLB_BASE, "stride": 1 << WORD_SHIFT, "word_width": WORD_WIDTH,
                "banks": g.banks,
                "bank_words": g.bank_words, "order": "bank-major",
                "doc": "host access only while START = 0"},
        "tiles": {"base": TILE_BASE, "tile_id_shift": TILE_ID_SHIFT,
                  "reg_offset_shift": WORD_SHIFT,
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
        values = {"START": run, "STALL": stall, "DONE": done, "CYCLE": array.cycle_count,
                  "ERROR": Cat(array.error, self.glb.error), "DONE_CYCLE": target,
                  "INFO": Const(arch.array.rows | arch.array.columns << 8 | g.banks << 16 |
                                bank_addr_width(g) << 24, 32)}
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
