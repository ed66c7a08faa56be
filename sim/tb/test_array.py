"""cocotb tests of the generated array (``cgra_array``); run from tests/rtl/test_array_rtl.py,
which computes the plan (register writes from the routing graph, expected latencies and
streams) and passes it in ``UBGEN_ARRAY_PLAN``.

The config bus is the array's: word address ``{tile_id, reg_offset}``, registered read-back.
"""
from __future__ import annotations

import json
import os

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge

from .driver import cfg_write


def plan():
    with open(os.environ["UBGEN_ARRAY_PLAN"]) as f:
        return json.load(f)


def glb(dut, col, member):
    return getattr(dut, f"glb_{col}__{member}")


async def start(dut):
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    for name in ("run", "stall", "cfg__we", "cfg__addr", "cfg__wdata"):
        getattr(dut, name).value = 0
    dut.rst.value = 1
    await ClockCycles(dut.clk, 2)
    dut.rst.value = 0
    await RisingEdge(dut.clk)


class FlatBus:
    """The array's ``cfg__*`` ports under the names :func:`sim.tb.driver.cfg_write` uses."""

    def __init__(self, dut):
        self.clk, self.cfg_addr, self.cfg_wdata, self.cfg_we = \
            dut.clk, dut.cfg__addr, dut.cfg__wdata, dut.cfg__we


async def configure(dut, writes):
    await cfg_write(FlatBus(dut), writes)
    # read every register back through the registered read port
    for addr, value in writes:
        dut.cfg__addr.value = addr
        await RisingEdge(dut.clk)
        await ReadOnly()
        assert int(dut.cfg__rdata.value) == value, f"read-back of {addr:#x}"
        await RisingEdge(dut.clk)


def stimulus(cycle):
    return (0x3C5A + 40503 * cycle) & 0xFFFF


@cocotb.test()
async def routes(dut):
    """Each route: a new value every cycle at the source IO; the sink IO sees it exactly the
    graph's latency later (and with stall high the pipeline registers hold)."""
    await start(dut)
    for r in plan()["routes"]:
        await configure(dut, r["writes"])
        src, dst, lat = glb(dut, r["src_col"], "rdata"), glb(dut, r["dst_col"], "wdata"), r["latency"]
        seen = []
        for c in range(40):
            src.value = stimulus(c)
            await ReadOnly()
            seen.append(int(dst.value))
            await RisingEdge(dut.clk)
        for c in range(lat, 40):
            assert seen[c] == stimulus(c - lat), f"{r['name']}: cycle {c}: {seen[c]:#x}"
        if lat:
            assert all(seen[c] != stimulus(c) for c in range(lat, 40)), r["name"]
            # stall freezes the pipeline registers
            dut.stall.value = 1
            src.value = stimulus(100)
            await ReadOnly()
            held = int(dst.value)
            for c in range(5):
                await RisingEdge(dut.clk)
                src.value = stimulus(101 + c)
                await ReadOnly()
                assert int(dst.value) == held, f"{r['name']}: moved while stalled"
            await RisingEdge(dut.clk)
            dut.stall.value = 0
        dut._log.info(f"route {r['name']}: latency {lat} checked")


@cocotb.test()
async def line_buffer(dut):
    """A MEM tile configured as a 64-cycle delay line between two IO tiles."""
    await start(dut)
    p = plan()["linebuf"]
    await configure(dut, p["writes"])
    src, data, valid = glb(dut, p["in_col"], "rdata"), glb(dut, p["out_col"], "wdata"), \
        glb(dut, p["out_col"], "we")
    inputs = {int(c): v for c, v in p["inputs"].items()}
    dut.run.value = 1
    got = []
    for c in range(p["horizon"]):
        src.value = inputs.get(c, (0xA5A5 + 7919 * c) & 0xFFFF)   # junk outside the stream
        await ReadOnly()
        assert int(dut.cycle_count.value) == c
        if int(valid.value):
            got.append((c, int(data.value)))
        await RisingEdge(dut.clk)
    expected = [tuple(e) for e in p["expected"]]
    assert got[:5] == expected[:5], (got[:5], expected[:5])
    assert got == expected
    assert int(dut.error.value) == 0
    dut._log.info(f"line buffer: {len(got)} words at the expected cycles")
