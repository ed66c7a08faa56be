"""Tiles built for the array edge (``Tile(..., edges)``, used by the FPGA flow's ``cgra_4x4``)
behave like the plain tile inside the array (Amaranth simulator).

A plain tile and an edge tile with real cores get the same configuration writes, reads, run,
stall and track inputs, except that the plain tile's incoming tracks on the edge sides are 0
(what the array ties them to) while the edge tile's carry random values (which it must ignore).
Every cycle: the same read-back, the same core inputs (connection-box outputs), the same
outgoing tracks on the other sides, 0 on the edge sides, the same error flag and GLB port.
"""
from __future__ import annotations

import random
import warnings

import pytest
from amaranth.hdl import Module

from tests.gateware import run_testbench
from ubgen.arch import load_arch
from ubgen.array import tile_module
from ubgen.array.layout import ArrayLayout
from ubgen.array.tile import Tile, edge_suffix, track_port
from ubgen.interconnect import SIDES


def compare_tiles(kind: str, edges: tuple[str, ...], cycles: int, seed: int):
    arch = load_arch("cgra_4x4")
    lay = ArrayLayout(arch)
    spec = lay.specs[kind]
    ref = Tile(spec, lay.cores[kind](arch))
    dut = Tile(spec, lay.cores[kind](arch), edges)
    m = Module()
    m.submodules.ref, m.submodules.dut = ref, dut
    rng = random.Random(seed)
    regs = [r for r in spec.regmap.registers]
    # the interconnect's registers more often: they steer the boxes under test
    ic = [r for r in regs if r.name in {x.name for x in spec.interconnect_regmap.registers}]
    tracks = [(w, s, t) for w in spec.widths for s in SIDES for t in range(spec.tracks)]
    glb_in = [n for n in ("rdata",) if "glb" in ref.signature.members]
    checked = {"edge": 0, "other": 0, "nonzero": 0}
    # select registers mostly get a select value of an input (or one past the last)
    sel_range = {sb.sel_reg(s, t): len(sb.mux_inputs(s, t)) + 1
                 for sb in spec.sbs.values() for s, t in sb.outputs()}
    sel_range.update({cb.sel_reg: len(cb.inputs()) + 1 for cb in spec.cbs.values()})

    def random_value(r):
        if r.name in sel_range and rng.random() < 0.9:
            return rng.randrange(sel_range[r.name])
        if r.name == "op":
            return rng.choice([0, 1, 2, 3, 8])               # a few ALU operations
        return rng.getrandbits(r.width)

    # every register once (run = 0), every value of every select register, random writes
    plan = [(r, random_value(r), True) for r in regs]
    plan += [(spec.regmap[name], v, True) for name, n in sel_range.items() for v in range(n)]
    for _ in range(cycles):
        r = rng.choice(ic if rng.random() < 0.7 else regs)
        plan.append((r, random_value(r), rng.random() < 0.5))

    async def bench(ctx):
        for cycle, (r, value, write) in enumerate(plan):
            stall = rng.random() < 0.1
            run = cycle >= len(regs) and rng.random() < 0.95
            for tile in (ref, dut):
                ctx.set(tile.cfg.addr, r.offset)
                ctx.set(tile.cfg.wdata, value)
                ctx.set(tile.cfg.we, write)
                ctx.set(tile.run, run)
                ctx.set(tile.stall, stall)
                for name in glb_in:
                    ctx.set(getattr(tile.glb, name), cycle * 7 & 0xffff)
            for w, s, t in tracks:
                v = rng.getrandbits(w)
                ctx.set(getattr(dut, track_port(w, "in", s, t)), v)
                ctx.set(getattr(ref, track_port(w, "in", s, t)), 0 if s in edges else v)
            assert ctx.get(dut.cfg.rdata) == ctx.get(ref.cfg.rdata), (cycle, r.name)
            for w, s, t in tracks:
                got = ctx.get(getattr(dut, track_port(w, "out", s, t)))
                if s in edges:
                    assert got == 0, (cycle, w, s, t)
                    checked["edge"] += 1
                else:
                    assert got == ctx.get(getattr(ref, track_port(w, "out", s, t))), \
                        (cycle, w, s, t)
                    checked["other"] += 1
                    checked["nonzero"] += got != 0
            for p in spec.cbs:                               # the connection boxes' outputs
                assert ctx.get(getattr(dut.core, f"in_{p}")) == \
                    ctx.get(getattr(ref.core, f"in_{p}")), (cycle, p)
            if "error" in ref.signature.members:
                assert ctx.get(dut.error) == ctx.get(ref.error)
            if "glb" in ref.signature.members:
                for name in ("addr", "wdata", "we", "re"):
                    assert ctx.get(getattr(dut.glb, name)) == ctx.get(getattr(ref.glb, name))
            await ctx.tick()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # the layout's unused prototype cores
        run_testbench(m, bench)
    assert checked["edge"] and checked["other"] and checked["nonzero"] >= 100   # real data


@pytest.mark.parametrize("kind, edges", [("pe", ("S", "W")), ("pe", ("E",)),
                                         ("io", ("N", "W")), ("mem", ("S", "E"))])
def test_edge_tile_matches_plain_tile(kind, edges):
    compare_tiles(kind, edges, 300, len(edges) + len(kind))


def test_edge_module_names():
    """One module per kind and edge situation; the plain name for an interior tile."""
    assert tile_module("pe") == "cgra_pe_tile" and edge_suffix(()) == ""
    assert tile_module("pe", {"W", "S"}) == "cgra_pe_tile_sw"
    assert tile_module("io", ("E", "N")) == "cgra_io_tile_ne"
    lay = ArrayLayout(load_arch("cgra_4x4"))
    names = {tile_module(p.kind, lay.edges(p.row, p.col)) for p in lay.positions()}
    assert names == {"cgra_io_tile_nw", "cgra_io_tile_n", "cgra_io_tile_ne", "cgra_pe_tile_w",
                     "cgra_pe_tile", "cgra_pe_tile_sw", "cgra_pe_tile_s", "cgra_mem_tile_e",
                     "cgra_mem_tile_se"}
    assert lay.edges(0, 0) == {"N", "W"} and lay.edges(2, 1) == frozenset()
    with pytest.raises(ValueError, match=r"unknown side\(s\) Q"):
        edge_suffix(("Q",))
