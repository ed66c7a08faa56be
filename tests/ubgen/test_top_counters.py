"""``cgra_top``'s performance counters (docs/top.md "Performance counters"), Amaranth simulator:
:class:`ubgen.top.counters.WriteCounters` against a plain-Python model on random write-strobe,
run, stall and clear patterns (with a negative control: a counter that counts write *cycles*
instead of words is caught), and the counters inside a whole ``cgra_top`` read over AXI4-Lite
after IO tiles wrote the GLB, with a stall in the run."""
from __future__ import annotations

import random
from dataclasses import replace

import pytest
from amaranth.hdl import Module

from tests.gateware import run_testbench
from tests.ubgen.test_axil import read, write
from ubgen.arch import load_arch
from ubgen.array.layout import ArrayLayout
from ubgen.controller import AffineMap, ControllerConfig, encode_controller
from ubgen.io.io_tile import io_layouts
from ubgen.top.axil import OKAY, SLVERR
from ubgen.top.cgra_top import CGRATop, control_address, tile_address
from ubgen.top.counters import WriteCounters


def reference(trace):
    """(first, last, writes) after ``trace``: one (clear, run, cycle, strobes) per cycle."""
    first = last = writes = 0
    for clear, run, cycle, we in trace:
        if clear:
            first = last = writes = 0
        elif run and any(we):
            if writes == 0:
                first = cycle
            last, writes = cycle, writes + sum(we)
    return first, last, writes


def random_trace(rng: random.Random, n: int, cycles: int):
    """A host-like pattern: clears, runs with stalls (the cycle does not advance while
    stalled), random strobes; the cycle counter is 0 while not running."""
    trace, run, cycle = [], 0, 0
    for _ in range(cycles):
        clear = int(not run and rng.random() < 0.1)
        if clear:
            run = 1
        elif rng.random() < 0.03:
            run = 0
        we = [int(rng.random() < 0.3) for _ in range(n)]
        trace.append((clear, run if not clear else 0, cycle if run and not clear else 0, we))
        if run and not clear and rng.random() < 0.8:
            cycle += 1
        if not run:
            cycle = 0
    return trace


def simulate(dut, trace):
    """The counters' (first, last, writes) after every cycle of ``trace``, on ``dut``."""
    seen = []

    async def bench(ctx):
        for clear, run, cycle, we in trace:
            ctx.set(dut.clear, clear)
            ctx.set(dut.run, run)
            ctx.set(dut.cycle, cycle)
            ctx.set(dut.we, sum(b << i for i, b in enumerate(we)))
            await ctx.tick()
            seen.append((ctx.get(dut.first), ctx.get(dut.last), ctx.get(dut.writes)))

    run_testbench(dut, bench)
    return seen


def mismatches(dut, trace) -> list[int]:
    got = simulate(dut, trace)
    return [i for i in range(len(trace)) if got[i] != reference(trace[:i + 1])]


@pytest.mark.parametrize("n,seed", [(1, 0), (3, 1), (8, 2)])
def test_write_counters_match_model(n, seed):
    trace = random_trace(random.Random(seed), n, 400)
    assert sum(sum(we) for c, r, _, we in trace if r and not c) > 50    # the trace has writes
    assert mismatches(WriteCounters(n), trace) == []


class CountsCycles(WriteCounters):
    """A wrong counter: one per cycle with a write, however many IO tiles write in it."""

    def elaborate(self, platform):
        m = Module()
        with m.If(self.clear):
            m.d.sync += [self.first.eq(0), self.last.eq(0), self.writes.eq(0)]
        with m.Elif(self.run & self.we.any()):
            with m.If(self.writes == 0):
                m.d.sync += self.first.eq(self.cycle)
            m.d.sync += [self.last.eq(self.cycle), self.writes.eq(self.writes + 1)]
        return m


def test_negative_control_wrong_counter_is_caught():
    trace = random_trace(random.Random(1), 3, 400)
    assert mismatches(CountsCycles(3), trace)


def test_cgra_top_counters_over_axi():
    """A 2x4 array: IO tiles 0 and 1 each write ``N`` words (from cycle ``S`` and ``S + 2``)
    while the host stalls the array for a few cycles; the counters read over AXI-Lite give the
    first and last write's unstalled cycle and 2N words, they hold after START = 0, are read
    only (SLVERR) and restart with the next run."""
    base = load_arch("cgra_4x4")
    arch = replace(base, array=replace(base.array, rows=2, tracks=2))
    top = CGRATop(arch)
    lay = ArrayLayout(arch)
    layout = io_layouts(arch)["f2glb"]
    rm = lay.specs["io"].regmap
    n, start = 5, 12
    writes = []
    for col, s in ((0, start), (1, start + 2)):
        cfg = encode_controller(ControllerConfig((n,), AffineMap(s, (1,)),
                                                 {"addr": AffineMap(0, (1,))}), layout)
        writes += [(tile_address(lay.tile_id(0, col), off), v) for off, v in rm.writes(cfg)]
    rng = random.Random(0)
    ctrl = control_address

    async def bench(ctx):
        for addr, value in writes:
            assert await write(ctx, top, addr, value, rng=rng) == OKAY
        assert await write(ctx, top, ctrl("START"), 1, rng=rng) == OKAY
        assert await write(ctx, top, ctrl("STALL"), 1, rng=rng) == OKAY
        assert (await read(ctx, top, ctrl("CYCLE"), rng))[1] < start   # stalled before writes
        for _ in range(6):
            await ctx.tick()
        assert await write(ctx, top, ctrl("STALL"), 0, rng=rng) == OKAY
        for _ in range(start + n + 10):
            await ctx.tick()
        got = {r: (await read(ctx, top, ctrl(r), rng))[1]
               for r in ("FIRST_WRITE", "LAST_WRITE", "WRITES")}
        assert got == {"FIRST_WRITE": start, "LAST_WRITE": start + 2 + n - 1, "WRITES": 2 * n}
        assert (await read(ctx, top, ctrl("CYCLE"), rng))[1] > start + n + 10
        assert await write(ctx, top, ctrl("WRITES"), 0, rng=rng) == SLVERR
        assert await write(ctx, top, ctrl("START"), 0, rng=rng) == OKAY
        for r, v in got.items():
            assert (await read(ctx, top, ctrl(r), rng)) == (OKAY, v)
        # the next run restarts them: IO tile 1 starts past the run, IO tile 0 writes alone
        late = tile_address(lay.tile_id(0, 1), rm["f2glb_cycle_start"].offset)
        assert await write(ctx, top, late, 1000, rng=rng) == OKAY
        assert await write(ctx, top, ctrl("START"), 1, rng=rng) == OKAY
        for _ in range(start + n + 4):
            await ctx.tick()
        got = {r: (await read(ctx, top, ctrl(r), rng))[1]
               for r in ("FIRST_WRITE", "LAST_WRITE", "WRITES")}
        assert got == {"FIRST_WRITE": start, "LAST_WRITE": start + n - 1, "WRITES": n}

    run_testbench(top, bench)
