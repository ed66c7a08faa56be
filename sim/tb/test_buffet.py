"""cocotb: block-level runs of the buffet RTL (sim/buffet_run.py).

``UBGEN_BUFFET_JOBS`` names a JSON file of jobs; each runs after a ``clear`` with its random
gaps and back-pressure (:class:`sim.buffet_run.BuffetDriver`: inputs driven after the falling
edge, handshakes taken from the settled outputs), and its result is written to
``UBGEN_BUFFET_RESULTS``. The test fails when a job does not pass. A top level with a ``run``
input (``sim.energy.harness.WindowedBuffet``, the energy runs) has it high while a job runs.
"""
from __future__ import annotations

import json
import os

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from sim.buffet_run import OUTPUTS, BuffetDriver, read_jobs


async def _clear(dut) -> None:
    await FallingEdge(dut.clk)
    dut.clear.value = 1
    for name in ("fill_valid", "rd_valid", "upd_valid", "rd_data_ready"):
        getattr(dut, name).value = 0
    await FallingEdge(dut.clk)
    dut.clear.value = 0


@cocotb.test()
async def buffet_jobs(dut):
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.rst.value = 1
    dut.clear.value = 0
    for _ in range(2):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    results = []
    window = hasattr(dut, "run")
    if window:
        dut.run.value = 0
    for job in read_jobs(os.environ["UBGEN_BUFFET_JOBS"]):
        await _clear(dut)
        drv = BuffetDriver(job)
        limit = 20 * (len(job.fills) + len(job.requests)) + 100
        while not drv.done and drv.cycle < limit:
            await FallingEdge(dut.clk)
            for k, v in drv.drive().items():
                getattr(dut, k).value = v
            if window:
                dut.run.value = 1
            await ReadOnly()
            drv.observe({k: int(getattr(dut, k).value) for k in OUTPUTS})
        if window:
            await FallingEdge(dut.clk)
            dut.run.value = 0
        results.append(drv.result())
        dut._log.info(f"{job.name}: {results[-1]}")
    with open(os.environ["UBGEN_BUFFET_RESULTS"], "w") as f:
        json.dump(results, f)
    assert all(r["passed"] for r in results), [r for r in results if not r["passed"]][:2]
