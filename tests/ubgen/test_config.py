"""ConfigRegisters (ubgen/config.py): writes, reset values and the read-back mux tree, against
the ``m.Switch`` read-back it replaced (kept here as the reference), for every address
(Amaranth simulator)."""
from __future__ import annotations

import random

import pytest
from amaranth.hdl import Module, Signal
from amaranth.lib import wiring

from tests.gateware import bus_read, bus_write, bus_writes, run_testbench
from ubgen.config import ConfigRegisters
from ubgen.regmap import Register, RegisterMap


def switch_readback(m: Module, regs: ConfigRegisters, out: Signal) -> None:
    """The former read-back into ``out``: one ``Case`` per register offset, comb default 0."""
    with m.Switch(regs.bus.addr):
        for r in regs.regmap.registers:
            if r.offset < 1 << len(regs.bus.addr):
                with m.Case(r.offset):
                    m.d.comb += out.eq(regs.fields[r.name])


class Harness(wiring.Component):
    """The register file and the reference read-back side by side."""

    def __init__(self, regmap: RegisterMap, addr_width: int | None = None):
        self.regs = ConfigRegisters(regmap, addr_width)
        self.ref = Signal(32)
        super().__init__({})

    def elaborate(self, platform):
        m = Module()
        m.submodules.regs = self.regs
        switch_readback(m, self.regs, self.ref)
        return m


def widths_map(widths, resets=None) -> RegisterMap:
    rm = RegisterMap("t")
    for i, w in enumerate(widths):
        rm.add(f"r{i}", w, (resets or {}).get(i, 0) & ((1 << w) - 1))
    return rm


def check_every_address(regmap: RegisterMap, addr_width: int | None, seed: int):
    """Reset values, then a distinct value written to every register; every address reads
    what the Switch read back (0 off the registers), writes off the registers change nothing."""
    h = Harness(regmap, addr_width)
    regs = h.regs
    n_addr = 1 << len(regs.bus.addr)
    rng = random.Random(seed)
    expect = {r.name: r.reset for r in regmap.registers}
    by_offset = {r.offset: r for r in regmap.registers}

    async def read_all(ctx):
        for a in range(n_addr):
            ctx.set(regs.bus.addr, a)
            r = by_offset.get(a)
            want = expect[r.name] if r is not None else 0
            assert ctx.get(regs.bus.rdata) == ctx.get(h.ref) == want, (a, r)

    async def bench(ctx):
        await read_all(ctx)
        for r in regmap.registers:
            if r.offset >= n_addr:
                continue
            value = rng.getrandbits(32)
            await bus_write(ctx, regs.bus, r.offset, value)
            expect[r.name] = value & ((1 << r.width) - 1)
        # writes to non-register addresses are ignored
        await bus_writes(ctx, regs.bus, [(a, 0xffff_ffff) for a in range(n_addr)
                                         if a not in by_offset])
        await read_all(ctx)
        for r in regmap.registers:
            assert ctx.get(regs.fields[r.name]) == expect[r.name], r

    run_testbench(h, bench)


@pytest.mark.parametrize("widths, addr_width", [
    ([32, 1, 16, 5, 20, 3, 32, 8, 1, 1, 12], None),    # 11 registers: 4-bit address
    ([7] * 16, None),                                    # a full power of two
    ([1], None),
    ([4, 9, 32], 6),                                     # a wider address: high bits decoded
])
def test_readback_every_address(widths, addr_width):
    check_every_address(widths_map(widths, {0: 1, 2: 0x1234}), addr_width, len(widths))


def test_readback_holes_and_unreachable_registers():
    """Offsets with gaps read 0; registers the address cannot reach are never read or written."""
    rm = RegisterMap("holes", [Register("a", 8, 1, 3), Register("b", 32, 4),
                               Register("c", 2, 6, 2), Register("far", 8, 9, 5)])
    check_every_address(rm, 3, 7)


def test_readback_wide_address_does_not_alias():
    """A 16-bit address (a PE's or IO core's cfg port) is decoded in full: offset + 2**k of a
    register reads 0 and a write there changes nothing."""
    rm = widths_map([16, 16, 16, 16, 16])
    h = Harness(rm, 16)
    regs = h.regs

    async def bench(ctx):
        await bus_write(ctx, regs.bus, 3, 0xbeef)
        for alias in (3 + 8, 3 + 256, 3 + 0x8000):
            await bus_write(ctx, regs.bus, alias, 0x1111)
            assert bus_read(ctx, regs.bus, alias) == ctx.get(h.ref) == 0
        assert bus_read(ctx, regs.bus, 3) == 0xbeef

    run_testbench(h, bench)
