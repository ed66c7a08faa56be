"""The check of a folded configuration (:mod:`.fold`) in simulation, before synthesis.

Every tile position is simulated twice in one Amaranth simulation: the tile as the array
builds it, configured through its bus by the bitstream's writes for that tile (the hardware's
own address decode), and the same tile with its registers folded into the decoded values
(:class:`.fold.Folded`), whose bus sees no write. After the writes both get the same stimulus for ``cycles`` cycles:
``run`` high, ``stall`` high one cycle in eight, random words on every other input (tracks,
GLB read data) and a random read address on the configuration bus inside the tile's map; then,
stalled, a read of every offset of the map. Every output (tracks, error, GLB port, the
configuration read-back) must be equal in every cycle.
The array around the tiles (wiring, configuration decode, global buffer, host ports) is the
same RTL folded or not, so equal tiles make an equal array for this configuration.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from ..array.layout import ArrayLayout
from .common import FPGAError
from .fold import Folded, FoldedConfig, _modules, _tile

__all__ = ["FoldCheck", "check_fold"]


@dataclass
class FoldCheck:
    """The result: tiles and cycles simulated, ``mismatches`` (``"<tile> cycle <n>: <port>
    <configured> != <folded>"``, the first per tile)."""
    tiles: int = 0
    cycles: int = 0
    writes: int = 0
    mismatches: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.tiles > 0 and not self.mismatches

    def to_dict(self) -> dict:
        return {"tiles": self.tiles, "cycles": self.cycles, "writes": self.writes,
                "ok": self.ok, "mismatches": self.mismatches}


def _pairs(ref, dut):
    """``(name, flow is In, ref value, dut value)`` for every port leaf of two equal tiles."""
    from amaranth.hdl import Value
    from amaranth.lib import wiring
    for (path, member, a), (_, _, b) in zip(ref.signature.flatten(ref),
                                            dut.signature.flatten(dut)):
        yield ("__".join(map(str, path)), member.flow == wiring.In, Value.cast(a),
               Value.cast(b))


def _bench(ref, pairs, writes, cycles, span, rng, where, found: list):
    """The testbench of one tile pair (Amaranth async testbench)."""
    driven = [(a, len(a)) for n, i, a, _ in pairs
              if i and not n.startswith("cfg") and n not in ("run", "stall")]
    outputs = [(n, a, b) for n, i, a, b in pairs if not i]

    async def bench(ctx):
        for offset, value in writes:
            ctx.set(ref.cfg.addr, offset)
            ctx.set(ref.cfg.wdata, value)
            ctx.set(ref.cfg.we, 1)
            await ctx.tick()
        ctx.set(ref.cfg.we, 0)
        ctx.set(ref.run, 1)
        for cycle in range(cycles):
            for sig, width in driven:
                ctx.set(sig, rng.getrandbits(width))
            ctx.set(ref.stall, int(rng.randrange(8) == 0))
            ctx.set(ref.cfg.addr, rng.randrange(span))
            if not await _same(ctx, outputs, f"{where} cycle {cycle}", found):
                return
            await ctx.tick()
        ctx.set(ref.stall, 1)                  # then read back every offset of the map
        for offset in range(span):
            ctx.set(ref.cfg.addr, offset)
            if not await _same(ctx, outputs, f"{where} read-back of offset {offset}", found):
                return
    return bench


async def _same(ctx, outputs, where: str, found: list) -> bool:
    """Whether every output pair is equal now; the first difference goes to ``found``."""
    await ctx.delay(1e-9)
    for name, a, b in outputs:
        va, vb = ctx.get(a), ctx.get(b)
        if va != vb:
            found.append(f"{where}: {name} {va} != {vb}")
            return False
    return True


def _check_tile(layout: ArrayLayout, pos, writes, values, cycles: int, seed: int) -> list[str]:
    from amaranth.hdl import Module
    from amaranth.sim import Simulator
    where = f"tile r{pos.row}c{pos.col} ({pos.kind})"
    ref, dut = _tile(layout, pos), _tile(layout, pos)
    m = Module()
    m.submodules.ref = ref
    m.submodules.dut = Folded(dut, values, where)
    pairs = list(_pairs(ref, dut))
    for name, is_in, a, b in pairs:         # the folded tile takes no configuration write
        if is_in:
            m.d.comb += b.eq(0 if name == "cfg__we" else a)
    spec = layout.specs[pos.kind]
    span = spec.core_span + len(spec.interconnect_regmap.registers)
    found: list[str] = []
    sim = Simulator(m)
    sim.add_clock(1e-8)
    sim.add_testbench(_bench(ref, pairs, writes, cycles, span,
                             random.Random(seed * 1000003 + pos.tile_id), where, found))
    sim.run()
    return found


def check_fold(cfg: FoldedConfig, values=None, *, cycles: int = 64, seed: int = 0,
               positions=None, progress=None) -> FoldCheck:
    """Simulate every folded tile module (one configured tile, or one stand-in for the tiles of
    a kind and edges the bitstream leaves at reset: the same module; or only the tiles at
    ``positions``, ``(row, col)`` pairs) configured by ``cfg.writes`` against the same tile
    folded to ``values`` (default ``cfg.values``; a negative control passes altered ones).
    ``progress(message)`` is called per tile."""
    values = cfg.values if values is None else values
    layout = ArrayLayout(cfg.arch)
    result = FoldCheck(cycles=cycles, writes=cfg.n_writes)
    if positions is None:
        chosen = [pos for pos, _ in _modules(cfg, values).values()]
    else:
        chosen = [p for p in layout.positions() if (p.row, p.col) in set(positions)]
    if not chosen:
        raise FPGAError(f"no tile of {cfg.arch.name} at {sorted(positions or [])}")
    for pos in chosen:
        key = (pos.row, pos.col)
        if progress:
            progress(f"tile r{pos.row}c{pos.col} ({pos.kind}, "
                     f"{len(cfg.writes.get(key, []))} writes)")
        result.mismatches += _check_tile(layout, pos, cfg.writes.get(key, []),
                                         values.get(key, {}), cycles, seed)
        result.tiles += 1
    return result
