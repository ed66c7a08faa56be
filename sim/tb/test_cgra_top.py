"""cocotb tests of ``cgra_top`` through its AXI4-Lite slave, the way a host drives it
(cocotbext-axi ``AxiLiteMaster``). Run from tests/rtl/test_cgra_top_rtl.py, which computes the
plan (addresses, register values, expected results) and passes it in ``UBGEN_TOP_PLAN``.
"""
from __future__ import annotations

import json
import os

import cocotb
from cocotb.triggers import ClockCycles

from .host import Host, start_host


def plan():
    with open(os.environ["UBGEN_TOP_PLAN"]) as f:
        return json.load(f)


async def start(dut) -> Host:
    return await start_host(dut, plan())


@cocotb.test()
async def control_and_illegal_addresses(dut):
    host = await start(dut)
    p = host.plan
    assert await host.read(host.ctrl("INFO")) == p["info"]
    assert await host.read(host.ctrl("START")) == 0
    assert await host.read(host.ctrl("CYCLE")) == 0
    await host.write(host.ctrl("DONE_CYCLE"), 0xDEADBEEF)
    assert await host.read(host.ctrl("DONE_CYCLE")) == 0xDEADBEEF
    for addr in p["ro"]:
        await host.write(addr, 1, ok=False)
    for addr in p["illegal"]:
        await host.write(addr, 0x1234, ok=False)
        await host.read(addr, ok=False)
    # GLB: host access works while stopped and is refused while running (unless shared)
    await host.write(host.glb(p["glb_words"] - 1), 0xBEEF)
    assert await host.read(host.glb(p["glb_words"] - 1)) == 0xBEEF
    await host.write(host.ctrl("START"), 1)
    await host.write(host.glb(0), 1, ok=False)
    await host.read(host.glb(0), ok=False)
    # SHARE = 1: no IO tile is configured, so every bank's ports are free while running
    await host.write(host.ctrl("SHARE"), 1)
    await host.write(host.glb(1), 0x5A5A)
    assert await host.read(host.glb(1)) == 0x5A5A
    await host.write(host.ctrl("SHARE"), 0)
    await host.write(host.glb(1), 0x1111, ok=False)
    await host.read(host.glb(1), ok=False)
    await host.write(host.ctrl("START"), 0)
    assert await host.read(host.glb(p["glb_words"] - 1)) == 0xBEEF
    assert await host.read(host.glb(1)) == 0x5A5A


@cocotb.test()
async def every_register_write_readback(dut):
    host = await start(dut)
    regs = host.plan["registers"]
    for addr, value in regs:
        await host.write(addr, value)
    for addr, value in regs:
        got = await host.read(addr)
        assert got == value, f"register {addr:#010x}: wrote {value:#x}, read {got:#x}"
    for addr, value in host.plan["status"]:
        assert await host.read(addr) == value, f"status register {addr:#010x}"
    dut._log.info("%d tile registers written and read back, %d status registers read",
                  len(regs), len(host.plan["status"]))


@cocotb.test()
async def stall_freezes_cycle_counter(dut):
    host = await start(dut)
    await host.write(host.ctrl("DONE_CYCLE"), 1000)
    await host.write(host.ctrl("START"), 1)
    await ClockCycles(dut.clk, 20)
    await host.write(host.ctrl("STALL"), 1)
    frozen = await host.read(host.ctrl("CYCLE"))
    assert frozen >= 20
    await ClockCycles(dut.clk, 50)
    assert await host.read(host.ctrl("CYCLE")) == frozen
    assert await host.read(host.ctrl("STALL")) == 1
    await host.write(host.ctrl("STALL"), 0)
    await ClockCycles(dut.clk, 30)
    now = await host.read(host.ctrl("CYCLE"))
    assert frozen + 30 <= now < frozen + 60, (frozen, now)
    assert await host.read(host.ctrl("DONE")) == 0
    await host.write(host.ctrl("DONE_CYCLE"), now)
    assert await host.read(host.ctrl("DONE")) == 1
    await host.write(host.ctrl("START"), 0)
    assert await host.read(host.ctrl("CYCLE")) == 0
    assert await host.read(host.ctrl("DONE")) == 0


@cocotb.test()
async def pe_op_sweep(dut):
    host = await start(dut)
    sweep = host.plan["pe_sweep"]
    for addr, value in sweep["common"]:
        await host.write(addr, value)
    for run in sweep["runs"]:
        for addr, value in run["writes"]:
            await host.write(addr, value)
        await host.run_until_done(run["done_cycle"])
    for run in sweep["runs"]:
        for word, value in run["expected"]:
            got = await host.read(host.glb(word))
            assert got == value, (f"{run['op']} {run['operands']}: GLB word {word:#x} = "
                                  f"{got:#x}, expected {value:#x}")
    dut._log.info("%d PE runs checked", len(sweep["runs"]))


@cocotb.test()
async def io_stream_through_pe(dut):
    host = await start(dut)
    s = host.plan["stream"]
    for word, value in s["glb_init"]:
        await host.write(host.glb(word), value)
    for addr, value in s["writes"]:
        await host.write(addr, value)
    await host.write(host.ctrl("DONE_CYCLE"), s["done_cycle"])
    await host.write(host.ctrl("START"), 1)
    for wait, length in s["stalls"]:
        await ClockCycles(dut.clk, wait)
        await host.write(host.ctrl("STALL"), 1)
        frozen = await host.read(host.ctrl("CYCLE"))
        await ClockCycles(dut.clk, length)
        assert await host.read(host.ctrl("CYCLE")) == frozen
        await host.write(host.ctrl("STALL"), 0)
    while not await host.read(host.ctrl("DONE")):
        pass
    assert await host.read(host.ctrl("ERROR")) == 0
    await host.write(host.ctrl("START"), 0)
    for word, value in s["expected"]:
        got = await host.read(host.glb(word))
        assert got == value, f"GLB word {word:#x} = {got:#x}, expected {value:#x}"
