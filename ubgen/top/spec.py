"""The address map of ``cgra_top`` as data (docs/top.md, docs/design.md §5.4): the control
and status registers, the global-buffer window and the tile configuration window. Importing it
does not import Amaranth: the compiler's bitstream assembler and the host testbench read it;
:mod:`.cgra_top` builds the hardware that decodes it."""
from __future__ import annotations

from dataclasses import dataclass

from ..arch import WORD_WIDTH, Arch
from ..array.layout import ArrayLayout
from ..array.tilespec import TILE_ADDR_WIDTH

__all__ = ["CONTROL", "ControlRegister", "GLB_BASE", "GLB_ROWS_BASE", "TILE_BASE",
           "TILE_ID_SHIFT", "TILE_ID_BITS", "WORD_SHIFT", "REGION_SHIFT", "TILE_REGION_BIT",
           "AXI_DATA_WIDTH", "AXI_ID_WIDTH", "top_address_map", "tile_address", "glb_address",
           "glb_row_address", "control_address", "tile_spans", "PORTS"]

WORD_SHIFT = 2              # byte address = word index << 2 (32-bit words)
REGION_SHIFT = 28           # bits 31..28 select the control (0) or GLB (1) region
TILE_REGION_BIT = 31        # bit 31 set: the tile configuration region
GLB_BASE = 1 << REGION_SHIFT                                  # 0x1000_0000
GLB_ROWS_BASE = 2 << REGION_SHIFT                             # 0x2000_0000
TILE_BASE = 1 << TILE_REGION_BIT                              # 0x8000_0000
TILE_ID_SHIFT = WORD_SHIFT + TILE_ADDR_WIDTH                  # reg_offset << 2: bits 17..2
TILE_ID_BITS = TILE_REGION_BIT - TILE_ID_SHIFT                # bits 30..18


AXI_DATA_WIDTH = 64         # the burst port's data bus (one GLB row of four words per beat)
AXI_ID_WIDTH = 4

# The top's two host ports (docs/top.md): what a host driver needs to know about each.
PORTS = {
    "s_axil": {"protocol": "AXI4-Lite", "data_width": 32,
               "doc": "one 32-bit access at a time; whole-word writes only (all four strobes)"},
    "s_axi": {"protocol": "AXI4", "data_width": AXI_DATA_WIDTH, "id_width": AXI_ID_WIDTH,
              "bursts": ["FIXED", "INCR", "WRAP"], "max_len": 256,
              "doc": "bursts, one at a time; a beat is one GLB row (4 words) in the glb_rows "
                     "window, else up to two 32-bit registers (each half with all four "
                     "strobes set, or none); BRESP is SLVERR if any access of the burst was "
                     "rejected, RRESP per beat"},
}


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
    ControlRegister("SHARE", 10, "rw", 1, "bit 0 = share the global buffer while running: a "
                    "host GLB access is taken when no IO tile of its bank uses that port (a "
                    "write: none writes; a read: none reads) in that cycle, else refused"),
]


def control_address(name: str) -> int:
    return next(r.index for r in CONTROL if r.name == name) << WORD_SHIFT


def glb_address(word: int) -> int:
    """The 32-bit slot of GLB word ``word`` (the word in its low 16 bits)."""
    return GLB_BASE + (word << WORD_SHIFT)


def glb_row_address(word: int) -> int:
    """The byte address of GLB word ``word`` in the row window (16-bit words packed, four to
    a 64-bit row, little-endian)."""
    return GLB_ROWS_BASE + 2 * word


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
        "glb_rows": {"base": GLB_ROWS_BASE, "stride": WORD_WIDTH // 8, "row_bytes": 8,
                     "bytes": g.banks * g.bank_words * WORD_WIDTH // 8,
                     "doc": "the same words packed (byte address = base + 2 * word, "
                            "little-endian), any byte strobes; only while START = 0"},
        "ports": PORTS,
        "tiles": {"base": TILE_BASE, "tile_id_shift": TILE_ID_SHIFT,
                  "reg_offset_shift": WORD_SHIFT,
                  "doc": "register address = tile base + 4 * offset", "kinds": kinds,
                  "list": tiles},
        "illegal": "SLVERR on read and write",
    }
