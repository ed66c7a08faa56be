"""Global buffer: host port, IO ports, priority rules and the bank-conflict flag (thesis §7.1)."""
import random

from ubgen.arch import GLBParams
from ubgen.glb.global_buffer import GlobalBuffer
from tests.gateware import glb_host_read, glb_host_writes, run_testbench

GLB = GLBParams(banks=2, bank_words=16)


async def host_write(ctx, dut, word, value):
    await glb_host_writes(ctx, dut.host, [(word, value)])


async def host_read(ctx, dut, word):
    return await glb_host_read(ctx, dut.host, word)


def test_host_bank_major_and_io_ports():
    dut = GlobalBuffer(GLB, io_columns=[0, 1, 2])     # columns 0 and 2 share bank 0
    rng = random.Random(1)
    ref = {w: rng.randrange(1 << 16) for w in range(GLB.banks * GLB.bank_words)}

    async def bench(ctx):
        for w, v in ref.items():
            await host_write(ctx, dut, w, v)
        for w in rng.sample(sorted(ref), 20):
            assert await host_read(ctx, dut, w) == ref[w]
        # IO ports are ignored while stopped
        ctx.set(dut.io_1.addr, 3)
        ctx.set(dut.io_1.wdata, 0xDEAD)
        ctx.set(dut.io_1.we, 1)
        await ctx.tick()
        ctx.set(dut.io_1.we, 0)
        assert await host_read(ctx, dut, GLB.bank_words + 3) == ref[GLB.bank_words + 3]
        # running: column 1 reads bank 1 (latency 1), column 2 writes bank 0
        ctx.set(dut.run, 1)
        ctx.set(dut.io_1.addr, 5)
        ctx.set(dut.io_1.re, 1)
        ctx.set(dut.io_2.addr, 7)
        ctx.set(dut.io_2.wdata, 0x1234)
        ctx.set(dut.io_2.we, 1)
        await ctx.tick()
        ctx.set(dut.io_1.re, 0)
        ctx.set(dut.io_2.we, 0)
        assert ctx.get(dut.io_1.rdata) == ref[GLB.bank_words + 5]
        # host is ignored while running
        await host_write(ctx, dut, 8, 0x5555)
        await ctx.tick()
        assert ctx.get(dut.io_1.rdata) == ref[GLB.bank_words + 5]   # holds
        assert ctx.get(dut.error) == 0
        ctx.set(dut.io_0.addr, 7)
        ctx.set(dut.io_0.re, 1)
        await ctx.tick()
        ctx.set(dut.io_0.re, 0)
        assert ctx.get(dut.io_0.rdata) == 0x1234
        assert ctx.get(dut.io_2.rdata) == 0x1234                     # same bank, broadcast
        ctx.set(dut.run, 0)
        await ctx.tick()
        assert await host_read(ctx, dut, 7) == 0x1234
        assert await host_read(ctx, dut, 8) == ref[8]

    run_testbench(dut, bench)


def test_bank_conflict_sets_sticky_error():
    dut = GlobalBuffer(GLB, io_columns=[0, 2])

    async def bench(ctx):
        ctx.set(dut.run, 1)
        ctx.set(dut.io_0.addr, 1)
        ctx.set(dut.io_0.wdata, 11)
        ctx.set(dut.io_0.we, 1)
        ctx.set(dut.io_2.addr, 2)
        ctx.set(dut.io_2.wdata, 22)
        ctx.set(dut.io_2.we, 1)
        await ctx.tick()
        ctx.set(dut.io_0.we, 0)
        ctx.set(dut.io_2.we, 0)
        await ctx.tick()
        assert ctx.get(dut.error) == 1                # sticky
        ctx.set(dut.run, 0)
        await ctx.tick()
        assert ctx.get(dut.error) == 0
        assert await host_read(ctx, dut, 1) == 11     # the lowest column won
        assert await host_read(ctx, dut, 2) != 22

    run_testbench(dut, bench)


