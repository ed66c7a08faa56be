"""Non-unrolled reductions stream at one multiply-accumulate per cycle (docs/scheduling.md,
"Non-unrolled reductions"): tests/data/apps/matvec.py, a 32 x 32 matrix-vector product
written as a new user writes it (the reduction innermost), is scheduled within 10% of its MAC
count plus the pipeline's fill and drain, with the accumulator holding one partial sum per
output and the weights streamed; for random sizes it maps and runs bit-exactly in the
predicted cycles on the netlist model (hypothesis). Negative control: the same file kept in
its written order (``reorder=False``) takes three cycles per MAC and holds most of the
matrix."""
from __future__ import annotations

from pathlib import Path

from hypothesis import example, given, settings, strategies as st

from compiler.frontend.source import load_app
from compiler.ir.hw import HwParams
from compiler.pipeline import check_result, compile_app
from compiler.schedule.report import recurrence_distances, schedule_program

MATVEC = str(Path(__file__).resolve().parents[2] / "data" / "apps" / "matvec.py")
ARCH = "cgra_8x8"
PARAMS = HwParams.from_arch(ARCH)


def _live(result) -> dict[str, int]:
    return {b.name: b.live_words for b in result.live_optimized}


def _fill_bound(result, n: int, m: int) -> float:
    """1.1 x the MACs, plus the fill (the first update's issue and latency) and the drain (one
    output word per cycle); the MACs counted over rows padded to the fetch width (thesis
    §5.5.3: a row of ``m`` words takes whole wide words, ``m`` itself when ``FW`` divides it)."""
    upd = result.optimized.ops["acc_u0"]
    fw = PARAMS.fetch_width
    return 1.1 * n * fw * -(-m // fw) + upd.first() + upd.latency + m


def test_matvec_streams_at_one_mac_per_cycle_with_one_partial_sum_per_output():
    result = schedule_program(load_app(MATVEC).program, PARAMS)
    assert result.optimized.info["reduction_order"]["acc_u0"] == ["acc_u0_r_x", "acc_u0_i"]
    assert result.optimized.completion <= _fill_bound(result, 32, 32)
    live = _live(result)
    assert 0 < live["acc"] <= 32                 # one partial sum per output element
    assert live["w"] <= PARAMS.fetch_width       # each weight used as it arrives
    assert live["v"] <= 32


def test_negative_control_the_written_order_is_three_cycles_per_mac():
    written = schedule_program(load_app(MATVEC).program, PARAMS, reorder=False)
    assert "reduction_order" not in written.optimized.info
    assert written.optimized.completion > 2.5 * 32 * 32
    assert written.optimized.completion > _fill_bound(written, 32, 32)
    assert _live(written)["w"] > 32 * 32 // 2


@settings(max_examples=6, deadline=None)
@given(st.integers(2, 24), st.integers(2, 40))
@example(24, 17)                 # a row padded from 17 to 20 cycles
@example(24, 14)                 # rows shorter than the recurrence's distance
def test_random_matvec_sizes_run_bit_exact_on_the_netlist_model(n, m):
    """Property: any matrix-vector product written with its reduction innermost compiles,
    maps and computes the golden in the predicted cycles on the netlist model; when its
    output rows are at least the recurrence's distance (the accumulator's latency and the
    memory's gap) it runs within the bound above."""
    result = compile_app(MATVEC, ARCH, {"n": n, "m": m}, until="netlist")
    check = check_result(result)
    assert check.ok, check.summary()
    need = recurrence_distances(result.scheduled.program, PARAMS)["acc_u0"]
    if m >= need:
        assert result.scheduled.optimized.completion <= _fill_bound(result.scheduled, n, m)


def test_an_accumulator_computed_at_each_output_schedules_and_runs_bit_exact(tmp_path):
    """``acc.compute_at(output, i)``: one word of ``acc`` per output element, reused for every
    ``i``. The pipelined policy overlaps successive ``i``, so a value would be overwritten
    before it is read; the scheduler falls back to the next policy of its chain (sequential),
    says why, and the mapping holds ``acc`` in one register (a buffer of no dimension). The
    written file (negative control) is not affected: it keeps its pipelined policy."""
    written = Path(MATVEC).read_text()
    src = written.replace("    w.stream_to_accelerator()",
                          "    acc.compute_at(out, i)\n    w.stream_to_accelerator()", 1)
    assert src != written
    app = tmp_path / "matvec_acc_at_output.py"
    app.write_text(src)
    result = compile_app(str(app), ARCH, {"n": 8, "m": 8}, until="netlist")
    sched = result.scheduled.optimized
    assert sched.policy == "sequential"
    assert sched.info["fallback"] == ["dnn: buffer acc: a value is overwritten before it is read"]
    assert _live(result.scheduled)["acc"] == 1
    check = check_result(result)
    assert check.ok, check.summary()
    plain = schedule_program(load_app(MATVEC, {"n": 8, "m": 8}).program, PARAMS).optimized
    assert plain.policy == "dnn" and "fallback" not in plain.info
