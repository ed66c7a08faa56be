"""A conv layer whose input channels are run as channel blocks on the generated accelerator
(compiler.tiling.blocks, docs/tiling.md "Channel blocks"): resnet with 8 input channels as two
runs of 4 on cgra_8x8 (the Verilator model CI already builds for tests/rtl/test_e2e.py), each
run loaded, run and read back by the host runtime, the partial sums the RTL read back from one
run the next run's input, the last run's output equal to the whole layer's golden bit for bit
and every run in its predicted cycles. The two configurations (the blocks before the last
drain raw sums, the last applies ReLU) share one placement and routing and differ in the
drain's constant only. Negative control (``make regress``): dropping the carry (the second
run starting from the bias again) gives another layer."""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

from compiler.frontend.source import app_inputs, establish_golden, load_app
from compiler.interp import run as interp
from compiler.tiling.blocks import first_carry, plan_channel_blocks, run_blocks
from sim.array_run import model_for, run_bundle

pytestmark = pytest.mark.rtl

ARCH = "cgra_8x8"
SIZES = dict(width=6, height=6, in_channels=8, out_channels=4, ic_unroll=2, oc_unroll=2)
BLOCK = 4


@pytest.fixture(scope="module")
def model():
    return model_for(ARCH)


@lru_cache(maxsize=None)
def _compiled():
    """The plan and both block configurations, placed, routed and bundled as one-run tiled
    bundles (the host runtime then reads back the run's whole outputs)."""
    from compiler.pipeline import compile_tiled
    plan = plan_channel_blocks("resnet", SIZES, BLOCK)
    shape = plan.program.buffers["output"].shape
    results = {last: compile_tiled(load_app("resnet", plan.block_sizes(last)), ARCH, "bundle",
                                   shape=shape) for last in (False, True)}
    return plan, results


def _rtl_runner(model, results, log: list, drop_carry=None):
    def run(block_in, last):
        r = results[last]
        if drop_carry is not None and log:
            block_in = dict(block_in, **drop_carry)
        want = interp(r.tiling.program, block_in)
        res = run_bundle(r.bundle, ARCH, model=model, keep=False,
                         arrays={"inputs": block_in, "expected": want})
        log.append((res, r.bundle["cycles_predicted"]))
        return res["outputs"]
    return run


def test_the_two_configurations_differ_in_the_drain_constant_only():
    _plan, results = _compiled()
    a, b = results[False], results[True]
    assert a.pnr.placement.sites == b.pnr.placement.sites
    wa, wb = a.bundle["bitstream"], b.bundle["bitstream"]
    assert len(wa) == len(wb) > 0
    differ = [i for i, (x, y) in enumerate(zip(wa, wb)) if x != y]
    assert 0 < len(differ) <= SIZES["oc_unroll"]


def test_channel_blocks_end_to_end(model):
    plan, results = _compiled()
    source = load_app("resnet", SIZES)
    inputs = app_inputs(source, 0)
    golden = establish_golden(source, inputs).outputs
    log: list = []
    got = run_blocks(plan, inputs, run=_rtl_runner(model, results, log))
    assert len(log) == plan.runs == 2
    for res, predicted in log:
        assert res["passed"], res["failures"]
        assert res["cycles_measured"] == predicted > 0
    assert np.array_equal(got["output"], golden["output"])


@pytest.mark.regress
def test_negative_control_a_dropped_carry_fails(model):
    """(``make regress``: two more RTL runs; the stitching's controls in CI are the golden
    ones of tests/compiler/tiling/test_blocks.py.)"""
    plan, results = _compiled()
    source = load_app("resnet", SIZES)
    inputs = app_inputs(source, 0)
    golden = establish_golden(source, inputs).outputs
    log: list = []
    got = run_blocks(plan, inputs, run=_rtl_runner(model, results, log,
                                                   drop_carry=first_carry(plan, inputs)))
    assert all(res["passed"] for res, _p in log)        # each run right for what it was fed
    assert not np.array_equal(got["output"], golden["output"])


# --- the same layer through `make sim` / `ubc sim --block 4`: the blocked bundle
# (compiler.backend.bundle.make_blocked_bundle) run by the host runtime's run_blocks

def test_make_sim_runs_the_channel_blocks(model, tmp_path):
    """``ubc sim resnet --block 4`` at these sizes: both blocks run by the host runtime
    (``Accelerator.run_blocks``) from one bundle, the partial sums read back from the first
    run the second run's carried input, the second configuration written as the words that
    differ; the record names the blocks and every run's measured cycles."""
    from sim.main import run_array
    rec = run_array("resnet", ARCH, SIZES, 0, out_dir=tmp_path, log=lambda _m: None,
                    progress=None, block=BLOCK)
    assert rec["passed"] and rec["match"], rec["failures"]
    assert (rec["channel_blocks"], rec["block"], rec["runs"]) == (2, BLOCK, 2)
    assert rec["runs_measured"] == [rec["cycles_per_run"]] * 2 == [1750, 1750]
    assert rec["cycles_total"] == 3500 and rec["output_words"] == 4 * 6 * 6
    assert rec["json"].endswith("resnet-cgra_8x8-width6-height6-in_channels8-out_channels4-"
                                "ic_unroll2-oc_unroll2.json")


def test_negative_control_the_blocked_bundle_without_the_bias_fails(model):
    """The same bundle with the first block's carried partial sums zero (the bias dropped):
    every run still ends at its predicted cycle, the output differs from the golden."""
    from compiler.pipeline import compile_channel_blocks
    source = load_app("resnet", SIZES)
    r = compile_channel_blocks(source, ARCH, "pnr", block=BLOCK)
    b = r.run("bundle").bundle
    inputs = app_inputs(source, 0)
    golden = establish_golden(source, inputs).outputs
    carry = {k: np.zeros_like(v) for k, v in first_carry(r.blocks, inputs).items()}
    assert any(np.any(v) for v in first_carry(r.blocks, inputs).values())
    res = run_bundle(b, ARCH, model=model, keep=False,
                     arrays={"inputs": dict(inputs, **carry), "expected": golden})
    assert [t["last_write"] for t in res["tiles"]] == [b["cycles_predicted"]] * 2
    assert not res["passed"] and not res["match"] and res["output_mismatches"] > 0
