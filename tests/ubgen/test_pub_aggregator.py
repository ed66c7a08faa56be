"""Aggregator (thesis §6.1.3): word writes, wide reads one cycle later, against a list model."""
import random

from ubgen.pub import Aggregator
from tests.gateware import run_testbench


def test_aggregator_serial_to_parallel():
    dut = Aggregator(word_width=16, fetch_width=4, depth=2)
    rng = random.Random(3)
    model = [0] * 8

    async def bench(ctx):
        for _ in range(200):
            we, waddr, wdata = rng.random() < 0.7, rng.randrange(8), rng.randrange(1 << 16)
            raddr = rng.randrange(2)
            ctx.set(dut.we, we)
            ctx.set(dut.waddr, waddr)
            ctx.set(dut.wdata, wdata)
            ctx.set(dut.raddr, raddr)
            # The read shows the state before this cycle's write.
            want = sum(model[raddr * 4 + lane] << (16 * lane) for lane in range(4))
            assert ctx.get(dut.rdata) == want
            await ctx.tick()
            if we:
                model[waddr] = wdata

    run_testbench(dut, bench)


def test_aggregator_fills_wide_word_in_lane_order():
    dut = Aggregator(word_width=16, fetch_width=4, depth=2)

    async def bench(ctx):
        ctx.set(dut.we, 1)
        for i, v in enumerate([0x1111, 0x2222, 0x3333, 0x4444]):
            ctx.set(dut.waddr, 4 + i)
            ctx.set(dut.wdata, v)
            await ctx.tick()
        ctx.set(dut.we, 0)
        ctx.set(dut.raddr, 1)
        assert ctx.get(dut.rdata) == 0x4444_3333_2222_1111

    run_testbench(dut, bench)
