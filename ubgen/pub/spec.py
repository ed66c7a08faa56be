"""The PUB's configuration space as data: its controllers and register map (thesis §6.1.3,
Fig. 6.4; docs/pub.md, docs/regmap.md). Amaranth-free, so the compiler reads the same objects the
generator (:mod:`ubgen.pub.pub`) builds from (docs/design.md §2)."""
from __future__ import annotations

from ..arch import PUBParams, _clog2
from ..controller import ControllerLayout
from ..regmap import RegisterMap

__all__ = ["pub_layouts", "pub_regmap", "PUB_STATUS"]

PUB_STATUS = ("error", "cycle_count")


def pub_layouts(params: PUBParams) -> dict[str, ControllerLayout]:
    """The controllers of a PUB, in register-map order, with their address-generator widths."""
    sram = params.sram_addr_width + params.chain_bits
    c = params.controller
    out = {}
    for p in range(params.input_ports):
        out[f"in2agg_{p}"] = ControllerLayout(f"in2agg_{p}", {"agg": _clog2(params.agg_words)},
                                              c.for_kind("in2agg"))
    for p in range(params.input_ports):
        out[f"agg2sram_{p}"] = ControllerLayout(
            f"agg2sram_{p}", {"agg": _clog2(params.agg_depth), "sram": sram},
            c.for_kind("agg2sram"))
    for q in range(params.output_ports):
        out[f"sram2tb_{q}"] = ControllerLayout(
            f"sram2tb_{q}", {"sram": sram, "tb": _clog2(params.tb_depth)}, c.for_kind("sram2tb"))
    for q in range(params.output_ports):
        out[f"tb2out_{q}"] = ControllerLayout(f"tb2out_{q}", {"tb": _clog2(params.tb_words)},
                                              c.for_kind("tb2out"))
    return out


def _aligned(n: int, size: int) -> int:
    return -(-n // size) * size


def pub_regmap(params: PUBParams) -> RegisterMap:
    """The PUB's configuration space (docs/design.md §2: the compiler reads this same object)."""
    rm = RegisterMap("pub")
    rm.add("mode", 1, doc="0: unified buffer, 1: ROM (lookup table read at data_in[0])")
    rm.add("chain_en", 1, doc="chaining on: SRAM accesses only when the address's high bits "
                              "equal tile_id; unowned outputs pass chain_in through")
    rm.add("tile_id", params.chain_bits, doc="this tile's ID in a chain")
    for layout in pub_layouts(params).values():
        layout.add_registers(rm)
    rm.add("error", 1, doc="read-only status: sticky SRAM port conflict; write 1 to clear")
    rm.add("cycle_count", params.controller.cycle_width,
           doc="read-only status: unstalled cycles since run went high")
    size = params.capacity_words
    rm.add_window("sram", _aligned(len(rm.registers), size), size, params.word_width,
                  doc="SRAM contents, one word per address (writes only, while run = 0)")
    return rm
