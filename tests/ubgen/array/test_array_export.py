"""Routing graph and full register map exports: structure, JSON round trip, CLI, sizes."""
from __future__ import annotations

import json
import time
from dataclasses import replace

import networkx as nx
import pytest

from ubgen.arch import load_arch
from ubgen.array.cli import register_subcommand
from ubgen.array.graph import full_regmap, routing_graph, save_graph
from ubgen.array.layout import ArrayLayout


def neighbour_pairs(rows: int, cols: int) -> int:
    """Ordered pairs of adjacent tiles in a rows x cols mesh."""
    return 2 * (rows * (cols - 1) + (rows - 1) * cols)


@pytest.mark.parametrize("name", ["cgra_4x4", "cgra_8x8", "cgra_4x16"])
def test_graph_structure(name):
    arch = load_arch(name)
    lay = ArrayLayout(arch)
    g = routing_graph(lay)
    a = arch.array
    R, C, T = a.rows + 1, a.columns, a.tracks
    kinds = nx.get_node_attributes(g, "kind")
    count = {k: sum(1 for v in kinds.values() if v == k) for k in set(kinds.values())}
    per_net = T * neighbour_pairs(R, C)
    for k in ("sb_in", "sb_mux", "sb_out", "pipe_reg"):
        assert count[k] == 2 * per_net, k
    # tile-to-tile wires: one per outgoing track with a neighbour, same track index
    wires = [(u, v) for u, v in g.edges if kinds[u] == "sb_out" and kinds[v] == "sb_in"]
    assert len(wires) == 2 * per_net
    for u, v in wires:
        du, dv = g.nodes[u], g.nodes[v]
        assert du["track"] == dv["track"] and du["width"] == dv["width"]
        assert abs(du["row"] - dv["row"]) + abs(du["col"] - dv["col"]) == 1
    # every configurable edge names a register of its tile that can hold its select value
    for u, v, d in g.edges(data=True):
        assert g.nodes[u]["width"] == g.nodes[v]["width"] == d["width"]
        if d["reg"] is None:
            continue
        tid, reg = d["reg"]
        assert tid == g.nodes[v]["tile"]
        spec = lay.specs[lay.positions()[tid].kind]
        assert 0 <= d["sel"] < 1 << spec.regmap[reg].width
        assert d["latency"] == (1 if kinds[v] == "pipe_reg" else 0)
    # no two edges into one mux share a select value
    for n, k in kinds.items():
        if k in ("sb_mux", "cb"):
            sels = [g.edges[u, n]["sel"] for u in g.predecessors(n)]
            assert len(sels) == len(set(sels))
    # every core input is reachable from some core output (the array is routable)
    reach = nx.descendants(g, f"T{lay.tile_id(0, 0)}.out.io2f_16")
    assert all(n in reach for n, k in kinds.items()
               if k == "port_in" and g.nodes[n]["width"] == 16)


def test_graph_json_round_trip_and_cli(tmp_path):
    p = save_graph("cgra_4x4", tmp_path / "g.json")
    data = json.loads(p.read_text())
    g2 = nx.node_link_graph(data, edges="edges")
    g = routing_graph("cgra_4x4")
    assert set(g2.nodes) == set(g.nodes) and set(g2.edges) == set(g.edges)
    u, v = next((u, v) for u, v, d in g.edges(data=True) if d["reg"] is not None)
    assert list(g2.edges[u, v]["reg"]) == list(g.edges[u, v]["reg"])

    import argparse
    ap = argparse.ArgumentParser()
    register_subcommand(ap.add_subparsers(dest="cmd"))
    args = ap.parse_args(["array-regmap", "--arch", "cgra_4x4", "--out", str(tmp_path / "r.json")])
    assert args.func(args) == 0
    assert json.loads((tmp_path / "r.json").read_text()) == full_regmap("cgra_4x4")
    args = ap.parse_args(["graph", "--arch", "no_such_arch", "--out", str(tmp_path / "x.json")])
    assert args.func(args) == 1
    assert not (tmp_path / "x.json").exists()


