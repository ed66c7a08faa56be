"""The IO core's configuration space as data: its two controllers (``glb2f``, ``f2glb``), its
register map and stream latencies (docs/top.md; the hardware is :class:`ubgen.io.io_tile.IOCore`).
Amaranth-free, so the compiler encodes IO streams with the objects the generator builds from
(docs/design.md §2)."""
from __future__ import annotations

from ..arch import WORD_WIDTH, Arch
from ..controller import ControllerLayout
from ..glb.spec import bank_addr_width
from ..regmap import RegisterMap

__all__ = ["io_layouts", "io_regmap", "GLB2F_LATENCY", "F2GLB_LATENCY", "IO_PORTS"]

# the IO core's routed ports: name -> (direction, width)
IO_PORTS = {"io2f_16": ("out", WORD_WIDTH), "io2f_1": ("out", 1), "f2io_16": ("in", WORD_WIDTH),
           "f2io_1": ("in", 1)}

GLB2F_LATENCY = 1
F2GLB_LATENCY = 0


def io_layouts(arch: Arch) -> dict[str, ControllerLayout]:
    """The IO core's two controllers (for :func:`~ubgen.controller.encode_controller`)."""
    aw = bank_addr_width(arch.glb)
    p = arch.pub.controller
    return {n: ControllerLayout(n, {"addr": aw}, p.for_kind(n)) for n in ("glb2f", "f2glb")}


def io_regmap(arch: Arch) -> RegisterMap:
    rm = RegisterMap("io")
    for layout in io_layouts(arch).values():
        layout.add_registers(rm)
    rm.add("f2glb_bit", 1, doc="1: f2glb writes in_f2io_1 (zero-extended); 0: in_f2io_16")
    return rm
