"""Cycle padding of pipelined rows for the wide-fetch SRAM (thesis §5.5.2-5.5.3, Figs. 5.7/5.8;
§7.2 Table 7.4 text) and the DNN scheduler's use of it (compiler/schedule/fetch_pad.py,
compiler/schedule/dnn.py)."""
from apps import get_app
from compiler.ir import Program, s16
from compiler.poly.deps import Dependence
from compiler.poly.extract import extract
from compiler.schedule.dnn import memory_served, schedule_dnn
from compiler.schedule.fetch_pad import (RowAccess, fetches_per_row, padded_row, read_lead,
                                         row_cycles, row_shift, stage_rows)
from compiler.ir.hw import HwParams
from compiler.schedule.report import schedule_program
from compiler.schedule.verify import verify

from ..thesis_programs import conv1d, copy_kernel

FW = 4


def _window_read(inner: tuple[str, int], outer: tuple[str, int]) -> Program:
    """Fig. 5.7: a 32-word row read through a sliding window, ``load(Mem(dx + x))``."""
    p = Program("fig5_7")
    p.add_input("src", (36,), s16)
    p.add_buffer("mem", (36,), s16)
    p.add_output("out", (32, 5), s16)
    lp = p.add_loop("x_w", 0, 36)
    op = lp.add_op("write")
    op.add_load("src", "x_w")
    op.add_store("mem", "x_w")
    op.add_function(copy_kernel("pass", s16))
    a = p.add_loop(outer[0], 0, outer[1])
    b = a.add_loop(inner[0], 0, inner[1])
    op = b.add_op("read")
    op.add_load("mem", "x + dx")
    op.add_store("out", "x", "dx")
    op.add_function(copy_kernel("pass", s16))
    return p.validate()


def test_example_b_pads_one_extra_fetch_fig_5_8():
    """Example B with the window stripmined to the lanes of a word (dx in [0, 4), eqs. 5.34-
    5.41): rows start at lanes 0..3, so every row of 32 words takes 9 wide fetches (one
    padded, Fig. 5.8) and 36 cycles."""
    prog = _window_read(("x", 32), ("dx", 4))
    read = prog.op("read")
    bounds = {lp.name: (lp.start, lp.extent) for lp in read.loops}
    assert row_shift(read.loads[0].index[0], "x", bounds, FW) == 3
    assert fetches_per_row(32, 3, FW) == 9
    (row,) = stage_rows([read], read.loops[-1], {"mem"}, FW)
    assert row == RowAccess("mem", 32, 3, load=True)
    assert row_cycles(row, FW) == 36 and padded_row([row], 32, FW) == 36
    assert read_lead(read, 0, FW) == 3


def test_example_b_with_a_window_wider_than_a_word_refetches_each_shift():
    """Example B with the whole window outside the row (dx in [0, 5): the row start moves
    across wide words): a 32-word row is longer than the transpose buffer keeps, so every
    shift fetches it again from its first word, at most at lane 3: 9 fetches, 36 cycles (a
    non-unrolled window reduction reordered to stream reads its rows this way). A row short
    enough for the TB (8 words) is left to it, as in example A (negative control)."""
    prog = _window_read(("x", 32), ("dx", 5))
    read = prog.op("read")
    bounds = {lp.name: (lp.start, lp.extent) for lp in read.loops}
    assert row_shift(read.loads[0].index[0], "x", bounds, FW) == FW - 1
    (row,) = stage_rows([read], read.loops[-1], {"mem"}, FW)
    assert row_cycles(row, FW) == 36
    short = dict(bounds, x=(0, 8))
    assert row_shift(read.loads[0].index[0], "x", short, FW) >= FW


def test_example_a_window_is_served_by_the_tb():
    """Example A: the window loop dx is innermost inside x; x moves the row across words, so dx
    is not the fetched dimension and the 5-iteration loop is not padded."""
    prog = _window_read(("dx", 5), ("x", 32))
    read = prog.op("read")
    bounds = {lp.name: (lp.start, lp.extent) for lp in read.loops}
    assert row_shift(read.loads[0].index[0], "dx", bounds, FW) >= FW
    assert stage_rows([read], read.loops[-1], {"mem"}, FW) == []
    assert padded_row([], 5, FW) == 5


def test_aligned_rows_round_to_the_fetch_width():
    # a 30-pixel row is 8 wide words (the last one partial): 32 cycles; 28 pixels: 7, no pad
    assert row_cycles(RowAccess("b", 30, 0), FW) == 32
    assert row_cycles(RowAccess("b", 28, 0), FW) == 28
    assert padded_row([RowAccess("b", 28, 0)], 28, 1) == 28       # no wide fetch, no padding


