"""cocotb: compiler-generated PUB configurations on the generated PUB Verilog (sim/xcheck.py).

``UBGEN_XCHECK_JOBS`` names a JSON file of jobs; every job is configured over the ``cfg_*`` bus,
run for its horizon of unstalled cycles, and its output streams must equal the model's.
"""
from __future__ import annotations

import os

import cocotb

from sim.xcheck import read_jobs
from ubgen.arch import load_arch
from ubgen.pub import pub_regmap

from . import driver
from .pub_cases import Case
from .test_pub import ports


@cocotb.test()
async def xcheck(dut):
    prm = load_arch(os.environ.get("UBGEN_ARCH", "pub")).pub
    regmap = pub_regmap(prm)
    ins, outs = ports(dut, prm)
    jobs = read_jobs(os.environ["UBGEN_XCHECK_JOBS"])
    assert jobs, "no jobs"
    for job in jobs:
        for q in range(prm.output_ports):
            getattr(dut, f"chain_in_valid__{q}").value = 0
            getattr(dut, f"chain_in_data__{q}").value = 0
        await driver.start(dut)
        await driver.configure(dut, regmap, regmap.writes(job.regs), {})
        case = Case(job.name, {}, dict(enumerate(job.inputs)), {}, job.horizon)
        rec = await driver.run_streams(dut, case, ins, outs)
        for q, want in enumerate(job.expected):
            got = rec.get(q, [])
            assert [c for c, _ in got] == [c for c, _ in want], \
                f"{job.name}: data_out[{q}] fires at different cycles " \
                f"(RTL {len(got)} words, model {len(want)})"
            for (c, g), (_, w) in zip(got, want):
                assert w is None or g == w, f"{job.name}: data_out[{q}] at cycle {c}: " \
                                            f"RTL {g:#06x}, model {w:#06x}"
        await driver.check_error(dut, regmap, False)
        dut._log.info(f"{job.name}: {sum(len(s) for s in job.expected)} output words match")
