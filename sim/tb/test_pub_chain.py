"""cocotb test of two chained small PUBs (sim/tb/pub_chain.py,
ubgen/constraints/arch/pub_small.toml): a 64-word delay split across two 32-word tiles by
TileID = floor(x/32) (paper §V-C)."""
from __future__ import annotations

import cocotb

from ubgen.arch import load_arch
from ubgen.pub import encode_pub, pub_regmap

from . import driver
from .pub_cases import chained_delay
from .test_pub import ports


@cocotb.test()
async def chain(dut):
    prm = load_arch("pub_small").pub
    case, tiles = chained_delay()
    await driver.run_case(dut, case, pub_regmap(prm), lambda c: encode_pub(c, prm),
                          *ports(dut, prm),
                          tiles=list(range(tiles)))
