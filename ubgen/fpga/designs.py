"""The registry of designs the FPGA flow can build (docs/fpga.md): the bare blocks, the tiles as
the array builds them and the whole ``cgra_4x4`` top. :func:`register_design` adds one with one
line."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .common import DEFAULT_MAPPING

__all__ = ["FPGADesign", "DESIGNS", "register_design", "app_design", "folded_design"]


@dataclass(frozen=True)
class FPGADesign:
    """A design the flow can build: a factory from the architecture and the ports put on pins.

    ``pins`` names the design's ports that get package pins (one register stage each); all other
    ports go through the wrapper's scan chain. ``arch`` is the architecture used when the caller
    names none; ``devices`` maps a target name to the nextpnr device arguments used when the
    caller names none (else the target's own). ``sources`` (optional, ``(Arch) -> {file name:
    Verilog text}``) gives the modules the design instantiates by name; Yosys reads them with
    the wrapper's ``top.v``. ``flatten=False`` synthesizes module by module (``-noflatten``): each
    tile kind once, the counts summed over the hierarchy, no optimization across modules.
    ``mapping`` is the LUT mapping used when the caller names none (:data:`MAPPINGS`).
    ``ignore_loops``: the design has structural combinational loops (the array's bypassable
    switch boxes), so nextpnr is run with ``--ignore-loops`` unless the caller says otherwise.
    ``prepare``: Yosys commands run on the read Verilog before the synthesis script.
    ``check`` (optional, ``(Arch, progress) -> dict`` with ``ok`` and ``mismatches``): a
    simulation the flow runs before synthesis, which must pass (the folded array, :mod:`.fold`).
    ``key``: what else the elaborated Verilog depends on (the Verilog cache's key).
    """
    name: str
    build: Callable  # (Arch) -> wiring.Component
    pins: tuple[str, ...]
    doc: str = ""
    arch: str = "pub"
    devices: dict = field(default_factory=dict, compare=False)
    sources: Callable | None = None
    flatten: bool = True
    mapping: str = DEFAULT_MAPPING
    ignore_loops: bool = False
    prepare: str = ""
    check: Callable | None = field(default=None, compare=False)
    key: str = ""


DESIGNS: dict[str, FPGADesign] = {}


def register_design(name: str, build: Callable, pins: tuple[str, ...], doc: str = "", *,
                    arch: str = "pub", devices: dict[str, tuple[str, ...]] | None = None,
                    sources: Callable | None = None, flatten: bool = True,
                    mapping: str = DEFAULT_MAPPING, ignore_loops: bool = False) -> None:
    """Add a design to the registry (e.g. a PE or MEM tile): one line per design."""
    DESIGNS[name] = FPGADesign(name, build, tuple(pins), doc, arch,
                               {t: tuple(d) for t, d in (devices or {}).items()}, sources,
                               flatten, mapping, ignore_loops)


def _build_pub(arch):
    from ..pub.pub import PhysicalUnifiedBuffer
    return PhysicalUnifiedBuffer(arch.pub)


def _build_dpbuf(arch):
    from ..dpbuf import DPBuffer
    return DPBuffer(arch.dpbuf)


def _build_pe(arch):
    from ..pe.pe import PE
    return PE(arch)


def _build_tile(kind: str):
    """A full array tile of ``kind`` as :class:`ubgen.array.cgra.CGRA` builds it: the same
    :class:`~ubgen.array.layout.ArrayLayout` spec (tracks, switch-box topology, pipeline
    registers, register map) and core factory."""
    def build(arch):
        from ..array.layout import ArrayLayout
        from ..array.tile import Tile
        layout = ArrayLayout(arch)
        return Tile(layout.specs[kind], layout.cores[kind](arch))
    return build


def _build_cgra_top(arch):
    """The top as :func:`ubgen.top.write_verilog` writes it, except that each tile is built for
    the sides of its position on the array edge (``edge_tiles``, :class:`ubgen.array.tile.Tile`
    ``edges``: same ports, registers and behaviour in the array): tiles are instances of one
    module per tile kind and edge situation (:func:`_tile_sources`). A flat Amaranth netlist of
    the whole mesh would hold the structural combinational loops through bypassed switch boxes
    (never closed by a legal configuration) that Amaranth's netlist check rejects. Synthesized
    with ``-noflatten``: the flattened mesh's loops exhaust the call stack of Yosys's
    ``TopoSort`` (``check``, ``opt_expr``; WebAssembly build), which is why the edge tie-offs
    are built into the tiles instead of being propagated by Yosys; nextpnr flattens the
    hierarchy when it reads the netlist."""
    from ..array import KINDS, tile_module
    from ..top import CGRATop
    return CGRATop(arch, tile_modules={k: tile_module(k) for k in KINDS}, edge_tiles=True)


def _tile_sources(arch) -> dict[str, str]:
    """One Verilog module per tile kind and edge situation of the layout
    (:class:`~ubgen.array.tile.PackedTile` built for the tile's ``edges``)."""
    from amaranth.back import verilog
    from ..array import tile_module
    from ..array.layout import ArrayLayout
    from ..array.tile import PackedTile
    lay = ArrayLayout(arch)
    variants = sorted({(p.kind, lay.edges(p.row, p.col)) for p in lay.positions()},
                      key=lambda v: tile_module(*v))
    return {f"{tile_module(k, e)}.v": verilog.convert(PackedTile(lay.specs[k], lay.cores[k](arch),
                                                                 e),
                                                      name=tile_module(k, e), emit_src=False)
            for k, e in variants}


# A tile on pins: run/stall and one 16-bit + one 1-bit track in from the west and north, out to
# the east and south (a path through the tile's connection and switch boxes); the other 36
# tracks, the configuration bus and the MEM error flag ride the scan chain.
_TILE_PINS = ("run", "stall", "sb16_in_W_0", "sb16_in_N_0", "sb1_in_W_0", "sb1_in_N_0",
              "sb16_out_E_0", "sb16_out_S_0", "sb1_out_E_0", "sb1_out_S_0")
# The top on pins: AXI4-Lite write/read data and every valid/ready; addresses, prot, strobes
# and responses ride the scan chain.
_AXIL_PINS = tuple(f"s_axil_{s}" for s in (
    "wdata", "awvalid", "wvalid", "bready", "arvalid", "rready",
    "rdata", "awready", "wready", "bvalid", "arready", "rvalid"))
_ECP5_85K = ("--85k", "--package", "CABGA381")

_STREAM_PINS = ("run", "stall", "data_in", "data_out", "valid_out")
register_design("pub", _build_pub, _STREAM_PINS + ("error",),
                "Physical Unified Buffer: wide-fetch single-port SRAM + AGG + TB (thesis §6.1.3)")
register_design("dpbuf", _build_dpbuf, _STREAM_PINS,
                "dual-port SRAM + address generators, the baseline of thesis §6.1.1")
register_design("pe", _build_pe, ("run", "stall", "in_data0", "in_data1", "out_res", "out_res_p"),
                "PE core: 16-bit ALU (docs/design.md §5.2); data2 and bit inputs via the scan chain")
register_design("pe_tile", _build_tile("pe"), _TILE_PINS,
                "PE tile as in the array: PE core + connection boxes + switch boxes (pipeline "
                "registers) + config registers (docs/design.md §5.3, thesis §7.1)", arch="cgra_4x4")
register_design("mem_tile", _build_tile("mem"), _TILE_PINS,
                "MEM tile as in the array: PUB core + connection boxes + switch boxes (pipeline "
                "registers) + config registers (docs/design.md §5.3, thesis §7.1); on the ECP5 85k by "
                "default, where router1 finishes (on the 25k it did not)", arch="cgra_4x4",
                devices={"ecp5": _ECP5_85K})
register_design("cgra_2x2", _build_cgra_top, _AXIL_PINS,
                "the smallest whole cgra_top with a MEM tile (2 PE + 2 MEM tiles, 2 IO tiles, "
                "2 GLB banks), built like cgra_4x4: where the array's FPGA flow stops "
                "(docs/fpga.md \"The CGRA on the FPGA\")", arch="cgra_2x2",
                devices={"ecp5": _ECP5_85K}, sources=_tile_sources, flatten=False,
                mapping="area", ignore_loops=True)
register_design("cgra_4x4", _build_cgra_top, _AXIL_PINS,
                "whole cgra_top: AXI4-Lite slave + array + global buffer (docs/design.md §5.4); on the "
                "largest ECP5 (85k) by default, which only the area mapping fits it into",
                arch="cgra_4x4", devices={"ecp5": _ECP5_85K}, sources=_tile_sources,
                flatten=False, mapping="area", ignore_loops=True)


def app_design(desc: dict) -> FPGADesign:
    """An application's FPGA design (:class:`ubgen.fpga.app.AppDesign`) from the description
    the compiler's FPGA backend writes, as a design of the flow: ``app_<name>``, on the largest
    ECP5 by default (every application that fits one is built for the same device), ``run``
    and as many streams as the pin file has pins on pins, the rest on the scan chain."""
    from .app import AppDesign, AppDesignError, app_pins, check_description
    try:
        check_description(desc)
    except AppDesignError as e:
        from .common import FPGAError
        raise FPGAError(str(e)) from None
    return FPGADesign(f"app_{desc['app']}", lambda arch: AppDesign(desc), app_pins(desc),
                      f"application {desc['app']}: its FPGA design (thesis Table 6.1 BRAM + "
                      f"LUTs)", devices={"ecp5": _ECP5_85K})


def folded_design(bitstream, arch: str | None = None, cycles: int = 64) -> FPGADesign:
    """The array configured for one application (:mod:`.fold`): ``cgra_top`` of the
    bitstream's architecture with the compiler's ``bitstream`` file folded into its tiles,
    ``folded_<arch>_<app>``; on the largest ECP5 like the general array, flattened (the
    folded tiles' constant selects are optimized module by module first, so the flattened
    netlist keeps no structural loop), the stock ``delay`` mapping, no ``--ignore-loops``.
    Its ``check`` simulates every tile configured by the writes against the folded tile
    (:func:`.fold_check.check_fold`, ``cycles`` random cycles)."""
    import hashlib
    from .fold import build_folded_top, folded_sources, load_bitstream
    cfg = load_bitstream(bitstream, arch)

    def check(arch_obj, progress=None) -> dict:
        from .fold_check import check_fold
        return check_fold(cfg, cycles=cycles, progress=progress).to_dict()
    digest = hashlib.sha256(repr(sorted((k, sorted(v.items())) for k, v in
                                        cfg.values.items())).encode()).hexdigest()
    return FPGADesign(f"folded_{cfg.arch.name}_{cfg.app}", lambda a: build_folded_top(cfg),
                      _AXIL_PINS, f"{cfg.arch.name} configured for {cfg.app} ({cfg.source}, "
                      f"{cfg.n_writes} writes folded into constants)", arch=cfg.arch.name,
                      devices={"ecp5": _ECP5_85K}, sources=lambda a: folded_sources(cfg),
                      prepare="hierarchy -top top; proc; opt", check=check,
                      key=f"fold:{digest}")
