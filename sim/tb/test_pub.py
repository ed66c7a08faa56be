"""cocotb tests of the generated PUB Verilog (one Verilator build, every case of PUB_CASES;
the transpose case runs on a tb_depth = 4 build). Run from tests/rtl/test_pub_rtl.py.

``UBGEN_ARCH`` names the constraints file and ``UBGEN_PUB_OVERRIDES`` (JSON) overrides
PUBParams fields, so the testbench builds the same register map as the generated RTL.
"""
from __future__ import annotations

import json
import os
from dataclasses import replace

import cocotb

from ubgen.arch import load_arch
from ubgen.pub import encode_pub, pub_regmap

from . import driver
from .pub_cases import PUB_CASES, TB4_CASES


def params():
    prm = load_arch(os.environ.get("UBGEN_ARCH", "pub")).pub
    return replace(prm, **json.loads(os.environ.get("UBGEN_PUB_OVERRIDES", "{}")))


def ports(dut, prm):
    """``(ins, outs)`` handles of a PUB-like top level (array ports flattened as ``x__i``)."""
    ins = {p: getattr(dut, f"data_in__{p}") for p in range(prm.input_ports)}
    outs = {q: (getattr(dut, f"data_out__{q}"), getattr(dut, f"valid_out__{q}"))
            for q in range(prm.output_ports)}
    return ins, outs


async def run_case(dut, case) -> None:
    prm = params()
    for q in range(prm.output_ports):
        getattr(dut, f"chain_in_valid__{q}").value = 0
        getattr(dut, f"chain_in_data__{q}").value = 0
    await driver.run_case(dut, case, pub_regmap(prm), lambda c: encode_pub(c, prm),
                          *ports(dut, prm))


def _case_test(cases: dict, name: str, test_name: str | None = None):
    async def test(dut):
        await run_case(dut, cases[name])
    return cocotb.test(name=test_name or name)(test)


# One cocotb test per case, named after it (the runner selects them by name).
for _cases in (PUB_CASES, TB4_CASES):
    for _name in _cases:
        globals()[_name] = _case_test(_cases, _name)


@cocotb.test()
async def energy_file(dut):
    """The case ``UBGEN_ENERGY_CASE`` names (sim/energy/blocks.py: the line buffer as the
    compiler maps it onto the PUB)."""
    await run_case(dut, driver.load_case())
