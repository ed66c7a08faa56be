"""Vectorization for the wide-fetch SRAM (thesis §5.5, Fig. 5.7 examples A and B; paper Fig. 9).

The configs are checked two ways: their affine form against the thesis' equations, and their
behaviour by the register-driven cycle model against a plain-Python memory."""
import pytest

from compiler.ir.ubimpl import PUBBlock
from compiler.mapping.common import Affine, MappingError
from compiler.mapping.vectorize import (WordStream, enumerate_affine, fire_cycles, plan_fetch,
                                        pub_configs, reuse_distance)
from compiler.mapping.pub_model import simulate_pub
from ubgen.arch import PUBParams

PUB = PUBParams()
T0 = 40                                     # first read cycle of the examples


def example_a():
    # for x in [0:32]: for dx in [0:5]: load(Mem(dx + x))  -- innermost first: (dx, x)
    return WordStream("A", (5, 32), Affine(T0, (1, 5)), Affine(0, (1, 1)))


def example_b():
    # for dx in [0:5]: for x in [0:32]: load(Mem(dx + x))  -- innermost first: (x, dx)
    return WordStream("B", (32, 5), Affine(T0, (1, 32)), Affine(0, (1, 1)))


def row_writer(n=36):
    return WordStream("w", (n,), Affine(0, (1,)), Affine(0, (1,)))


def test_reuse_distances_fig_5_7():
    assert reuse_distance(example_a()) == 4
    assert reuse_distance(example_b()) == 31


def test_example_a_strip_mines_x_with_a_padded_fetch():
    _ws, plan = plan_fetch(example_a(), PUB.fetch_width, PUB.tb_words)
    # dx (reuse distance 4 <= usable TB capacity 8 - 4) is served by the TB: x is fetched,
    # 32 / 4 = 8 wide words plus one padded fetch for the window's overhang
    assert (plan.dim, plan.span, plan.fetches) == (1, 4, 9)
    cfgs = pub_configs([row_writer()], [example_a()], PUB, "mem")
    s2t, t2o = cfgs["sram2tb_0"], cfgs["tb2out_0"]
    assert s2t.extents == (9,)
    assert s2t.addresses["sram"].strides == (1,) and s2t.addresses["sram"].start == 0   # 5.30
    assert s2t.addresses["tb"].strides == (1,)                  # TB slot x_o mod 2 (eq. 5.31)
    assert t2o.extents == (5, 32)
    assert t2o.addresses["tb"] == type(t2o.addresses["tb"])(0, (1, 1))   # 4xo + xi + dx (5.32)
    # one fetch every 4 x-iterations = 20 cycles, ahead of the window's first read
    assert s2t.schedule.strides == (20,) and s2t.schedule.start < T0


def example_b_padded():
    # example B under the schedule padding of §5.5.3 (compiler/schedule/fetch_pad.py): 9 wide
    # fetches per row, so the rows are 36 cycles apart instead of 32
    return WordStream("B", (32, 5), Affine(T0, (1, 36)), Affine(0, (1, 1)))


def test_example_b_refetches_each_row_with_a_padded_fetch():
    """Fig. 5.7 example B / Fig. 5.8: the reuse distance (31) exceeds the TB, so every dx pass
    fetches its row again from the SRAM: 32 + 4 words of shift = 9 wide fetches (one padded),
    the TB read at (x + dx) mod 8, i.e. eq. 5.41 linearized with (1, 36) mod 8 = (1, 4) (§5.6)."""
    ws, plan = plan_fetch(example_b_padded(), PUB.fetch_width, PUB.tb_words)
    assert (plan.dim, plan.span, plan.fetches, plan.lead) == (0, 0, 9, 4)
    cfgs = pub_configs([row_writer()], [example_b_padded()], PUB, "mem")
    s2t, t2o = cfgs["sram2tb_0"], cfgs["tb2out_0"]
    assert s2t.extents == (9, 5)                                  # x_o (9 with the pad) x dx
    assert s2t.addresses["sram"] == type(s2t.addresses["sram"])(0, (1, 0))
    assert t2o.extents == (32, 5)
    assert t2o.addresses["tb"] == type(t2o.addresses["tb"])(0, (1, 1))   # 4xo + xi + dx, mod 8
    assert [o % PUB.tb_words for o in (1, 36)] == [1, 4]          # §5.6's offset vector
    # a fetch every 4 reads, 4 + 2 cycles ahead of the first read of its word
    assert s2t.schedule.strides == (4, 36) and s2t.schedule.start <= T0 - 6


