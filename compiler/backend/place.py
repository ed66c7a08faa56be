"""Placement: every netlist node on a tile of its kind, by simulated annealing on wirelength
and timing cost (paper §V "Finishing Steps"; docs/pnr.md "Placement").

Sites (``ubgen.array.layout.ArrayLayout``): PE nodes on PE tiles, MEM nodes on MEM tiles, IO
nodes on the IO row (row 0), one IO tile per global-buffer bank (an IO tile in column ``c``
uses bank ``c % banks``, so IO nodes go to columns ``0 .. banks - 1`` and their banks are
distinct, docs/backend.md "IO streams").

Cost, over the nets of the netlist (all edges leaving one output port):

* wirelength: the half perimeter of each net's bounding box, in tiles; the nets of chained MEM
  tiles (``chain_in`` / ``chain_valid_in`` edges) weigh :data:`CHAIN_WEIGHT` times more, so
  a chain's tiles sit next to each other;
* timing: a route between tiles at Manhattan distance ``d`` crosses at least ``d`` switch boxes
  and so offers at least ``d`` pipeline registers; an edge of latency ``L > d`` needs a detour,
  costed ``TIMING_WEIGHT * (L - d)``.

The start is a greedy cluster placement (each node, in breadth-first order from the IO
inputs, on the free site nearest to the centre of its placed neighbours), which already puts
the unrolled lanes of a kernel side by side (HiMap's observation that unrolled copies of one
template want the same shape); annealing then swaps nodes (or moves one to a free site) inside
a window that shrinks as the acceptance rate drops (VPR's range limiter). Everything is driven
by one ``random.Random(seed)``: the same netlist, array and seed give the same placement.
"""
from __future__ import annotations

import math
import random
from collections import deque
from dataclasses import dataclass

from .netlist import Netlist

CHAIN_WEIGHT = 4.0
TIMING_WEIGHT = 2.0


class PlaceError(ValueError):
    """The netlist does not fit the array (one line: the resource, the need, the capacity)."""


@dataclass
class Placement:
    """``node -> (row, col)`` and the array's column count (``tile_id = row * columns + col``)."""
    sites: dict[str, tuple[int, int]]
    columns: int
    cost: float = 0.0
    wirelength: int = 0

    def tile_id(self, node: str) -> int:
        r, c = self.sites[node]
        return r * self.columns + c


def site_lists(layout) -> dict[str, list[tuple[int, int]]]:
    """The sites of each node kind of an :class:`~ubgen.array.layout.ArrayLayout`."""
    banks = layout.arch.glb.banks
    sites: dict[str, list] = {"pe": [], "mem": [], "io": []}
    for p in layout.positions():
        if p.kind == "io" and p.col >= banks:
            continue
        sites[p.kind].append((p.row, p.col))
    return sites


def _nets(net: Netlist, nodes: list[str]):
    """``[(weight, [node index, ...])]`` and ``[(u, v, latency)]`` as node indices."""
    index = {n: i for i, n in enumerate(nodes)}
    nets = []
    for (u, _port), sinks in net.nets().items():
        chain = any(s[1].startswith("chain") for s in sinks)
        members = sorted({index[u]} | {index[s[0]] for s in sinks})
        if len(members) > 1:
            nets.append((CHAIN_WEIGHT if chain else 1.0, members))
    edges = sorted({(index[u], index[v], d["latency"])
                    for u, v, d in net.graph.edges(data=True) if u != v})
    return nets, edges


def check_fit(net: Netlist, layout) -> None:
    sites = site_lists(layout)
    for kind, what in (("pe", "PE tiles"), ("mem", "MEM tiles"), ("io", "IO tiles with "
                                                                   "distinct GLB banks")):
        need = net.count(kind)
        if need > len(sites[kind]):
            raise PlaceError(f"{net.app} needs {need} {what}; {layout.arch.name} has "
                             f"{len(sites[kind])}")


