"""An accumulator's drain next to its last update (compiler.schedule.drain_place): a 5 x 5 box
sum written as a reduction that is not unrolled, reordered to stream (rows of partial sums,
compiler.passes.reduction_order), keeps a row or two of partial sums instead of the whole
tile, at the same completion; its accumulator maps and is model-checked. Negative controls:
the drain kept where the scheduler put it holds the tile, and a drain placed one cycle early
fails the verifier."""
from __future__ import annotations

import runpy
from dataclasses import replace
from pathlib import Path

import pytest

from compiler.ir.hw import HwParams
from compiler.mapping.map_buffer import map_buffer
from compiler.mapping.pub_model import check_buffer
from compiler.schedule.drain_place import drain_pairs
from compiler.schedule.report import schedule_program
from compiler.schedule.verify import VerifyError, verify
from ubgen.arch import load_arch

ARCH = load_arch("cgra_8x8")
PARAMS = HwParams.from_arch(ARCH)
BOX5 = str(Path(__file__).resolve().parents[2] / "data" / "apps" / "box5.py")
W = H = 24          # a 20 x 20 output tile: rows of 20 partial sums, above the 15 a memory needs


def box_reduction():
    """tests/data/apps/box5.py without ``unroll``: one addition per instance."""
    return runpy.run_path(BOX5)["box_pipeline"](W, H, unrolled=False)


def _live(result, name):
    return next(b.live_words for b in result.live_optimized if b.name == name)


def test_the_drain_reads_each_row_as_its_reduction_finishes():
    program = box_reduction()
    assert [(u.name, d.name) for u, d in drain_pairs(program)] == [("box_u0", "output")]
    placed = schedule_program(program, PARAMS)
    kept = schedule_program(program, PARAMS, early=frozenset({"output"}))
    assert placed.optimized.info["drain_placed"] == ["output"]
    assert "drain_placed" not in kept.optimized.info
    assert placed.optimized.completion == kept.optimized.completion
    row = W - 4
    assert _live(placed, "box") <= 2 * row < (W - 4) * (H - 4) // 2 < _live(kept, "box")
    # the drain walks the elements at the update's pace
    upd, out = placed.optimized.ops["box_u0"], placed.optimized.ops["output"]
    coef = dict(zip(upd.dims, upd.coeffs))
    assert list(out.coeffs) == [coef["box_u0_y"], coef["box_u0_x"]]
    impl = map_buffer(placed.buffers["box"], ARCH)
    report = check_buffer(placed.buffers["box"], impl)
    assert report.checked > 0 and not report.mismatches


def test_a_drain_one_cycle_early_fails_the_verifier():
    program = box_reduction()
    r = schedule_program(program, PARAMS)
    ops = dict(r.optimized.ops)
    out, upd = ops["output"], ops["box_u0"]
    # the last update of the first element lands at its issue + latency
    last = upd.offset + sum(c * (s + e - 1) for d, c, (s, e) in
                            zip(upd.dims, upd.coeffs, upd.bounds) if "_r_" in d)
    ops["output"] = replace(out, offset=last + upd.latency - 1)
    bad = type(r.optimized)(r.optimized.program, r.optimized.policy, ops, r.optimized.info)
    with pytest.raises(VerifyError):
        verify(r.poly, bad, PARAMS, r.deps)


def test_the_box_reduction_runs_bit_exact_on_the_netlist_model():
    """End to end to the netlist model: the drain placed, the window rows refetched per shift
    (compiler.schedule.fetch_pad.row_shift, example B), every buffer mapped."""
    from compiler.pipeline import check_result, compile_app
    result = compile_app(box_reduction(), ARCH, until="netlist")
    assert result.scheduled.optimized.info["drain_placed"] == ["output"]
    assert not result.refused
    check = check_result(result)
    assert check.ok, check.summary()
