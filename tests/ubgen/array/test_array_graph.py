"""The routing graph agrees with the RTL of the real array (Amaranth simulator).

For an edge ``u -> v`` of the graph, a route ``core output -> ... -> u -> v -> ... -> core
input`` is found *in the graph*, the register values its edges name are written over the
array's config bus, and the simulated array must carry the value driven at that core output
(and no other core output's value) to that core input, with the graph's latency. The cores are
probes (tests/ubgen/array/probe_cores.py) so every core port of every tile can be driven and
observed; switch boxes, connection boxes, tile config decoders and tile-to-tile wiring are the
real ones.
"""
from __future__ import annotations

import random
import warnings
from dataclasses import replace

import networkx as nx
import pytest

from tests.gateware import bus_write, bus_writes, run_testbench
from tests.ubgen.array.probe_cores import PROBE_CORES
from ubgen.arch import load_arch
from ubgen.array.cgra import CGRA
from ubgen.array.graph import (full_regmap, global_address, path_latency, register_writes,
                               route_writes, routing_graph)


def small_arch(tracks=2, topology="wilton"):
    a = load_arch("cgra_4x4")
    return replace(a, array=replace(a.array, rows=2, columns=2, tracks=tracks, mem_period=2,
                                    switch_box=topology))


def find_route(g, u, v, sources, sinks):
    """A route source -> u -> v -> sink through distinct nodes, shortest in latency."""
    head_graph = nx.restricted_view(g, [v], [])
    _, head = nx.multi_source_dijkstra(head_graph, sources, target=u, weight="latency")
    rev = nx.restricted_view(g.reverse(copy=False), head, [])
    _, tail = nx.multi_source_dijkstra(rev, sinks, target=v, weight="latency")
    return head + tail[::-1]


