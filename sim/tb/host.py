"""The host processor's side of ``cgra_top``: 32-bit AXI4-Lite reads and writes with their
responses (cocotbext-axi ``AxiLiteMaster`` on the ``s_axil_*`` ports) and the run protocol of
docs/top.md. ``plan`` supplies the addresses (``control``, ``glb_base``)."""
from __future__ import annotations

import logging

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge
from cocotbext.axi import AxiLiteBus, AxiLiteMaster, AxiResp


class Host:
    """The host processor's view: 32-bit reads and writes with their responses."""

    def __init__(self, dut, plan, axil: bool = True):
        self.dut, self.plan = dut, plan
        if not axil:              # the caller drives the AXI port itself
            return
        self.axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.clk, dut.rst)
        for ch in (self.axil.write_if, self.axil.read_if):
            ch.log.setLevel(logging.WARNING)

    async def write(self, addr: int, value: int, ok=True):
        resp = await self.axil.write(addr, int(value).to_bytes(4, "little"))
        assert (resp.resp == AxiResp.OKAY) == ok, f"write {addr:#010x}: {resp.resp}"

    async def read(self, addr: int, ok=True) -> int:
        resp = await self.axil.read(addr, 4)
        assert (resp.resp == AxiResp.OKAY) == ok, f"read {addr:#010x}: {resp.resp}"
        return int.from_bytes(resp.data, "little")

    def ctrl(self, name):
        return self.plan["control"][name]

    def glb(self, word):
        return self.plan["glb_base"] + 4 * word

    async def run_until_done(self, done_cycle, timeout=10_000):
        await self.write(self.ctrl("DONE_CYCLE"), done_cycle)
        await self.write(self.ctrl("START"), 1)
        for _ in range(timeout):
            if await self.read(self.ctrl("DONE")):
                break
        else:
            raise AssertionError("DONE never rose")
        cycle = await self.read(self.ctrl("CYCLE"))
        assert cycle >= done_cycle
        assert await self.read(self.ctrl("ERROR")) == 0
        await self.write(self.ctrl("START"), 0)
        return cycle


async def start_host(dut, p: dict, axil: bool = True) -> Host:
    """Start the clock, reset the top and return a :class:`Host` with plan ``p``
    (``axil=False``: without cocotbext-axi's master, for a caller driving the port itself)."""
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    host = Host(dut, p, axil)
    dut.rst.value = 1
    await ClockCycles(dut.clk, 3)
    dut.rst.value = 0
    await RisingEdge(dut.clk)
    return host
