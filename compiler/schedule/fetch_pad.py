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

import itertools
from dataclasses import dataclass
from functools import lru_cache

from ..ir.index import Index
from ..ir.program import Loop, Op


# wide words of a transpose buffer (``[pub] tb_depth``; 2 on every shipped arch): a row longer
# than that is refetched when an outer loop shifts it (:func:`row_shift`). Only the decision to
# pad depends on it; buffer mapping checks every fetch against the arch's own TB.
TB_WIDE_WORDS = 2


@dataclass(frozen=True)
class RowAccess:
    """One access's row: ``extent`` words read or written in consecutive iterations, starting
    at most at lane ``shift`` of a wide word (0: always aligned); ``pitch``: wide words between
    consecutive rows of the buffer's layout (rows padded to the fetch width, docs/mapping.md;
    ``None``: unknown); ``load``: read (a store is never compacted)."""
    buffer: str
    extent: int
    shift: int
    pitch: int | None = None
    load: bool = False


@dataclass(frozen=True)
class CompactFetch:
    """``groups`` groups of ``inner`` fetches, ``step`` cycles apart within a group and
    ``period`` cycles from group to group, the first ``lead`` cycles before the row's first
    read plus the row's start lane: the ``F = inner x groups`` fetches of a row in its own
    ``extent`` cycles, without padding. Both levels are affine, so two controller dimensions
    (one when ``period x groups`` is the row's extent and the rows' pitch is ``F`` words: the
    groups then continue from row to row) replace the one of the padded fetch."""
    inner: int
    step: int
    groups: int
    period: int
    lead: int

    def offsets(self) -> list[int]:
        return [self.period * o + self.step * i for o in range(self.groups)
                for i in range(self.inner)]


def _row_starts(extent: int, shifts: tuple[int, ...]) -> list[int]:
    """Start cycles of consecutive rows: one row every ``extent`` cycles, plus one cycle per
    lane the start moves right (the gap :func:`shift_gaps` gives the loop that moves it)."""
    out, t = [], 0
    for r, s in enumerate(shifts):
        if r:
            t += extent + max(0, s - shifts[r - 1])
        out.append(t)
    return out


def _tb_serves(cf: CompactFetch, extent: int, shifts: tuple[int, ...], pitch: int, fw: int,
               depth: int) -> bool:
    """Consecutive rows (start lanes ``shifts``, :func:`_row_starts`) read through a TB of
    ``depth`` slots (word ``w`` in slot ``w mod depth``), fetched by ``cf``: does every read
    find its word (a fetch at ``f`` is readable from ``f + 2``, thesis §5.5.3; a later fetch
    into the slot replaces it)?"""
    fetches = []                                  # (land cycle, word)
    starts = _row_starts(extent, shifts)
    for r, (s, t0) in enumerate(zip(shifts, starts)):
        for m, p in enumerate(cf.offsets()):
            fetches.append((t0 + p - s - cf.lead + 2, r * pitch + m))
    fetches.sort()
    for r, (s, t0) in enumerate(zip(shifts, starts)):
        for k in range(extent):
            t, w = t0 + k, r * pitch + (s + k) // fw
            seen = [fw_ for land, fw_ in fetches if land <= t and fw_ % depth == w % depth]
            if not seen or seen[-1] != w:
                return False
    return True


