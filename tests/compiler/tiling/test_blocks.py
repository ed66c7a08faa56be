"""Channel blocks (compiler.tiling.blocks): a conv layer's input-channel reduction run block by
block, the partial sums of each run the next run's initial values, equals the whole layer's
golden bit for bit (random small layers and block sizes on the golden interpreter, one layer on
the netlist model); a dropped carry, a misaligned operand or a clipped carry differ (the
negative controls); a block that does not divide the reduction is refused in one line."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler.frontend.source import app_inputs, establish_golden, load_app
from compiler.interp import run as interp
from compiler.tiling.blocks import block_inputs, first_carry, plan_channel_blocks, run_blocks
from compiler.tiling.region import TilingError

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
SMALL = dict(width=5, height=4, in_channels=8, out_channels=4, ic_unroll=2, oc_unroll=2)


def _whole(sizes: dict, seed: int = 0):
    source = load_app("resnet", sizes)
    inputs = app_inputs(source, seed)
    return inputs, establish_golden(source, inputs).outputs


@settings(max_examples=10, **SETTINGS)
@given(w=st.integers(1, 6), h=st.integers(1, 5), icu=st.sampled_from([1, 2]),
       nblocks=st.integers(1, 4), per_block=st.integers(1, 2), ocu=st.sampled_from([1, 2]),
       ocb=st.integers(1, 2), ksize=st.sampled_from([1, 3]), stride=st.sampled_from([1, 2]),
       io_lanes=st.sampled_from([0, 1]), seed=st.integers(0, 3))
def test_channel_blocks_stitch_to_the_golden(w, h, icu, nblocks, per_block, ocu, ocb, ksize,
                                             stride, io_lanes, seed):
    block = icu * per_block
    sizes = dict(width=w, height=h, in_channels=block * nblocks, out_channels=ocu * ocb,
                 ic_unroll=icu, oc_unroll=ocu, ksize=ksize, stride=stride, io_lanes=io_lanes)
    inputs, golden = _whole(sizes, seed)
    plan = plan_channel_blocks("resnet", sizes, block)
    assert plan.runs == nblocks
    assert [(b.lo, b.hi) for b in plan.blocks] == [(j * block, (j + 1) * block)
                                                  for j in range(nblocks)]
    got = run_blocks(plan, inputs)
    assert set(got) == {"output"}
    assert np.array_equal(got["output"], golden["output"]), sizes


def test_the_block_programs_read_one_block_of_channels_and_differ_in_the_drain_only():
    plan = plan_channel_blocks("resnet", SMALL, 2)
    bufs = plan.program.buffers
    assert bufs["input"].shape[0] == 2 and bufs["weights"].shape[0] == 2
    assert "bias" not in bufs and bufs["psum"].shape == (4, 5, 4)
    assert bufs["output"].kind == "output"
    a, b = plan.program.to_dict(), plan.last.to_dict()
    assert a != b
    ops_a = {op.name: op for op in plan.program.ops()}
    ops_b = {op.name: op for op in plan.last.ops()}
    assert ops_a.keys() == ops_b.keys() and len(ops_a) > 4
    differ = sorted(n for n in ops_a if repr(ops_a[n].kernel) != repr(ops_b[n].kernel))
    assert differ == ["drain_0", "drain_1"]


def test_block_order_is_free_but_the_sum_is_exact():
    """Wrap-around addition is associative: the blocks reversed give the same layer."""
    inputs, golden = _whole(SMALL)
    plan = plan_channel_blocks("resnet", SMALL, 2)
    plan.blocks = plan.blocks[::-1]
    assert np.array_equal(run_blocks(plan, inputs)["output"], golden["output"])


def test_negative_control_a_dropped_carry_differs():
    """Every block starting from the bias again (the carry dropped) is not the layer."""
    inputs, golden = _whole(SMALL)
    plan = plan_channel_blocks("resnet", SMALL, 2)
    start = first_carry(plan, inputs)

    def forgetful(block_in, last):
        return interp(plan.program_for(last), dict(block_in, **start))
    got = run_blocks(plan, inputs, run=forgetful)
    assert not np.array_equal(got["output"], golden["output"])


def test_negative_control_misaligned_channels_differ():
    """The weights' blocks in another order than the activations' is not the layer."""
    inputs, golden = _whole(SMALL)
    plan = plan_channel_blocks("resnet", SMALL, 2)
    bad = dict(inputs, weights=np.roll(inputs["weights"], 2, axis=0))
    assert not np.array_equal(run_blocks(plan, bad)["output"], golden["output"])


def test_negative_control_a_clipped_carry_differs():
    """The last block's configuration (ReLU) for every block clips the partial sums: not
    the layer; the blocks before the last must drain the raw sums."""
    inputs, golden = _whole(SMALL)
    plan = plan_channel_blocks("resnet", SMALL, 2)
    partial = []

    def relu_every_block(block_in, last):
        out = interp(plan.last, block_in)
        partial.append(interp(plan.program, block_in)["output"])
        return out
    got = run_blocks(plan, inputs, run=relu_every_block)
    assert any((p < 0).any() for p in partial[:-1])      # there was something to clip
    assert not np.array_equal(got["output"], golden["output"])


def test_block_inputs_cut_the_reduced_operands_only():
    inputs, _golden = _whole(SMALL)
    plan = plan_channel_blocks("resnet", SMALL, 2)
    carry = first_carry(plan, inputs)
    assert np.array_equal(carry["psum"][:, 3, 2], inputs["bias"])
    got = block_inputs(plan, plan.blocks[2], inputs, carry)
    assert np.array_equal(got["input"], inputs["input"][4:6])
    assert np.array_equal(got["weights"], inputs["weights"][4:6])
    assert got["psum"] is carry["psum"] or np.array_equal(got["psum"], carry["psum"])


@pytest.mark.parametrize("block,why", [(3, "must divide 8"), (1, "multiple of ic_unroll=2"),
                                       (0, "must divide")])
def test_a_block_that_does_not_cut_the_reduction_is_refused(block, why):
    with pytest.raises(TilingError, match=why) as e:
        plan_channel_blocks("resnet", SMALL, block)
    assert "\n" not in str(e.value)


def test_an_app_without_channel_blocks_is_refused():
    with pytest.raises(TilingError, match="declares no channel blocks"):
        plan_channel_blocks("gaussian", {"width": 8, "height": 8}, 2)


def test_block_sizes_are_the_unroll_multiples_that_divide_the_reduction():
    from compiler.tiling.blocks import block_sizes
    assert block_sizes("resnet", dict(SMALL, in_channels=12)) == [6, 4, 2]
    assert block_sizes("resnet", dict(SMALL, in_channels=2)) == []


def test_negative_control_no_channel_block_is_a_one_line_refusal():
    """A reduction with no block smaller than the whole (its unroll is its extent)."""
    from compiler.pipeline import compile_channel_blocks
    source = load_app("resnet", dict(SMALL, in_channels=2))
    with pytest.raises(TilingError, match="no channel block fits cgra_4x4") as e:
        compile_channel_blocks(source, "cgra_4x4")
    assert "\n" not in str(e.value)


def test_channel_blocks_on_the_netlist_model():
    """Both block configurations compiled for cgra_8x8 and run by the netlist model, the
    partial sums of one run the next one's input: the stitched layer equals the golden and
    every run takes its predicted cycles; the two netlists are the same but for the drain's
    constant."""
    from compiler.backend.netlist_model import simulate_netlist
    from compiler.pipeline import compile_app
    sizes = dict(SMALL, width=4, height=4)
    inputs, golden = _whole(sizes)
    plan = plan_channel_blocks("resnet", sizes, 4)
    compiled = {last: compile_app(plan.program_for(last), "cgra_8x8", plan.block_sizes(last),
                                  until="netlist") for last in (False, True)}
    nets = [compiled[last].netlist for last in (False, True)]
    assert nets[0].count("pe") == nets[1].count("pe") and nets[0].cycles_predicted == \
        nets[1].cycles_predicted
    runs = []

    def on_the_model(block_in, last):
        r = compiled[last]
        res = simulate_netlist(r.netlist, r.arch, r.scheduled.program, block_in)
        assert not res.conflicts and not res.missing
        runs.append((res.cycles, r.netlist.cycles_predicted))
        return res.outputs
    got = run_blocks(plan, inputs, run=on_the_model)
    assert len(runs) == 2 and all(c == p > 0 for c, p in runs)
    assert np.array_equal(got["output"], golden["output"])


def _narrow(bits: int):
    from dataclasses import replace
    from ubgen.arch import load_arch
    arch = load_arch("cgra_4x4")
    return replace(arch, pub=replace(arch.pub, controller=replace(arch.pub.controller,
                                                                  cycle_width=bits)))


DRIVER = dict(width=2, height=2, in_channels=8, out_channels=1, ic_unroll=1, oc_unroll=1)


def test_the_driver_compiles_the_largest_block_that_fits_and_reports_it():
    """resnet with 8 input channels (590 cycles in one run) on cgra_4x4 under a 9-bit counter
    (511): blocks of 4 (302 cycles) fit, 2 runs. The bundle of the blocked layer holds both
    configurations (the same cycles; bitstreams that differ in the drain's constants only)
    and the channel range of every run (sim/host.py's ``run_blocks`` runs it)."""
    from compiler.pipeline import compile_channel_blocks
    result = compile_channel_blocks(load_app("resnet", DRIVER), _narrow(9))
    assert result.blocks.block == 4 and result.runs == 2 and result.tiling is None
    rep = result.report
    assert rep["channel_blocks"] == 2 and rep["cycles_total"] == 2 * rep["cycles_predicted"]
    assert 0 < rep["cycles_predicted"] <= 511
    b = result.run("bundle").bundle
    assert b["blocks"]["ranges"] == [[0, 4], [4, 8]] and b["blocks"]["carry"] == ["psum",
                                                                                 "output"]
    first, last = b["configs"]
    assert first["cycles_predicted"] == last["cycles_predicted"] == rep["cycles_predicted"]
    assert first["bitstream"] == b["bitstream"]
    differ = [x for x, y in zip(first["bitstream"], last["bitstream"]) if x != y]
    assert len(first["bitstream"]) == len(last["bitstream"])
    assert len(differ) == 1              # the one drain PE's constant (oc_unroll = 1)


def test_a_block_past_the_counter_is_tiled_over_outputs_too():
    """Under an 8-bit counter (255) a block of 4 does not fit one run either: its outputs are
    tiled (the block Program goes through compile_fitting), runs = blocks x output tiles."""
    from compiler.pipeline import compile_channel_blocks
    result = compile_channel_blocks(load_app("resnet", DRIVER), _narrow(8))
    assert result.blocks.runs * result.tiling.runs == result.runs > 2
    assert 0 < result.report["cycles_predicted"] <= 255
    # the nested plan on the golden interpreter: every block's output tiles, the carry
    # sliced and stitched with them, equal the whole layer
    from compiler.tiling.plan import plan_tiles, run_tiles
    plan = result.blocks
    tiles = {last: plan_tiles(plan.program_for(last), result.tiling.shape)
             for last in (False, True)}
    inputs, golden = _whole(DRIVER)
    got = run_blocks(plan, inputs, run=lambda block_in, last: run_tiles(tiles[last], block_in))
    assert np.array_equal(got["output"], golden["output"])
