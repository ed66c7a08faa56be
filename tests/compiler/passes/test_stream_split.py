"""Host streams split over several IO tiles (compiler.passes.stream_split): which stream ops
are split, along which loop and by how much (gemm's copies, drain and initialization by its
unroll; a stencil's input copy not at all), the slices cover every element exactly once (a
planted overlap, gap or shifted load is refused: the negative controls of ``check_cover``), the
split program computes what the original does on the interpreter, the IO tiles cap the split,
and gemm scheduled with the split runs at its compute bound and is bit-exact on the netlist
model (the stream split off: the negative control, bound by its one-word streams); a copy
whose kernel has a loop phase is left alone."""
from __future__ import annotations

import numpy as np
import pytest

from compiler.frontend.source import load_app
from compiler.interp import run as interp
from compiler.ir import Call, Kernel, Program, ProgramError, select, u16
from compiler.ir.expr import LoopPhase
from compiler.ir.hw import HwParams
from compiler.passes.stream_split import (buffer_lanes, check_cover, plan_splits,
                                          split_streams)
from compiler.pipeline import check_result, compile_app
from compiler.schedule.report import schedule_program

GEMM = dict(m=16, n=16, k=16, k_unroll=4, n_unroll=4)


def _gemm(**sizes) -> Program:
    return load_app("gemm", {**GEMM, **sizes}).program


def test_gemm_streams_split_by_the_unroll_along_the_lanes_dimension():
    program = _gemm()
    assert buffer_lanes(program, "a_mem", {"load_a"}) == [4, 1]
    assert buffer_lanes(program, "b_mem", {"load_b"}) == [4, 4]
    assert plan_splits(program) == {"load_a": (0, "k_load_a", 4), "load_b": (1, "k_load_b", 4),
                                    "init": (0, "j_init", 4), "drain": (0, "j_drain", 4)}
    # 1x1: every access is one lane, nothing to split (a negative control of the lane rule)
    assert plan_splits(_gemm(k_unroll=1, n_unroll=1)) == {}


def test_a_stencil_input_copy_is_not_split():
    # gaussian's window reads x + dx (coefficient 1): a window is reuse, not lanes
    program = load_app("gaussian", {"width": 16, "height": 16}).program
    assert plan_splits(program) == {}
    assert split_streams(program).program is program


def test_io_tiles_cap_the_split():
    program = _gemm()
    # 3 host ports unsplit; 3 + 3 * 3 = 12 split by 4: with 9, two of the widest halve to 2
    assert plan_splits(program, 12) == plan_splits(program)
    assert plan_splits(program, 9) == {"load_a": (0, "k_load_a", 2), "load_b": (1, "k_load_b", 2),
                                       "init": (0, "j_init", 4), "drain": (0, "j_drain", 4)}
    # a serial copy keeps its one IO tile, so the others keep their width
    assert plan_splits(program, 9, frozenset({"load_a"})) == plan_splits(program)
    # no room for any parallel slice: only the on-chip initialization is split
    assert plan_splits(program, 3) == {"init": (0, "j_init", 4)}


def test_split_program_computes_the_same_outputs():
    program = _gemm()
    inputs = {"A": np.random.default_rng(1).integers(-15, 16, (16, 16)).astype(np.int16),
              "B": np.random.default_rng(2).integers(-15, 16, (16, 16)).astype(np.int16)}
    want = interp(program, inputs)["C"]
    for serial in (frozenset(), frozenset({"load_a", "load_b"})):
        out = split_streams(program, serial=serial)
        assert sorted(out.split) == ["drain", "init", "load_a", "load_b"]
        assert out.serial == serial
        assert np.array_equal(interp(out.program, inputs)["C"], want)
    par = split_streams(program).program
    assert [op.name for op in par.ops() if op.name.startswith("drain")] == \
        [f"drain_{r}" for r in range(4)]
    ser = split_streams(program, serial=frozenset({"load_a"})).program
    assert [lp.name for lp in ser.op("load_a").loops] == ["k_load_a", "i_load_a",
                                                          "k_load_a_lane"]


