"""PE input contexts (ubgen.pe.contexts, docs/pe.md) on a PE tile in the Amaranth simulator: the
tile configured through its configuration bus at the offsets of its register map, operands on
incoming tracks, context bits on 1-bit tracks, the result read on an outgoing track. Every cycle
the result is checked against the reference: the ALU on the operands the connection boxes pick
with :func:`ubgen.pe.contexts.effective_select`. Negative controls: the same bench against a
reference that ignores the contexts, and one that lets a later context win, must fail; a
configuration with one context has none of the context ports or registers."""
from __future__ import annotations

import dataclasses
import random
import warnings

import pytest

from tests import gateware as gw
from tests.gateware import run_testbench
from ubgen.arch import ArchError, arch_file, load_arch
from ubgen.array.graph import routing_graph
from ubgen.array.layout import ArrayLayout
from ubgen.array.tile import Tile, track_port
from ubgen.interconnect import SIDES
from ubgen.interconnect.switch_box import Source
from ubgen.pe.contexts import (context_port, context_ports, ctx_port, effective_context,
                               effective_select, split_port)
from ubgen.pe.ops import PEOp, pe_reference

BASE = load_arch("cgra_4x4")
TRACKS = [(s, t) for s in SIDES for t in range(BASE.array.tracks)]


def arch_with(contexts: int):
    return dataclasses.replace(BASE, array=dataclasses.replace(BASE.array,
                                                               pe_contexts=contexts))


def pe_tile(arch):
    lay = ArrayLayout(arch)
    spec = lay.specs["pe"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")        # the layout's unused prototype cores
        return spec, Tile(spec, lay.cores["pe"](arch))


def sel_of(spec, port: str, track) -> int:
    return spec.cbs[port].inputs().index(Source("track", side=track[0], track=track[1]))


def random_config(spec, rng: random.Random) -> dict[str, int]:
    """ADD of data0 and data1, combinational; every context of each operand either reads its
    own random track or has no source (select 0); the ctx bits from random 1-bit tracks."""
    regs = {"op": int(PEOp.ADD), "out_reg": 0}
    for p in ("data0", "data1"):
        for k in range(spec.contexts):
            use = k == 0 or rng.random() < 0.7
            regs[spec.context_selects(p)[k]] = sel_of(spec, context_port(p, k),
                                                      rng.choice(TRACKS)) if use else 0
    for k, p in enumerate(spec.ctx_inputs(), 1):
        regs[spec.cbs[p].sel_reg] = sel_of(spec, p, TRACKS[k])
    sb = spec.sbs[spec.word_width]
    regs[sb.sel_reg("E", 0)] = sb.mux_inputs("E", 0).index(Source("core", port="res"))
    return regs


def run_tile(spec, tile, regs, cycles: int, rng: random.Random):
    """Random words on every 16-bit track and random context bits; returns per cycle the
    track words, the ctx bits and the tile's result."""
    seen = []

    def track(w, s, t, direction="in"):
        return getattr(tile, track_port(w, direction, s, t))

    async def bench(ctx):
        await gw.configure(ctx, tile.cfg, spec.regmap, regs)
        ctx.set(tile.run, 1)
        for _ in range(cycles):
            words = {st: rng.randrange(1 << 16) for st in TRACKS}
            for st, v in words.items():
                ctx.set(track(16, *st), v)
            # mostly one-hot, sometimes several contexts at once (the lowest must win)
            bits = [int(rng.random() < 0.4) for _ in spec.ctx_inputs()]
            for k, _p in enumerate(spec.ctx_inputs(), 1):
                ctx.set(track(1, *TRACKS[k]), bits[k - 1])
            seen.append((words, bits, ctx.get(track(16, "E", 0, "out"))))
            await ctx.tick()

    run_testbench(tile, bench)
    return seen


def reference(spec, regs, words, bits, pick=effective_select) -> int:
    ops = []
    for p in ("data0", "data1"):
        sels = [regs[r] for r in spec.context_selects(p)]
        sel = pick(sels, bits)
        ops.append(0 if sel == 0 else words[TRACKS[sel - 1]])
    return pe_reference(PEOp.ADD, ops[0], ops[1], 0)[0]


def latest_wins(sels, bits):
    """A wrong reference: the highest active context wins."""
    for k in range(len(sels) - 1, 0, -1):
        if k - 1 < len(bits) and bits[k - 1] and sels[k]:
            return sels[k]
    return sels[0]


@pytest.mark.parametrize("contexts", [2, 4])
def test_contexts_pick_operands(contexts):
    spec, tile = pe_tile(arch_with(contexts))
    assert spec.contexts == contexts and len(spec.ctx_inputs()) == contexts - 1
    rng = random.Random(contexts)
    regs = random_config(spec, rng)
    seen = run_tile(spec, tile, regs, 60, rng)
    switched = 0
    for words, bits, got in seen:
        assert got == reference(spec, regs, words, bits)
        switched += effective_context(bits, [True] * contexts) > 0
    assert switched > 10
    # negative controls: ignoring the contexts, or the highest active one winning, must fail
    assert any(got != reference(spec, regs, w, b, pick=lambda s, _b: s[0])
               for w, b, got in seen)
    if contexts > 2:
        assert any(got != reference(spec, regs, w, b, pick=latest_wins) for w, b, got in seen)


def test_one_context_is_the_plain_pe():
    spec1 = ArrayLayout(BASE).specs["pe"]
    spec4 = ArrayLayout(arch_with(4)).specs["pe"]
    assert spec1.contexts == 1 and spec1.ctx_inputs() == [] and spec1.core_inputs() == \
        spec1.inputs()
    assert not any(r.name.endswith(("_c1_sel", "_c2_sel")) or r.name.startswith("cb_ctx")
                   for r in spec1.regmap.registers)
    # the context registers come after every register of the plain tile, at the same offsets
    plain = {r.name: r.offset for r in spec1.regmap.registers}
    four = {r.name: r.offset for r in spec4.regmap.registers}
    assert all(four[n] == o for n, o in plain.items())
    assert len(four) - len(plain) == 3 * 6 + 3
    g = routing_graph(arch_with(4))
    assert "T5.in.data0_c3" in g and "T5.cb.ctx3" in g and "T5.in.data0_c4" not in g
    assert "T5.in.data0_c1" not in routing_graph(BASE)


def test_context_names_and_limits():
    assert context_port("data0", 0) == "data0" and context_port("bit2", 3) == "bit2_c3"
    assert split_port("bit2_c3") == ("bit2", 3) and split_port("data_in0") == ("data_in0", 0)
    assert ctx_port(2) == "ctx2"
    ports = context_ports({"a": ("in", 16), "r": ("out", 16)}, 3)
    assert list(ports) == ["a_c1", "a_c2", "ctx1", "ctx2"]
    with pytest.raises(ValueError, match="pe_contexts"):
        context_ports({}, 0)
    assert effective_select([5, 0, 7], [1, 1]) == 7       # context 1 has no source: next one
    assert effective_select([5, 3, 7], [0, 0]) == 5


def test_arch_refuses_too_many_contexts(tmp_path):
    text = arch_file("cgra_4x4").read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace("[array]", "[array]\npe_contexts = 9", 1))
    with pytest.raises(ArchError, match="pe_contexts must be at most 8"):
        load_arch(bad)
