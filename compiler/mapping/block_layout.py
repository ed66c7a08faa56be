"""Linear layouts of one memory block (thesis §5.6): ``layout_candidates(bank, pub, buffer)``.

The block's streams are linearized row-major with the writers' row innermost and rows padded to
the fetch width (:func:`.linearize.box_layout`), the offsets reduced modulo the live capacity
when the writes advance (circular buffer), and tiles chained by the address range
(:mod:`.chaining`). An outer tile loop that rewrites the same addresses may become an extra
address dimension (:func:`_tile_versioned`). Both memory kinds use these layouts: the PUB
(:func:`.map_buffer.build_pub`, fetch width 4) and the dual-port SRAM
(:func:`.dp_block.build_dp`, fetch width 1).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ubgen.arch import PUBParams

from ..ir.ubuf import UnifiedBuffer
from .chaining import Chain, chain_tiles
from .common import Affine, MappingError, Stream, port_stream
from .linearize import (box_layout, linear, live_span, next_pow2, reduce_offsets,
                        row_dimension, tile_dims, versions_match, with_tile_dims)
from .vectorize import WordStream, enumerate_affine

__all__ = ["BlockLayout", "block_layout", "layout_candidates"]

def _max(a: Affine, extents) -> int:
    return a.start + sum(max(0, s) * (e - 1) for s, e in zip(a.strides, extents))


def _layout(streams: list[Stream], fw: int, ins: list[Stream] | None = None
            ) -> tuple[list[int], tuple[int, ...]]:
    """Lowest address and row-major offset vector (§5.6) over the address box of ``streams``,
    rows padded to the fetch width; the dimension the writers ``ins`` fill row by row is the
    innermost (:func:`.linearize.row_dimension`)."""
    return box_layout(streams, pad=fw, row=row_dimension(ins) if ins else None)[:2]


def _tile_versioned(ins: list[Stream], outs: list[Stream], fw: int
                    ) -> tuple[list[Stream], list[Stream]]:
    """The streams with their outer tile loops as extra address dimensions (:func:`.linearize
    .tile_dims`), when that versioning is exactly what every read sees; else unchanged."""
    streams = ins + outs
    k = tile_dims([s.extents for s in streams], [s.addr for s in streams])
    if not k or not ins or not outs:
        return ins, outs
    aug = [replace(s, addr=with_tile_dims(s.extents, s.addr, k)) for s in streams]

    def ids(group: list[Stream]):
        lows, offs = _layout(group, fw, group[:len(ins)])
        return [enumerate_affine(s.extents, linear(s.addr, offs, lows)) for s in group]
    plain, vers = ids(streams), ids(aug)
    times = [enumerate_affine(s.extents, s.time) for s in streams]
    n = len(ins)
    cat = np.concatenate
    if not versions_match(cat(times[:n]), cat(plain[:n]), cat(vers[:n]),
                          cat(times[n:]), cat(plain[n:]), cat(vers[n:])):
        return ins, outs
    return aug[:n], aug[n:]


@dataclass
class BlockLayout:
    """One candidate linear layout of a memory block (§5.6): the word streams (inputs first),
    the chain of tiles that holds them and the circular capacity (``None``: not circular)."""
    words: list[WordStream]
    n_in: int
    chain: Chain
    circ: int | None
    max_addr: int


def block_layout(ins: list[Stream], outs: list[Stream], pub: PUBParams, buffer: str
                 ) -> BlockLayout:
    """Linearize ``ins + outs`` (writers' row innermost, rows padded to the fetch width),
    reduce the offsets modulo the live capacity when the writes advance (circular buffer), and
    chain tiles by the address range."""
    fw = pub.fetch_width
    streams = ins + outs
    lows, offsets = _layout(streams, fw, ins)
    full = offsets

    def lin(s: Stream, offs) -> Affine:
        return linear(s.addr, offs, lows)
    wt = np.concatenate([enumerate_affine(s.extents, s.time) for s in ins])
    wa = np.concatenate([enumerate_affine(s.extents, lin(s, offsets)) for s in ins])
    rt = np.concatenate([enumerate_affine(s.extents, s.time) for s in outs])
    ra = np.concatenate([enumerate_affine(s.extents, lin(s, offsets)) for s in outs])
    span = live_span(wt, wa, rt, ra)
    capacity = pub.sram_depth * fw
    circ = next_pow2(max(span, 2 * fw)) if span is not None else None
    if circ is not None and circ < (1 << (pub.sram_addr_width + pub.chain_bits)) * fw:
        offsets = reduce_offsets(offsets, circ)
    else:
        circ = None
    words = [WordStream(s.name, s.extents, s.time, lin(s, offsets), lin(s, full))
             for s in streams]
    max_addr = max(_max(w.addr, w.extents) for w in words)
    if circ is not None and circ <= capacity:
        # unchained, the SRAM uses the low address bits only: its wrap at the capacity (a
        # multiple of circ) completes the modulo of the reduced offsets (§5.6)
        chain = chain_tiles(0, capacity, pub.chain_bits, buffer)
        max_addr = min(max_addr, circ - 1)
    else:
        chain = chain_tiles(max_addr, capacity, pub.chain_bits, buffer)
    return BlockLayout(words, len(ins), chain, circ, max_addr)


def layout_candidates(bank: UnifiedBuffer, pub: PUBParams, buffer: str
                      ) -> tuple[list[BlockLayout], list[MappingError]]:
    """The linear layouts of a memory block to try, fewest chained tiles first (the
    tile-versioned one on a tie, :func:`build_pub`), and the errors of those that failed."""
    ins = [port_stream(p) for p in bank.inputs]
    outs = [port_stream(p) for p in bank.outputs]
    vins, vouts = _tile_versioned(ins, outs, pub.fetch_width)
    cands, errors = [], []
    for i, o in ([(vins, vouts)] if vins is not ins else []) + [(ins, outs)]:
        try:
            cands.append(block_layout(i, o, pub, buffer))
        except MappingError as e:
            errors.append(e)
    cands.sort(key=lambda c: c.chain.tiles)            # stable: the versioned layout on a tie
    return cands, errors
