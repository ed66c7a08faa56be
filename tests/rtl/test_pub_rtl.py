"""cocotb + Verilator tests of the generated PUB and DP-SRAM + AG Verilog.

One Verilator build per design (under build/sim/<name>/), all its cases in one cocotb run; the
cases and their expected streams are in sim/tb/pub_cases.py.
"""
from __future__ import annotations

import json
from dataclasses import replace

import pytest

from sim.rtl_xcheck import PUB_BUILD_ARGS, pub_model
from sim.runner import run_cocotb, write_source
from sim.tb.pub_cases import DP_CASES, PUB_CASES, TB4_CASES
from ubgen.arch import load_arch
from ubgen.blocks import block_verilog

pytestmark = pytest.mark.rtl

FAST_BUILD = PUB_BUILD_ARGS


def test_pub_cases():
    name, src = pub_model("pub")       # the build the RTL cross-check (test_xcheck_rtl) uses
    run_cocotb(build_args=FAST_BUILD, name=name, sources=[src], toplevel="pub", test_module="sim.tb.test_pub",
               testcase=list(PUB_CASES), extra_env={"UBGEN_ARCH": "pub"})


def test_pub_transpose_tb4():
    """The full-rate 4x4-block transpose needs a 4-slot transpose buffer (see the case)."""
    from amaranth.back import verilog
    from ubgen.pub import PhysicalUnifiedBuffer
    overrides = {"tb_depth": 4}
    prm = replace(load_arch("pub").pub, **overrides)
    src = write_source("pub_tb4", verilog.convert(PhysicalUnifiedBuffer(prm), name="pub"))
    run_cocotb(build_args=FAST_BUILD, name="pub_tb4", sources=[src], toplevel="pub", test_module="sim.tb.test_pub",
               testcase=list(TB4_CASES),
               extra_env={"UBGEN_ARCH": "pub", "UBGEN_PUB_OVERRIDES": json.dumps(overrides)})


def test_pub_chain():
    """Two chained pub_small tiles (32 words each) implement a 64-word delay; the wrapper
    instantiates the generated ``pub`` module twice."""
    from amaranth.back import verilog
    from sim.tb.pub_chain import ChainedPUBs
    arch = load_arch("pub_small")
    pub = write_source("pub_chain", block_verilog(arch, "pub"), stem="pub_small")
    top = write_source("pub_chain", verilog.convert(ChainedPUBs(arch.pub, 2), name="pub_chain"))
    run_cocotb(build_args=FAST_BUILD, name="pub_chain", sources=[pub, top],
               toplevel="pub_chain", test_module="sim.tb.test_pub_chain", testcase=["chain"])


def test_dpbuf():
    src = write_source("dpbuf", block_verilog(load_arch("pub"), "dpbuf"))
    run_cocotb(build_args=FAST_BUILD, name="dpbuf", sources=[src], toplevel="dpbuf", test_module="sim.tb.test_dpbuf",
               testcase=list(DP_CASES))
