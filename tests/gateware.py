"""Helpers for Amaranth-simulator tests of gateware blocks (one test module per block)."""
from __future__ import annotations

from amaranth.sim import Simulator


def run_testbench(dut, bench, *, vcd: str | None = None) -> None:
    """Simulate ``dut`` on a 1 MHz ``sync`` clock with the async testbench ``bench(ctx)``."""
    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    if vcd:
        with sim.write_vcd(vcd):
            sim.run()
    else:
        sim.run()


async def advance_cycles(ctx, n: int) -> None:
    for _ in range(n):
        await ctx.tick()


async def wait_until(ctx, signal, *, timeout: int = 10_000) -> int:
    """Tick until ``signal`` is high; return the number of cycles waited."""
    for waited in range(timeout):
        if ctx.get(signal):
            return waited
        await ctx.tick()
    raise AssertionError(f"timed out after {timeout} cycles waiting for {signal!r}")