class ArrayProbe:
    """Drives probe-core outputs and reads probe-core inputs of a simulated array."""

    def __init__(self, arch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")       # unused prototype cores
            self.dut = CGRA(arch, PROBE_CORES)
        self.g = routing_graph(self.dut.layout)
        self.lay = self.dut.layout
        self.cores = {}
        for pos in self.lay.positions():
            self.cores[pos.tile_id] = self.dut.tiles[pos.row, pos.col].core
        self.sources = [n for n, d in self.g.nodes(data=True) if d["kind"] == "port_out"]
        self.sinks = [n for n, d in self.g.nodes(data=True) if d["kind"] == "port_in"]

    def signal(self, node):
        d = self.g.nodes[node]
        direction = "out" if d["kind"] == "port_out" else "in"
        return getattr(self.cores[d["tile"]], f"{direction}_{d['port']}")

    async def write(self, ctx, addr, value):
        await bus_write(ctx, self.dut.cfg, addr, value)

    async def read(self, ctx, addr):
        ctx.set(self.dut.cfg.addr, addr)
        await ctx.tick()                      # read-back is registered: valid a cycle later
        return ctx.get(self.dut.cfg.rdata)

    async def configure(self, ctx, values):
        await bus_writes(ctx, self.dut.cfg, register_writes(self.lay, values))

    def drive(self, ctx, src, value, width, salt):
        """Drive ``value`` at ``src`` and values different from it at every other source."""
        mask = (1 << width) - 1
        k = 0
        for n in self.sources:
            w = self.g.nodes[n]["width"]
            if n == src:
                ctx.set(self.signal(n), value)
            elif w == 1:
                ctx.set(self.signal(n), (value ^ 1) if width == 1 else k & 1)
            else:
                k += 1
                other = (value + 0x101 * k + salt) & mask
                ctx.set(self.signal(n), other if other != value else (other ^ 0x8000))

    async def check_route(self, ctx, path, salt):
        g = self.g
        await self.configure(ctx, route_writes(g, path))
        src, sink = path[0], path[-1]
        width = g.nodes[src]["width"]
        latency = path_latency(g, path)
        assert latency in (0, 1)
        values = [1, 0] if width == 1 else [(0x1357 * (salt + 1)) & 0xffff,
                                            (0xace1 + 77 * salt) & 0xffff]
        prev = None
        for value in values:
            self.drive(ctx, src, value, width, salt)
            if latency == 1:
                if prev is not None:
                    assert ctx.get(self.signal(sink)) == prev, path   # not yet
                await ctx.tick()
            got = ctx.get(self.signal(sink))
            assert got == value, f"{path}: sink has {got:#x}, source drives {value:#x}"
            prev = value


def run_edges(arch, select):
    probe = ArrayProbe(arch)
    g = probe.g
    edges = select([(u, v) for u, v, d in g.edges(data=True) if d["reg"] is not None])
    covered = set()

    async def bench(ctx):
        for i, (u, v) in enumerate(edges):
            path = find_route(g, u, v, probe.sources, probe.sinks)
            covered.update(zip(path, path[1:]))
            await probe.check_route(ctx, path, i)

    run_testbench(probe.dut, bench)
    return probe, edges, covered


@pytest.mark.parametrize("topology", ["wilton", "imran"])
def test_every_graph_edge_small_array(topology):
    """Every configurable edge of a 2x2 array (+ IO row), 2 tracks; every fixed edge too."""
    probe, edges, covered = run_edges(small_arch(2, topology), lambda es: es)
    assert len(edges) > 300
    assert covered == set(probe.g.edges), set(probe.g.edges) - covered


def test_sampled_graph_edges_cgra_4x4():
    """A seeded sample of the configurable edges of the default cgra_4x4 (5 tracks)."""
    arch = load_arch("cgra_4x4")

    def sample(es):
        rng = random.Random(4)
        return rng.sample(es, 60)

    probe, edges, covered = run_edges(arch, sample)
    kinds = {(probe.g.nodes[u]["kind"], probe.g.nodes[v]["kind"]) for u, v in edges}
    assert ("sb_in", "sb_mux") in kinds and ("sb_in", "cb") in kinds
    # routes cross tile boundaries: tile-to-tile wires were exercised
    assert any(probe.g.nodes[u]["tile"] != probe.g.nodes[v]["tile"] for u, v in covered)


def test_config_readback_cycle_count_and_error():
    arch = small_arch(2)
    probe = ArrayProbe(arch)
    dut = probe.dut
    rm = full_regmap(probe.lay)
    addrs = [r["global_addr"] for r in rm]
    assert len(set(addrs)) == len(addrs)
    regs = [r for r in rm if "window_size" not in r]

    async def bench(ctx):
        for i, r in enumerate(regs):
            await probe.write(ctx, r["global_addr"], (i * 37 + 5) & ((1 << r["width"]) - 1))
        for i, r in enumerate(regs):
            assert await probe.read(ctx, r["global_addr"]) == (i * 37 + 5) & ((1 << r["width"]) - 1), r
        # a tile id beyond the array reads 0 and writes go nowhere
        await probe.write(ctx, global_address(probe.lay.rows * probe.lay.columns, 0), 0xffff)
        assert await probe.read(ctx, global_address(probe.lay.rows * probe.lay.columns, 0)) == 0
        # run / stall: the unstalled-cycle counter
        assert ctx.get(dut.cycle_count) == 0
        ctx.set(dut.run, 1)
        for _ in range(5):
            await ctx.tick()
        ctx.set(dut.stall, 1)
        for _ in range(3):
            await ctx.tick()
        assert ctx.get(dut.cycle_count) == 5
        ctx.set(dut.stall, 0)
        await ctx.tick()
        assert ctx.get(dut.cycle_count) == 6
        ctx.set(dut.run, 0)
        await ctx.tick()
        assert ctx.get(dut.cycle_count) == 0
        # error: OR of the MEM tiles' flags
        assert ctx.get(dut.error) == 0
        mem = next(c for tid, c in probe.cores.items() if "error" in c.signature.members)
        ctx.set(mem.error, 1)
        assert ctx.get(dut.error) == 1

    run_testbench(dut, bench)
