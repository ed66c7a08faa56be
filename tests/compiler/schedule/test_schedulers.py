"""Schedulers against the thesis' worked examples (ch. 4). Expected values are derived in each
test from the loop bounds and latencies (the thesis' formulas), not read off the scheduler."""
import islpy as isl
import pytest

from compiler.poly.deps import raw_dependences
from compiler.poly.extract import extract
from compiler.schedule.dnn import pipeline_loops, schedule_dnn
from compiler.ir.hw import HwParams
from compiler.schedule.select import schedule, select_policy
from compiler.schedule.sequential import schedule_sequential
from compiler.schedule.stencil import schedule_stencil
from compiler.schedule.storage import storage_copies
from compiler.schedule.stripmine import relative_rate, stripmine_factors, utilization
from compiler.schedule.verify import verify

from ..thesis_programs import (alignment_pair, brighten_blur, conv1d, conv_layer, copy_chain,
                              pyramid_1d)

ZERO = HwParams(pe_latency=0, mem_read_latency=0, mem_write_latency=0)


def same(m: isl.Map, text: str) -> bool:
    return m.is_equal(isl.Map.read_from_str(isl.DEFAULT_CONTEXT, text))


def test_sequential_brighten_blur_8065_cycles_per_tile():
    """Thesis §4.3: zero latencies give 64*64 + 63*63 = 8065 cycles per t iteration."""
    prog = brighten_blur()
    poly = extract(prog, ZERO)
    s = schedule_sequential(prog, poly)
    per_tile = 64 * 64 + 63 * 63
    assert per_tile == 8065
    assert s.ops["Brighten"].coeffs == (per_tile, 64, 1)
    assert s.ops["Blur"].coeffs == (per_tile, 63, 1)
    assert s.ops["Blur"].offset == 64 * 64
    assert s.completion == 16 * per_tile
    verify(poly, s, ZERO, check_width=False)


def test_sequential_ii_is_body_latency():
    prog = brighten_blur(tiles=2, n=8)
    poly = extract(prog)
    s = schedule_sequential(prog, poly)
    lb, ll = poly.ops["Brighten"].latency, poly.ops["Blur"].latency
    assert s.ops["Brighten"].coeffs[1:] == (8 * lb, lb)
    assert s.ops["Blur"].coeffs[1:] == (7 * ll, ll)
    assert s.completion == 2 * (64 * lb + 49 * ll)
    verify(poly, s)


def test_fused_brighten_blur_fig_4_17c_and_4_18():
    """Fused at x with zero latencies, Blur waits for Brighten(x+1, y+1): 64 + 1 = 65 cycles."""
    prog = brighten_blur()
    poly = extract(prog, ZERO)
    s = schedule_stencil(prog, poly)
    box_br = "0 <= t <= 15 and 0 <= y <= 63 and 0 <= x <= 63"
    box_bl = "0 <= t <= 15 and 0 <= y <= 62 and 0 <= x <= 62"
    assert same(s.ops["Brighten"].isl_map(), f"{{ Brighten[t, y, x] -> [4096t + 64y + x] : {box_br} }}")
    assert same(s.ops["Blur"].isl_map(), f"{{ Blur[t, y, x] -> [4096t + 64y + x + 65] : {box_bl} }}")
    verify(poly, s, ZERO)


def test_fused_delay_includes_latency():
    prog = brighten_blur(tiles=2, n=16)
    poly = extract(prog)
    s = schedule_stencil(prog, poly)
    lb, ll = poly.ops["Brighten"].latency, poly.ops["Blur"].latency
    assert s.ops["Blur"].offset == 16 + 1 + lb
    # last Blur: tile 1 (t coefficient 16*16), row 14, column 14, then its latency
    assert s.completion == 256 + 14 * 16 + 14 + (16 + 1 + lb) + ll
    verify(poly, s)


def test_rows_padded_to_fetch_width():
    """A 7-wide image: each row takes 8 cycles so rows start on a 4-word boundary."""
    prog = alignment_pair(transposed=False, n=7)
    poly = extract(prog)
    s = schedule_stencil(prog, poly, pad=4)
    assert s.ops["prod"].coeffs == s.ops["cons"].coeffs == (8, 1)
    assert schedule_stencil(prog, poly).ops["prod"].coeffs == (7, 1)
    verify(poly, s)


def test_loop_alignment_fig_4_19a_fuses():
    prog = alignment_pair(transposed=False)
    poly = extract(prog, ZERO)
    s = schedule_stencil(prog, poly)
    (al,) = s.info["alignment"]
    assert al["fusable"] and [p[:2] for p in al["pairs"]] == [["y_p", "y_c"], ["x_p", "x_c"]]
    assert s.ops["cons"].coeffs == s.ops["prod"].coeffs == (8, 1)
    assert s.ops["cons"].offset == 8 + 1           # waits for buf[x+1, y+1]
    verify(poly, s, ZERO)


def test_loop_alignment_fig_4_19b_refuses_to_fuse():
    prog = alignment_pair(transposed=True)
    poly = extract(prog, ZERO)
    s = schedule_stencil(prog, poly)
    (al,) = s.info["alignment"]
    assert not al["fusable"] and "loop order" in al["reason"]
    assert not s.info["fused"]
    # cons(x, y) reads buf[y+1, x+1], written at 8*(x+1) + (y+1); cons runs at 8y + x + d, so
    # d = max(7x - 7y + 9) = 7*6 + 9 over the 7x7 consumer domain: it waits for almost the
    # whole producer instead of interleaving.
    assert s.ops["cons"].offset == 7 * 6 + 9
    verify(poly, s, ZERO)


