"""cocotb tests of the generated DP-SRAM + AG buffer: the 64-cycle delay line, with and without
random stalls."""
from __future__ import annotations

import cocotb

from ubgen.arch import load_arch
from ubgen.dpbuf import dpbuf_regmap, encode_dpbuf

from . import driver
from .pub_cases import DP_CASES, ENERGY_DP_CASES


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


def _energy_test(name: str):
    async def test(dut):
        await run_case(dut, ENERGY_DP_CASES[name])
    return cocotb.test(name=f"energy_{name}")(test)


# the energy stimuli (sim/energy/blocks.py), selected by name as energy_<case>
for _name in ENERGY_DP_CASES:
    globals()[f"energy_{_name}"] = _energy_test(_name)
