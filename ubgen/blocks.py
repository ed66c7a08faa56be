"""The memory blocks that have Verilog of their own (the PUB and the DP-SRAM baseline) and their
register maps, for an arch (docs/pub.md, docs/regmap.md): what ``ubgen verilog`` writes and what
the RTL tests and the RTL cross-check build."""
from __future__ import annotations

from .arch import Arch
from .mem.spec import mem_regmap
from .pub.spec import pub_regmap
from .regmap import RegisterMap

__all__ = ["BLOCKS", "REGMAP_BLOCKS", "block_regmap", "block_component", "block_verilog",
           "generate_outputs"]

BLOCKS = ("pub", "dpbuf")                  # blocks with Verilog of their own
REGMAP_BLOCKS = BLOCKS + ("mem",)          # the MEM tile core: the PUB + its register file


def block_regmap(arch: Arch, block: str) -> RegisterMap:
    """The register map of ``block`` for ``arch`` (the same object the RTL is built from)."""
    from .dpbuf import dpbuf_regmap
    if block == "mem":
        return mem_regmap(arch.pub, arch.mem)
    return pub_regmap(arch.pub) if block == "pub" else dpbuf_regmap(arch.dpbuf)


def block_component(arch: Arch, block: str):
    """The Amaranth component of ``block`` (``pub`` or ``dpbuf``)."""
    from .dpbuf import DPBuffer
    from .pub.pub import PhysicalUnifiedBuffer
    return PhysicalUnifiedBuffer(arch.pub) if block == "pub" else DPBuffer(arch.dpbuf)


def block_verilog(arch: Arch, block: str) -> str:
    """Verilog of ``block``; the top module is named after the block."""
    from amaranth.back import verilog
    return verilog.convert(block_component(arch, block), name=block)


def generate_outputs(arch: Arch) -> dict[str, str]:
    """Every file ``ubgen verilog`` writes, by file name."""
    out = {}
    for block in BLOCKS:
        out[f"{block}.v"] = block_verilog(arch, block)
        out[f"{block}_regmap.json"] = block_regmap(arch, block).to_json(indent=2) + "\n"
    return out
