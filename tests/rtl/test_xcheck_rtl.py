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
APPS = ["gaussian", "harris"]


def test_xcheck_pub():
    # One PUB for gaussian and five for harris (thesis Table 7.8), each checked on the RTL.
    assert run_xcheck(APPS) == 1 + 5
