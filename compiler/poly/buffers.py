"""Unified-buffer extraction (thesis ch. 3, §4.3.1 end: "the schedule is then distributed to the
ports of each unified buffer"; Figs. 4.9, 4.18): PolyProgram + Schedule -> UnifiedBuffers."""
from __future__ import annotations

from ..ir.poly import PolyProgram
from ..ir.schedule import Schedule
from ..ir.ubuf import UBPort, UnifiedBuffer


def extract_buffers(poly: PolyProgram, sched: Schedule,
                    live_words: dict[str, int] | None = None) -> dict[str, UnifiedBuffer]:
    out: dict[str, UnifiedBuffer] = {}
    for name, decl in poly.buffers.items():
        out[name] = UnifiedBuffer(name, decl["shape"], decl["kind"], decl["type"],
                                  live_words=(live_words or {}).get(name))
    for op in poly.ops.values():
        smap = sched.ops[op.name].isl_map(poly.ctx)
        for acc in [op.store] + op.loads:
            out[acc.buffer].ports.append(UBPort(
                acc.port_name, op.name, "in" if acc.kind == "store" else "out", op.domain,
                acc.access, smap, op.latency))
    return out
