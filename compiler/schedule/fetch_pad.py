"""Cycle padding of a pipelined row for the wide-fetch SRAM (thesis §5.5.2–5.5.3; §7.2, the
text of Table 7.4: "the generated schedules [are] padded to align with the fetch width").

A load served by a wide-fetch memory reads a *row* (the innermost loop walking one buffer
dimension with unit stride) out of the transpose buffer, one word per cycle, and the SRAM fills
the TB one wide word (``FW`` words) at a time. A row of ``E`` words whose first word sits at lane
``s`` of a wide word spans ``F = floor((s + E - 1) / FW) + 1`` wide words (eqs. 5.25–5.32; one
extra, padded, fetch when a sliding window shifts the row off the word boundary, Fig. 5.8), and an
affine controller fetches the same number ``F`` for every row (the fetch of the largest shift).
At one fetch per ``FW`` cycles the rows must therefore be at least ``FW * F`` cycles apart: the
innermost loop's interval is padded from ``E`` to ``FW * F`` ("we introduce cycle padding in the
innermost dimension of the schedule interval, aligning it with the fetch width multiplier ...
done in the II calculation during the scheduling stage", §5.5.3). resnet's 3x3 window over 28
pixels: ``s = 2`` (``x + kx``, ``kx <= 2``), ``F = 8``, rows every 32 cycles instead of 28 -- the
padding the thesis blames for resnet's PUB latency in Table 7.4 (9807 vs. 8739 cycles).

Stores are padded alike (``s = 0``: a row of ``E`` words is aligned to ``FW * ceil(E / FW)``
cycles). The aggregator alone would not need it (it writes a row's last, partial wide word while
the next row starts, §5.5.1), but a producer row and a consumer row of the same extent then keep
the same interval, so a value read once, right after it is written, stays at a constant distance
and is a delay line rather than a memory (§5.1.1): srcnn's input stream and its 1x1 convolution
both advance 32 cycles per 30-pixel row.

Pure functions over the Program IR (affine :class:`~compiler.ir.index.Index` expressions); the
DNN scheduler (:mod:`.dnn`) applies the result to the flattened stage (:mod:`.perfect_flatten`).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir.index import Index
from ..ir.program import Loop, Op


@dataclass(frozen=True)
class RowAccess:
    """One access's row: ``extent`` words read or written in consecutive iterations, starting
    at most at lane ``shift`` of a wide word (0: always aligned)."""
    buffer: str
    extent: int
    shift: int


def fetches_per_row(extent: int, shift: int, fw: int) -> int:
    """Wide words a row of ``extent`` words starting at lane ``shift`` touches (eq. 5.32)."""
    return (shift + extent - 1) // fw + 1


def row_cycles(row: RowAccess, fw: int) -> int:
    """Cycles one row needs at one fetch per ``fw`` cycles: ``max(E, FW * F)``."""
    return max(row.extent, fw * fetches_per_row(row.extent, row.shift, fw))


def row_shift(index: Index, row_var: str, bounds: dict[str, tuple[int, int]], fw: int
              ) -> int | None:
    """The largest start lane of the row walked by ``row_var`` in one buffer dimension
    ``index`` (``None`` when ``row_var`` does not appear). The other loop variables and the
    constant move the row start; in units of the row variable's coefficient ``c`` (banking
    of isomorphic lanes divides the dimension by ``c``, :mod:`compiler.mapping.lane_banking`)
    the start lane is ``(const + sum coeff * start) / c mod FW`` plus the spread
    ``sum (|coeff| / c mod FW) * (extent - 1)`` of the other loops. A result of ``FW`` or more
    means the outer loops move the row across wide words: the row is then not the fetched
    dimension (thesis Fig. 5.7 example A: the window loop ``dx`` inside ``x``, served from the
    TB). A term that is not a multiple of ``c`` (a lane constant) is separated by banking and
    moves no lane; a floor term may move it anywhere (``FW - 1``)."""
    c = abs(index.coeff(row_var))
    if c == 0:
        return None
    if index.floors:
        return fw - 1                  # a quasi-affine term: assume the worst lane
    base, spread = 0, 0
    if index.const % c == 0:
        base += index.const // c
    for v, k in index.terms:
        if v == row_var or k % c:
            continue
        start, extent = bounds[v]
        base += (k // c) * start
        spread += (abs(k) // c % fw) * (extent - 1)
    return base % fw + spread


def stage_rows(ops: list[Op], row_loop: Loop, memory_buffers: set[str], fw: int
               ) -> list[RowAccess]:
    """The rows that the loads and stores of ``ops`` access in ``memory_buffers`` along
    ``row_loop`` (the innermost loop of a flattened stage), one per access that walks a buffer
    dimension with it."""
    out = []
    for op in ops:
        bounds = {lp.name: (lp.start, lp.extent) for lp in op.loops}
        if row_loop.name not in bounds:
            continue
        for ld in op.loads + ([op.store] if op.store is not None else []):
            if ld.buffer not in memory_buffers:
                continue
            shifts = [s for s in (row_shift(ix, row_loop.name, bounds, fw) for ix in ld.index)
                      if s is not None]
            if shifts and max(shifts) < fw:
                out.append(RowAccess(ld.buffer, row_loop.extent, max(shifts)))
    return out


def read_lead(op: Op, slot: int, fw: int) -> int:
    """Cycles the first fetch of load ``slot``'s row comes before the row's first read: its
    largest start lane (:func:`row_shift` along the op's innermost loop). The transpose buffer
    is filled for the most shifted row, so every row's fetches run that many cycles early
    (eqs. 5.25-5.32), and a write must reach the SRAM that much sooner (thesis §5.5.3)."""
    if fw <= 1 or not op.loops:
        return 0
    row = op.loops[-1]
    bounds = {lp.name: (lp.start, lp.extent) for lp in op.loops}
    shifts = [s for s in (row_shift(ix, row.name, bounds, fw) for ix in op.loads[slot].index)
              if s is not None]
    return min(fw - 1, max(shifts, default=0))


def padded_row(rows: list[RowAccess], extent: int, fw: int) -> int:
    """The innermost interval of a stage: its extent, padded to the slowest row's
    :func:`row_cycles` (``fw <= 1``: no wide fetch, no padding)."""
    if fw <= 1:
        return extent
    return max([extent] + [row_cycles(r, fw) for r in rows])