def place(net: Netlist, layout, seed: int = 0, effort: float = 1.0) -> Placement:
    """Place ``net`` on the array of ``layout`` (see the module docstring)."""
    check_fit(net, layout)
    rng = random.Random(seed)
    nodes = sorted(net.graph.nodes)
    kinds = [net.graph.nodes[n]["kind"] for n in nodes]
    nets, edges = _nets(net, nodes)
    sites = site_lists(layout)
    pos = _initial(net, nodes, kinds, sites, layout)
    n = len(nodes)
    node_nets: list[list[int]] = [[] for _ in range(n)]
    for i, (_w, members) in enumerate(nets):
        for m in members:
            node_nets[m].append(i)
    node_edges: list[list[int]] = [[] for _ in range(n)]
    for i, (u, v, _l) in enumerate(edges):
        node_edges[u].append(i)
        node_edges[v].append(i)

    def net_cost(i):
        w, members = nets[i]
        rs = [pos[m][0] for m in members]
        cs = [pos[m][1] for m in members]
        return w * (max(rs) - min(rs) + max(cs) - min(cs))

    def edge_cost(i):
        u, v, lat = edges[i]
        d = abs(pos[u][0] - pos[v][0]) + abs(pos[u][1] - pos[v][1])
        return TIMING_WEIGHT * (lat - d) if lat > d else 0.0

    ncost = [net_cost(i) for i in range(len(nets))]
    ecost = [edge_cost(i) for i in range(len(edges))]
    occupant = {p: i for i, p in enumerate(pos)}
    movable = {k: [i for i in range(n) if kinds[i] == k] for k in ("pe", "mem", "io")}
    order = [i for i in range(n) if len(sites[kinds[i]]) > 1]
    total = sum(ncost) + sum(ecost)
    if order and (nets or edges):
        rows, cols = layout.rows, layout.columns
        limit = float(max(rows, cols))
        moves_per_t = max(50, int(effort * 8 * n ** 1.2))
        # starting temperature: the spread of the cost changes of random moves
        temp = None
        stuck = 0
        while True:
            accepted = tried = 0
            deltas = []
            for _ in range(moves_per_t):
                a = order[rng.randrange(len(order))]
                kind = kinds[a]
                ra, ca = pos[a]
                lim = max(1, int(limit))
                cand = [s for s in _window(sites[kind], ra, ca, lim) if s != pos[a]]
                if not cand:
                    continue
                target = cand[rng.randrange(len(cand))]
                b = occupant.get(target)
                touched_n = set(node_nets[a])
                touched_e = set(node_edges[a])
                if b is not None:
                    touched_n.update(node_nets[b])
                    touched_e.update(node_edges[b])
                old = sum(ncost[i] for i in touched_n) + sum(ecost[i] for i in touched_e)
                pa = pos[a]
                pos[a] = target
                if b is not None:
                    pos[b] = pa
                newn = {i: net_cost(i) for i in touched_n}
                newe = {i: edge_cost(i) for i in touched_e}
                delta = sum(newn.values()) + sum(newe.values()) - old
                tried += 1
                if temp is None:
                    deltas.append(abs(delta))
                    ok = delta <= 0
                else:
                    ok = delta <= 0 or rng.random() < math.exp(-delta / temp)
                if ok:
                    accepted += 1
                    for i, c in newn.items():
                        ncost[i] = c
                    for i, c in newe.items():
                        ecost[i] = c
                    total += delta
                    del occupant[pa]
                    occupant[target] = a
                    if b is not None:
                        occupant[pa] = b
                else:
                    pos[a] = pa
                    if b is not None:
                        pos[b] = target
            if temp is None:
                spread = (sum(deltas) / len(deltas)) if deltas else 1.0
                temp = max(spread, 1e-3) * 2.0
                continue
            rate = accepted / max(1, tried)
            limit = min(float(max(rows, cols)), max(1.0, limit * (1 - 0.44 + rate)))
            if rate > 0.96:
                temp *= 0.5
            elif rate > 0.8:
                temp *= 0.9
            elif rate > 0.15:
                temp *= 0.95
            else:
                temp *= 0.8
            stuck = stuck + 1 if accepted == 0 else 0
            if temp < 0.005 * max(1.0, total) / max(1, len(nets)) or stuck >= 3:
                break
    total = sum(net_cost(i) for i in range(len(nets))) + sum(edge_cost(i)
                                                           for i in range(len(edges)))
    wl = 0
    for _w, members in nets:
        rs = [pos[m][0] for m in members]
        cs = [pos[m][1] for m in members]
        wl += max(rs) - min(rs) + max(cs) - min(cs)
    return Placement({nodes[i]: pos[i] for i in range(n)}, layout.columns, total, wl)


def _window(sites, r, c, lim):
    return [s for s in sites if abs(s[0] - r) <= lim and abs(s[1] - c) <= lim]


def _initial(net: Netlist, nodes, kinds, sites, layout) -> list[tuple[int, int]]:
    """Greedy cluster placement: breadth-first from the IO nodes, each node on the free site of
    its kind nearest to the mean position of its already placed neighbours."""
    g = net.graph
    index = {n: i for i, n in enumerate(nodes)}
    pos: list = [None] * len(nodes)
    free = {k: list(v) for k, v in sites.items()}
    centre = (layout.rows / 2.0, layout.columns / 2.0)
    ios = [n for n in nodes if g.nodes[n]["kind"] == "io"]
    # IO nodes: side by side from the middle of the IO row, inputs first
    ios.sort(key=lambda n: (g.nodes[n].get("stream") != "glb2f", n))
    io_sites = sorted(free["io"], key=lambda s: (abs(s[1] - centre[1] + 0.5), s[1]))
    for n, s in zip(ios, io_sites):
        pos[index[n]] = s
        free["io"].remove(s)
    seen = set(ios)
    queue = deque(ios)
    rest = sorted(n for n in nodes if n not in seen)
    while queue or rest:
        if not queue:
            n0 = rest.pop(0)
            if n0 in seen:
                continue
            seen.add(n0)
            queue.append(n0)
        n = queue.popleft()
        i = index[n]
        if pos[i] is None:
            placed = [pos[index[m]] for m in set(g.predecessors(n)) | set(g.successors(n))
                      if pos[index[m]] is not None]
            if placed:
                tr = sum(p[0] for p in placed) / len(placed)
                tc = sum(p[1] for p in placed) / len(placed)
            else:
                tr, tc = centre
            cand = free[kinds[i]]
            best = min(cand, key=lambda s: (abs(s[0] - tr) + abs(s[1] - tc), s))
            cand.remove(best)
            pos[i] = best
        for m in sorted(set(g.successors(n)) | set(g.predecessors(n))):
            if m not in seen:
                seen.add(m)
                queue.append(m)
    return pos
