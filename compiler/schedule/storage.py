"""Storage copies for overlapped tiles: double buffering made explicit (thesis §4.2.4, paper
§V-B "double-buffered pipeline").

A coarse-grained pipeline starts writing tile t+1 into a buffer while tile t is still being
read. Buffer mapping gives such a buffer ``k`` copies selected by ``tile mod k``. This module
finds the least ``k`` per buffer for a schedule and can rewrite the Program accordingly (an
extra outermost buffer dimension indexed by ``tile % k``), so that the single-storage reference
interpreter, run in schedule order, computes what the hardware computes.

With ``k`` copies, writes to one storage slot (element, tile mod k) are safe when each write
issues no earlier than the last read of the previous value in the slot (a read in the cycle a
write issues sees the old value: read-modify-write ops, read-first SRAM), issues no earlier
than the previous write (same-cycle issues keep program order) and lands after it (WAR and WAW
in time; the RAW side is the verifier's job).
"""
from __future__ import annotations

import numpy as np

from ..ir.program import Program
from ..ir.schedule import Schedule
from .liveness import value_tables

MAX_COPIES = 8


def _safe(v, k: int) -> bool:
    slot = v.element * k + (v.tile % k)
    idx = np.lexsort((v.key, slot))
    s, iss, land, last = slot[idx], v.issue[idx], v.land[idx], v.last_read[idx]
    same = s[1:] == s[:-1]
    ok = (iss[1:] >= last[:-1]) & (iss[1:] >= iss[:-1]) & (land[1:] > land[:-1])
    return bool(np.all(ok[same]))


def storage_copies(program: Program, sched: Schedule, order: Schedule,
                   tile_loops: list[str]) -> dict[str, int]:
    """Least number of copies (1 = no double buffering) per written buffer; raises
    ValueError if more than MAX_COPIES would be needed."""
    out = {}
    for name, v in value_tables(program, sched, order, tile_loops).items():
        for k in range(1, MAX_COPIES + 1):
            if k > 1 and not tile_loops:
                break
            if _safe(v, k):
                out[name] = k
                break
        else:
            raise ValueError(f"buffer {name}: values are overwritten before they are read "
                             f"even with {MAX_COPIES} copies")
        if name not in out:
            raise ValueError(f"buffer {name}: a value is overwritten before it is read")
    return out


def expand_storage(program: Program, copies: dict[str, int], tile_loops: list[str]) -> Program:
    """A copy of ``program`` where every buffer with ``k > 1`` copies gets an extra last
    (outermost) dimension of size ``k`` indexed by ``tile % k``."""
    data = program.to_dict()
    extents = {lp.name: lp.extent for lp in program.loops()}
    starts = {lp.name: lp.start for lp in program.loops()}
    tile = "0"
    for name in tile_loops:
        tile = f"({tile})*{extents[name]} + ({name} - {starts[name]})"
    grown = {b for b, k in copies.items() if k > 1}
    for b in data["buffers"]:
        if b["name"] in grown:
            b["shape"] = list(b["shape"]) + [copies[b["name"]]]

    def visit(node):
        if "loop" in node:
            for c in node["children"]:
                visit(c)
            return
        for acc in node["loads"] + ([node["store"]] if node["store"] else []):
            if acc["buffer"] in grown:
                acc["index"] = list(acc["index"]) + [f"({tile}) % {copies[acc['buffer']]}"]

    for c in data["children"]:
        visit(c)
    return Program.from_dict(data).validate()
