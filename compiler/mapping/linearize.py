"""Address linearization with circular-buffer modulo (thesis §5.6; paper §V-C eq. 4).

A multi-dimensional address ``a`` becomes ``sum_i a_i * o_i`` with an offset vector ``o`` that
encodes the layout (row-major over the address box, innermost first; the innermost extent is
padded to a whole number of wide words, which is why §5.6 uses 36 rather than 32 for a row of
35 fetched words). When at most ``c`` words are live at once the buffer is circular:
``MEM(a) -> MEM((sum_i a_i * o_i) mod c)``. With ``c`` a power of two the offsets themselves can
be reduced modulo ``c`` (``(1, 64) mod 64 = (1, 0)``: a line buffer addressed by ``x`` alone) and
the address generator's wrap-around at ``2**width`` (a multiple of ``c``) does the rest: two
elements live at the same time differ modulo ``c`` and therefore in the generated address.

``live_span`` measures the window that must not alias: for every read, the distance from the
element read to the newest element written before that cycle. A tile loop that rewrites the
same addresses (Fig. 4.1) is first made an extra address dimension (:func:`tile_dims`), so that
the writes advance and a rewritten buffer can be circular too; a delay memory is addressed in
its stream order (:func:`stream_layout`). That no two simultaneously live words alias is then
checked exactly on the SRAM schedule (:func:`.vectorize.late_reads`) and by the model.
"""
from __future__ import annotations

from dataclasses import replace

import islpy as isl
import numpy as np

from ..ir.ubuf import UBPort
from .common import Affine, Stream, unit_box


