"""The buffet (thesis §6.2, Fig. 6.5; ``ubgen.buffet``) in Amaranth's simulator: fill, read,
update and shrink through ready/valid handshakes, the read-after-fill and full checks, response
back-pressure, and the compiler's configuration of a small gaussian's delay lines under random
gaps on every port (``sim.buffet_run.BuffetDriver``, the same host as the Verilator runs).
Negative controls: the buffet built without its dependency check (``check=False``) and a
corrupted read index both fail the golden stream."""
from __future__ import annotations

from dataclasses import replace

import pytest

from sim.buffet_run import OUTPUTS, BuffetDriver, app_buffet_jobs
from tests.gateware import run_testbench
from ubgen.buffet import Buffet, BuffetModel, BuffetParams

SMALL = BuffetParams(capacity=16)


def run_job(job, params=BuffetParams(), check=True):
    dut = Buffet(params, check=check)
    drv = BuffetDriver(job)

    async def bench(ctx):
        limit = 20 * (len(job.fills) + len(job.requests)) + 100
        while not drv.done and drv.cycle < limit:
            for k, v in drv.drive().items():
                ctx.set(getattr(dut, k), v)
            drv.observe({k: ctx.get(getattr(dut, k)) for k in OUTPUTS})
            await ctx.tick()

    run_testbench(dut, bench)
    return drv.result()


@pytest.fixture(scope="module")
def gaussian_jobs():
    return app_buffet_jobs("gaussian", sizes=dict(width=32, height=6))


def test_compiler_configuration_without_and_with_back_pressure(gaussian_jobs):
    assert len(gaussian_jobs) == 2
    for job in gaussian_jobs:
        fast = run_job(job)
        assert fast["passed"], fast
        # one word per cycle: the last fill, its read a cycle later, its response two after that
        assert fast["cycles"] == len(job.fills) + 3
        slow = run_job(job.pressured(0.4, 3))
        assert slow["passed"] and slow["cycles"] > fast["cycles"], slow


def test_negative_control_without_the_dependency_check(gaussian_jobs):
    """A slow producer and an eager consumer: without the read-after-fill check the reads
    overtake the fills and return stale words."""
    job = gaussian_jobs[0].pressured(0.6, 5, p_read=0.0, p_stall=0.0)
    assert run_job(job)["passed"]
    bad = run_job(job, check=False)
    assert not bad["passed"] and bad["mismatches"] > 0


def test_negative_control_corrupted_read_index(gaussian_jobs):
    job = gaussian_jobs[0]
    bad = replace(job, requests=[(i + 1, s) for i, s in job.requests])
    r = run_job(bad)
    assert not r["passed"]


def test_update_shrink_full_and_wait():
    """Hand-driven: four fills, an update of word 1, reads of words 1 and 0 with a shrink of 2,
    an update that must wait for its word's fill, and a fill that waits while full."""
    dut = Buffet(SMALL)
    log = []

    async def cycle(ctx, **inputs):
        for name in ("fill_valid", "rd_valid", "upd_valid"):
            ctx.set(getattr(dut, name), inputs.get(name, 0))
        for k, v in inputs.items():
            ctx.set(getattr(dut, k), v)
        ctx.set(dut.rd_data_ready, inputs.get("rd_data_ready", 1))
        out = {k: ctx.get(getattr(dut, k)) for k in OUTPUTS + ("occupancy",)}
        if out["rd_data_valid"] and inputs.get("rd_data_ready", 1):
            log.append(out["rd_data"])
        await ctx.tick()
        return out

    async def bench(ctx):
        for v in (10, 11, 12, 13):
            assert (await cycle(ctx, fill_valid=1, fill_data=v))["fill_ready"]
        out = await cycle(ctx, upd_valid=1, upd_idx=1, upd_data=99)
        assert out["upd_ready"] and out["occupancy"] == 4
        assert not (await cycle(ctx, upd_valid=1, upd_idx=4, upd_data=5))["upd_ready"]
        assert (await cycle(ctx, rd_valid=1, rd_idx=1, rd_shrink=0))["rd_ready"]
        assert not (await cycle(ctx, rd_valid=1, rd_idx=5, rd_shrink=0))["rd_ready"]  # unfilled
        assert (await cycle(ctx, rd_valid=1, rd_idx=0, rd_shrink=2))["rd_ready"]
        for _ in range(3):
            await cycle(ctx)
        assert log == [99, 10]
        assert (await cycle(ctx))["occupancy"] == 2                  # words 12, 13 live
        assert (await cycle(ctx, rd_valid=1, rd_idx=0, rd_shrink=0))["rd_ready"]
        for v in range(14):                                          # fill to capacity 16
            assert (await cycle(ctx, fill_valid=1, fill_data=v))["fill_ready"]
        assert not (await cycle(ctx, fill_valid=1, fill_data=7))["fill_ready"]   # full
        await cycle(ctx)
        assert log == [99, 10, 12]
        out = await cycle(ctx, clear=1)
        assert (await cycle(ctx))["occupancy"] == 0

    run_testbench(dut, bench)


def test_back_pressure_holds_responses():
    """Responses held while rd_data_ready is low; reads stop once the FIFO is full."""
    job = app_buffet_jobs("gaussian", sizes=dict(width=32, height=6))[1]
    r = run_job(job.pressured(0.0, 9, p_read=0.0, p_stall=0.8))
    assert r["passed"], r


def test_reference_model_rules():
    m = BuffetModel(4)
    assert m.read(0, 0) is False                  # nothing filled yet
    assert all(m.fill(v) for v in (1, 2, 3, 4)) and not m.fill(5)      # full
    assert m.read(2, 0) == 3 and m.read(0, 3) == 1 and m.occupancy == 1
    assert m.update(0, 40) and not m.update(1, 0) and m.read(0, 1) == 40