@lru_cache(maxsize=None)
def compact_fetch(extent: int, shift: int, fw: int, depth: int, pitch: int | None = None
                  ) -> CompactFetch | None:
    """The fetch pattern of a row of ``extent`` reads (one per cycle) starting at lanes ``0
    .. shift`` that needs no padding (:class:`CompactFetch`), or ``None``: the row's
    ``F`` fetches (:func:`fetches_per_row`) in two affine levels, each row's fetches ``lead``
    plus its start lane cycles before its first read, checked by simulating the transpose
    buffer (:func:`_tb_serves`) over three consecutive rows with every combination of start
    lanes. Patterns whose groups continue from row to row (``period x groups == extent``)
    come first."""
    f = fetches_per_row(extent, shift, fw)
    pitch = f if pitch is None else pitch
    if f * fw <= extent:
        return None                               # the plain fetch, one per FW reads, fits
    found = []
    for inner in (d for d in range(1, f + 1) if f % d == 0):
        groups = f // inner
        for step in range(1, fw + 1):
            for period in range(step * (inner - 1) + 1, extent // groups + 1):
                for lead in range(2, 2 + fw * depth):
                    cf = CompactFetch(inner, step, groups, period, lead)
                    if all(_tb_serves(cf, extent, sh, pitch, fw, depth)
                           for sh in itertools.product(range(shift + 1), repeat=3)):
                        found.append(cf)
                        break
    if not found:
        return None
    return min(found, key=lambda c: (c.period * c.groups != extent, c.lead, c.inner))


def fetches_per_row(extent: int, shift: int, fw: int) -> int:
    """Wide words a row of ``extent`` words starting at lane ``shift`` touches (eq. 5.32)."""
    return (shift + extent - 1) // fw + 1


def row_cycles(row: RowAccess, fw: int, depth: int = 0) -> int:
    """Cycles one row needs: ``max(E, FW * F)`` at one fetch per ``fw`` cycles; ``E`` for a
    load a :func:`compact_fetch` over a TB of ``depth`` wide words serves with its groups
    continuing from row to row (the controller dimension this saves keeps the fetch within
    the controller's dimensions), when ``E`` is a whole number of wide words: the aligned rows
    of the other stages then take ``E`` cycles too, so a value the compacted stage writes and
    the next stage reads stays at a constant distance (a delay line, not a memory)."""
    if (row.load and depth and row.extent % fw == 0
            and row.pitch == fetches_per_row(row.extent, row.shift, fw)):
        cf = compact_fetch(row.extent, row.shift, fw, depth, row.pitch)
        if cf is not None and cf.period * cf.groups == row.extent:
            return row.extent
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
    TB) -- unless the row is too long for the transpose buffer to keep it from one shift to
    the next (its reuse distance, ``extent - 1`` words, at least the ``TB_WIDE_WORDS x FW``
    words of the TB): then every shift fetches the row again from its first word (example B:
    the window loop outside the row, a non-unrolled window reduction reordered to stream,
    :mod:`compiler.passes.reduction_order`), starting at most at lane ``FW - 1``, and that is
    the result. A term that is not a multiple of ``c`` (a lane constant) is separated by banking
    and moves no lane; a floor term may move it anywhere (``FW - 1``)."""
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
    if base % fw + spread >= fw and bounds[row_var][1] - 1 >= TB_WIDE_WORDS * fw:
        return fw - 1                  # refetched per shift (example B)
    return base % fw + spread


def stage_rows(ops: list[Op], row_loop: Loop, memory_buffers: set[str], fw: int,
               shapes: dict[str, tuple[int, ...]] | None = None) -> list[RowAccess]:
    """The rows that the loads and stores of ``ops`` access in ``memory_buffers`` along
    ``row_loop`` (the innermost loop of a flattened stage), one per access that walks a buffer
    dimension with it; with the buffers' ``shapes``, a load's row knows its pitch (the walked
    dimension padded to whole wide words)."""
    out = []
    for op in ops:
        bounds = {lp.name: (lp.start, lp.extent) for lp in op.loops}
        if row_loop.name not in bounds:
            continue
        for ld in op.loads + ([op.store] if op.store is not None else []):
            if ld.buffer not in memory_buffers:
                continue
            shifts = {d: s for d, s in ((d, row_shift(ix, row_loop.name, bounds, fw))
                                        for d, ix in enumerate(ld.index)) if s is not None}
            if shifts and max(shifts.values()) < fw:
                load = ld is not op.store
                shape = (shapes or {}).get(ld.buffer)
                pitch = (-(-shape[min(shifts)] // fw) if shape and len(shifts) == 1
                         and abs(ld.index[min(shifts)].coeff(row_loop.name)) == 1 else None)
                out.append(RowAccess(ld.buffer, row_loop.extent, max(shifts.values()), pitch,
                                     load))
    return out


def compacted(rows: list[RowAccess], fw: int, depth: int) -> set[str]:
    """The buffers whose read rows :func:`row_cycles` leaves unpadded with a compact fetch.
    Its fetches have no slack in the TB, so the buffer's single-port SRAM cannot also take
    writes while it runs (the DNN scheduler reserves the SRAM for the reading stage)."""
    return {r.buffer for r in rows if r.load and depth and row_cycles(r, fw, depth) == r.extent
            and fw * fetches_per_row(r.extent, r.shift, fw) > r.extent}


def shift_gaps(ops: list[Op], row_loop: Loop, rows: list[RowAccess], fw: int, depth: int
               ) -> dict[str, int]:
    """Extra cycles per iteration of the outer loops that move a compacted row's start lane
    (:func:`row_cycles` without padding): a row that starts ``g`` lanes further right than the
    one before needs its fetches ``g`` cycles later than the TB would otherwise allow
    (:func:`_row_starts`), so the loop adding ``g`` lanes per iteration gets ``g`` cycles per
    iteration (resnet's ``kx``: one cycle per 28 rows)."""
    compact = compacted(rows, fw, depth)
    gaps: dict[str, int] = {}
    for op in ops:
        if row_loop.name not in {lp.name for lp in op.loops}:
            continue
        for ld in op.loads:
            if ld.buffer not in compact:
                continue
            for ix in ld.index:
                c = abs(ix.coeff(row_loop.name))
                if not c:
                    continue
                for v, k in ix.terms:
                    if v != row_loop.name and k % c == 0 and (k // c) % fw:
                        gaps[v] = max(gaps.get(v, 0), (k // c) % fw)
    return gaps


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


def padded_row(rows: list[RowAccess], extent: int, fw: int, depth: int = 0) -> int:
    """The innermost interval of a stage: its extent, padded to the slowest row's
    :func:`row_cycles` (``fw <= 1``: no wide fetch, no padding)."""
    if fw <= 1:
        return extent
    return max([extent] + [row_cycles(r, fw, depth) for r in rows])
