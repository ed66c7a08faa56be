"""The top level (docs/design.md §5.4): the array, the global buffer and the AXI4-Lite host port.
The address map is data (:mod:`.spec`); ``CGRATop`` (Amaranth) is loaded on first use."""
from __future__ import annotations

import json
import re
from pathlib import Path

from .._lazy import lazy_exports
from ..arch import Arch, load_arch
from .spec import top_address_map

__getattr__ = lazy_exports(__name__, {"CGRATop": ".cgra_top"})

__all__ = ["CGRATop", "write_verilog", "top_module", "top_address_map",
           "strip_zero_memory_init"]


def top_module(arch: Arch) -> str:
    return f"cgra_top_{arch.name}"


_ZERO_INIT = re.compile(r"\n  initial begin\n(?:    [\w$\\]+\[\d+\] = \d+'h0+;\n)+  end\n")


def strip_zero_memory_init(text: str) -> str:
    """Drop Yosys's all-zero ``initial`` blocks of memories (SRAM contents are undefined at
    power-up; the blocks make the GLB's Verilog grow with its size)."""
    return _ZERO_INIT.sub("\n", text)


def write_verilog(arch: Arch | str, out_dir: str | Path) -> list[Path]:
    """Write ``cgra_top_<arch>.v`` (top, GLB, AXI slave; tiles instantiated by module name),
    the tile modules (:func:`ubgen.array.write_verilog`) and ``cgra_top_<arch>.json`` (the
    address map). Returns the Verilog sources a simulator needs, the top last.

    Everything is generated before anything is written, and files go to a temporary name
    first, so a failure leaves no partial output.
    """
    from amaranth.back import verilog
    from .cgra_top import CGRATop
    from ..array import KINDS, tile_module, write_texts, write_verilog as write_array_verilog
    arch = load_arch(arch) if isinstance(arch, (str, Path)) else arch
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    top = CGRATop(arch, tile_modules={k: tile_module(k) for k in KINDS})
    name = top_module(arch)
    texts = {f"{name}.v": strip_zero_memory_init(verilog.convert(top, name=name,
                                                                 emit_src=False)),
             f"{name}.json": json.dumps(top_address_map(arch), indent=1)}
    written = write_array_verilog(arch, out)          # after the top converted without error
    tiles = [p for p in written if p.name in {f"{tile_module(k)}.v" for k in KINDS}]
    write_texts(out, texts)
    return tiles + [out / f"{name}.v"]