def test_full_regmap():
    arch = load_arch("cgra_4x4")
    lay = ArrayLayout(arch)
    regs = full_regmap(lay)
    assert len({r["global_addr"] for r in regs}) == len(regs)
    for r in regs:
        assert r["global_addr"] == r["tile_id"] << 16 | r["offset"]
        assert r["offset"] < 1 << 16
    for pos in lay.positions():
        spec = lay.specs[pos.kind]
        mine = [r for r in regs if r["tile_id"] == pos.tile_id]
        core = [r["name"] for r in mine if r["offset"] < spec.core_span]
        assert core == [r.name for r in spec.core_regmap.registers] + \
            [w.name for w in spec.core_regmap.windows]
        ic = [r for r in mine if r["offset"] >= spec.core_span]
        assert [r["offset"] for r in ic] == list(range(spec.core_span, spec.core_span + len(ic)))
        n_sb = 2 * 4 * arch.array.tracks * (2 if arch.array.pipeline_registers else 1)
        assert len(ic) == n_sb + len(spec.cbs)


def test_no_pipeline_registers_variant():
    base = load_arch("cgra_4x4")
    arch = replace(base, array=replace(base.array, pipeline_registers=False, tracks=3,
                                       switch_box="disjoint"))
    g = routing_graph(arch)
    assert not any(d["kind"] == "pipe_reg" for _, d in g.nodes(data=True))
    assert all(d["latency"] == 0 for *_, d in g.edges(data=True))
    assert not any(r["name"].endswith("_pipe") for r in full_regmap(arch))


def test_cgra_16x32_graph_and_regmap_sizes():
    t = time.perf_counter()
    arch = load_arch("cgra_16x32")
    lay = ArrayLayout(arch)
    g = routing_graph(lay)
    regs = full_regmap(lay)
    elapsed = time.perf_counter() - t
    assert lay.rows * lay.columns == 17 * 32
    assert sum(1 for p in lay.positions() if p.kind == "mem") == 16 * 32 // 4
    assert sum(1 for _, d in g.nodes(data=True) if d["kind"] == "sb_in") == \
        2 * 5 * neighbour_pairs(17, 32)
    assert len(regs) > 17 * 32 * 80
    assert elapsed < 60, f"graph + regmap of cgra_16x32 took {elapsed:.1f} s"


@pytest.mark.parametrize("name", ["cgra_4x4", "cgra_8x8", "cgra_16x32"])
def test_tile_counts_match_the_layout(name):
    """``ArrayParams.tile_counts`` (what the compiler checks designs against, without importing
    the generator) counts the tiles the layout places."""
    arch = load_arch(name)
    kinds = [p.kind for p in ArrayLayout(arch).positions()]
    assert arch.array.tile_counts() == {k: kinds.count(k) for k in ("pe", "mem", "io")}
    assert load_arch("cgra_16x32").array.tile_counts() == {"pe": 384, "mem": 128, "io": 32}


@pytest.mark.parametrize("name", ["cgra_4x4", "cgra_8x8"])
def test_core_specs_describe_the_amaranth_cores(name):
    """The layout describes the real cores from ubgen's Amaranth-free exports
    (``core_specs``); the tile specs equal those built from the Amaranth cores themselves."""
    arch = load_arch(name)
    data = ArrayLayout(arch)
    from ubgen.array.layout import default_cores
    built = ArrayLayout(arch, default_cores())
    for kind in ("io", "pe", "mem"):
        a, b = data.specs[kind], built.specs[kind]
        assert a == b and a.ports == b.ports
        assert [(r.name, r.width, r.offset, r.reset) for r in a.regmap.registers] == \
            [(r.name, r.width, r.offset, r.reset) for r in b.regmap.registers]
        assert [(w.name, w.offset, w.size) for w in a.regmap.windows] == \
            [(w.name, w.offset, w.size) for w in b.regmap.windows]