def test_host_rows_with_byte_enables():
    """The host's row port moves four words per access, bank-major, under byte enables; the
    IO ports see the same words one by one."""
    dut = GlobalBuffer(GLB, io_columns=[0, 1])
    rng = random.Random(3)
    rows = GLB.banks * GLB.bank_words // 4
    ref = [rng.randrange(1 << 16) for _ in range(4 * rows)]

    async def bench(ctx):
        for r in range(rows):
            ctx.set(dut.host.addr, r)
            ctx.set(dut.host.wdata, sum(ref[4 * r + i] << 16 * i for i in range(4)))
            ctx.set(dut.host.be, 0xFF)
            ctx.set(dut.host.we, 1)
            await ctx.tick()
        # byte enables: only bytes 1 and 6 of row 5 change
        ctx.set(dut.host.addr, 5)
        ctx.set(dut.host.wdata, 0xAABBCCDDEEFF1122)
        ctx.set(dut.host.be, 0b0100_0010)
        await ctx.tick()
        ctx.set(dut.host.we, 0)
        ref[20] = (ref[20] & 0x00FF) | 0x1100
        ref[23] = (ref[23] & 0xFF00) | 0xBB
        # back-to-back row reads: one per cycle, each answered after the clock edge
        got = []
        ctx.set(dut.host.re, 1)
        for r in range(rows):
            ctx.set(dut.host.addr, r)
            await ctx.tick()
            got.append(ctx.get(dut.host.rdata))
        ctx.set(dut.host.re, 0)
        assert got == [sum(ref[4 * r + i] << 16 * i for i in range(4)) for r in range(rows)]
        # the IO side reads single words (its lane) of the same rows
        ctx.set(dut.run, 1)
        for w in rng.sample(range(GLB.bank_words), 8):
            ctx.set(dut.io_1.addr, w)
            ctx.set(dut.io_1.re, 1)
            await ctx.tick()
            ctx.set(dut.io_1.re, 0)
            assert ctx.get(dut.io_1.rdata) == ref[GLB.bank_words + w], w

    run_testbench(dut, bench)


def test_shared_while_running_takes_only_the_free_port():
    """``share`` = 1: while running, a host write is taken in a cycle no IO tile writes its
    bank and a host read in a cycle none reads it; a collision is refused (``host_wok`` /
    ``host_rok`` = 0) and changes nothing, the IO access winning. ``share`` = 0: refused."""
    dut = GlobalBuffer(GLB, io_columns=[0, 1])        # column c uses bank c

    async def bench(ctx):
        await host_write(ctx, dut, 3, 0x0303)           # bank 0, read by column 0
        await host_write(ctx, dut, GLB.bank_words + 9, 0x0909)
        ctx.set(dut.run, 1)
        # not shared: nothing is taken
        ctx.set(dut.host.addr, 1)                       # row 1 of bank 0: words 4..7
        assert (ctx.get(dut.host_wok), ctx.get(dut.host_rok)) == (0, 0)
        ctx.set(dut.share, 1)
        # column 0 reads word 3 of bank 0 while the host writes row 1 of bank 0: both taken
        ctx.set(dut.io_0.addr, 3)
        ctx.set(dut.io_0.re, 1)
        assert (ctx.get(dut.host_wok), ctx.get(dut.host_rok)) == (1, 0)
        ctx.set(dut.host.wdata, 0x4444_5555_6666_7777)
        ctx.set(dut.host.be, 0xFF)
        ctx.set(dut.host.we, 1)
        await ctx.tick()
        ctx.set(dut.host.we, 0)
        ctx.set(dut.io_0.re, 0)
        assert ctx.get(dut.io_0.rdata) == 0x0303
        # column 1 writes bank 1 while the host would write there: refused, the IO write lands
        ctx.set(dut.io_1.addr, 9)
        ctx.set(dut.io_1.wdata, 0xAAAA)
        ctx.set(dut.io_1.we, 1)
        ctx.set(dut.host.addr, (GLB.bank_words + 8) // 4)
        assert (ctx.get(dut.host_wok), ctx.get(dut.host_rok)) == (0, 1)
        ctx.set(dut.host.re, 1)                         # the read port is free: a read works
        await ctx.tick()
        ctx.set(dut.io_1.we, 0)
        ctx.set(dut.host.re, 0)
        assert (ctx.get(dut.host.rdata) >> 16) & 0xFFFF == 0x0909   # the row before the write
        assert ctx.get(dut.error) == 0
        ctx.set(dut.run, 0)
        await ctx.tick()
        assert await host_read(ctx, dut, 4) == 0x7777
        assert await host_read(ctx, dut, 7) == 0x4444
        assert await host_read(ctx, dut, GLB.bank_words + 9) == 0xAAAA

    run_testbench(dut, bench)


def test_shared_host_write_never_overrides_an_io_write():
    """A host write offered (``host.we`` = 1) in the cycle the bank's IO tile writes must not
    land, whatever ``host_wok`` says: the IO word stays."""
    dut = GlobalBuffer(GLB, io_columns=[0, 1])

    async def bench(ctx):
        ctx.set(dut.run, 1)
        ctx.set(dut.share, 1)
        ctx.set(dut.io_0.addr, 5)
        ctx.set(dut.io_0.wdata, 0xBEEF)
        ctx.set(dut.io_0.we, 1)
        ctx.set(dut.host.addr, 1)                       # words 4..7 of bank 0
        ctx.set(dut.host.wdata, 0x1111_2222_3333_4444)
        ctx.set(dut.host.be, 0xFF)
        ctx.set(dut.host.we, 1)
        await ctx.tick()
        ctx.set(dut.io_0.we, 0)
        ctx.set(dut.host.we, 0)
        ctx.set(dut.run, 0)
        await ctx.tick()
        assert await host_read(ctx, dut, 5) == 0xBEEF
        assert await host_read(ctx, dut, 4) != 0x4444

    run_testbench(dut, bench)
