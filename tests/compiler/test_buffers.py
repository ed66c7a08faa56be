"""Unified-buffer extraction (Figs. 4.9 / 4.18) and the IR round trips."""
import json

import islpy as isl

from compiler.ir.schedule import Schedule
from compiler.poly.buffers import extract_buffers
from compiler.poly.extract import extract
from compiler.schedule.params import HwParams
from compiler.schedule.stencil import schedule_stencil

from .thesis_programs import brighten_blur

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
