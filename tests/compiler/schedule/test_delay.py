"""compiler/schedule/delay.py: producers as late as their consumers allow. On the multi-lane
example (lanes waiting for their own weights) the input lanes start with their convolutions:
the same cycles, the line-buffer bound of live words, fewer memories; the delay is the
largest the verifier accepts (one cycle more violates a dependence: the negative control);
writers of an accumulator and ``early`` ops keep their start; no app's cycles change."""
from dataclasses import replace
from pathlib import Path

import pytest

from apps import get_app
from compiler.interp import run
from compiler.pipeline import check_result, compile_app
from compiler.schedule.delay import accumulator_writers, delays, input_streams, shifted
from compiler.ir.hw import HwParams
from compiler.schedule.report import schedule_program
from compiler.frontend.source import app_inputs, load_app
from compiler.schedule.verify import VerifyError, verify

from ...apps.test_apps import SMALL

ROOT = Path(__file__).resolve().parents[3]
LANES = str(ROOT / "examples" / "multilane_weights.py")
SIZES = {"width": 12, "height": 8, "lanes": 6, "k": 3}


def _both(program):
    return (schedule_program(program, HwParams(), delay=False),
            schedule_program(program, HwParams()))


def test_lanes_waiting_for_weights_get_late_inputs():
    src = load_app(LANES, SIZES)
    early, late = _both(src.program)
    delayed = late.optimized.info["delayed"]
    # lanes 0 and 1 read their weights while their rows arrive; lanes 2..5 wait 9 cycles each
    assert delayed == {f"hw_input_{c}": 9 * c - 10 for c in range(2, 6)}
    assert late.optimized.completion == early.optimized.completion
    live = {b.name: b.live_words for b in late.live_optimized}
    before = {b.name: b.live_words for b in early.live_optimized}
    k, w = SIZES["k"], SIZES["width"]
    bound = SIZES["lanes"] * ((k - 1) * w + k)     # a k x k window's line buffer per lane
    assert live["hw_input"] == bound < before["hw_input"]
    # the interpreter in the delayed schedule's order computes the golden output
    inputs = app_inputs(src)
    assert (run(late.program, inputs, order=late.optimized.time_fn())["conv"]
            == run(src.program, inputs)["conv"]).all()


def test_the_delay_is_the_largest_the_verifier_accepts():
    late = schedule_program(load_app(LANES, SIZES).program, HwParams())
    sched = late.optimized
    verify(late.poly, sched, HwParams(), late.deps)
    for name in ("hw_input_2", "hw_input_5"):
        one_more = replace(sched, ops=dict(sched.ops, **{
            name: replace(sched.ops[name], offset=sched.ops[name].offset + 1)}))
        with pytest.raises(VerifyError, match="dependence violated"):
            verify(late.poly, one_more, HwParams(), late.deps)


def test_delayed_example_passes_the_netlist_model_with_fewer_memories():
    early = compile_app(LANES, "cgra_16x32", SIZES, delay=False)
    late = compile_app(LANES, "cgra_16x32", SIZES)
    assert late.netlist.cycles_predicted == early.netlist.cycles_predicted
    assert late.netlist.count("mem") <= early.netlist.count("mem")
    assert check_result(late).ok


def test_accumulator_writers_and_early_ops_keep_their_start():
    program = get_app("srcnn").build(**SMALL["srcnn"])
    assert {"init1_0", "conv1_0"} <= accumulator_writers(program)
    assert "load_input_0" in input_streams(program) and "conv1_0" not in input_streams(program)
    res = schedule_program(program, HwParams(), delay=False)
    moved = delays(res.program, res.poly, res.optimized, res.deps, 8, 4)
    assert moved and not set(moved) & accumulator_writers(program)
    kept = delays(res.program, res.poly, res.optimized, res.deps, 8, 4,
                  early=frozenset(moved))
    assert not set(kept) & set(moved)
    assert shifted(res.optimized, moved).info["delayed"] == moved


@pytest.mark.parametrize("app", ["gaussian", "camera", "mobilenet", "gemm"])
def test_no_app_takes_more_cycles(app):
    early, late = _both(get_app(app).build(**SMALL[app]))
    assert late.optimized.completion == early.optimized.completion
    assert sum(b.live_words for b in late.live_optimized) <= \
        sum(b.live_words for b in early.live_optimized)


def test_no_delay_flag_of_ubc_schedule_and_map(capsys):
    import json
    from compiler.cli import main
    sizes = [f"--size={k}={v}" for k, v in SIZES.items()]
    words = {}
    for flag in ([], ["--no-delay"]):
        assert main(["schedule", LANES, "--json"] + sizes + flag) == 0
        words[bool(flag)] = json.loads(capsys.readouterr().out)["sram_words_optimized"]
        assert main(["map", LANES, "--json"] + sizes + flag) == 0
        json.loads(capsys.readouterr().out)
    assert words[False] < words[True]
