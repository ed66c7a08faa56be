"""Compiler-generated PUB configurations on the generated PUB Verilog (the RTL cross-check).

For each app, every single-tile PUB block the mapping produces is configured over the bus with
its encoded registers; its RTL output streams must equal the config-driven model's
(sim/xcheck.py, sim/tb/test_xcheck.py).
"""
from __future__ import annotations

import pytest

from sim.rtl_xcheck import run_xcheck

pytestmark = pytest.mark.rtl

# gaussian and harris are the thesis's line-buffer apps (Table 7.8: 1 and 5 MEMs).
# brighten_blur is the running example (Fig. 3.1 / Fig. 5.1c: shift registers and ONE MEM, a
# one-row circular line buffer that every tile of Fig. 4.1 rewrites); two tiles of 64x64 keep
# the run short while crossing a tile boundary of the circular buffer.
# resnet's accumulator out_mem, in the 8x8 channel block the paper measured (docs/apps.md): one
# PUB per output-channel lane, each with both input ports (init_k, then conv_k's updates) and
# both output ports (conv_k's read-back of its partial sums, drain_k) in use.
APPS = ["gaussian", "harris", "brighten_blur", "resnet"]
SIZES = {"brighten_blur": {"tiles": 2}, "resnet": {"in_channels": 8, "out_channels": 8}}
BUFFERS = {"resnet": ["out_mem"]}


def test_xcheck_pub():
    # One PUB for gaussian, five for harris (Table 7.8), one for brighten_blur (Fig. 3.1), one
    # per output-channel lane of resnet's out_mem, each checked on the RTL.
    assert run_xcheck(APPS, sizes=SIZES, buffers=BUFFERS) == 1 + 5 + 1 + 8
