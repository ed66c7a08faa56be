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
element read to the newest element written before that cycle.
"""
from __future__ import annotations

import numpy as np

from .common import Affine


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


def linear(addr: tuple[Affine, ...], offsets, lows) -> Affine:
    """The linear address ``sum_d o_d * (a_d - low_d)`` of a multi-dimensional affine address."""
    n = len(addr[0].strides) if addr else 0
    start = sum(o * (a.start - lo) for o, a, lo in zip(offsets, addr, lows))
    strides = tuple(sum(o * a.strides[k] for o, a in zip(offsets, addr)) for k in range(n))
    return Affine(start, strides)


def next_pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


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