def _stage_latency(trips: int, latency: int) -> int:
    """A perfect stage flattened at II = 1: last issue at trips - 1, result latency later."""
    return trips - 1 + max(1, latency)


@pytest.mark.parametrize("ports", [2, 1])
def test_dnn_conv_layer_fig_4_3(ports):
    """Coarse-grained modulo schedule of the conv layer. With two write and two read ports on
    output_mem the tile II is the conv stage (the compute unit is 100% busy); with one port
    each, InitO and Conv both need the write port and Conv and DrainO the read port, so the II
    is Conv + DrainO (thesis Figs. 4.11/4.12)."""
    params = HwParams(read_ports=ports, write_ports=ports)
    prog = conv_layer(tiles=3)
    poly = extract(prog, params)
    s = schedule_dnn(prog, poly, params)
    conv = _stage_latency(9 * 28 * 28, poly.ops["Conv0"].latency)
    drain = _stage_latency(28 * 28 * 2, poly.ops["DrainO"].latency)
    init = _stage_latency(28 * 28 * 2, poly.ops["InitO"].latency)
    assert s.info["pipeline_loops"] == ["t"]
    assert [st["latency"] for st in s.info["stages"]] == [
        init, _stage_latency(30 * 30 * 4, poly.ops["LoadI"].latency),
        _stage_latency(9 * 2 * 4, poly.ops["LoadW"].latency), conv, drain]
    assert s.info["ii"] == (conv if ports == 2 else conv + drain)
    assert s.info["ii"] == s.info["ii_lower_bound"]
    assert s.ops["Conv0"].coeffs[0] == s.info["ii"]          # t advances by II
    verify(poly, s, params)
    seq = schedule_sequential(prog, poly)
    copies = storage_copies(prog, s, seq, ["t"])
    assert copies["output_mem"] == 2 and copies["input_mem"] == 2   # double buffered


def test_loop_perfection_and_flatten_fig_4_16():
    """conv1d: init, the dx loop and the store are perfected into one loop of 32*5 iterations."""
    prog = conv1d()
    loops, stages = pipeline_loops(prog)
    assert loops == [] and len(stages) == 1 and stages[0].name == "x"
    poly = extract(prog, ZERO)
    s = schedule_dnn(prog, poly, ZERO)
    assert s.ops["init"].coeffs == (5,) and s.ops["init"].offset == 0
    assert s.ops["mac"].coeffs == (5, 1)
    assert s.ops["store"].coeffs == (5,) and s.ops["store"].offset == 4
    assert s.completion == 32 * 5
    verify(poly, s, ZERO)


def test_flatten_raises_ii_for_a_recurrence():
    """With a 3-cycle mac the accumulation over dx needs II = 3 in the flattened loop."""
    prog = conv1d()
    poly = extract(prog)
    lat = poly.ops["mac"].latency
    assert lat == 3
    s = schedule_dnn(prog, poly)
    assert s.ops["mac"].coeffs == (5 * lat, lat)
    verify(poly, s)


def test_stripmine_eqs_4_15_4_16():
    assert relative_rate(2, 4) == 0.5
    assert stripmine_factors({"p0": 1, "p1": 2, "p2": 4, "p3": 8}) == \
        {"p0": 8, "p1": 4, "p2": 2, "p3": 1}
    assert utilization({"a": 2, "b": 4, "c": 8}) == 0.875


def test_compute_sharing_fig_4_20():
    """Three stride-two pooling kernels on one unit fire every 2, 4 and 8 cycles and
    interleave on it without slowing the pipeline."""
    prog = pyramid_1d()
    poly = extract(prog)
    s = schedule(prog, poly)
    assert s.policy == "stencil"
    share = s.info["sharing"]["pool"]
    assert share["ii"] == {"pool1": 2, "pool2": 4, "pool3": 8}
    assert share["stripmine"] == {"pool1": 4, "pool2": 2, "pool3": 1}
    assert s.info["slowdown"] == 1
    residues = {(s.ops[o].offset % m, m) for o, m in share["ii"].items()}
    assert len(residues) == 3
    verify(poly, s)
    unshared = extract(pyramid_1d(shared=False))
    s2 = schedule(pyramid_1d(shared=False), unshared)
    assert s.completion <= s2.completion + 8


def test_sharing_slows_down_when_oversubscribed():
    """Two full-rate ops on one unit cannot both fire every cycle: the schedule is slowed 2x."""
    prog = copy_chain("two", [16, 16, 16], [16, 16], unit="u")
    poly = extract(prog)
    s = schedule(prog, poly)
    assert s.info["slowdown"] == 2 and s.ops["op0"].coeffs == (2,)
    verify(poly, s)


def test_policy_selection_paper_v_b():
    assert select_policy(raw_dependences(extract(brighten_blur(tiles=1, n=8)))) == "stencil"
    assert select_policy(raw_dependences(extract(conv_layer(tiles=1, out=4)))) == "dnn"
    assert select_policy(raw_dependences(extract(conv1d(n=4)))) == "dnn"
