"""The test-helper layer of the gateware tests (Amaranth simulator; docs/design.md §6): running a
testbench, cycle helpers, configuration-bus writes and reads, and register-map lookups, so every
block test drives its block the same way a host does (one bus write per cycle, register values
from the block's exported register map).

A *bus* is anything with ``addr``, ``wdata``, ``we`` (and for reads ``rdata``) signals: a
block's flipped ``cfg`` member (PE, IO, MEM cores and tiles), :func:`flat_bus` of a block with
``cfg_addr``/``cfg_wdata``/``cfg_we``/``cfg_rdata`` ports (PUB, DP buffer, register file), or a
global-buffer port (``host``, ``io_<c>``).
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import Iterable

from amaranth.sim import Simulator

__all__ = ["run_testbench", "advance_cycles", "wait_until", "flat_bus", "bus_write",
           "bus_writes", "bus_read", "configure", "reg_offset", "increasing_strides",
           "glb_host_writes", "glb_host_read"]


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


def flat_bus(dut, prefix: str = "cfg_") -> SimpleNamespace:
    """The bus of a block whose configuration port is flat signals ``<prefix>addr`` etc."""
    return SimpleNamespace(**{n: getattr(dut, prefix + n) for n in ("addr", "wdata", "we", "rdata")
                              if hasattr(dut, prefix + n)})


async def bus_write(ctx, bus, addr: int, value: int) -> None:
    """One write: ``addr``/``wdata`` with ``we`` for one cycle, then ``we`` low."""
    await bus_writes(ctx, bus, [(addr, value)])


async def bus_writes(ctx, bus, writes: Iterable[tuple[int, int]]) -> None:
    """``(addr, value)`` writes, one per cycle, then ``we`` low."""
    for addr, value in writes:
        ctx.set(bus.addr, addr)
        ctx.set(bus.wdata, value)
        ctx.set(bus.we, 1)
        await ctx.tick()
    ctx.set(bus.we, 0)


async def glb_host_writes(ctx, host, writes: Iterable[tuple[int, int]]) -> None:
    """``(word, value)`` writes through a global buffer's row port (``host``: row address and
    byte enables, ``ubgen.glb.global_buffer.host_port_signature``): one word per cycle, its
    lane of the row enabled."""
    from ubgen.glb.spec import ROW_BYTES, ROW_WORDS, WORD_WIDTH, lane_of, row_of
    per_word = ROW_BYTES // ROW_WORDS
    for word, value in writes:
        ctx.set(host.addr, row_of(word))
        ctx.set(host.wdata, value << WORD_WIDTH * lane_of(word))
        ctx.set(host.be, ((1 << per_word) - 1) << per_word * lane_of(word))
        ctx.set(host.we, 1)
        await ctx.tick()
    ctx.set(host.we, 0)


async def glb_host_read(ctx, host, word: int) -> int:
    """One word read through a global buffer's row port (read latency 1)."""
    from ubgen.glb.spec import WORD_WIDTH, lane_of, row_of
    ctx.set(host.addr, row_of(word))
    ctx.set(host.re, 1)
    await ctx.tick()
    ctx.set(host.re, 0)
    return ctx.get(host.rdata) >> WORD_WIDTH * lane_of(word) & ((1 << WORD_WIDTH) - 1)


def bus_read(ctx, bus, addr: int) -> int:
    """The combinational read-back of ``addr`` (the configuration buses' ``rdata``)."""
    ctx.set(bus.we, 0)
    ctx.set(bus.addr, addr)
    return ctx.get(bus.rdata)


async def configure(ctx, bus, regmap, values: dict[str, int]) -> list[tuple[int, int]]:
    """Write register ``values`` (by name) through ``bus`` in the register map's order
    (:meth:`ubgen.regmap.RegisterMap.writes`); returns the writes."""
    writes = regmap.writes(values)
    await bus_writes(ctx, bus, writes)
    return writes


def reg_offset(regmap, name: str) -> int:
    """The offset of register ``name`` in ``regmap`` (a KeyError naming it if absent)."""
    return regmap[name].offset


def increasing_strides(draw, extents, step) -> list[int]:
    """Cycle strides of a strictly increasing controller schedule over ``extents`` (innermost
    first): each level's stride exceeds the span of the levels inside it by ``draw(step)``
    (a hypothesis strategy of positive integers)."""
    strides, span = [], 0
    for e in extents:
        s = span + draw(step)
        strides.append(s)
        span += s * (e - 1)
    return strides
