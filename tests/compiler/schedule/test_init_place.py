"""An accumulator's initialization next to its first update (compiler.schedule.init_place):
examples/halide_box_blur.py's zeros are written just before the 3x3 sum reads them, so the
accumulator keeps far fewer live words, at the same completion, through mapping and the
netlist model bit-exactly; an initialization that shares a loop with its update (the DNN
apps' per-block accumulators) is left where the scheduler put it (negative control)."""
from __future__ import annotations

from pathlib import Path

from compiler.frontend.source import load_app
from compiler.ir.hw import HwParams
from compiler.pipeline import check_result, compile_app
from compiler.schedule.init_place import init_pairs, place_inits
from compiler.schedule.report import schedule_program
from compiler.schedule.verify import verify

BOX = str(Path(__file__).resolve().parents[3] / "examples" / "halide_box_blur.py")


def _live(result, name):
    return next(b.live_words for b in result.live_optimized if b.name == name)


def test_box_blur_zeros_are_written_next_to_the_first_update():
    program = load_app(BOX).program
    placed = schedule_program(program)
    kept = schedule_program(program, early=frozenset({"box"}))
    assert placed.optimized.info["init_placed"] == ["box"]
    assert "init_placed" not in kept.optimized.info
    assert placed.optimized.completion == kept.optimized.completion
    assert _live(placed, "box") < _live(kept, "box") // 4
    ini, upd = placed.optimized.ops["box"], placed.optimized.ops["box_u0"]
    # each zero lands 2 x FW cycles before the update reads it, at the update's pace
    assert ini.coeffs == upd.coeffs
    assert upd.offset - (ini.offset + ini.latency) == 2 * HwParams().fetch_width


def _box_without_level():
    from dataclasses import replace
    program = load_app(BOX).program
    program.buffers["box"] = replace(program.buffers["box"], level=None)
    return program


def test_placed_schedule_maps_and_runs_bit_exact_on_the_netlist_model():
    """Without the example's store_in("MEM") the placed zeros map (the accumulator's short
    reuse goes to shift registers) and the netlist model computes the golden in the predicted
    cycles."""
    result = compile_app(_box_without_level(), "cgra_8x8", until="netlist")
    assert result.scheduled.optimized.info.get("init_placed") == ["box"]
    check = check_result(result)
    assert check.ok, check.summary()


def test_a_placement_mapping_refuses_falls_back_to_the_schedulers():
    """The example asks for box in a memory tile; with the zeros next to the update nothing is
    left for a memory to keep, mapping refuses the level, and the driver schedules again with
    the initialization where the scheduler put it (and the example compiles as before)."""
    result = compile_app(BOX, "cgra_8x8", until="netlist")
    assert "init_placed" not in result.scheduled.optimized.info
    assert not result.refused
    check = check_result(result)
    assert check.ok, check.summary()


def test_a_placement_the_verifier_refuses_is_caught():
    """Negative control of the verification the scheduler relies on: the zeros placed one
    cycle too late for the update's first read fail the dependence check."""
    import pytest
    from dataclasses import replace
    from compiler.schedule.verify import VerifyError
    program = load_app(BOX).program
    r = schedule_program(program)
    ops = dict(r.optimized.ops)
    upd = ops["box_u0"]
    ops["box"] = replace(ops["box"], offset=upd.offset + 1)
    bad = type(r.optimized)(r.optimized.program, r.optimized.policy, ops, r.optimized.info)
    with pytest.raises(VerifyError):
        verify(r.poly, bad, HwParams(), r.deps)


def test_an_initialization_inside_its_updates_loops_is_not_moved():
    """resnet's and gemm's accumulators are initialized inside the loops they are updated in
    (once per block): no pair, the schedule is returned as it is."""
    for app in ("resnet", "gemm"):
        program = load_app(app).program
        assert init_pairs(program) == []
    small = load_app("gemm", {"m": 6, "n": 8, "k": 8, "k_unroll": 4, "n_unroll": 4}).program
    r = schedule_program(small)
    assert place_inits(small, r.optimized, 8) is r.optimized
    assert "init_placed" not in r.optimized.info
