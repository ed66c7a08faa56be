"""cocotb driver for the push-memory blocks: configure over the ``cfg_*`` bus, run, record.

The host's view: every register value comes from :func:`sim.tb.pub_cases.register_values`
(``encode_controller`` + ``RegisterMap.writes``) and reaches the DUT only through the
configuration bus; the driver then raises ``run``, feeds each input port its word for the
current *unstalled* cycle (junk otherwise, which the DUT must ignore), optionally stalls at
random, and records ``(unstalled cycle, word)`` for every ``valid_out``.
"""
from __future__ import annotations

import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge

from ubgen.regmap import RegisterMap

from .pub_cases import Case, Encoder, register_values


def junk(cycle: int, port: int) -> int:
    return (0xA5A5 + 7919 * cycle + 31 * port) & 0xFFFF


async def start(dut) -> None:
    """Start the clock and reset the DUT with ``run`` low."""
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.run.value = 0
    dut.stall.value = 0
    dut.cfg_we.value = 0
    dut.cfg_addr.value = 0
    dut.cfg_wdata.value = 0
    dut.rst.value = 1
    for _ in range(2):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    await RisingEdge(dut.clk)


def _select(dut, tile):
    if tile is not None:
        dut.cfg_tile.value = tile


async def cfg_write(dut, writes, tile: int | None = None) -> None:
    """One bus write per cycle; call right after a rising edge."""
    _select(dut, tile)
    for addr, value in writes:
        dut.cfg_addr.value = addr
        dut.cfg_wdata.value = value
        dut.cfg_we.value = 1
        await RisingEdge(dut.clk)
    dut.cfg_we.value = 0


async def cfg_read(dut, addr: int, tile: int | None = None) -> int:
    _select(dut, tile)
    dut.cfg_we.value = 0
    dut.cfg_addr.value = addr
    await ReadOnly()
    value = int(dut.cfg_rdata.value)
    await RisingEdge(dut.clk)
    return value


async def configure(dut, regmap: RegisterMap, writes, window_words: dict[int, int],
                    tile: int | None = None) -> None:
    """Clear the sticky error, write the registers and the window, read the registers back."""
    if "error" in regmap:
        await cfg_write(dut, [(regmap["error"].offset, 1)], tile)
    win = [(regmap.windows[0].offset + a, v) for a, v in window_words.items()]
    await cfg_write(dut, list(writes) + win, tile)
    for addr, value in writes:
        got = await cfg_read(dut, addr, tile)
        assert got == value, f"register at {addr:#x} reads {got:#x}, wrote {value:#x}"
    if "error" in regmap:
        assert await cfg_read(dut, regmap["error"].offset, tile) == 0, "error not cleared"


async def run_streams(dut, case: Case, ins: dict, outs: dict,
                      cycle_count: bool = True) -> dict[int, list]:
    """Run ``case.horizon`` unstalled cycles; ``ins``/``outs`` map ports to DUT handles
    (``outs[q] = (data, valid)``); ``cycle_count``: check the DUT's ``cycle_count`` output
    every cycle (a DUT without one: False). Returns the recorded output streams."""
    rng = random.Random(case.seed)
    rec = {q: [] for q in outs}
    c = 0
    dut.run.value = 1
    while c < case.horizon:
        stalled = bool(case.stall) and rng.random() < case.stall
        dut.stall.value = int(stalled)
        for p, handle in ins.items():
            word = None if stalled else case.inputs.get(p, {}).get(c)
            handle.value = junk(c, p) if word is None else word
        await ReadOnly()
        assert not cycle_count or int(dut.cycle_count.value) == c, \
            f"cycle_count {int(dut.cycle_count.value)}, expected {c}"
        for q, (data, valid) in outs.items():
            if int(valid.value):
                assert not stalled, f"valid_out[{q}] high in a stalled cycle"
                rec[q].append((c, int(data.value)))
        await RisingEdge(dut.clk)
        c += not stalled
    dut.run.value = 0
    dut.stall.value = 0
    await RisingEdge(dut.clk)
    return rec


def load_case(var: str = "UBGEN_ENERGY_CASE"):
    """The pickled stimulus the file named by environment variable ``var`` holds (written by
    ``sim.energy.blocks`` for one run: a :class:`Case`, or the bus writes and a Case)."""
    import os
    import pickle
    with open(os.environ[var], "rb") as f:
        return pickle.load(f)


def check_streams(case: Case, rec: dict[int, list]) -> None:
    """Every expected word at its cycle, nothing else."""
    for q, got in rec.items():
        want = case.expected.get(q, [])
        if got != want:
            bad = next((i for i, (g, w) in enumerate(zip(got, want)) if g != w),
                       min(len(got), len(want)))
            raise AssertionError(
                f"{case.name}: port {q}: {len(got)} words, expected {len(want)}; first "
                f"difference at #{bad}: got {got[bad] if bad < len(got) else None}, "
                f"expected {want[bad] if bad < len(want) else None}")


async def check_error(dut, regmap: RegisterMap, expect: bool, tile: int | None = None) -> None:
    """The sticky error flag (port and status register) after a run; clear it if set."""
    offset = regmap["error"].offset
    assert int(dut.error.value) == expect, f"error output {int(dut.error.value)}"
    assert await cfg_read(dut, offset, tile) == expect, "error status register"
    if expect:
        await cfg_write(dut, [(offset, 1)], tile)
        assert await cfg_read(dut, offset, tile) == 0, "error not cleared by writing 1"


async def run_case(dut, case: Case, regmap: RegisterMap, encode: Encoder, ins: dict,
                   outs: dict, tiles: list[int] | None = None) -> None:
    """Reset, configure (every chained tile with its own ``tile_id``; ``encode``: the block's
    controller encoder), run and check a case."""
    await start(dut)
    for tile in tiles or [None]:
        writes = register_values(case, encode, regmap, tile_id=tile)
        await configure(dut, regmap, writes, case.window, tile)
    rec = await run_streams(dut, case, ins, outs)
    check_streams(case, rec)
    if "error" in regmap:
        for tile in tiles or [None]:
            await check_error(dut, regmap, case.expect_error, tile)
