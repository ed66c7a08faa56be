"""DP-SRAM + AG baseline (thesis Fig. 6.1) in the Amaranth simulator, configured over its bus."""
import random

from sim.tb.pub_cases import ctl, register_values, Case
from ubgen.arch import load_arch
from ubgen.dpbuf import DPBuffer, encode_dpbuf
from tests.gateware import bus_read, bus_writes, flat_bus, run_testbench

PRM = load_arch("pub_small").dpbuf     # 32 words


def delay_case(width=16, rows=3, delay=16):
    """Write x + 16y to address x, read at delay - 1 + x + 16y: out at delay + x + 16y."""
    rng = random.Random(2)
    img = [[rng.randrange(1 << 16) for _ in range(width)] for _ in range(rows)]
    cfg = {"wr": ctl((width, rows), 0, (1, width), addr=(0, (1, 0))),
           "rd": ctl((width, rows), delay - 1, (1, width), addr=(0, (1, 0)))}
    inputs = {x + width * y: v for y, row in enumerate(img) for x, v in enumerate(row)}
    expected = [(delay + x + width * y, v) for y, row in enumerate(img) for x, v in enumerate(row)]
    return Case("dp", cfg, {0: inputs}, {0: expected}, expected[-1][0] + 4)


def simulate(case, *, stall=0.0, chain_in=None, tile_id=None):
    dut = DPBuffer(PRM)
    writes = register_values(case, lambda c: encode_dpbuf(c, dut.params), dut.regmap,
                             tile_id=tile_id)
    rng = random.Random(5)
    got = []

    async def bench(ctx):
        await bus_writes(ctx, flat_bus(dut), writes)
        for addr, value in writes:
            assert bus_read(ctx, flat_bus(dut), addr) == value
        ctx.set(dut.run, 1)
        c = 0
        while c < case.horizon:
            stalled = rng.random() < stall
            ctx.set(dut.stall, stalled)
            ctx.set(dut.data_in, case.inputs[0].get(c, 0xBEEF) if not stalled else 0xDEAD)
            if chain_in is not None:
                ctx.set(dut.chain_in_valid, not stalled and c in chain_in)
                ctx.set(dut.chain_in_data, chain_in.get(c, 0))
            assert ctx.get(dut.cycle_count) == c
            if ctx.get(dut.valid_out):
                got.append((c, ctx.get(dut.data_out)))
            await ctx.tick()
            c += not stalled

    run_testbench(dut, bench)
    return got


def test_dpbuf_delay_line():
    case = delay_case()
    assert simulate(case) == case.expected[0]


def test_dpbuf_delay_line_with_stalls():
    case = delay_case()
    assert simulate(case, stall=0.3) == case.expected[0]


def test_dpbuf_chain_passes_unowned_reads_through():
    """chain_en with a tile_id that owns none of the addresses: no write, no own output; the
    output is the chain input."""
    case = delay_case(rows=1)
    case.regs["chain_en"] = 1
    chain_in = {c: (c * 37) & 0xFFFF for c in range(0, case.horizon, 3)}
    assert simulate(case, chain_in=chain_in, tile_id=1) == sorted(chain_in.items())