def test_example_b_unpadded_rows_are_refused():
    # without the padding the 9 fetches of a row do not fit its 32 cycles: one line, no configs
    with pytest.raises(MappingError, match="buffer mem"):
        pub_configs([row_writer()], [example_b()], PUB, "mem")


def _spec(writes, reads, values):
    """Plain memory: each read sees the latest write of its address at a cycle <= its own."""
    mem_hist = {}
    for (t, a), v in sorted(zip(writes, values)):
        mem_hist.setdefault(a, []).append((t, v))
    out = {}
    for t, a in reads:
        out[t] = [v for tw, v in mem_hist.get(a, []) if tw <= t][-1]
    return out


def _pairs(ws):
    return list(zip(enumerate_affine(ws.extents, ws.time).tolist(),
                    enumerate_affine(ws.extents, ws.addr).tolist()))


@pytest.mark.parametrize("reader", [example_a, example_b_padded, lambda: WordStream(
    "line", (64, 8), Affine(70, (1, 64)), Affine(0, (1, 64)))])
def test_configs_behave_like_a_memory(reader):
    rd = reader()
    wr = row_writer(36) if rd.name in "AB" else WordStream("w", (64, 8), Affine(0, (1, 64)),
                                                           Affine(0, (1, 64)))
    cfgs = pub_configs([wr], [rd], PUB, "mem")
    block = PUBBlock("mem", "mem", ["w"], [rd.name], cfgs)
    writes = _pairs(wr)
    values = [(7 * i + 3) % 65536 for i in range(len(writes))]
    run = simulate_pub(block.registers(PUB), PUB, [{t: v for (t, _a), v in zip(writes, values)}])
    want = _spec(writes, _pairs(rd), values)
    assert run.conflicts == []
    assert {t: run.outputs[0].get(t) for t in want} == want


def test_sram_port_is_never_shared():
    # one writer and two readers of the same rows: SRAM accesses land in distinct cycles
    wr = WordStream("w", (64, 8), Affine(0, (1, 64)), Affine(0, (1, 64)))
    r0 = WordStream("r0", (64, 8), Affine(64, (1, 64)), Affine(0, (1, 64)))
    r1 = WordStream("r1", (64, 8), Affine(128, (1, 64)), Affine(0, (1, 64)))
    cfgs = pub_configs([wr], [r0, r1], PUB, "mem")
    cycles = [c for n in ("agg2sram_0", "sram2tb_0", "sram2tb_1")
              for c in fire_cycles(cfgs[n]).tolist()]
    assert len(cycles) == len(set(cycles))
    # docs/design.md §4 fixture: the write side is fixed by the input stream
    a2s = cfgs["agg2sram_0"]
    assert (a2s.extents, a2s.schedule.start, a2s.schedule.strides) == ((16, 8), 4, (4, 64))
    assert a2s.addresses["sram"].strides == (1, 16)


def test_unaligned_write_is_rejected():
    wr = WordStream("w", (16,), Affine(0, (1,)), Affine(1, (1,)))
    rd = WordStream("r", (16,), Affine(40, (1,)), Affine(1, (1,)))
    with pytest.raises(MappingError, match="not wide-word aligned"):
        pub_configs([wr], [rd], PUB, "mem")
