"""The array configured for one application, on the FPGA: a bitstream folded into constants
(docs/fpga.md "The array configured for one application").

The compiler's bitstream (``ubc pnr APP --out DIR`` writes ``<app>-<arch>.bitstream.json``,
``{"arch", "writes": [[byte address, value], ...]}``; the end-to-end bundle of ``ubc sim
--bundle`` carries the same writes as ``"bitstream"``) is read here as an exported artifact:
this module decodes the writes with the array's own address map (:mod:`ubgen.top.spec`, the
tiles' register maps) and imports nothing of the compiler.

Each configured tile becomes its own Verilog module (``cgra_<kind>_tile_r<row>c<col>``; the
tiles the bitstream does not touch share one module per kind and edges) built with its
configuration registers folded into the values the writes leave in them
(:func:`ubgen.config.folded_registers`; unwritten registers keep their reset values), so
synthesis drops every mux input the configuration does not select, the switch boxes'
pipeline registers it bypasses and the core logic its operation does not use. The array's
structural combinational loops through bypassable switch boxes go with the unselected inputs:
a legal configuration closes none. What remains is the array as the application uses it, not
the run-time configurable array: the switch-box and connection-box mux delays of the general
array are gone.

:func:`check_fold` simulates every tile twice, configured through its bus by the writes and
folded, with the same random stimulus on every input, and compares every output each cycle
(the configuration read-back at random addresses included); the array around the tiles is the
same RTL in both, so equal tiles make an equal array.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from amaranth.hdl import Elaboratable

from ..arch import Arch, ArchError, load_arch
from ..array.layout import ArrayLayout, Position
from ..array.tilespec import TILE_ADDR_WIDTH
from ..top.spec import TILE_BASE, TILE_ID_SHIFT, WORD_SHIFT
from .common import FPGAError

__all__ = ["FoldedConfig", "load_bitstream", "decode_writes", "folded_module",
           "folded_sources", "build_folded_top", "check_fold", "FoldCheck", "folded_design"]


@dataclass
class FoldedConfig:
    """One application's configuration of an array, per tile: ``writes`` (tile-local ``(offset,
    value)`` bus writes, in bitstream order) and ``values`` (register name -> value, what the
    writes leave in the registers), keyed by ``(row, col)``."""
    app: str
    arch: Arch
    source: str
    writes: dict[tuple[int, int], list[tuple[int, int]]] = field(default_factory=dict)
    values: dict[tuple[int, int], dict[str, int]] = field(default_factory=dict)

    @property
    def n_writes(self) -> int:
        return sum(len(w) for w in self.writes.values())


def _app_name(data: dict, path: Path, arch: str) -> str:
    if data.get("app"):
        return str(data["app"])
    stem = path.name.split(".")[0]                # <app>-<arch>.bitstream.json
    return stem[:-len(arch) - 1] if stem.endswith(f"-{arch}") else stem


def load_bitstream(path, arch: str | None = None) -> FoldedConfig:
    """Read a bitstream file the compiler wrote (``<app>-<arch>.bitstream.json``, or a bundle
    JSON with a ``"bitstream"`` list) and decode it for its architecture (:func:`decode_writes`).
    ``arch``, if given, must be the bitstream's. One-line :class:`FPGAError` on bad input."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise FPGAError(f"cannot read bitstream {path}: {e}") from None
    writes = data.get("writes", data.get("bitstream")) if isinstance(data, dict) else None
    if not isinstance(writes, list) or not isinstance(data.get("arch"), str):
        raise FPGAError(f"{path} is not a bitstream: no \"arch\" and \"writes\" (or bundle "
                        f"\"bitstream\") list")
    if arch is not None and Path(arch).stem != data["arch"]:
        raise FPGAError(f"{path} is a bitstream for {data['arch']}, not {arch}")
    try:
        arch_obj = load_arch(data["arch"])
    except ArchError as e:
        raise FPGAError(str(e)) from None
    cfg = FoldedConfig(_app_name(data, path, data["arch"]), arch_obj, str(path))
    decode_writes(cfg, writes)
    return cfg


def _check_write(item) -> tuple[int, int]:
    if (not isinstance(item, (list, tuple)) or len(item) != 2
            or not all(isinstance(x, int) and x >= 0 for x in item)):
        raise FPGAError(f"bitstream write {item!r} is not [byte address, value]")
    return item[0], item[1]


