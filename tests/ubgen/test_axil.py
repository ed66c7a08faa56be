"""AXI4-Lite slave against a register-file target, driven by a testbench master that presents
AW and W in any order and applies B/R back-pressure (AMBA AXI4-Lite)."""
import random

from amaranth.hdl import Module, Signal, Array
from amaranth.lib import wiring
from hypothesis import given, settings, strategies as st, HealthCheck, Phase

from ubgen.top.axil import AXILiteSlave, OKAY, SLVERR
from tests.gateware import run_testbench

WORDS = 16           # legal byte addresses 0 .. 4*WORDS-1; anything else answers err


class SlaveWithTarget(wiring.Component):
    """The slave and a 16-word register file that acks writes at once and reads after
    ``read_latency`` cycles (0 or 1), erroring on out-of-range addresses."""

    def __init__(self, read_latency):
        self.read_latency = read_latency
        self.slave = AXILiteSlave("s_axil")
        super().__init__({})

    def elaborate(self, platform):
        m = Module()
        s = m.submodules.slave = self.slave
        bus = s.bus
        regs = Array(Signal(32, name=f"r{i}") for i in range(WORDS))
        self.regs = regs
        legal = bus.addr < 4 * WORDS
        idx = bus.addr[2:6]
        with m.If(bus.we):
            m.d.comb += [bus.ack.eq(1), bus.err.eq(~legal)]
            with m.If(legal):
                m.d.sync += regs[idx].eq(bus.wdata)
        if self.read_latency == 0:
            with m.If(bus.re):
                m.d.comb += [bus.ack.eq(1), bus.err.eq(~legal), bus.rdata.eq(regs[idx])]
        else:
            pend, pend_err, pend_data = Signal(), Signal(), Signal(32)
            m.d.sync += [pend.eq(bus.re), pend_err.eq(~legal), pend_data.eq(regs[idx])]
            with m.If(pend):
                m.d.comb += [bus.ack.eq(1), bus.err.eq(pend_err), bus.rdata.eq(pend_data)]
        return m


async def write(ctx, s, addr, data, strb=0xF, order="together", rng=None):
    """One AXI-Lite write; ``order`` is aw_first, w_first or together. Returns BRESP."""
    p = "s_axil_"
    get = lambda n: ctx.get(getattr(s, p + n))
    put = lambda n, v: ctx.set(getattr(s, p + n), v)
    put("awaddr", addr); put("wdata", data); put("wstrb", strb)
    pending = {"aw": True, "w": True}
    first = {"aw_first": "aw", "w_first": "w"}.get(order)
    if first:
        put(first + "valid", 1)
    else:
        put("awvalid", 1); put("wvalid", 1)
    for _ in range(50):
        aw_hs = get("awvalid") and get("awready")
        w_hs = get("wvalid") and get("wready")
        await ctx.tick()
        if aw_hs:
            pending["aw"] = False
            put("awvalid", 0)
        if w_hs:
            pending["w"] = False
            put("wvalid", 0)
        if first and not pending[first]:
            other = "w" if first == "aw" else "aw"
            if pending[other] and rng.random() < 0.5:
                put(other + "valid", 1)
        if not any(pending.values()):
            break
    else:
        raise AssertionError("write address/data never accepted")
    return await response(ctx, s, "b", rng)


async def response(ctx, s, ch, rng):
    p = "s_axil_"
    for _ in range(50):
        ready = rng.random() < 0.6
        ctx.set(getattr(s, p + ch + "ready"), ready)
        if ctx.get(getattr(s, p + ch + "valid")) and ready:
            resp = ctx.get(getattr(s, p + ch + "resp"))
            data = ctx.get(s.s_axil_rdata) if ch == "r" else None
            await ctx.tick()
            ctx.set(getattr(s, p + ch + "ready"), 0)
            return resp if ch == "b" else (resp, data)
        await ctx.tick()
    raise AssertionError(f"no {ch.upper()} response")


async def read(ctx, s, addr, rng):
    ctx.set(s.s_axil_araddr, addr)
    ctx.set(s.s_axil_arvalid, 1)
    for _ in range(50):
        hs = ctx.get(s.s_axil_arready)
        await ctx.tick()
        if hs:
            break
    else:
        raise AssertionError("read address never accepted")
    ctx.set(s.s_axil_arvalid, 0)
    return await response(ctx, s, "r", rng)


OPS = st.tuples(st.sampled_from(["write", "read"]),
                st.sampled_from(list(range(0, 4 * WORDS, 4)) + [4 * WORDS, 0x1000, 2, 0xFFFFFFFC]),
                st.integers(0, 0xFFFFFFFF),
                st.sampled_from([0xF, 0xF, 0xF, 0x3]),
                st.sampled_from(["aw_first", "w_first", "together"]))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(st.lists(OPS, min_size=5, max_size=30), st.integers(0, 1), st.integers(0, 1 << 20))
def test_axil_against_model(ops, read_latency, seed):
    dut = SlaveWithTarget(read_latency)
    s = dut.slave
    rng = random.Random(seed)
    model = [0] * WORDS

    async def bench(ctx):
        for kind, addr, data, strb, order in ops:
            legal = addr < 4 * WORDS and addr % 4 == 0
            if kind == "write":
                resp = await write(ctx, s, addr, data, strb, order, rng)
                ok = legal and strb == 0xF
                assert resp == (OKAY if ok else SLVERR), (addr, strb)
                if ok:
                    model[addr // 4] = data
            else:
                resp, got = await read(ctx, s, addr, rng)
                assert resp == (OKAY if legal else SLVERR), addr
                if legal:
                    assert got == model[addr // 4], addr

    run_testbench(dut, bench)


def test_axil_read_while_write_half_done():
    """A write whose W has not arrived does not block a read (no channel dependency)."""
    dut = SlaveWithTarget(1)
    s = dut.slave
    rng = random.Random(0)

    async def bench(ctx):
        assert await write(ctx, s, 8, 0xAB, order="together", rng=rng) == OKAY
        ctx.set(s.s_axil_awaddr, 12)
        ctx.set(s.s_axil_awvalid, 1)
        await ctx.tick()
        ctx.set(s.s_axil_awvalid, 0)
        assert await read(ctx, s, 8, rng) == (OKAY, 0xAB)
        ctx.set(s.s_axil_wdata, 0xCD)
        ctx.set(s.s_axil_wstrb, 0xF)
        ctx.set(s.s_axil_wvalid, 1)
        while not ctx.get(s.s_axil_wready):
            await ctx.tick()
        await ctx.tick()
        ctx.set(s.s_axil_wvalid, 0)
        assert await response(ctx, s, "b", rng) == OKAY
        assert await read(ctx, s, 12, rng) == (OKAY, 0xCD)

    run_testbench(dut, bench)
