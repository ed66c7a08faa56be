"""The dual-port MEM tiles as data (thesis Table 6.1, §6.1.1, §6.3): the DP-SRAM + AG buffer's
controllers and register map, and the routed ports and register maps of the two MEM tile cores
built around a dual-port ``sram_depth`` x 16 SRAM. No Amaranth here: the compiler configures
these tiles from the objects the hardware (:mod:`ubgen.dpbuf`, :mod:`ubgen.mem.dp_tile`) is
built from (docs/design.md §2).

``[mem] kind`` of a constraints file selects the MEM tile of an array (:data:`MEM_KINDS`):

* ``pub``: the Physical Unified Buffer (:mod:`ubgen.mem.spec`, docs/pub.md);
* ``dp``: DP-SRAM + AG (thesis Fig. 6.1): :class:`~ubgen.dpbuf.DPBuffer`, a write controller
  ``wr`` and a read controller ``rd`` (ID + AG + SG each), chaining; routed ports
  ``data_in0``, ``chain_in0``/``chain_valid_in0`` in, ``data_out0``/``valid_out0`` out;
* ``dp-pe``: a plain dual-port SRAM with no controllers (thesis §6.3, "machines that have simple
  dual-ported memories as physical buffers"): the write port (``wen``, ``waddr``,
  ``data_in0``) and the read port (``ren``, ``raddr``) are routed inputs driven by controllers
  the compiler synthesises on PEs; ``data_out0``/``valid_out0`` out. No configuration registers.

Timing of both (unstalled cycles): a write enabled in cycle c stores ``data_in0`` of c at the
end of c; a read fired in cycle c shows the word on ``data_out0`` with ``valid_out0`` = 1 in
cycle c+1 and sees the writes of cycles up to c-1 (a same-cycle read of the written address
returns the old word).
"""
from __future__ import annotations

from ..params import Arch, DPBufParams
from ..controller import ControllerConfig, ControllerLayout, EncodeError, encode_controller
from ..regmap import RegisterMap

__all__ = ["MEM_KINDS", "DPBUF_STATUS", "dpbuf_layouts", "dpbuf_regmap", "encode_dpbuf",
           "dp_ports", "dpram_ports", "dpram_regmap", "DPRAM_ADDR_PORTS", "mem_core_spec"]

MEM_KINDS = ("pub", "dp", "dp-pe")
DPBUF_STATUS = ("cycle_count",)
DPRAM_ADDR_PORTS = ("waddr", "raddr")


def dpbuf_layouts(params: DPBufParams) -> dict[str, ControllerLayout]:
    """The write and read controllers, each with one address generator ``addr``."""
    width = params.sram_addr_width + params.chain_bits
    return {n: ControllerLayout(n, {"addr": width}, params.controller.for_kind(n))
            for n in ("wr", "rd")}


def encode_dpbuf(configs: dict[str, ControllerConfig], params: DPBufParams) -> dict[str, int]:
    """Register values of both controllers for the affine ``configs`` (absent: disabled)."""
    layouts = dpbuf_layouts(params)
    unknown = sorted(set(configs) - set(layouts))
    if unknown:
        raise EncodeError(f"dpbuf: no controller {unknown[0]}")
    regs: dict[str, int] = {}
    for name, layout in layouts.items():
        regs.update(encode_controller(configs.get(name, ControllerConfig.disabled()), layout))
    return regs


def dpbuf_regmap(params: DPBufParams) -> RegisterMap:
    """The DP-SRAM + AG buffer's configuration space."""
    rm = RegisterMap("dpbuf")
    rm.add("chain_en", 1, doc="chaining on: accesses only when the address's high bits equal "
                              "tile_id; unowned outputs pass chain_in through")
    rm.add("tile_id", params.chain_bits, doc="this tile's ID in a chain")
    for layout in dpbuf_layouts(params).values():
        layout.add_registers(rm)
    rm.add("cycle_count", params.controller.cycle_width,
           doc="read-only status: unstalled cycles since run went high")
    return rm


def dp_ports(params: DPBufParams) -> dict[str, tuple[str, int]]:
    """The DP-SRAM + AG MEM core's routed ports: name -> (direction, width)."""
    w = params.word_width
    return {"data_in0": ("in", w), "chain_in0": ("in", w), "chain_valid_in0": ("in", 1),
            "data_out0": ("out", w), "valid_out0": ("out", 1)}


def dpram_ports(params: DPBufParams) -> dict[str, tuple[str, int]]:
    """The plain dual-port SRAM MEM core's routed ports (addresses on the word network; the
    SRAM uses their low ``sram_addr_width`` bits)."""
    w = params.word_width
    return {"data_in0": ("in", w), "wen": ("in", 1), "waddr": ("in", w), "ren": ("in", 1),
            "raddr": ("in", w), "data_out0": ("out", w), "valid_out0": ("out", 1)}


def dpram_regmap(params: DPBufParams) -> RegisterMap:
    """The plain dual-port SRAM has no configuration registers: every access is driven through
    its routed ports."""
    return RegisterMap("dpram")


def mem_core_spec(arch: Arch) -> tuple[dict[str, tuple[str, int]], RegisterMap]:
    """``(ports, register map)`` of the MEM tile core ``arch.mem.kind`` selects."""
    from .spec import mem_ports, mem_regmap
    kind = arch.mem.kind
    if kind == "dp":
        return dp_ports(arch.dpbuf), dpbuf_regmap(arch.dpbuf)
    if kind == "dp-pe":
        return dpram_ports(arch.dpbuf), dpram_regmap(arch.dpbuf)
    return mem_ports(arch.pub), mem_regmap(arch.pub, arch.mem)
