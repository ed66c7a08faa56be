"""The reliability run's bulk master (sim/tb/test_e2e.py ``StressBulk``): random beat sizes in
the global buffer's row window, 32-bit beats on the registers (a 64-bit beat would read the
offset after a tile's last register, which the tile refuses)."""
from __future__ import annotations

import random

import pytest

from sim.tb.axi_raw import split
from sim.tb.test_e2e import StressBulk, check_register_beats
from ubgen.top.spec import GLB_ROWS_BASE, TILE_BASE

PLAN = {"glb_rows_base": GLB_ROWS_BASE}
REGS = TILE_BASE | 5 << 16                     # some tile's registers


def test_registers_take_32_bit_beats_the_rows_any():
    bulk = StressBulk(None, None, PLAN, random.Random(1))
    regs = [b for _ in range(50) for b in bulk.split(REGS, 4 * 37)]
    rows = [b for _ in range(50) for b in bulk.split(GLB_ROWS_BASE + 6, 2 * 41)]
    assert regs and {b.size for b in regs} == {2}
    assert rows and {b.size for b in rows} == {1, 2, 3}
    writes = bulk.split(REGS, bytes(range(12)))
    assert writes and all(b.write and b.size == 2 for b in writes)


def test_a_64_bit_register_beat_is_refused():
    wide = split(REGS, 4 * 3, random.Random(0), 3)
    with pytest.raises(AssertionError, match="64-bit beats on registers"):
        check_register_beats(wide, PLAN)
    check_register_beats(split(GLB_ROWS_BASE, 16, random.Random(0), 3), PLAN)   # rows: fine
    bulk = StressBulk(None, None, PLAN, random.Random(2))
    bulk._size = lambda addr: 3                 # the old choice for registers
    with pytest.raises(AssertionError, match="registers"):
        bulk.split(REGS, 4 * 5)
