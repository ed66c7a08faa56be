"""Counts of a buffer mapping (thesis ch. 5; Tables 7.3, 7.5, 7.8): the report of ``ubc map`` and
of the sweep's ``map`` stage.

``map_report`` gives per buffer its level, memory tiles, shift registers (count, total delay),
register-file words and tiles (thesis §5.4), banks, chained tiles and SRAM words per memory, and
the buffers the passes refused. ``backend_counts`` counts the memories of the mapping on a
memory backend (thesis Table 6.1 / 7.3):

* ``pub``: physical unified buffers as mapped (single-port wide-fetch SRAM, 2 in / 2 out);
* ``dp``, ``dp-pe``, ``rv``: one dual-port SRAM (``[dpbuf] sram_depth`` words) per output port
  of every mapped memory, times the tiles its words need. These three counts are derived from
  the PUB mapping, not from a separate DP mapping. ``dp-pe`` adds the PEs that synthesize the
  controllers (``controller_pes``); ``rv`` drops the schedule generator (ready-valid buffets).
"""
from __future__ import annotations

from ..ir.ubimpl import UBImpl
from .registers import pack_register_files

__all__ = ["BACKENDS", "controller_pes", "backend_counts", "map_report"]

BACKENDS = ("pub", "dp", "dp-pe", "rv")


def controller_pes(dims: int, addr_gens: int, schedule: bool = True) -> int:
    """PEs for one affine controller synthesized on the array (thesis §6.3, Fig. 6.2a): an
    n-dimensional affine controller is n counters, and for each of its address and schedule
    generators n multipliers and n - 1 adders, plus one comparator for the schedule."""
    gens = addr_gens + (1 if schedule else 0)
    return dims + gens * (dims + max(0, dims - 1)) + (1 if schedule else 0)


def backend_counts(impls: dict[str, UBImpl], backend: str, arch) -> dict:
    """Memory count (and controller PEs) of the mapped buffers on ``backend``."""
    mems = pes = 0
    for impl in impls.values():
        for pub in impl.pubs:
            if backend == "pub":
                mems += pub.tiles
                continue
            depth = arch.dpbuf.sram_depth
            tiles = -(-max(1, pub.sram_words) // depth)
            mems += max(1, len(pub.outputs)) * tiles
            if backend in ("dp-pe", "rv"):
                for name, cfg in pub.configs.items():
                    if cfg.extents and name.split("_")[0] in ("in2agg", "tb2out"):
                        pes += controller_pes(cfg.dims, 1, schedule=backend == "dp-pe")
    out = {"backend": backend, "mems": mems}
    if backend in ("dp-pe", "rv"):
        out["controller_pes"] = pes
    return out


def map_report(app: str, impls: dict[str, UBImpl], refused: dict[str, str], backend: str,
               arch) -> dict:
    """The whole mapping's counts (JSON-ready): totals, ``backend_counts`` and per buffer."""
    bufs = []
    for name, impl in impls.items():
        st = impl.stats()
        rf_tiles = len(pack_register_files(impl.register_files, arch.pub, arch.mem))
        bufs.append({"name": name, "level": impl.level, "mems": st["mems"],
                     "shift_registers": st["shift_registers"],
                     "register_delay": st["register_delay"], "wires": st["wires"],
                     "banks": len(impl.pubs), "chained_tiles": st["chained_tiles"],
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
        "backend": backend_counts(impls, backend, arch),
        "buffers": bufs,
        "refused": refused,
    }