def _copy(extent: int, parts: list[tuple[int, int, int]]) -> Program:
    """``dst[x] = src[x]`` over ``extent`` as one op, then the planted parts
    ``dst[k * x + r] = src[k * x + r + shift]`` over ``extent // k`` (``(k, r, shift)``)."""
    prog = Program("p")
    prog.add_input("src", (extent + 4,))
    prog.add_buffer("dst", (extent + 4,))
    from compiler.frontend.loopnest import add_op, nest, pass_kernel
    loop, i = nest(prog, "whole", ("x", extent))
    add_op(loop, "whole", ("dst", i["x"]), [("src", i["x"])], pass_kernel("p"))
    for n, (k, r, shift) in enumerate(parts):
        loop, i = nest(prog, f"part{n}", ("x", extent // k))
        add_op(loop, f"part{n}", ("dst", i["x"] * k + r), [("src", i["x"] * k + r + shift)],
               pass_kernel("p"))
    return prog


def test_check_cover_accepts_exact_slices_and_refuses_planted_faults():
    ok = _copy(8, [(2, 0, 0), (2, 1, 0)])
    check_cover(ok.op("whole"), [ok.op("part0"), ok.op("part1")])
    overlap = _copy(8, [(2, 0, 0), (2, 0, 0)])
    with pytest.raises(ProgramError, match="overlap"):
        check_cover(overlap.op("whole"), [overlap.op("part0"), overlap.op("part1")])
    gap = _copy(8, [(2, 0, 0)])
    with pytest.raises(ProgramError, match="miss 4 and add 0"):
        check_cover(gap.op("whole"), [gap.op("part0")])
    shifted = _copy(8, [(2, 0, 0), (2, 1, 2)])
    with pytest.raises(ProgramError, match="loads other elements"):
        check_cover(shifted.op("whole"), [shifted.op("part0"), shifted.op("part1")])


def test_gemm_schedule_reaches_the_compute_bound_only_with_the_split():
    params = HwParams.from_arch("cgra_16x32")
    split = schedule_program(_gemm(), params)
    plain = schedule_program(_gemm(), params, split=False)
    bound = 16 ** 3 // 16                   # MACs / parallel MAC units
    assert split.optimized.info["stream_split"] == {
        "load_a": [0, "k_load_a", 4, "serial"], "load_b": [1, "k_load_b", 4, "parallel"],
        "init": [0, "j_init", 4, "parallel"], "drain": [0, "j_drain", 4, "parallel"]}
    assert split.optimized.completion <= 1.1 * bound + 32
    assert plain.optimized.completion > 1.5 * bound          # the one-word streams
    assert "stream_split" not in plain.optimized.info


@pytest.mark.regress          # ~10 s; the CI's RTL case (tests/rtl/test_e2e.py, gemm) runs the split
def test_gemm_split_is_bit_exact_on_the_netlist_model():
    res = compile_app("gemm", "cgra_16x32", GEMM)
    assert res.refused == {}
    ios = sorted(res.netlist.nodes("io"))
    assert len(ios) == 1 + 4 + 4                       # A serial, B and C in 4 slices each
    check = check_result(res)
    assert check.ok and check.cycles_netlist == check.cycles_predicted == \
        res.schedule.completion


def _two_lane_copy(kernel) -> Program:
    """``dst[x] = kernel(src[x])`` read two lanes per step (``dst[2 u]``, ``dst[2 u + 1]``)."""
    from compiler.frontend.loopnest import add_op, nest
    prog = Program("two_lanes")
    prog.add_input("src", (16,))
    prog.add_buffer("dst", (16,))
    prog.add_output("out", (8,))
    loop, i = nest(prog, "copy", ("x", 16))
    add_op(loop, "copy", ("dst", i["x"]), [("src", i["x"])], kernel)
    loop, i = nest(prog, "sum", ("u", 8))
    add_op(loop, "sum", ("out", i["u"]), [("dst", 2 * i["u"]), ("dst", 2 * i["u"] + 1)],
           Kernel.from_fn("add2", lambda a, b: Call("add", (a, b)), u16, u16))
    return prog.validate()


def test_a_loop_phase_kernel_is_not_split():
    from compiler.frontend.loopnest import pass_kernel
    plain = _two_lane_copy(pass_kernel("copy_pass"))
    assert plan_splits(plain) == {"copy": (0, "x_copy", 2)}
    # the same copy keeping only even x: its phase names the loop the split renumbers
    phased = _two_lane_copy(Kernel.from_fn(
        "even", lambda a: select(LoopPhase("x_copy", 2, 0), a, 0), u16))
    assert plan_splits(phased) == {}
    assert split_streams(phased).program is phased