def offset_vector(extents: list[int] | tuple[int, ...], pad: int = 1) -> tuple[int, ...]:
    """Row-major offsets over an address box (innermost first), innermost extent padded up to a
    multiple of ``pad`` (the fetch width)."""
    out, o = [], 1
    for d, e in enumerate(extents):
        out.append(o)
        o *= -(-e // pad) * pad if d == 0 else e
    return tuple(out)


def reduce_offsets(offsets, c: int) -> tuple[int, ...]:
    """§5.6: ``o mod c`` (``c`` the live capacity of a circular buffer)."""
    return tuple(o % c for o in offsets)


def linear(addr: tuple[Affine, ...], offsets, lows, dims: int = 0) -> Affine:
    """The linear address ``sum_d o_d * (a_d - low_d)`` of a multi-dimensional affine address
    (over ``dims`` loops when ``addr`` has no dimension: a scalar's address, 0 everywhere)."""
    n = len(addr[0].strides) if addr else dims
    start = sum(o * (a.start - lo) for o, a, lo in zip(offsets, addr, lows))
    strides = tuple(sum(o * a.strides[k] for o, a in zip(offsets, addr)) for k in range(n))
    return Affine(start, strides)


def next_pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def address_box(streams: list[Stream]) -> tuple[list[int], list[int]]:
    """Lowest address and extent per address dimension over every element ``streams`` touch."""
    lows, extents = [], []
    for d in range(len(streams[0].addr)):
        lo = hi = None
        for s in streams:
            a = s.addr[d]
            slo = a.start + sum(min(0, st) * (e - 1) for st, e in zip(a.strides, s.extents))
            shi = a.start + sum(max(0, st) * (e - 1) for st, e in zip(a.strides, s.extents))
            lo = slo if lo is None else min(lo, slo)
            hi = shi if hi is None else max(hi, shi)
        lows.append(lo)
        extents.append(hi - lo + 1)
    return lows, extents


def row_dimension(ins: list[Stream]) -> int | None:
    """The address dimension that every writer fills row by row: the one its innermost
    iteration dimension (of more than one iteration) advances with unit stride, moving no
    other address dimension (``None`` when the writers disagree or none does). The layout puts
    it innermost so that the writes are wide-word aligned (§5.5.1: "unit inner stride, rows in
    whole wide words"); resnet's ``in_mem[c, x, y]`` banked by channel lane keeps the channel
    block as its first index, but the input streams walk ``x``."""
    rows = set()
    for s in ins:
        inner = next((k for k, e in enumerate(s.extents) if e > 1), None)
        if inner is None:
            return None
        moved = [d for d, a in enumerate(s.addr) if a.strides[inner]]
        if len(moved) != 1 or abs(s.addr[moved[0]].strides[inner]) != 1:
            return None
        rows.add(moved[0])
    return rows.pop() if len(rows) == 1 else None


def box_layout(streams: list[Stream], pad: int = 1, row: int | None = None
               ) -> tuple[list[int], tuple[int, ...], int]:
    """Row-major layout (§5.6) over the address box of ``streams``: the lowest address per
    dimension, the offset vector (innermost padded to ``pad``) and the words the box holds.
    Dimensions of extent 1 (e.g. a fully partitioned bank dimension) take no room. ``row``
    (:func:`row_dimension`) is laid out innermost, the others follow in buffer order."""
    lows, extents = address_box(streams)
    if not extents:                                 # a scalar: one word, no dimension
        return lows, (), 1
    live = [d for d, e in enumerate(extents) if e > 1] or [0]
    if row is not None and row in live:
        live.remove(row)
        live.insert(0, row)
    sub = offset_vector([extents[d] for d in live], pad=pad)
    words = 1
    for d in live:
        words *= extents[d]
    return lows, tuple(sub[live.index(d)] if d in live else 0 for d in range(len(extents))), words


def live_span(write_t: np.ndarray, write_a: np.ndarray, read_t: np.ndarray,
              read_a: np.ndarray) -> int | None:
    """Largest ``newest_written - read + 1`` over the reads, where ``newest_written`` is the
    largest address written strictly before the read's cycle. ``None`` when the writes are not
    in increasing address order (then no circular reuse is attempted)."""
    order = np.argsort(write_t, kind="stable")
    wt, wa = write_t[order], write_a[order]
    if len(wa) == 0 or np.any(np.diff(wa) < 0):
        return None
    if len(read_t) == 0:
        return 1
    k = np.searchsorted(wt, read_t, side="left")          # writes with t < t_read
    newest = np.where(k > 0, wa[np.maximum(k - 1, 0)], read_a)
    return int(max(1, (newest - read_a).max() + 1))


def tile_dims(extents: list[tuple[int, ...]], addrs: list[tuple[Affine, ...]]) -> int:
    """The number of outermost iteration dimensions that every stream shares (same extent,
    counted from the outermost; inner loops may differ) and along which no stream's address
    moves: a tile loop that rewrites the same addresses (thesis Fig. 4.1: ``brighten`` is
    rewritten by each of the 16 tiles). Such a loop is a *version* of the data rather than a
    reuse of it, so liveness treats it as an extra, outer, address dimension
    (:func:`with_tile_dims`), checked exactly by :func:`versions_match`."""
    k = 0
    while all(k < len(e) - 1 for e in extents):
        ds = [len(e) - 1 - k for e in extents]
        if len({e[d] for e, d in zip(extents, ds)}) != 1 or extents[0][ds[0]] < 2:
            break
        if any(a.strides[d] for addr, d in zip(addrs, ds) for a in addr):
            break
        k += 1
    return k


def with_tile_dims(extents: tuple[int, ...], addr: tuple[Affine, ...], k: int
                   ) -> tuple[Affine, ...]:
    """``addr`` extended by the ``k`` outermost iteration dimensions as address dimensions
    (outermost last, like the buffer's own dimensions)."""
    n = len(extents)
    extra = tuple(Affine(0, tuple(int(j == d) for j in range(n))) for d in range(n - k, n))
    return tuple(addr) + extra


def versions_match(write_t: np.ndarray, write_e: np.ndarray, write_v: np.ndarray,
                   read_t: np.ndarray, read_e: np.ndarray, read_v: np.ndarray) -> bool:
    """Exact check that a tile-versioned element identity is the one the reads see: for every
    read of an element some write reached by the read's cycle (a write landing at ``t`` is
    visible from ``t``), the latest such write of the element carries the read's version
    (``write_e``/``read_e`` the plain element, ``write_v``/``read_v`` the versioned one)."""
    if len(read_t) == 0:
        return True
    big = int(max(write_t.max(initial=0), read_t.max(initial=0))) + 2
    key = write_e * big + write_t
    order = np.argsort(key, kind="stable")
    key, e_s, v_s = key[order], write_e[order], write_v[order]
    k = np.searchsorted(key, read_e * big + read_t, side="right") - 1
    has = (k >= 0) & (e_s[np.maximum(k, 0)] == read_e)
    return bool(np.all(v_s[np.maximum(k, 0)][has] == read_v[has]))


def stream_layout(pin: UBPort) -> UBPort:
    """The input port ``pin`` of a delay memory (thesis Fig. 5.5 **MEM**) addressed by its own
    iteration (innermost loop first, re-indexed from 0 with unit steps) instead of by element:
    a delay memory holds a stream, so its layout is the write order; a strided or sparse write
    pattern (a 2x2-unrolled producer's store) becomes a dense, wide-word aligned one."""
    p = unit_box(pin)
    n = p.domain.dim(isl.dim_type.set)
    name = p.domain.get_tuple_name() if p.domain.has_tuple_name() else ""
    buf = pin.access.get_tuple_name(isl.dim_type.out)
    js = [f"j{d}" for d in range(n)]
    ident = isl.Map.read_from_str(p.domain.get_ctx(),
                                  f"{{ {name}[{', '.join(js)}] -> {buf}[{', '.join(js[::-1])}] }}")
    return replace(p, access=ident.intersect_domain(p.domain))
