"""The RTL test cases are legal schedules: a plain-Python model of the PUB timing contract,
running the affine configs, reproduces every expected stream from the specification with no
SRAM conflict (and finds the conflict in the case built to have one)."""
from dataclasses import replace

import pytest

from sim.tb.pub_cases import PUB_CASES, TB4_CASES, chained_delay, transpose_stream
from sim.tb.pub_model import run_pub_model
from ubgen.arch import load_arch

UB_CASES = {**{n: c for n, c in PUB_CASES.items() if not c.regs.get("mode")}, **TB4_CASES}


@pytest.mark.parametrize("name", sorted(UB_CASES))
def test_case_schedule_is_legal(name):
    case = UB_CASES[name]
    prm = load_arch("pub").pub
    if name in TB4_CASES:
        prm = replace(prm, tb_depth=4)
    res = run_pub_model(prm, case.configs, case.inputs)
    for q, stream in res.outputs.items():
        assert stream == case.expected.get(q, []), f"{name}: port {q}"
    assert bool(res.conflicts) == case.expect_error


def test_chained_case_splits_by_tile_id():
    case, tiles = chained_delay()
    prm = load_arch("pub_small").pub
    merged, per_tile = [], []
    for t in range(tiles):
        res = run_pub_model(prm, case.configs, case.inputs, tile_id=t)
        assert not res.conflicts
        per_tile.append(res.outputs[0])
        merged += res.outputs[0]
    assert sorted(merged) == case.expected[0]
    # TileID = floor(x / 32): tile 0 supplies columns 0..31 of every row, tile 1 the rest.
    assert all((c - 64) % 64 < 32 for c, _ in per_tile[0])
    assert all((c - 64) % 64 >= 32 for c, _ in per_tile[1])


def test_transpose_stream_is_a_transpose():
    n = 8
    dest = [None] * (n * n)
    for r, c, addr in transpose_stream(n):
        dest[addr] = (r, c)
    assert dest == [(r, c) for c in range(n) for r in range(n)]
