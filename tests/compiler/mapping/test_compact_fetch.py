"""The compact fetch of an unpadded row (compiler/schedule/fetch_pad.compact_fetch,
compiler/mapping/vectorize.compact_read_configs): resnet's 3x3 window reads rows of 28 words
that start at lanes 0..2 of a wide word, 8 wide fetches per row; one fetch per FW reads would
need 32 cycles (thesis §5.5.3 pads the row to them), the two-level pattern fits them in 28.

The configurations are checked by the register-driven cycle model of the PUB against a plain
memory, as tests/compiler/mapping/test_vectorize.py does for the padded fetch."""
import dataclasses

import pytest

from compiler.ir.ubimpl import PUBBlock
from compiler.mapping import vectorize
from compiler.mapping.common import Affine, MappingError
from compiler.mapping.pub_model import simulate_pub
from compiler.mapping.vectorize import (WordStream, compact_read_configs, enumerate_affine,
                                        fire_cycles, pub_configs, unserved_reads)
from compiler.schedule.fetch_pad import CompactFetch, _tb_serves, compact_fetch
from ubgen.arch import PUBParams

PUB = PUBParams()
FW, DEPTH = PUB.fetch_width, PUB.tb_depth
ROWS, PITCH = 4, 32                  # 4 rows of 32 words (8 wide words each)
T0 = 200                             # first read, after the writer's 128 cycles


def writer() -> WordStream:
    return WordStream("w", (PITCH, ROWS), Affine(0, (1, PITCH)), Affine(0, (1, PITCH)))


def window_reader(gap: int = 1) -> WordStream:
    """``for kx in 0..2: for y: for x in 0..27: read(mem[y, x + kx])``, one read per cycle,
    rows back to back (28 cycles, not padded), ``gap`` cycles more per kx step (the start
    lane moves one to the right, :func:`compiler.schedule.fetch_pad.shift_gaps`)."""
    return WordStream("r", (28, ROWS, 3), Affine(T0, (1, 28, 28 * ROWS + gap)),
                      Affine(0, (1, PITCH, 1)))


def test_compact_pattern_fits_the_row():
    cf = compact_fetch(28, 2, FW, DEPTH, 8)
    assert cf is not None
    assert cf.inner * cf.groups == 8                       # every wide word of the row
    assert cf.period * cf.groups == 28                     # no padding: the row's 28 cycles
    assert max(cf.offsets()) < 28
    # the transpose buffer serves every read for all start-lane sequences of three rows
    for shifts in ((0, 0, 0), (0, 1, 2), (2, 1, 0), (2, 2, 2)):
        assert _tb_serves(cf, 28, shifts, 8, FW, DEPTH)


def test_tb_model_rejects_a_fetch_too_slow_for_the_row():
    # negative control: 8 fetches evenly spread over the row's 28 cycles (one level, a fetch
    # every 3 cycles) run ahead of the reads and overwrite TB words still being read
    even = CompactFetch(inner=1, step=1, groups=8, period=3, lead=2)
    assert not _tb_serves(even, 28, (2, 2, 2), 8, FW, DEPTH)
    # and the found pattern itself fails once it starts too late
    cf = compact_fetch(28, 2, FW, DEPTH, 8)
    late = dataclasses.replace(cf, lead=0)
    assert not _tb_serves(late, 28, (0, 1, 2), 8, FW, DEPTH)


def test_no_compact_pattern_where_none_is_needed_or_possible():
    assert compact_fetch(28, 0, FW, DEPTH, 7) is None      # aligned: 7 fetches, one per FW
    assert compact_fetch(28, 2, FW, 1, 8) is None          # a one-word TB cannot run ahead


def _pairs(ws):
    return list(zip(enumerate_affine(ws.extents, ws.time).tolist(),
                    enumerate_affine(ws.extents, ws.addr).tolist()))


def _run(cfgs, wr, rd):
    block = PUBBlock("mem", "mem", [wr.name], [rd.name], cfgs)
    writes = _pairs(wr)
    values = [(7 * i + 3) % 65536 for i in range(len(writes))]
    run = simulate_pub(block.registers(PUB), PUB,
                       [{t: v for (t, _a), v in zip(writes, values)}])
    hist = {}
    for (t, a), v in sorted(zip(writes, values)):
        hist.setdefault(a, []).append((t, v))
    want = {t: [v for tw, v in hist[a] if tw <= t][-1] for t, a in _pairs(rd)}
    return run, want


def test_compact_read_behaves_like_a_memory():
    wr, rd = writer(), window_reader()
    cfgs = pub_configs([wr], [rd], PUB, "mem")
    s2t = cfgs["sram2tb_0"]
    # the compact pattern (two levels for the row's fetches), 8 fetches per 28-cycle row
    assert len(fire_cycles(s2t)) == 8 * ROWS * 3
    assert s2t.extents[0] * (s2t.extents[1] if len(s2t.extents) > 1 else 1) >= 8
    run, want = _run(cfgs, wr, rd)
    assert run.conflicts == []
    assert {t: run.outputs[0].get(t) for t in want} == want


def test_compact_read_moved_later_is_caught():
    # negative control of both checks: the same fetches 4 cycles later miss their reads
    rd = window_reader()
    s2t, t2o = compact_read_configs(rd, FW, DEPTH)
    assert unserved_reads(rd, s2t, FW, DEPTH) == 0
    late = dataclasses.replace(s2t, schedule=type(s2t.schedule)(s2t.schedule.start + 4,
                                                                 s2t.schedule.strides))
    assert unserved_reads(rd, late, FW, DEPTH) > 0
    wr = writer()
    cfgs = pub_configs([wr], [rd], PUB, "mem")
    cfgs["sram2tb_0"] = dataclasses.replace(
        cfgs["sram2tb_0"], schedule=type(s2t.schedule)(cfgs["sram2tb_0"].schedule.start + 4,
                                                       cfgs["sram2tb_0"].schedule.strides))
    run, want = _run(cfgs, wr, rd)
    assert {t: run.outputs[0].get(t) for t in want} != want


def test_without_the_compact_fetch_the_unpadded_row_is_refused(monkeypatch):
    # the plain fetch plan alone cannot serve an unpadded row starting at lane 2
    monkeypatch.setattr(vectorize, "compact_read_configs", lambda *a, **k: None)
    with pytest.raises(MappingError, match="buffer mem"):
        pub_configs([writer()], [window_reader()], PUB, "mem")


def test_fetch_levels_are_checked_in_mapping():
    # the un-merged compact pattern of a 6-deep read takes 7 levels: mapping does not offer it
    # (the netlist's encoder would refuse it), a 6-level one it does
    from ubgen.controller import AffineMap, ControllerConfig
    from ubgen.pub import pub_layouts
    layout = pub_layouts(PUB)["sram2tb_0"]

    def cfg(n):
        ext = (2,) * n
        times = tuple(3 ** (d + 1) for d in range(n))          # no two levels fuse
        words = tuple(5 ** d for d in range(n))
        return ControllerConfig(ext, AffineMap(0, times), {
            "sram": AffineMap(0, words), "tb": AffineMap(0, tuple(w % DEPTH for w in words))})
    assert vectorize._fits(cfg(layout.params.max_dims), layout)
    assert not vectorize._fits(cfg(layout.params.max_dims + 1), layout)