def test_resnet_rows_table_7_4():
    """resnet's 3x3 window over 28 pixels reads rows starting at lanes 0..2: 8 fetches, 32
    cycles per row instead of 28 -- the PUB padding of thesis Table 7.4's resnet row -- with
    one fetch per FW reads; the compact fetch of a two-word transpose buffer fits the 8 fetches
    in the row's 28 cycles, and the loop that moves the start lane (kx) gets one cycle per
    lane it adds."""
    prog = get_app("resnet").build(in_channels=8, out_channels=8)
    conv = prog.op("conv_0")
    (in_row,) = set(stage_rows([conv], conv.loops[-1], {"in_mem"}, FW))
    assert in_row == RowAccess("in_mem", 28, 2, load=True)
    assert row_cycles(in_row, FW) == 32
    assert read_lead(conv, 0, FW) == 2                       # in_mem[ci*8, x + kx, y + ky]
    assert read_lead(conv, 16, FW) == 0                      # out_mem[0, x, y]
    shapes = {n: b.shape for n, b in prog.buffers.items() if b.shape is not None}
    (pitched,) = set(stage_rows([conv], conv.loops[-1], {"in_mem"}, FW, shapes))
    assert pitched == RowAccess("in_mem", 28, 2, 8, True)    # 30 words: 8 wide words a row
    assert row_cycles(pitched, FW, depth=2) == 28 and row_cycles(pitched, FW) == 32
    padded = schedule_program(prog, HwParams(tb_depth=0))
    coeffs = dict(zip(padded.optimized.ops["conv_0"].dims, padded.optimized.ops["conv_0"].coeffs))
    assert coeffs["x_conv"] == 1 and coeffs["y_conv"] == 32 and coeffs["kx_conv"] == 28 * 32
    compact = schedule_program(prog, HwParams(tb_depth=2, compact_fetch=True))
    coeffs = dict(zip(compact.optimized.ops["conv_0"].dims,
                      compact.optimized.ops["conv_0"].coeffs))
    assert coeffs["x_conv"] == 1 and coeffs["y_conv"] == 28 and coeffs["kx_conv"] == 28 * 28 + 1
    assert compact.optimized.completion < padded.optimized.completion


def test_compaction_needs_a_free_fetch_level():
    """The compact pattern takes one more level of the fetch controller than the padded one:
    a stage whose ops have as many loops as the controller has levels keeps its rows padded
    (resnet's 16/16 layer: tile, channel block, ky, kx, y, x = 6 of sram2tb's 6)."""
    from compiler.schedule.dnn import pipeline_loops, stage_depth
    small = get_app("resnet").build(in_channels=8, out_channels=8)
    large = get_app("resnet").build(in_channels=16, out_channels=16)
    conv = lambda p: [n for n in pipeline_loops(p)[1] if "conv" in getattr(n, "name", "")][0]  # noqa: E731
    assert stage_depth(conv(small), 2, 6) == 2
    assert stage_depth(conv(large), 2, 6) == 0               # negative control: 6 + 1 > 6
    assert stage_depth(conv(large), 2, 7) == 2
    assert stage_depth(conv(small), 0, 6) == 0               # no transpose-buffer depth given


def test_lane_constants_move_no_lane():
    """gemm's c_mem[8 jo + j]: the lane constant j is banked away; rows of 8 stay aligned."""
    prog = get_app("gemm").build(m=8, n=16, k=16, k_unroll=4, n_unroll=4)
    upd = prog.op("update_1")
    rows = stage_rows([upd], upd.loops[-1], {"c_mem"}, FW)
    assert rows and all(r.shift == 0 for r in rows)
    assert max(row_cycles(r, FW) for r in rows) == upd.loops[-1].extent


def test_memory_served_loads():
    """A load fed by two producers (an accumulator after its init and its own updates) or at
    a non-constant distance needs a memory and the §5.5.3 gap; a load fed by one producer at
    one constant distance is a delay line (thesis §5.1.1)."""
    a = Dependence("init", "mac", "acc", 2, None)
    b = Dependence("mac", "mac", "acc", 2, None)
    c = Dependence("load", "mac", "in", 0, None)
    d = Dependence("mac", "drain", "acc", 0, None)
    e = Dependence("mac", "relu", "acc", 0, None)
    served = memory_served([a, b, c, d, e], {id(a): True, id(b): True, id(c): False,
                                             id(d): True, id(e): False})
    assert served == {("mac", 2), ("mac", 0), ("relu", 0)}


def test_schedule_dnn_pad_and_gap_verify():
    """conv1d (Fig. 4.16) through the DNN scheduler with the wide-fetch options: the mac reads
    its accumulator one iteration after writing it, too soon for any memory round trip, so the
    stage keeps its least II (3, the mac latency) rather than falling back to sequential; the
    schedule verifies."""
    prog = conv1d()
    params = HwParams()
    poly = extract(prog, params)
    plain = schedule_dnn(prog, poly, params)
    wide = schedule_dnn(prog, poly, params, pad=FW, sram_gap=2 * FW)
    verify(poly, wide, params)
    assert wide.info["fetch_padding"] == FW and wide.info["sram_gap"] == 2 * FW
    assert "mac:2" in wide.info["memory_served"]
    assert wide.ops["mac"].coeffs == plain.ops["mac"].coeffs == (5 * 3, 3)
