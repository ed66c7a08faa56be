"""Transpose buffer (thesis §6.1.3): wide writes with owned bits, word reads, against a model."""
import random

from ubgen.pub import TransposeBuffer
from tests.gateware import run_testbench


def test_transpose_buffer_parallel_to_serial():
    dut = TransposeBuffer(word_width=16, fetch_width=4, depth=2)
    rng = random.Random(4)
    words, owned = [0] * 8, [0, 0]

    async def bench(ctx):
        for _ in range(200):
            we, slot, wide = rng.random() < 0.5, rng.randrange(2), rng.randrange(1 << 64)
            wown, raddr = rng.randrange(2), rng.randrange(8)
            ctx.set(dut.we, we)
            ctx.set(dut.waddr, slot)
            ctx.set(dut.wdata, wide)
            ctx.set(dut.wowned, wown)
            ctx.set(dut.raddr, raddr)
            assert ctx.get(dut.rdata) == words[raddr]
            assert ctx.get(dut.rowned) == owned[raddr // 4]
            await ctx.tick()
            if we:
                for lane in range(4):
                    words[slot * 4 + lane] = (wide >> (16 * lane)) & 0xFFFF
                owned[slot] = wown

    run_testbench(dut, bench)


def test_transpose_buffer_four_slots():
    """A 4-slot TB (tb_depth = 4) holds a whole 4x4 block: read it column by column."""
    dut = TransposeBuffer(word_width=16, fetch_width=4, depth=4)
    block = [[16 * r + c for c in range(4)] for r in range(4)]

    async def bench(ctx):
        ctx.set(dut.we, 1)
        for r in range(4):
            ctx.set(dut.waddr, r)
            ctx.set(dut.wdata, sum(v << (16 * c) for c, v in enumerate(block[r])))
            await ctx.tick()
        ctx.set(dut.we, 0)
        for c in range(4):
            for r in range(4):
                ctx.set(dut.raddr, 4 * r + c)
                assert ctx.get(dut.rdata) == block[r][c]

    run_testbench(dut, bench)
