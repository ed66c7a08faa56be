"""Live capacity (paper Table VII "SRAM words") of unified buffers."""
from compiler.schedule.liveness import buffer_liveness, total_live_words
from compiler.poly.extract import extract
from compiler.ir.hw import HwParams
from compiler.schedule.sequential import schedule_sequential
from compiler.schedule.select import schedule
from compiler.schedule.stencil import schedule_stencil

from ..reference_models import live_words
from ..thesis_programs import brighten_blur, conv_layer

ZERO = HwParams(pe_latency=0, mem_read_latency=0, mem_write_latency=0)


def test_fused_brighten_buffer_is_one_row_plus_two():
    """Fig. 4.18: brighten(x, y) is written at 64y + x and last read by Blur(x, y) at
    64y + x + 65, so 66 values are live at once (a row of 64 and two pixels); the sequential
    schedule keeps the whole 64x64 tile."""
    prog = brighten_blur(tiles=2)
    poly = extract(prog, ZERO)
    seq = schedule_sequential(prog, poly)
    fused = schedule_stencil(prog, poly)
    live = {b.name: b.live_words for b in buffer_liveness(prog, fused, seq)}
    assert live == {"brighten": 66, "blur": 0}
    live_seq = {b.name: b.live_words for b in buffer_liveness(prog, seq, seq)}
    assert live_seq == {"brighten": 64 * 64, "blur": 0}


def test_liveness_matches_plain_python_model():
    for prog in (brighten_blur(tiles=2, n=10), conv_layer(tiles=2, out=4, cin=2, cout=2)):
        poly = extract(prog)
        seq = schedule_sequential(prog, poly)
        for sched in (seq, schedule(prog, poly)):
            got = {b.name: b.live_words for b in buffer_liveness(prog, sched, seq)}
            assert got == live_words(prog, sched)
            assert total_live_words(buffer_liveness(prog, sched, seq)) == sum(got.values())
