"""Register files on MEM tiles in register-file mode (thesis §5.4: the register level of the
memory hierarchy; paper Table IV counts resnet's weight banks as memories).

A MEM tile in register-file mode (``rf_en`` = 1) holds ``rf_words`` words and has two write
controllers ``rf_write_0/1`` (``data_in0/1``) and two read controllers ``rf_read_0/1``
(``data_out0/1``, ``valid_out0/1``), each an affine controller with one address generator
``addr``. :func:`pack_register_files` puts up to two banks of a buffer (each one writer and one
reader) on one tile, bank ``k`` on ports ``k`` at address base ``sum of the earlier banks'
words``, when their words fit; otherwise one bank per tile.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ubgen.arch import Arch
from ubgen.controller import AffineMap, ControllerConfig, ControllerLayout, EncodeError, \
    encode_controller

from ..ir.ubimpl import RegisterFile
from .netlist import NetlistError

DEFAULT_RF_WORDS = 32
PORTS = 2


def rf_words(arch: Arch) -> int:
    mem = getattr(arch, "mem", None)
    return getattr(mem, "rf_words", DEFAULT_RF_WORDS) if mem is not None else DEFAULT_RF_WORDS


def rf_layouts(arch: Arch) -> dict[str, ControllerLayout]:
    """The register-file controllers of a MEM tile (names and address widths)."""
    aw = max(1, (rf_words(arch) - 1).bit_length())
    c = arch.pub.controller
    out = {f"rf_write_{k}": ControllerLayout(f"rf_write_{k}", {"addr": aw}, c)
           for k in range(PORTS)}
    out.update({f"rf_read_{k}": ControllerLayout(f"rf_read_{k}", {"addr": aw}, c)
                for k in range(PORTS)})
    return out


@dataclass
class RFTile:
    """One MEM tile in register-file mode: its banks with the write and read ports each bank's
    writers and readers take (``ports[i] = (write ports, read ports)``), the words they take,
    and the tile's core register values."""
    name: str
    banks: list[RegisterFile]
    ports: list[tuple[list[int], list[int]]] = field(default_factory=list)
    words: int = 0
    registers: dict[str, int] = field(default_factory=dict)

    def free(self) -> tuple[int, int]:
        used_w = sum(len(w) for w, _ in self.ports)
        used_r = sum(len(r) for _, r in self.ports)
        return PORTS - used_w, PORTS - used_r

    def add(self, rf: RegisterFile) -> None:
        w0, r0 = PORTS - self.free()[0], PORTS - self.free()[1]
        self.banks.append(rf)
        self.ports.append((list(range(w0, w0 + len(rf.inputs))),
                           list(range(r0, r0 + len(rf.outputs)))))
        self.words += rf.words


def _based(cfg: ControllerConfig, base: int) -> ControllerConfig:
    a = cfg.addresses["addr"]
    return ControllerConfig(cfg.extents, cfg.schedule, {"addr": AffineMap(a.start + base,
                                                                          a.strides)})


def rf_tile_registers(tile: RFTile, arch: Arch) -> dict[str, int]:
    """The core register values of a MEM tile in register-file mode holding ``tile``'s banks:
    each bank's writers on its write ports, readers on its read ports, its words from the
    address base after the earlier banks'."""
    layouts = rf_layouts(arch)
    regs = {"rf_en": 1}
    base = 0
    for rf, (wports, rports) in zip(tile.banks, tile.ports):
        cfgs = [(f"rf_write_{p}", c) for p, c in zip(wports, rf.writes)]
        cfgs += [(f"rf_read_{q}", c) for q, c in zip(rports, rf.reads)]
        for name, cfg in cfgs:
            try:
                regs.update(encode_controller(_based(cfg, base), layouts[name]))
            except EncodeError as e:
                raise NetlistError(f"buffer {rf.buffer}: register file {rf.name}: {e}") from None
        base += rf.words
    return regs


def pack_register_files(rfs: list[RegisterFile], arch: Arch) -> list[RFTile]:
    """Register-file banks on as few MEM tiles as fit, in order: a bank joins the last tile
    when that tile has write and read ports and words left for it."""
    cap = rf_words(arch)
    tiles: list[RFTile] = []
    for rf in rfs:
        if len(rf.inputs) > PORTS or len(rf.outputs) > PORTS:
            raise NetlistError(f"buffer {rf.buffer}: register file {rf.name} has "
                               f"{len(rf.inputs)} writers and {len(rf.outputs)} readers; a MEM "
                               f"tile's register file has {PORTS} write and {PORTS} read ports")
        if rf.words > cap:
            raise NetlistError(f"buffer {rf.buffer}: register file {rf.name} needs {rf.words} "
                               f"words, a MEM tile holds {cap}")
        last = tiles[-1] if tiles else None
        if (last is None or last.free()[0] < len(rf.inputs)
                or last.free()[1] < len(rf.outputs) or last.words + rf.words > cap):
            last = RFTile(f"rf{len(tiles)}", [])
            tiles.append(last)
        last.add(rf)
    for t in tiles:
        t.registers = rf_tile_registers(t, arch)
    return tiles
