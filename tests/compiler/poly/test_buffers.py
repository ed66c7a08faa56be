"""Unified-buffer extraction (Figs. 4.9 / 4.18) and the IR round trips."""
import json

import islpy as isl

from compiler.ir.schedule import Schedule
from compiler.poly.buffers import extract_buffers
from compiler.poly.extract import extract
from compiler.schedule.dnn import pipeline_loops, schedule_dnn
from compiler.ir.hw import HwParams
from compiler.schedule.sequential import schedule_sequential
from compiler.schedule.stencil import schedule_stencil
from compiler.schedule.storage import storage_copies

from ..thesis_programs import brighten_blur, conv_layer

ZERO = HwParams(pe_latency=0, mem_read_latency=0, mem_write_latency=0)


def test_brighten_unified_buffer_fig_4_18():
    prog = brighten_blur(tiles=2)
    poly = extract(prog, ZERO)
    sched = schedule_stencil(prog, poly)
    ub = extract_buffers(poly, sched, {"brighten": 66})["brighten"]
    assert [p.name for p in ub.inputs] == ["Brighten_st"]
    assert [p.name for p in ub.outputs] == [f"Blur_ld{k}" for k in range(4)]
    box = "0 <= t <= 1 and 0 <= y <= 62 and 0 <= x <= 62"
    for p in ub.outputs:      # all four read ports fire together, 65 cycles after the write
        assert p.schedule.is_equal(isl.Map.read_from_str(
            isl.DEFAULT_CONTEXT, f"{{ Blur[t, y, x] -> [4096t + 64y + x + 65] : {box} }}"))
    text = ub.to_isl()
    assert text.startswith("unified buffer brighten (temp, u16, shape [64, 64], live 66 words)")
    assert text.count("port ") == 5
    data = json.loads(ub.to_json())
    assert data["live_words"] == 66 and len(data["ports"]) == 5


def test_schedule_json_round_trip_and_time_fn():
    prog = brighten_blur(tiles=2, n=8)
    poly = extract(prog)
    sched = schedule_stencil(prog, poly)
    back = Schedule.from_dict(json.loads(sched.to_json()))
    assert back.to_dict() == sched.to_dict()
    f = back.time_fn()
    env = {"t": 1, "y_bl": 2, "x_bl": 3}
    s = sched.ops["Blur"]
    assert f("Blur", env) == s.offset + 64 * 1 + 8 * 2 + 3
    assert "Blur (latency" in sched.to_isl()


def test_double_buffered_ports_carry_the_storage_copy():
    """Fig. 4.3 with three tiles: the tile-pipelined schedule overlaps tile t+1's InitO with tile
    t's DrainO, so output_mem needs two copies (thesis §4.2.4); its ports then index the copy
    ``t mod 2`` as one more element dimension, so a read's latest write is the program's."""
    prog = conv_layer(tiles=3)
    poly = extract(prog)
    sched = schedule_dnn(prog, poly)
    loops = pipeline_loops(prog)[0]
    copies = storage_copies(prog, sched, schedule_sequential(prog, poly),
                            [lp.name for lp in loops])
    assert copies["output_mem"] == 2
    tiles = {lp.name: (lp.start, lp.extent) for lp in loops}
    ub = extract_buffers(poly, sched, None, copies, tiles)["output_mem"]
    plain = extract_buffers(poly, sched)["output_mem"]
    assert ub.shape == list(plain.shape) + [2]
    (init,) = [p for p in ub.inputs if p.op == "InitO"]
    want = isl.Map.read_from_str(
        isl.DEFAULT_CONTEXT, "{ InitO[t, y, x, k] -> output_mem[k, x, y, t mod 2] }")
    assert init.access.intersect_domain(init.domain).is_equal(want.intersect_domain(init.domain))
    # buffers with one copy keep their ports
    one = [b for b, k in copies.items() if k == 1]
    assert one
    for b in one:
        got = extract_buffers(poly, sched, None, copies, tiles)[b]
        assert [p.access for p in got.ports] == [p.access for p in
                                                  extract_buffers(poly, sched)[b].ports]
