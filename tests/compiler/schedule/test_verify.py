"""The verifier catches every class of violation it claims to prove (docs/design.md §3.2)."""
import pytest

from compiler.poly.extract import extract
from compiler.schedule.dnn import schedule_dnn
from compiler.ir.hw import HwParams
from compiler.schedule.stencil import schedule_stencil
from compiler.schedule.verify import ScheduleError, VerifyError, verify

from ..thesis_programs import brighten_blur, conv_layer, pyramid_1d


def _fused(n=8):
    prog = brighten_blur(tiles=2, n=n)
    poly = extract(prog)
    return poly, schedule_stencil(prog, poly)


def test_valid_schedule_passes():
    poly, s = _fused()
    rep = verify(poly, s)
    assert rep.dependences == 4 and rep.units == 2 and rep.completion == s.completion


def test_dependence_one_cycle_too_early_is_caught():
    poly, s = _fused()
    s.ops["Blur"].offset -= 1
    with pytest.raises(VerifyError, match=r"dependence violated: Blur load 3 of brighten from "
                                          r"Brighten"):
        verify(poly, s)


def test_latency_counts():
    """Blur exactly at Brighten's issue + latency - 1 misses the result."""
    poly, s = _fused()
    lat = s.ops["Brighten"].latency
    s.ops["Brighten"].latency = lat + 1          # a slower producer
    with pytest.raises(VerifyError, match="dependence violated"):
        verify(poly, s)


def test_unit_conflict_is_caught():
    poly, s = _fused()
    s.ops["Brighten"].coeffs = (s.ops["Brighten"].coeffs[0], 8, 0)   # x no longer advances time
    with pytest.raises(VerifyError, match="compute unit Brighten: op Brighten issues two"):
        verify(poly, s)


def test_shared_unit_conflict_is_caught():
    prog = pyramid_1d()
    poly = extract(prog)
    s = schedule_stencil(prog, poly)          # without the sharing pass: pool ops collide
    with pytest.raises(VerifyError, match="compute unit pool: ops pool"):
        verify(poly, s)


def test_port_conflict_is_caught():
    """A schedule made for two-port buffers overlaps DrainO (tile t) with the Conv ops (tile
    t+1) on output_mem; with one read port that is a conflict."""
    two, one = HwParams(read_ports=2, write_ports=2), HwParams(read_ports=1, write_ports=1)
    prog = conv_layer(tiles=2, out=8)
    poly = extract(prog, two)
    s = schedule_dnn(prog, poly, two)
    verify(poly, s, two)
    with pytest.raises(VerifyError, match=r"buffer output_mem: 2 (store|load) groups "
                                          r"\((InitO, Conv0\+Conv1|Conv0\+Conv1, DrainO)\)"):
        verify(poly, s, one)


def test_cycle_counter_width():
    poly, s = _fused(n=64)
    with pytest.raises(ScheduleError, match=r"needs 8\d\d\d cycles, beyond the 12-bit cycle "
                                            r"counter \(max 4095\)"):
        verify(poly, s, HwParams(cycle_width=12))
