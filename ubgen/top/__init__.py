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

__all__ = ["CGRATop", "write_verilog", "verilog_texts", "cached_verilog", "verilog_sources",
           "top_module", "top_address_map", "strip_zero_memory_init"]


def top_module(arch: Arch) -> str:
    return f"cgra_top_{arch.name}"


_ZERO_INIT = re.compile(r"\n  initial begin\n(?:    [\w$\\]+\[\d+\] = \d+'h0+;\n)+  end\n")


def strip_zero_memory_init(text: str) -> str:
    """Drop Yosys's all-zero ``initial`` blocks of memories (SRAM contents are undefined at
    power-up; the blocks make the GLB's Verilog grow with its size)."""
    return _ZERO_INIT.sub("\n", text)


def verilog_texts(arch: Arch) -> dict[str, str]:
    """``cgra_top_<arch>.v`` (top, GLB, host ports; tiles instantiated by module name), the
    array's modules (:func:`ubgen.array.verilog_texts`) and ``cgra_top_<arch>.json`` (the
    address map), as ``{file name: text}``."""
    from amaranth.back import verilog
    from .cgra_top import CGRATop
    from ..array import KINDS, tile_module, verilog_texts as array_texts
    top = CGRATop(arch, tile_modules={k: tile_module(k) for k in KINDS})
    name = top_module(arch)
    texts = {f"{name}.v": strip_zero_memory_init(verilog.convert(top, name=name,
                                                                 emit_src=False)),
             f"{name}.json": json.dumps(top_address_map(arch), indent=1)}
    texts.update(array_texts(arch))
    return texts


def cached_verilog(arch: Arch | str):
    """The top's Verilog from the Verilog cache (:mod:`ubgen.vcache`), generated on a miss:
    an :class:`ubgen.vcache.Entry` whose directory holds the files of :func:`verilog_texts`."""
    from ..vcache import cached_texts
    arch = load_arch(arch) if isinstance(arch, (str, Path)) else arch
    return cached_texts("cgra_top", arch, lambda: verilog_texts(arch))


def verilog_sources(rtl: Path, arch: Arch) -> list[Path]:
    """The Verilog sources of the top in ``rtl`` in the order a simulator reads them: the tile
    modules, then the top (which holds the array; ``cgra_array.v``, the array on its own, is
    not one of them)."""
    from ..array import KINDS, tile_module
    return [Path(rtl) / f"{tile_module(k)}.v" for k in KINDS] + [Path(rtl) / f"{top_module(arch)}.v"]


def write_verilog(arch: Arch | str, out_dir: str | Path) -> list[Path]:
    """Write ``cgra_top_<arch>.v``, the array's modules and ``cgra_top_<arch>.json`` (the
    address map) into ``out_dir``, from the Verilog cache (generated on a miss). Returns the
    Verilog sources a simulator needs, the top last.

    Everything is generated before anything is written, and files go to a temporary name
    first, so a failure leaves no partial output.
    """
    from ..array import write_texts
    arch = load_arch(arch) if isinstance(arch, (str, Path)) else arch
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_texts(out, cached_verilog(arch).texts())
    return verilog_sources(out, arch)
