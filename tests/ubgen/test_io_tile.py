"""IO core with the real global buffer: glb2f and f2glb streams against the affine reference
(``ubgen.controller.iterate``), with stalls (docs/design.md §4, §5.3)."""
import random
from dataclasses import replace

from amaranth.hdl import Module
from amaranth.lib import wiring
from hypothesis import given, settings, strategies as st, HealthCheck, Phase

from ubgen.arch import load_arch, GLBParams
from ubgen.controller import AffineMap, ControllerConfig, encode_controller, iterate
from ubgen.glb.global_buffer import GlobalBuffer
from ubgen.io.io_tile import IOCore, GLB2F_LATENCY, F2GLB_LATENCY
from tests.gateware import (configure, glb_host_read, glb_host_writes, increasing_strides,
                           run_testbench)

ARCH = replace(load_arch("cgra_4x4"), glb=GLBParams(banks=1, bank_words=64))
AW = 6


class IOWithGLB(wiring.Component):
    """One IO core on bank 0 of a one-bank GLB; the GLB host port is exposed."""

    def __init__(self):
        self.io = IOCore(ARCH)
        self.glb = GlobalBuffer(ARCH.glb, [0])
        super().__init__({})

    def elaborate(self, platform):
        m = Module()
        m.submodules.io, m.submodules.glb = self.io, self.glb
        wiring.connect(m, self.io.glb, self.glb.io_0)
        m.d.comb += self.glb.run.eq(self.io.run)
        return m


def fabric_value(cycle):
    return (cycle * 2654435761 >> 7) & 0xFFFF


@st.composite
def streams(draw):
    dims = draw(st.integers(1, 3))
    extents = [draw(st.integers(1, 4)) for _ in range(dims)]
    strides = increasing_strides(draw, extents, st.integers(1, 3))
    addr = AffineMap(draw(st.integers(0, 63)), tuple(draw(st.integers(-9, 9))
                                                     for _ in range(dims)))
    return ControllerConfig(tuple(extents), AffineMap(draw(st.integers(0, 6)), tuple(strides)),
                            {"addr": addr})


def simulate(glb2f: ControllerConfig, f2glb: ControllerConfig, stall_seed: int, bit=0):
    """Preload the GLB, run both streams with random stalls, return what was observed."""
    top = IOWithGLB()
    io, glb = top.io, top.glb
    rng = random.Random(stall_seed)
    init = [rng.randrange(1 << 16) for _ in range(64)]
    regs = {**encode_controller(glb2f, io.layouts["glb2f"]),
            **encode_controller(f2glb, io.layouts["f2glb"]), "f2glb_bit": bit}
    last = max([c for c, _ in iterate(glb2f)] + [c for c, _ in iterate(f2glb)] + [0])
    seen, final = [], []

    async def bench(ctx):
        await glb_host_writes(ctx, glb.host, enumerate(init))
        await configure(ctx, io.cfg, io.regmap, regs)
        ctx.set(io.run, 1)
        cycle = 0
        while cycle <= last + 2:
            stall = rng.random() < 0.3
            ctx.set(io.stall, stall)
            ctx.set(io.in_f2io_16, fabric_value(cycle))
            ctx.set(io.in_f2io_1, fabric_value(cycle) & 1)
            if not stall:
                seen.append((cycle, ctx.get(io.out_io2f_1), ctx.get(io.out_io2f_16)))
            await ctx.tick()
            cycle += not stall
        assert ctx.get(io.error) == 0
        ctx.set(io.run, 0)
        ctx.set(io.stall, 0)
        await ctx.tick()
        for w in range(64):
            final.append(await glb_host_read(ctx, glb.host, w))

    run_testbench(top, bench)
    return init, seen, final


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(streams(), streams(), st.integers(0, 1 << 30), st.integers(0, 1))
def test_io_streams_match_affine_reference(glb2f, f2glb, seed, bit):
    # the two streams share the tile's GLB port: move f2glb to odd and glb2f to even cycles
    glb2f = replace(glb2f, schedule=AffineMap(2 * glb2f.schedule.start,
                                              tuple(2 * s for s in glb2f.schedule.strides)))
    f2glb = replace(f2glb, schedule=AffineMap(2 * f2glb.schedule.start + 1,
                                              tuple(2 * s for s in f2glb.schedule.strides)))
    init, seen, final = simulate(glb2f, f2glb, seed, bit)

    # glb2f: the word of a fire at cycle t is on the fabric (valid) at t + GLB2F_LATENCY and
    # stays until the next fire's word; f2glb writes the fabric value of its fire's cycle.
    reads = {c + GLB2F_LATENCY: a["addr"] for c, a in iterate(glb2f, {"addr": AW})}
    writes = {c + F2GLB_LATENCY: a["addr"] for c, a in iterate(f2glb, {"addr": AW})}
    # replay in cycle order: a read at fire cycle t sees writes of cycles < t
    mem = list(init)
    fabric = {}
    for t in range(max([0] + list(reads) + list(writes)) + 2):
        if t + 1 in reads:                       # a read fired at t
            fabric[t + 1] = mem[reads[t + 1]]
        if t in writes:
            mem[writes[t]] = fabric_value(t) & (1 if bit else 0xFFFF)
    held = None
    for cycle, valid, data in seen:
        assert valid == (cycle in reads), f"valid at cycle {cycle}"
        if cycle in fabric:
            held = fabric[cycle]
        if held is not None:
            assert data == held, f"io2f at cycle {cycle}: {data:#x} != {held:#x}"
    assert final == mem
