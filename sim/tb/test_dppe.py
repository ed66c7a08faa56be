"""cocotb: the DP-SRAM + PEs line buffer (``sim.energy.harness.DPPELineBuffer``) on the stimulus
``UBGEN_ENERGY_CASE`` names (``sim.energy.workload.dppe_case``: the controller PEs'
configuration bus writes and the case). Reset, write every PE register and read it back, raise
``run``, feed the input stream, and check every memory's read port against the expected words
at their cycles (``sim.tb.driver``)."""
from __future__ import annotations

import cocotb

from . import driver


@cocotb.test()
async def energy_file(dut):
    writes, case = driver.load_case()
    await driver.start(dut)
    await driver.cfg_write(dut, writes)
    for addr, value in writes:
        got = await driver.cfg_read(dut, addr)
        assert got == value, f"register at {addr:#x} reads {got:#x}, wrote {value:#x}"
    outs = {q: (getattr(dut, f"data_out{q}"), getattr(dut, f"valid_out{q}"))
            for q in case.expected}
    rec = await driver.run_streams(dut, case, {0: dut.data_in}, outs, cycle_count=False)
    driver.check_streams(case, rec)
