"""One memory block on a dual-port SRAM (thesis §6.1.1, Fig. 6.1; Table 6.1's DP-SRAM + AG and
DP-SRAM + PEs): ``build_dp(bank, dp, buffer) -> DPBlock``.

A dual-port SRAM has one write and one read port of one word each, so buffer mapping banks
and merges for one writer and one reader per memory (``map_buffer`` with ``[mem] kind`` ``dp``
or ``dp-pe``) and no vectorization is needed (§6.3: only the wide-fetch PUB invokes the
vectorization pass). The block is linearized like a PUB's (:func:`.block_layout.block_layout`
with a one-word fetch: row-major, circular capacity the next power of two of the live span,
chained by capacity), then its two streams become the ``wr`` and ``rd`` controllers of
``ubgen.mem.dp_spec``:

* ``wr`` fires at the cycle each value lands and writes ``data_in`` of that cycle;
* ``rd`` fires one cycle before each read (the SRAM's read latency): its word is on
  ``data_out`` at the read cycle. It sees the writes fired up to two cycles before the read.

:func:`late_reads` checks exactly, over every fire, that each read gets the value the unified
buffer specifies (the latest write of its element landed by the read's cycle): that write is
at least two cycles old, and no other write reached the word's SRAM address in between.
"""
from __future__ import annotations

import bisect
from collections import defaultdict
from dataclasses import replace

from ubgen.arch import DPBufParams, PUBParams
from ubgen.controller import AffineMap, ControllerConfig

from ..ir.ubimpl import DPBlock, RegisterWidthError
from ..ir.ubuf import UnifiedBuffer
from .block_layout import layout_candidates
from .common import MappingError
from .vectorize import WordStream, enumerate_affine

__all__ = ["build_dp", "late_reads", "DP_READ_LATENCY"]

DP_READ_LATENCY = 1


def _layout_params(dp: DPBufParams) -> PUBParams:
    """The DP SRAM as :func:`.block_layout.block_layout` reads a memory: one-word fetch,
    ``sram_depth`` words per tile, ``chain_bits`` tile bits."""
    return replace(PUBParams(), fetch_width=1, sram_depth=dp.sram_depth,
                   chain_bits=dp.chain_bits, input_ports=1, output_ports=1)


def late_reads(w: WordStream, r: WordStream, wrap: int) -> list[str]:
    """Reads of ``r`` that the dual-port SRAM would not serve with the unified buffer's value:
    the latest write of the element by the read's cycle ``t`` is later than ``t - 2``, or
    another write reached the same SRAM address (``addr mod wrap``) after it and by ``t - 2``.
    Returns one description per such read (empty: every read is served)."""
    wt = enumerate_affine(w.extents, w.time).tolist()
    wa = (enumerate_affine(w.extents, w.addr) % wrap).tolist()
    we = enumerate_affine(w.extents, w.element).tolist()
    by_elem: dict[int, list[int]] = defaultdict(list)
    by_addr: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for t, a, e in sorted(zip(wt, wa, we)):
        by_elem[e].append(t)
        by_addr[a].append((t, e))
    bad = []
    rt = enumerate_affine(r.extents, r.time).tolist()
    ra = (enumerate_affine(r.extents, r.addr) % wrap).tolist()
    re = enumerate_affine(r.extents, r.element).tolist()
    for t, a, e in zip(rt, ra, re):
        times = by_elem.get(e, [])
        k = bisect.bisect_right(times, t)
        if k == 0:
            continue                       # reads a value this buffer never received
        tw = times[k - 1]
        if tw > t - 1 - DP_READ_LATENCY:
            bad.append(f"the read at cycle {t} comes {t - tw} cycle(s) after its write; a "
                       f"dual-port SRAM read fires a cycle early and sees writes at least two "
                       f"cycles old")
            continue
        hist = by_addr[a]
        j = bisect.bisect_right(hist, (t - 1 - DP_READ_LATENCY, float("inf")))
        if hist[j - 1] != (tw, e):
            bad.append(f"the word read at cycle {t} is overwritten at cycle {hist[j - 1][0]} "
                       f"before the read")
    return bad


def _configs(w: WordStream, r: WordStream) -> dict[str, ControllerConfig]:
    def cfg(ws: WordStream, shift: int) -> ControllerConfig:
        return ControllerConfig(ws.extents, AffineMap(ws.time.start - shift, ws.time.strides),
                                {"addr": AffineMap(ws.addr.start, ws.addr.strides)})
    return {"wr": cfg(w, 0), "rd": cfg(r, DP_READ_LATENCY)}


def build_dp(bank: UnifiedBuffer, dp: DPBufParams, buffer: str) -> DPBlock:
    """Linearize, chain and configure one memory block on a dual-port SRAM (module docstring).
    Raises a one-line :class:`MappingError` naming the buffer for a block the dual-port SRAM
    cannot hold: more than one writer or reader, or a read its write does not reach in time."""
    for ports, what in ((bank.inputs, "writers"), (bank.outputs, "readers")):
        if len(ports) != 1:
            raise MappingError(f"buffer {buffer}: memory {bank.name} has {len(ports)} {what} "
                               f"({', '.join(p.name for p in ports)}); a dual-port SRAM has one "
                               f"write and one read port")
    cands, errors = layout_candidates(bank, _layout_params(dp), buffer)
    for c in cands:
        wrap = dp.sram_depth if c.chain.tiles == 1 else 1 << (dp.sram_addr_width + dp.chain_bits)
        w, r = c.words
        bad = late_reads(w, r, wrap)
        if bad:
            errors.append(MappingError(f"buffer {buffer}: memory {bank.name}: {bad[0]}"
                                       + (f" (and {len(bad) - 1} more reads)" if len(bad) > 1
                                          else "")))
            continue
        block = DPBlock(bank.name, buffer, [bank.inputs[0].name], [bank.outputs[0].name],
                        _configs(w, r), dp, c.chain.tiles, capacity_words=c.circ or 0,
                        sram_words=min(c.circ or c.max_addr + 1, c.max_addr + 1))
        try:
            block.registers()
        except RegisterWidthError as e:
            errors.append(MappingError(str(e)))
            continue
        return block
    raise errors[0]
