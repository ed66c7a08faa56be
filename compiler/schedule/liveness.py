"""Live capacity of every unified buffer (the "SRAM words" of paper Table VII).

A *value* is one write instance. It is live from the cycle its write completes
(``T_write + L_write``) through the cycle of its last read, inclusive; its reads are the read
instances whose last writer in program order (the RAW dependence of :mod:`compiler.poly.deps`)
it is. A buffer's live capacity is the maximum over cycles of the number of live values: the
words a circular buffer needs under this schedule (thesis §3.3 "address linearization with
circular-buffer modulo on live capacity"). The application total is the sum over buffers.

Conventions matching Table VII: ``input`` buffers live in the global buffer and stream in (the
app's copy stage writes them into a CGRA memory, which is counted); values that are never read
on the array (outputs streamed to the global buffer) occupy no words.

Counting needs the number of integer points per cycle, which islpy cannot compute (no
barvinok), so instances are enumerated with numpy: every op's domain is the box of its loop
bounds; element, time and program-order key are evaluated from the same affine forms the isl
maps were built from.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir.program import Access, Op, Program
from ..ir.schedule import Schedule


@dataclass
class BufferLiveness:
    name: str
    live_words: int
    values: int
    ports: int

    def to_dict(self) -> dict:
        return {"name": self.name, "live_words": self.live_words, "values": self.values,
                "ports": self.ports}


def _instances(op: Op) -> dict[str, np.ndarray]:
    loops = op.loops
    if not loops:
        return {}
    grids = np.meshgrid(*[np.arange(lp.start, lp.start + lp.extent, dtype=np.int64)
                          for lp in loops], indexing="ij")
    return {lp.name: g.ravel() for lp, g in zip(loops, grids)}


def _count(op: Op) -> int:
    n = 1
    for lp in op.loops:
        n *= lp.extent
    return n


def _element(acc: Access, env: dict, n: int, shape) -> np.ndarray:
    """Linear element number (first index innermost)."""
    lin = np.zeros(n, dtype=np.int64)
    stride = 1
    for k, idx in enumerate(acc.index):
        v = idx.evaluate(env) if env else idx.const
        lin = lin + np.asarray(v, dtype=np.int64) * stride
        stride *= int(shape[k]) if shape else 1 << 20
    return lin


def _times(sched: Schedule, op: Op, env: dict, n: int) -> np.ndarray:
    s = sched.ops[op.name]
    t = np.full(n, s.offset, dtype=np.int64)
    for d, c in zip(s.dims, s.coeffs):
        t = t + c * env[d]
    return t


@dataclass
class Values:
    """Every write instance of one buffer: element, program-order key, issue time, landing
    time (issue + latency), flat tile index, and the time of its last read (-1: never read)."""
    element: np.ndarray
    key: np.ndarray
    issue: np.ndarray
    land: np.ndarray
    tile: np.ndarray
    last_read: np.ndarray
    accesses: int


def value_tables(program: Program, sched: Schedule, order: Schedule,
                 tile_loops: list[str] = ()) -> dict[str, Values]:
    """:class:`Values` of every non-input buffer that some op writes. ``order`` is any schedule
    in program order (the sequential one), used to find each read's last writer; the flat tile
    index counts iterations of ``tile_loops`` (outermost first; 0 if not enclosing)."""
    writes: dict[str, list] = {}
    reads: dict[str, list] = {}
    loops = {lp.name: lp for lp in program.loops()}
    for op in program.ops():
        env, n = _instances(op), _count(op)
        t, key = _times(sched, op, env, n), _times(order, op, env, n)
        tile = np.zeros(n, dtype=np.int64)
        for name in tile_loops:
            if name in env:
                tile = tile * loops[name].extent + (env[name] - loops[name].start)
        lat = max(0, sched.ops[op.name].latency)
        shape = program.buffers[op.store.buffer].shape
        writes.setdefault(op.store.buffer, []).append(
            (_element(op.store, env, n, shape), key, t, t + lat, tile))
        for ld in op.loads:
            reads.setdefault(ld.buffer, []).append(
                (_element(ld, env, n, program.buffers[ld.buffer].shape), key, t))
    out = {}
    for name, decl in program.buffers.items():
        if decl.kind == "input" or name not in writes:
            continue
        w = [np.concatenate([x[k] for x in writes[name]]) for k in range(5)]
        last = np.full(len(w[0]), -1, dtype=np.int64)
        if name in reads:
            r_el, r_key, r_t = [np.concatenate([x[k] for x in reads[name]]) for k in range(3)]
            span = int(max(w[1].max(), r_key.max())) + 1
            lo = int(min(w[0].min(), r_el.min()))
            wk = (w[0] - lo) * span + w[1]
            srt = np.argsort(wk, kind="stable")
            wk_sorted = wk[srt]
            pos = np.searchsorted(wk_sorted, (r_el - lo) * span + r_key, side="left") - 1
            ok = pos >= 0
            ok[ok] &= (wk_sorted[pos[ok]] // span) == (r_el[ok] - lo)
            np.maximum.at(last, srt[pos[ok]], r_t[ok])
        out[name] = Values(w[0], w[1], w[2], w[3], w[4], last,
                           len(writes[name]) + len(reads.get(name, [])))
    return out


def buffer_liveness(program: Program, sched: Schedule, order: Schedule) -> list[BufferLiveness]:
    """Live words per buffer under ``sched``; ``order`` is any schedule in program order (the
    sequential one) used to find each read's last writer."""
    out = []
    for name, v in value_tables(program, sched, order).items():
        live = v.last_read >= 0
        if not live.any():
            out.append(BufferLiveness(name, 0, len(v.element), v.accesses))
            continue
        start, end = v.land[live], np.maximum(v.last_read[live], v.land[live])
        base = int(start.min())
        diff = np.zeros(int(end.max()) - base + 2, dtype=np.int64)
        np.add.at(diff, start - base, 1)
        np.add.at(diff, end - base + 1, -1)
        out.append(BufferLiveness(name, int(np.cumsum(diff).max()), len(v.element),
                                  v.accesses))
    return out


def total_live_words(bufs: list[BufferLiveness]) -> int:
    return sum(b.live_words for b in bufs)
