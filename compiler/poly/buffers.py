"""Unified-buffer extraction (thesis ch. 3, §4.3.1 end: "the schedule is then distributed to the
ports of each unified buffer"; Figs. 4.9, 4.18): PolyProgram + Schedule -> UnifiedBuffers."""
from __future__ import annotations

import islpy as isl

from ..ir.poly import PolyOp, PolyProgram
from ..ir.schedule import Schedule
from ..ir.ubuf import UBPort, UnifiedBuffer


def versioned_access(op: PolyOp, access: isl.Map, tiles: dict[str, tuple[int, int]],
                     copies: int) -> isl.Map:
    """``access`` with one more (outermost) element index, the storage copy ``tile mod copies``
    of the instance (thesis §4.2.4 double buffering; the same rewrite as
    :func:`compiler.schedule.storage.expand_storage` does on the Program). ``tiles``: the
    coarse-grained pipeline loops, outermost first, with their (start, extent)."""
    tile, n = "0", 1
    for name, (start, extent) in tiles.items():
        tile = f"({tile}) * {extent} + ({name} - {start})" if name in op.dims else tile
        n *= extent
    expr = tile if n <= copies else f"({tile}) mod {copies}"
    name = access.get_tuple_name(isl.dim_type.out)
    extra = isl.Map.read_from_str(access.get_ctx(),
                                  f"{{ {op.name}[{', '.join(op.dims)}] -> [{expr}] }}")
    out = access.flat_range_product(extra)
    return out.set_tuple_name(isl.dim_type.out, name)


def extract_buffers(poly: PolyProgram, sched: Schedule,
                    live_words: dict[str, int] | None = None,
                    copies: dict[str, int] | None = None,
                    tiles: dict[str, tuple[int, int]] | None = None
                    ) -> dict[str, UnifiedBuffer]:
    """One unified buffer per buffer. A buffer the schedule double-buffers (``copies[b] > 1``,
    :func:`compiler.schedule.storage.storage_copies` over the pipeline loops ``tiles``) gets its
    storage copy as an extra outermost element index, so that each port's value flow (the
    latest write of the element landed by the read) is the program's even when tiles
    overlap."""
    out: dict[str, UnifiedBuffer] = {}
    grown = {b: k for b, k in (copies or {}).items() if k > 1} if tiles else {}
    for name, decl in poly.buffers.items():
        shape = decl["shape"]
        if name in grown and shape is not None:
            shape = list(shape) + [grown[name]]
        out[name] = UnifiedBuffer(name, shape, decl["kind"], decl["type"],
                                  live_words=(live_words or {}).get(name))
    for op in poly.ops.values():
        smap = sched.ops[op.name].isl_map(poly.ctx)
        for acc in [op.store] + op.loads:
            access = acc.access
            if acc.buffer in grown:
                access = versioned_access(op, access, tiles, grown[acc.buffer])
            out[acc.buffer].ports.append(UBPort(
                acc.port_name, op.name, "in" if acc.kind == "store" else "out", op.domain,
                access, smap, op.latency))
    return out
