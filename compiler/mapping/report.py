"""Counts of a buffer mapping (thesis ch. 5; Tables 7.3, 7.5, 7.8): the report of ``ubc map`` and
of the sweep's ``map`` stage.

``map_report`` gives per buffer its level, memory tiles, shift registers (count, total delay),
register-file words and tiles (thesis §5.4), banks, chained tiles and SRAM words per memory, and
the buffers the passes refused. ``backend_counts`` counts the memories of a mapping onto one
memory backend of thesis Table 6.1 / 7.3 (:data:`BACKENDS`), each a real mapping onto that
backend's memories (``[mem] kind``, :func:`backend_arch`):

* ``pub``: physical unified buffers (single-port wide-fetch SRAM, 2 in / 2 out), chained tiles
  one each;
* ``dp``: dual-port SRAMs with address generators (one writer, one reader each);
* ``dp-pe``: the same dual-port SRAMs, their controllers built from PEs (the caller adds
  ``controller_pes``, the PEs ``compiler.backend.pe_controllers`` synthesises);
* ``rv``: the dual-port mapping with every memory a ready-valid buffet (the caller adds
  ``buffets``, the configurations ``compiler.mapping.buffet`` derives).
"""
from __future__ import annotations

from dataclasses import replace

from ..ir.ubimpl import UBImpl
from .registers import pack_register_files

__all__ = ["BACKENDS", "backend_kind", "backend_arch", "backend_counts", "map_report"]

BACKENDS = ("pub", "dp", "dp-pe", "rv")


def backend_kind(backend: str) -> str:
    """The MEM tile kind (``[mem] kind``) a backend maps onto: buffets hold the dual-port
    SRAM of the ``dp`` mapping."""
    return "dp" if backend == "rv" else backend


def backend_arch(arch, backend: str):
    """``arch`` with the memories of ``backend`` (its array and other sizes unchanged)."""
    kind = backend_kind(backend)
    return arch if arch.mem.kind == kind else replace(arch, mem=replace(arch.mem, kind=kind))


def backend_counts(impls: dict[str, UBImpl], backend: str, extra: dict | None = None) -> dict:
    """The memories of a mapping onto ``backend`` (module docstring): every memory block's
    tiles; ``extra`` adds the backend's own figures (``controller_pes``, ``buffets``)."""
    mems = sum(b.tiles for impl in impls.values() for b in impl.blocks)
    return {"backend": backend, "mems": mems, **(extra or {})}


def map_report(app: str, impls: dict[str, UBImpl], refused: dict[str, str], backend: str,
               arch, extra: dict | None = None) -> dict:
    """The whole mapping's counts (JSON-ready): totals, ``backend_counts`` (with ``extra``)
    and per buffer."""
    bufs = []
    for name, impl in impls.items():
        st = impl.stats()
        rf_tiles = len(pack_register_files(impl.register_files, arch.pub, arch.mem))
        bufs.append({"name": name, "level": impl.level, "mems": st["mems"],
                     "shift_registers": st["shift_registers"],
                     "register_delay": st["register_delay"], "wires": st["wires"],
                     "banks": len(impl.blocks), "chained_tiles": st["chained_tiles"],
                     "sram_words": st["sram_words"],
                     "register_file_words": st["register_file_words"],
                     "register_file_tiles": rf_tiles, "notes": impl.notes})
    return {
        "app": app,
        "mems": sum(b["mems"] for b in bufs),
        "shift_registers": {"count": sum(b["shift_registers"] for b in bufs),
                            "total_delay": sum(b["register_delay"] for b in bufs)},
        "registers": sum(b["register_delay"] for b in bufs),
        "register_file_words": sum(b["register_file_words"] for b in bufs),
        "register_file_tiles": sum(b["register_file_tiles"] for b in bufs),
        "banks": sum(b["banks"] for b in bufs),
        "chained_tiles": sum(b["chained_tiles"] for b in bufs),
        "sram_words_per_mem": [w for b in bufs for w in b["sram_words"]],
        "backend": backend_counts(impls, backend, extra),
        "buffers": bufs,
        "refused": refused,
    }
