"""The CGRA array: tiles, interconnect wiring, routing graph and register-map exports
(docs/design.md §5.3).

Importing the package does not import Amaranth: the layout, register maps and routing graph are
data (:mod:`.layout`, :mod:`.tilespec`, :mod:`.graph`); :func:`write_verilog` loads the RTL."""
from __future__ import annotations

from pathlib import Path

from ..arch import Arch, load_arch
from .layout import KINDS, ArrayLayout
from .tilespec import edge_suffix

ARRAY_MODULE = "cgra_array"


def tile_module(kind: str, edges=()) -> str:
    """The Verilog module name of a ``kind`` tile, built for ``edges`` (:class:`Tile`)."""
    return f"cgra_{kind}_tile{edge_suffix(edges)}"


def verilog_texts(arch: Arch | str, cores=None) -> dict[str, str]:
    """The array's Verilog as ``{file name: text}``: one module per tile kind
    (``cgra_<kind>_tile.v``) and the array (``cgra_array.v``) instantiating them."""
    from amaranth.back import verilog
    from .cgra import CGRA
    from .tile import PackedTile
    arch = load_arch(arch) if isinstance(arch, (str, Path)) else arch
    lay = ArrayLayout(arch, cores)
    texts = {}
    for kind in KINDS:
        tile = PackedTile(lay.specs[kind], lay.cores[kind](arch))
        texts[f"{tile_module(kind)}.v"] = verilog.convert(tile, name=tile_module(kind),
                                                          emit_src=False)
    top = CGRA(arch, cores, tile_modules={k: tile_module(k) for k in KINDS})
    texts[f"{ARRAY_MODULE}.v"] = verilog.convert(top, name=ARRAY_MODULE, emit_src=False)
    return texts


def write_verilog(arch: Arch | str, out_dir: str | Path, cores=None) -> list[Path]:
    """Write the array's Verilog (:func:`verilog_texts`). Returns the written files (all are
    sources).

    Files are written to a temporary name first, so a failure leaves no partial output; a file
    whose content did not change is left untouched (incremental Verilator builds).
    """
    texts = verilog_texts(arch, cores)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return write_texts(out, texts)


def write_texts(out: Path, texts: dict[str, str]) -> list[Path]:
    """Write ``{file name: text}`` into ``out``: all to temporary names first, then renamed (a
    failure leaves no partial output); files whose content is unchanged are not touched."""
    pending = []
    for name, text in texts.items():
        dst = out / name
        if dst.exists() and dst.read_text() == text:
            continue
        tmp = out / (name + ".tmp")
        tmp.write_text(text)
        pending.append((tmp, dst))
    for tmp, dst in pending:
        tmp.replace(dst)
    return [out / name for name in texts]
