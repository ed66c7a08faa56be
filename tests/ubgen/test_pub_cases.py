"""The RTL test cases are legal schedules: the config-driven PUB model (``compiler.mapping.pub_model``, the
one cycle model of the PUB timing contract), running the cases' encoded registers, reproduces
every expected stream from the specification with no SRAM conflict (and finds the conflict in
the case built to have one)."""
from dataclasses import replace

import pytest

from compiler.mapping.pub_model import simulate_pub
from sim.tb.pub_cases import (PUB_CASES, TB4_CASES, case_registers, chained_delay,
                              transpose_stream)
from ubgen.arch import load_arch
from ubgen.pub import encode_pub

UB_CASES = {**{n: c for n, c in PUB_CASES.items() if not c.regs.get("mode")}, **TB4_CASES}


def _run(case, prm, tiles):
    """The PUB model on ``tiles`` (tile ids, or [None] for one unchained tile)."""
    regs = [case_registers(case, lambda c: encode_pub(c, prm), t) for t in tiles]
    return simulate_pub(regs, prm, [case.inputs.get(p, {}) for p in range(prm.input_ports)])


@pytest.mark.parametrize("name", sorted(UB_CASES))
def test_case_schedule_is_legal(name):
    case = UB_CASES[name]
    prm = load_arch("pub").pub
    if name in TB4_CASES:
        prm = replace(prm, tb_depth=4)
    res = _run(case, prm, [None])
    for q, stream in enumerate(res.outputs):
        assert sorted(stream.items()) == case.expected.get(q, []), f"{name}: port {q}"
    assert bool(res.conflicts) == case.expect_error


def test_chained_case_splits_by_tile_id():
    case, tiles = chained_delay()
    prm = load_arch("pub_small").pub
    per_tile = []
    for t in range(tiles):
        res = _run(case, prm, [t])         # one chained tile alone: only the words it owns
        assert not res.conflicts
        per_tile.append(res.outputs[0])
    merged = _run(case, prm, list(range(tiles)))
    assert not merged.conflicts and sorted(merged.outputs[0].items()) == case.expected[0]
    assert sorted({**per_tile[0], **per_tile[1]}.items()) == case.expected[0]
    # TileID = floor(x / 32): tile 0 supplies columns 0..31 of every row, tile 1 the rest.
    assert per_tile[0] and all((c - 64) % 64 < 32 for c in per_tile[0])
    assert per_tile[1] and all((c - 64) % 64 >= 32 for c in per_tile[1])


def test_model_sees_a_wrong_case():
    """Negative control: a case whose read controller starts one cycle late does not reproduce
    its expected stream."""
    name = next(n for n in sorted(UB_CASES) if n not in TB4_CASES
                and not UB_CASES[n].expect_error)
    case = UB_CASES[name]
    late = {k: replace(c, schedule=replace(c.schedule, start=c.schedule.start + 1))
            if k.startswith("tb2out") and c.extents else c for k, c in case.configs.items()}
    res = _run(replace(case, configs=late), load_arch("pub").pub, [None])
    assert any(sorted(s.items()) != case.expected.get(q, []) for q, s in enumerate(res.outputs))


def test_transpose_stream_is_a_transpose():
    n = 8
    dest = [None] * (n * n)
    for r, c, addr in transpose_stream(n):
        dest[addr] = (r, c)
    assert dest == [(r, c) for c in range(n) for r in range(n)]