def decode_writes(cfg: FoldedConfig, writes) -> FoldedConfig:
    """Fill ``cfg.writes`` / ``cfg.values`` from ``[[byte address, value], ...]``: each write
    must be to a tile register (``ubgen.top.spec``: ``TILE_BASE | tile_id << 18 | offset << 2``)
    of the tile's register map; a later write to the same register wins, as on the bus. A write
    outside the tiles or into a window (storage, not a register) cannot be folded and is an
    error."""
    layout = ArrayLayout(cfg.arch)
    by_id = {p.tile_id: p for p in layout.positions()}
    for item in writes:
        addr, value = _check_write(item)
        if not addr & TILE_BASE or addr & ((1 << WORD_SHIFT) - 1):
            raise FPGAError(f"bitstream write to 0x{addr:08x}: not a tile register")
        tile_id = (addr & ~TILE_BASE) >> TILE_ID_SHIFT
        offset = (addr >> WORD_SHIFT) & ((1 << TILE_ADDR_WIDTH) - 1)
        pos = by_id.get(tile_id)
        if pos is None:
            raise FPGAError(f"bitstream write to 0x{addr:08x}: no tile {tile_id} on "
                            f"{cfg.arch.name}")
        regmap = layout.specs[pos.kind].regmap
        reg = next((r for r in regmap.registers if r.offset == offset), None)
        if reg is None:
            raise FPGAError(f"bitstream write to 0x{addr:08x}: tile {tile_id} ({pos.kind}) has "
                            f"no register at offset {offset} (a window or nothing: not "
                            f"foldable)")
        if value >> reg.width:
            raise FPGAError(f"bitstream write to 0x{addr:08x}: value {value} does not fit "
                            f"{reg.name} ({reg.width} bits)")
        cfg.writes.setdefault((pos.row, pos.col), []).append((offset, value))
        cfg.values.setdefault((pos.row, pos.col), {})[reg.name] = value
    return cfg


def folded_module(pos: Position, edges, configured: bool) -> str:
    """The Verilog module name of the folded tile at ``pos`` (built for ``edges``): its own,
    ``cgra_<kind>_tile_r<row>c<col>``, when the bitstream configures it; else the module all
    unconfigured tiles of its kind and edges share (``cgra_<kind>_tile<edges>_reset``: every
    register at its reset value)."""
    from ..array.tilespec import edge_suffix
    if configured:
        return f"cgra_{pos.kind}_tile_r{pos.row}c{pos.col}"
    return f"cgra_{pos.kind}_tile{edge_suffix(edges)}_reset"


class Folded(Elaboratable):
    """Elaborate ``inner`` with its configuration registers folded to ``values``
    (:func:`ubgen.config.folded_registers`); every value must reach a register."""

    def __init__(self, inner, values: dict[str, int], where: str):
        self.inner, self.values, self.where = inner, dict(values), where

    def elaborate(self, platform):
        from amaranth.hdl import Fragment
        from ..config import folded_registers
        with folded_registers(self.values) as fold:
            frag = Fragment.get(self.inner, platform)
        if fold.unused():
            raise FPGAError(f"{self.where}: no configuration register named "
                            f"{', '.join(fold.unused()[:4])} (a read-only status register "
                            f"cannot be folded)")
        return frag


def _tile(layout: ArrayLayout, pos: Position, packed: bool = False):
    from ..array.tile import PackedTile, Tile
    cls = PackedTile if packed else Tile
    return cls(layout.specs[pos.kind], layout.cores[pos.kind](layout.arch),
               layout.edges(pos.row, pos.col))


def _modules(cfg: FoldedConfig, values) -> dict[str, tuple[Position, dict[str, int]]]:
    """Module name -> (a position it stands for, its folded values)."""
    layout = ArrayLayout(cfg.arch)
    out = {}
    for pos in layout.positions():
        vals = values.get((pos.row, pos.col), {})
        name = folded_module(pos, layout.edges(pos.row, pos.col), bool(vals))
        out.setdefault(name, (pos, vals))
    return out


def folded_sources(cfg: FoldedConfig, values=None) -> dict[str, str]:
    """The folded tile modules (:func:`folded_module`): one per configured tile, its registers
    folded to ``values`` (default ``cfg.values``), and one per kind and edges for the tiles the
    bitstream leaves at reset; each built for its edges."""
    from amaranth.back import verilog
    from ..config import folded_registers
    layout = ArrayLayout(cfg.arch)
    texts = {}
    for name, (pos, vals) in _modules(cfg, cfg.values if values is None else values).items():
        with folded_registers(vals) as fold:
            texts[f"{name}.v"] = verilog.convert(_tile(layout, pos, packed=True), name=name,
                                                 emit_src=False)
        if fold.unused():
            raise FPGAError(f"{name}: no configuration register named "
                            f"{', '.join(fold.unused()[:4])}")
    return texts


def build_folded_top(cfg: FoldedConfig):
    """``cgra_top`` over the folded tile modules (:func:`folded_sources`)."""
    from ..top import CGRATop
    configured = {k for k, v in cfg.values.items() if v}
    return CGRATop(cfg.arch, edge_tiles=True, tile_modules=lambda pos, edges: folded_module(
        pos, edges, (pos.row, pos.col) in configured))
