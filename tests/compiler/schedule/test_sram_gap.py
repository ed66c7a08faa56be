"""Thesis §5.5.3: a load that needs a memory (non-constant dependence distance) is scheduled at
least 2 x FW writes after the value lands, the round trip through AGG, SRAM and TB; loads at a
constant distance (wires, shift registers, delay lines) are not delayed."""
import islpy as isl

from dataclasses import replace

from apps import get_app
from compiler.ir.schedule import OpSchedule
from compiler.mapping.common import t2addr
from compiler.mapping.pub_model import _points, port_points
from compiler.poly.deps import Dependence
from compiler.schedule.offsets import is_constant_distance, required_offset, write_interval
from compiler.ir.hw import HwParams
from compiler.schedule.report import schedule_program

CTX = isl.DEFAULT_CONTEXT


def _upsample_pair(cons_coeff=1):
    # P writes A[x] every 2 cycles; C reads A[floor(x2 / 2)] every cycle (thesis upsample)
    prod = OpSchedule("P", ("x",), ((0, 16),), (2,), 0, 2)
    cons = OpSchedule("C", ("x2",), ((0, 32),), (cons_coeff,), 0, 1)
    rel = isl.Map.read_from_str(CTX, "{ P[x] -> C[x2] : 0 <= x2 < 32 and x = floor(x2 / 2) }")
    return prod, cons, Dependence("P", "C", "A", 0, rel)


def test_non_constant_distance_gets_two_fetch_widths_of_writes():
    prod, cons, dep = _upsample_pair()
    assert not is_constant_distance(dep, prod, cons, CTX)
    assert write_interval(prod) == 2
    # landing: latency 2 - min(x2 - 2 floor(x2 / 2)) = 2; plus 2 x FW = 8 writes of 2 cycles
    assert required_offset(dep, prod, cons, CTX) == 2
    assert required_offset(dep, prod, cons, CTX, sram_gap=8) == 2 + 16


def test_constant_distance_is_not_delayed():
    prod = OpSchedule("P", ("x",), ((0, 16),), (1,), 0, 2)
    cons = OpSchedule("C", ("x",), ((0, 15),), (1,), 0, 1)
    dep = Dependence("P", "C", "A", 0,
                     isl.Map.read_from_str(CTX, "{ P[x] -> C[x - 1] : 1 <= x < 16 }"))
    assert is_constant_distance(dep, prod, cons, CTX)
    assert required_offset(dep, prod, cons, CTX, sram_gap=8) == required_offset(dep, prod,
                                                                                 cons, CTX)


def _min_gap(ub) -> int:
    """min over reads of (read cycle - landing cycle of the element's latest write)."""
    (w,) = ub.inputs
    wp = _points(t2addr(w))
    land = {tuple(r[1:]): int(r[0]) for r in wp}
    gaps = [int(r[0]) - land[tuple(r[1:])] for p in ub.outputs for r in _points(t2addr(p))]
    return min(gaps)


def test_upsample_schedule_keeps_the_gap():
    params = HwParams.from_arch("pub")
    res = schedule_program(get_app("upsample").build(width=16, height=16), params)
    # hw_input is written every 2 cycles and read 4 times per element at distances d, d+1,
    # d+row, d+row+1: at least 2 x FW writes of 2 cycles between landing and the first read
    assert _min_gap(res.buffers["hw_input"]) >= 2 * params.fetch_width * 2


def _served_gaps(res, buffer: str) -> dict[str, int]:
    """Per memory-served load port of ``buffer``: min over its reads of (read cycle - landing
    cycle of the latest write of the element landed by then)."""
    ub = res.buffers[buffer]
    writes: dict[tuple, list[int]] = {}
    for w in ub.inputs:
        for r in port_points(w):
            writes.setdefault(tuple(r[1:]), []).append(int(r[0]))
    served = set(res.optimized.info["memory_served"])
    out = {}
    for p in ub.outputs:
        op, slot = p.name.rsplit("_ld", 1)
        if f"{op}:{slot}" not in served:
            continue
        gaps = []
        for r in port_points(p):
            landed = [t for t in writes.get(tuple(r[1:]), []) if t <= r[0]]
            if landed:
                gaps.append(int(r[0]) - max(landed))
        out[p.name] = min(gaps)
    return out


def test_dnn_schedule_keeps_the_gap():
    """The DNN scheduler keeps 2 x FW writes (one per cycle here) between a write and a load a
    memory serves, plus the lead of a misaligned row's fetches (resnet's x + kx: 2 lanes)."""
    for depth in (0, 2):
        # rows padded (depth 0) or read with the compact fetch of a 2-word TB
        params = replace(HwParams.from_arch("pub"), tb_depth=depth,
                         compact_fetch=bool(depth))
        fw = params.fetch_width
        res = schedule_program(get_app("resnet").build(width=6, height=6, in_channels=8,
                                                       out_channels=8, ic_unroll=4, oc_unroll=4),
                               params)
        assert res.optimized.policy == "dnn" and res.optimized.info["sram_gap"] == 2 * fw
        inm = _served_gaps(res, "in_mem")
        out = _served_gaps(res, "out_mem")
        # conv_k reads in_mem (4 lanes x 4 engines) and its accumulator (two producers:
        # init_k, conv_k)
        assert len(inm) == 16 and {f"conv_{k}_ld8" for k in range(4)} <= set(out)
        assert min(inm.values()) >= 2 * fw + 2
        assert min(out.values()) >= 2 * fw
        if not depth:
            # drain_k follows the last update at a constant distance: a delay line (with the
            # compact fetch the update's 6-cycle rows and the drain's padded 8-cycle rows
            # drift apart, so the drain reads the memory too)
            assert sorted(out) == [f"conv_{k}_ld8" for k in range(4)]
