"""The register-driven cycle model (compiler/mapping/pub_model.py) against independent references."""
import numpy as np
from hypothesis import given, settings, strategies as st

from apps import get_app
from compiler.ir.ubimpl import PUBBlock
from compiler.mapping.common import t2addr
from compiler.mapping.decode import decode_controller
from compiler.mapping.pub_model import _points, port_points, simulate_pub
from compiler.schedule.report import schedule_program
from ubgen.arch import PUBParams
from ubgen.controller import (AffineMap, ControllerConfig, ControllerLayout, encode_controller,
                              iterate)

PUB = PUBParams()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data())
def test_decode_replays_iterate(extents, data):
    """Recurrence over the encoded registers == the affine form (ubgen.controller.iterate)."""
    n = len(extents)
    strides, step = [], 1
    for e in extents:                       # a strictly increasing schedule
        s = data.draw(st.integers(step, step + 3))
        strides.append(s)
        step = s * e
    cfg = ControllerConfig(tuple(extents), AffineMap(data.draw(st.integers(0, 50)), tuple(strides)),
                           {"a": AffineMap(data.draw(st.integers(0, 7)),
                                           tuple(data.draw(st.integers(-9, 9)) for _ in range(n)))})
    layout = ControllerLayout("c", {"a": 3})
    got = decode_controller(encode_controller(cfg, layout), layout)
    assert got == list(iterate(cfg, {"a": 3}))


def _line_buffer(read_start: int, extra_read: int | None = None) -> PUBBlock:
    cfgs = {
        "in2agg_0": ControllerConfig((64, 4), AffineMap(0, (1, 64)), {"agg": AffineMap(0, (1, 0))}),
        "agg2sram_0": ControllerConfig((16, 4), AffineMap(4, (4, 64)),
                                       {"agg": AffineMap(0, (1, 0)), "sram": AffineMap(0, (1, 16))}),
        "sram2tb_0": ControllerConfig((16, 4), AffineMap(read_start - 3, (4, 64)),
                                      {"sram": AffineMap(0, (1, 16)), "tb": AffineMap(0, (1, 0))}),
        "tb2out_0": ControllerConfig((64, 4), AffineMap(read_start, (1, 64)),
                                     {"tb": AffineMap(0, (1, 0))}),
    }
    if extra_read is not None:
        cfgs["sram2tb_1"] = ControllerConfig((16, 4), AffineMap(extra_read, (4, 64)),
                                             {"sram": AffineMap(0, (1, 16)), "tb": AffineMap(0, (1, 0))})
    return PUBBlock("lb", "lb", ["in"], ["out0", "out1"], cfgs)


def test_delay_line_pub_and_conflict_flag():
    data = {t: (t * 37 + 11) % 65536 for t in range(256)}
    run = simulate_pub(_line_buffer(64).registers(PUB), PUB, [data])
    assert run.conflicts == []
    assert all(run.outputs[0][t + 64] == data[t] for t in range(256))
    # a second fetch stream on the write's cycles (4 + 4k) collides on the single SRAM port
    run = simulate_pub(_line_buffer(64, extra_read=8).registers(PUB), PUB, [data])
    assert run.conflicts[:3] == [8, 12, 16]


def test_fetch_too_late_is_visible():
    # TB written at the end of fetch + 1: a fetch only 1 cycle ahead misses the first read
    block = _line_buffer(64)
    block.configs["sram2tb_0"] = ControllerConfig((16, 4), AffineMap(63, (4, 64)),
                                                  {"sram": AffineMap(0, (1, 16)),
                                                   "tb": AffineMap(0, (1, 0))})
    data = {t: t + 1 for t in range(256)}
    run = simulate_pub(block.registers(PUB), PUB, [data])
    assert run.outputs[0][64] != data[0]
    assert all(run.outputs[0][t + 64] == data[t] for t in range(1, 4))


def test_port_points_enumerate_t2addr():
    """The model check enumerates each port over its iteration domain; the points are exactly
    those of t2addr (eq. 5.2), also with a tile loop's large cycle stride (resnet's 16/16 tiles
    made the ``[t] -> elem`` scan take minutes)."""
    res = schedule_program(get_app("resnet").build(width=4, height=4, in_channels=8,
                                                   out_channels=8, ic_unroll=4, oc_unroll=4))
    ub = res.buffers["out_mem"]
    assert res.optimized.info["tiles"] == 2
    for p in ub.ports[:3] + ub.outputs[-1:]:
        got, want = port_points(p), _points(t2addr(p))
        assert len(got) > 0
        assert np.array_equal(got[np.lexsort(got.T[::-1])], want[np.lexsort(want.T[::-1])])
