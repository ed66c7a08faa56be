"""``cgra_top`` drives the array's configuration bus only for accesses to the tile region
(docs/top.md "Inside the top", docs/energy.md "An unused tile"), Amaranth simulator on a 1x3
array (three IO and three PE tiles) over AXI4-Lite: while the host polls ``DONE``, writes control registers or reads and
writes the GLB, the configuration inputs of every tile (address, write data, write enable)
do not change in any cycle; tile writes and reads do change them (the negative control), and
read back what was written. A top whose configuration bus follows every host access (the
earlier decoder, planted here) is caught."""
from __future__ import annotations

import random
from dataclasses import replace

from amaranth.hdl import Cat, Module, Signal
from amaranth.sim import Simulator

from tests.ubgen.test_axil import read, write
from ubgen.arch import load_arch
from ubgen.array.layout import ArrayLayout
from ubgen.array.tilespec import TILE_ADDR_WIDTH
from ubgen.top.axil import OKAY
from ubgen.top.cgra_top import CGRATop, control_address, glb_address, tile_address
from ubgen.top.spec import TILE_ID_BITS, TILE_ID_SHIFT, WORD_SHIFT


def small_arch():
    base = load_arch("cgra_4x4")
    return replace(base, array=replace(base.array, rows=1, columns=3, tracks=1))


class FollowsEveryAccess(CGRATop):
    """The wrong decoder: the tiles' address and write data follow the host bus in every
    cycle, whatever the access targets (only the write enable is qualified)."""

    def _tile_port(self, m: Module, ctx, selected) -> None:
        cfg, bus = self.array.cfg, ctx.bus
        tile_id = bus.addr[TILE_ID_SHIFT:TILE_ID_SHIFT + TILE_ID_BITS]
        reg_off = bus.addr[WORD_SHIFT:TILE_ID_SHIFT]
        ok = Signal()
        m.d.comb += [ok.eq(1), cfg.addr.eq(Cat(reg_off[:TILE_ADDR_WIDTH], tile_id)),
                     cfg.wdata.eq(ctx.wdata32)]
        with m.If(selected):
            ctx.accept(selected, "tile", write_ok=ok & ctx.whole, read_ok=ok)
            m.d.comb += cfg.we.eq(bus.we & ok & ctx.whole)


def host_session(top_cls):
    """Configure two tiles, read them back, run and poll DONE, access the GLB and control
    registers. Returns (samples, reads): ``samples`` is one (phase, bus value) per cycle,
    the bus value being every tile's (addr, wdata, we); ``reads`` the tile read-backs."""
    arch = small_arch()
    top, lay = top_cls(arch), ArrayLayout(arch)
    tiles = [top.array.tiles[p.row, p.col] for p in lay.positions()]
    assert [p.kind for p in lay.positions()] == ["io"] * 3 + ["pe"] * 3
    sigs = [s for t in tiles for s in (t.cfg.addr, t.cfg.wdata, t.cfg.we)]
    pe = next(p for p in lay.positions() if p.kind == "pe")
    io = next(p for p in lay.positions() if p.kind == "io" and p.tile_id)   # not address 0
    # registers at offsets other than 0 (the bus's rest value), all ones
    regs = [(p.tile_id, r.offset, (1 << r.width) - 1)
            for p, n in ((pe, 3), (io, 2))
            for r in [r for r in lay.specs[p.kind].regmap.registers if r.offset][:n]]
    assert len(regs) == 5
    phase, samples, reads = ["idle"], [], {}
    rng, ctrl = random.Random(0), control_address

    async def monitor(ctx):
        async for _clk, _rst, *values in ctx.tick().sample(*sigs):
            samples.append((phase[0], tuple(values)))

    async def host(ctx):
        phase[0] = "tile write"
        for tid, off, value in regs:
            assert await write(ctx, top, tile_address(tid, off), value, rng=rng) == OKAY
        phase[0] = "glb"
        for w in range(2):
            assert await write(ctx, top, glb_address(w), 0x1234 + w, rng=rng) == OKAY
            assert await read(ctx, top, glb_address(w), rng) == (OKAY, 0x1234 + w)
        phase[0] = "control"
        assert await write(ctx, top, ctrl("DONE_CYCLE"), 12, rng=rng) == OKAY
        assert await write(ctx, top, ctrl("START"), 1, rng=rng) == OKAY
        phase[0] = "poll"
        polls = 0
        while (await read(ctx, top, ctrl("DONE"), rng))[1] == 0:
            polls += 1
        assert polls >= 2
        assert await write(ctx, top, ctrl("START"), 0, rng=rng) == OKAY
        phase[0] = "tile read"
        for tid, off, _ in regs:
            reads[tid, off] = await read(ctx, top, tile_address(tid, off), rng)
        phase[0] = "end"

    sim = Simulator(top)
    sim.add_clock(1e-6)
    sim.add_testbench(monitor, background=True)
    sim.add_testbench(host)
    sim.run()
    return samples, reads, regs


def changes(samples, phase: str) -> int:
    """Cycles of ``phase`` in which some tile's configuration input differs from the cycle
    before."""
    seq = [(p, v) for p, v in samples]
    assert any(p == phase for p, _ in seq), phase
    return sum(1 for (_, a), (p, b) in zip(seq, seq[1:]) if p == phase and a != b)


def test_only_tile_accesses_move_the_tiles_configuration_inputs():
    samples, reads, regs = host_session(CGRATop)
    assert reads == {(tid, off): (OKAY, v) for tid, off, v in regs}
    for phase in ("glb", "control", "poll"):
        assert changes(samples, phase) == 0, phase
    # negative control: tile writes and reads move them (each access out and back to rest)
    assert changes(samples, "tile write") == 2 * len(regs)
    assert changes(samples, "tile read") == 2 * len(regs)


def test_a_bus_that_follows_every_access_is_caught():
    samples, reads, regs = host_session(FollowsEveryAccess)
    assert reads == {(tid, off): (OKAY, v) for tid, off, v in regs}
    assert changes(samples, "poll") > 0 and changes(samples, "glb") > 0
