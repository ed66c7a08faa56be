"""A dual-port memory block's global schedule turned into a buffet's local one (thesis §6.3:
"When mapping to ready-valid timing protocol, our compiler eliminates the schedule generator and
drops the cycle-level scheduling information between write and read operations. Instead, it
uses this information to ensure that write to read, and read (to free) to write dependencies
are maintained"; the buffet of §6.2, ``ubgen.buffet.spec``).

``buffet_config(block) -> BuffetConfig`` for a :class:`~compiler.ir.ubimpl.DPBlock` (one writer,
one reader: buffer mapping onto dual-port SRAMs, ``[mem] kind = "dp"``):

1. the writes become fills in their order: write ``k`` is position ``k``;
2. each read (in its order) reads the position of the write the static schedule serves it
   (the latest write of its SRAM address fired before the read, from the block's encoded
   ``wr``/``rd`` streams);
3. the oldest positions are released (shrink) at the end of an iteration of a read loop level:
   at the reads after which loop levels ``0 .. l-1`` are all at their last iteration, the head
   moves to the oldest position any later read needs (the "iteration domain point ... which
   indicates that the last read operation in the coarse grained tile has completed", §6.3).
   The innermost level ``l`` (fewest live words) is taken whose releases are one constant
   amount and whose read index relative to the head is affine in the read loops (what an
   address generator of §6.1.2 produces);
4. the result is checked on :class:`ubgen.buffet.spec.BuffetModel`: every read returns the
   position step 2 says, without deadlock, within the buffet's capacity.

No cycle survives: the read-after-fill order is the buffet's dependency check, the
release-before-fill order its full check. A block no level satisfies is refused with a one-line
:class:`~compiler.mapping.common.MappingError` naming the buffer and the reason.
"""
from __future__ import annotations

import bisect
from collections import defaultdict

import numpy as np

from ubgen.buffet.spec import BuffetConfig, BuffetModel, BuffetParams, requests
from ubgen.controller import AffineMap, ControllerConfig

from ..ir.ubimpl import DPBlock, UBImpl
from .common import Affine, MappingError
from .vectorize import enumerate_affine

__all__ = ["buffet_config", "buffet_configs", "read_positions"]


def _fires(cfg: ControllerConfig) -> tuple[list[int], list[int]]:
    t = enumerate_affine(cfg.extents, Affine(cfg.schedule.start, cfg.schedule.strides))
    a = enumerate_affine(cfg.extents, Affine(cfg.addresses["addr"].start,
                                             cfg.addresses["addr"].strides))
    return t.tolist(), a.tolist()


def read_positions(block: DPBlock) -> tuple[int, list[int | None]]:
    """``(fills, position read by each read)``: the fill position (write order) of the value the
    static schedule serves each read of ``block`` (the latest write of its SRAM address fired
    before the read fires); ``None`` for a read before any write of its address."""
    dp = block.params
    wrap = dp.sram_depth if block.tiles == 1 else 1 << (dp.sram_addr_width + dp.chain_bits)
    wt, wa = _fires(block.configs["wr"])
    order = sorted(range(len(wt)), key=lambda k: wt[k])
    by_addr: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for pos, k in enumerate(order):
        by_addr[wa[k] % wrap].append((wt[k], pos))
    rt, ra = _fires(block.configs["rd"])
    out: list[int | None] = []
    for t, a in zip(rt, ra):
        hist = by_addr.get(a % wrap, [])
        j = bisect.bisect_right(hist, (t - 1, float("inf")))
        out.append(hist[j - 1][1] if j else None)
    return len(wt), out


def _last_flags(extents: tuple[int, ...]) -> np.ndarray:
    """Per read (iteration order) and level ``l``: levels ``0..l-1`` all at their last value."""
    n = int(np.prod(extents))
    k = np.arange(n)
    flags = np.ones((n, len(extents) + 1), dtype=bool)
    period = 1
    for d, e in enumerate(extents):
        period *= e
        flags[:, d + 1] = flags[:, d] & (k % period == period - 1)
    return flags


def _affine_fit(extents: tuple[int, ...], values: np.ndarray) -> AffineMap | None:
    """The affine map over ``extents`` (innermost first) with ``values`` in iteration order,
    or ``None``."""
    strides, step = [], 1
    for e in extents:
        strides.append(int(values[step] - values[0]) if e > 1 else 0)
        step *= e
    amap = AffineMap(int(values[0]), tuple(strides))
    if not np.array_equal(enumerate_affine(extents, Affine(amap.start, amap.strides)), values):
        return None
    return amap


def _at_level(block: DPBlock, fills: int, pos: np.ndarray, level: int,
              params: BuffetParams) -> BuffetConfig | str:
    """The configuration releasing at ``level`` (module docstring, step 3), or why not."""
    ext = block.configs["rd"].extents
    n = len(pos)
    later = np.minimum.accumulate(np.append(pos, fills)[::-1])[::-1][1:]   # min of later reads
    events = np.flatnonzero(_last_flags(ext)[:, level])
    head_after = later[events]
    amounts = np.diff(np.concatenate([[0], head_after]))
    if len(set(amounts[:-1].tolist())) > 1 or (amounts < 0).any():
        return f"releases at level {level} are not one constant amount"
    shrink = int(amounts[0])
    head_before = np.zeros(n, dtype=np.int64)
    starts = events + 1
    head_before[starts[:-1]] = shrink
    head_before = np.cumsum(head_before)
    idx = _affine_fit(ext, pos - head_before)
    if idx is None:
        return f"the read index relative to the head is not affine at level {level}"
    cfg = BuffetConfig(block.name, block.buffer, fills, tuple(ext), idx, level, shrink,
                       int((pos - head_before).max()) + 1)
    try:
        got = BuffetModel(params.capacity).run(list(range(fills)), requests(cfg))
    except RuntimeError as e:
        return f"level {level}: {e}"
    if got != pos.tolist():
        return f"level {level}: the buffet reads other positions than the schedule serves"
    return cfg


def buffet_config(block: DPBlock, params: BuffetParams | None = None) -> BuffetConfig:
    """The buffet configuration of ``block`` (module docstring); a one-line
    :class:`MappingError` when the buffet cannot keep its schedule."""
    params = params or BuffetParams.from_dpbuf(block.params)
    what = f"buffer {block.buffer}: memory {block.name}: a schedule the buffet cannot keep"
    fills, positions = read_positions(block)
    if any(p is None for p in positions):
        raise MappingError(f"{what}: a read comes before any write of its word")
    pos = np.array(positions, dtype=np.int64)
    why = []
    for level in range(len(block.configs["rd"].extents) + 1):
        got = _at_level(block, fills, pos, level, params)
        if isinstance(got, BuffetConfig):
            return got
        why.append(got)
    raise MappingError(f"{what}: {why[-1]} (no loop level releases its oldest words by a "
                       f"constant amount within {params.capacity} words)")


def buffet_configs(impls: dict[str, UBImpl], params: BuffetParams | None = None
                   ) -> dict[str, list[BuffetConfig]]:
    """Every dual-port block of a mapping as a buffet, per buffer; raises the first
    :class:`MappingError`."""
    return {name: [buffet_config(b, params) for b in impl.dps]
            for name, impl in impls.items() if impl.dps}
