"""cocotb tests of the generated DP-SRAM + AG buffer: the 64-cycle delay line, with and without
random stalls, and the energy runs' stimulus from a file (``energy_file``)."""
from __future__ import annotations

import cocotb

from ubgen.arch import load_arch
from ubgen.dpbuf import dpbuf_regmap, encode_dpbuf

from . import driver
from .pub_cases import DP_CASES


async def run_case(dut, case) -> None:
    prm = load_arch("pub").dpbuf
    dut.chain_in_valid.value = 0
    dut.chain_in_data.value = 0
    await driver.run_case(dut, case, dpbuf_regmap(prm), lambda c: encode_dpbuf(c, prm),
                          {0: dut.data_in}, {0: (dut.data_out, dut.valid_out)})


@cocotb.test()
async def dp_delay(dut):
    await run_case(dut, DP_CASES["dp_delay"])


@cocotb.test()
async def dp_delay_stall(dut):
    await run_case(dut, DP_CASES["dp_delay_stall"])



@cocotb.test()
async def energy_file(dut):
    """The case ``UBGEN_ENERGY_CASE`` names (sim/energy/blocks.py: a memory block of the line
    buffer as the compiler maps it)."""
    await run_case(dut, driver.load_case())
