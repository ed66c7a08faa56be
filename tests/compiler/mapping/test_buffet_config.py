"""The buffet's local schedule from a dual-port block's global one (``compiler.mapping.buffet``,
thesis §6.3): fills in write order, read indices relative to the head, releases at a loop
level. Checked on the buffet's reference model against the static block's read stream.
Negative controls: a dropped release or a shifted index reads wrong words, a buffet smaller than
the window deadlocks, and a
block whose schedule the buffet cannot keep is refused in one line naming the buffer."""
from __future__ import annotations

from dataclasses import replace

import pytest

from compiler.mapping.dp_model import simulate_dp
from compiler.mapping.buffet import buffet_config, buffet_configs
from compiler.mapping.common import MappingError
from compiler.pipeline import compile_app
from ubgen.buffet.spec import BuffetModel, requests
from ubgen.controller import AffineMap, ControllerConfig, iterate

SIZES = {"gaussian": dict(width=32, height=16), "harris": dict(width=32, height=24),
         "upsample": dict(width=16, height=8)}


def blocks(app: str, sizes=None):
    r = compile_app(app, "cgra_dp_16x32", SIZES[app] if sizes is None else sizes, until="map")
    return [b for impl in r.impls.values() for b in impl.dps]


def golden(block) -> tuple[list[int], list[int]]:
    """Fill words (the write stream, numbered) and the static block's read stream."""
    times = [t for t, _ in iterate(block.configs["wr"])]
    fills = [(7 * k + 3) & 0xFFFF for k in range(len(times))]
    run = simulate_dp(block.registers(), block.params, dict(zip(times, fills)))
    return fills, [v for _c, v in sorted(run.outputs[0].items())]


@pytest.mark.parametrize("app", sorted(SIZES))
def test_buffet_reads_the_golden_stream(app):
    mapped = blocks(app)
    assert mapped, f"{app} maps no dual-port block"
    for block in mapped:
        cfg = buffet_config(block)
        fills, want = golden(block)
        assert cfg.fills == len(fills) and cfg.reads == len(want)
        assert BuffetModel(2048).run(fills, requests(cfg)) == want


def test_delay_line_is_a_fifo_and_upsample_releases_a_row_pair():
    g = buffet_config(blocks("gaussian")[0])
    assert (g.read_idx.strides, g.read_idx.start, g.shrink_level, g.shrink) == ((0, 0), 0, 0, 1)
    u = buffet_config(blocks("upsample", {})[0])      # 64x64 -> 128x128
    assert u.read_extents == (2, 64, 2, 64) and u.read_idx == AffineMap(0, (0, 1, 0, 0))
    assert (u.shrink_level, u.shrink, u.capacity_needed) == (3, 64, 64)


def test_negative_controls_on_the_model():
    block = blocks("upsample")[0]
    cfg = buffet_config(block)
    fills, want = golden(block)
    assert BuffetModel(2048).run(fills, requests(replace(cfg, shrink=0))) != want   # no release
    with pytest.raises(RuntimeError, match="deadlock"):       # a row pair does not fit
        BuffetModel(cfg.capacity_needed // 2).run(fills, requests(cfg))
    shifted = replace(cfg, read_idx=AffineMap(cfg.read_idx.start + 1, cfg.read_idx.strides))
    with pytest.raises(RuntimeError, match="deadlock"):      # the last row's last word: never
        BuffetModel(2048).run(fills, requests(shifted))
    model = BuffetModel(2048)
    assert all(model.fill(v) for v in fills)
    assert [model.read(*rq) for rq in requests(shifted)[:4]] != want[:4]


def test_a_schedule_the_buffet_cannot_keep_is_refused():
    """Reads in reverse order of the writes, longer than the buffet: the oldest word is needed
    last, so nothing can be released before the buffet is full."""
    block = blocks("gaussian")[0]
    n = 4096
    wr = ControllerConfig((n,), AffineMap(0, (1,)), {"addr": AffineMap(0, (1,))})
    rd = ControllerConfig((n,), AffineMap(n + 2, (1,)), {"addr": AffineMap(n - 1, (-1,))})
    big = replace(block, configs={"wr": wr, "rd": rd}, tiles=2)
    with pytest.raises(MappingError) as e:
        buffet_config(big)
    msg = str(e.value)
    assert msg.startswith(f"buffer {block.buffer}: memory {block.name}: a schedule the "
                          f"buffet cannot keep") and "\n" not in msg


def test_every_dual_port_block_of_harris_is_a_buffet():
    r = compile_app("harris", "cgra_dp_16x32", {}, until="map")
    cfgs = buffet_configs(r.impls)
    assert sum(len(v) for v in cfgs.values()) == 10
