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
  costed ``TIMING_WEIGHT * (L - d)``; an edge spanning more than ``COMB_HOPS * (L + 1)``
  tiles leaves a combinational run of more than ``COMB_HOPS`` switch boxes between its
  registers, costed ``TIMING_WEIGHT`` per extra tile.

The start is the cheaper of two greedy placements (:func:`_initial`): clusters (each node, in
breadth-first order from the IO nodes, on the free site nearest to the centre of its placed
neighbours), and, for apps with unrolled kernels, the same with every lane of a kernel a copy
of its first lane's placed template (HiMap: place one copy, replicate it); annealing then swaps nodes (or moves one to a free site) inside
a window that shrinks as the acceptance rate drops (VPR's range limiter). Everything is driven
by one ``random.Random(seed)``: the same netlist, array and seed give the same placement.
"""
from __future__ import annotations

import math
import random
from bisect import bisect_left, bisect_right
from collections import deque
from dataclasses import dataclass

from .netlist import Netlist

CHAIN_WEIGHT = 4.0
TIMING_WEIGHT = 2.0
COMB_HOPS = 4


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


def place(net: Netlist, layout, seed: int = 0, effort: float = 0.5) -> Placement:
    """Place ``net`` on the array of ``layout`` (see the module docstring)."""
    check_fit(net, layout)
    rng = random.Random(seed)
    nodes = sorted(net.graph.nodes)
    kinds = [net.graph.nodes[n]["kind"] for n in nodes]
    nets, edges = _nets(net, nodes)
    sites = site_lists(layout)
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
        if lat > d:
            return TIMING_WEIGHT * (lat - d)
        over = d - COMB_HOPS * (lat + 1)
        return TIMING_WEIGHT * over if over > 0 else 0.0

    # the better of the two starts: clusters, or clusters with replicated kernel templates
    starts = [_initial(net, nodes, kinds, sites, layout, replicate=False)]
    if lanes(net):
        starts.append(_initial(net, nodes, kinds, sites, layout, replicate=True))
    best_start = None
    for start in starts:
        pos = start
        c = sum(net_cost(i) for i in range(len(nets))) + sum(edge_cost(i)
                                                            for i in range(len(edges)))
        if best_start is None or c < best_start[0]:
            best_start = (c, start)
    pos = list(best_start[1])
    ncost = [net_cost(i) for i in range(len(nets))]
    ecost = [edge_cost(i) for i in range(len(edges))]
    occupant = {p: i for i, p in enumerate(pos)}
    movable = {k: [i for i in range(n) if kinds[i] == k] for k in ("pe", "mem", "io")}
    order = [i for i in range(n) if len(sites[kinds[i]]) > 1]
    total = sum(ncost) + sum(ecost)
    samplers = {k: _Sampler(v, rng) for k, v in sites.items()}
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
                target = samplers[kind](ra, ca, max(1, int(limit)))
                if target is None:
                    continue
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


class _Sampler:
    """A random site of one kind inside a window around ``(r, c)``, other than ``(r, c)``
    (``None`` after a few misses): rows and columns drawn from the kind's rows and columns
    inside the window, kept when the pair is a site."""

    def __init__(self, sites, rng: random.Random):
        self.sites = set(sites)
        self.rows = sorted({s[0] for s in sites})
        self.cols = sorted({s[1] for s in sites})
        self.rng = rng

    def __call__(self, r: int, c: int, lim: int):
        rows, cols, rng = self.rows, self.cols, self.rng
        r0, r1 = bisect_left(rows, r - lim), bisect_right(rows, r + lim)
        c0, c1 = bisect_left(cols, c - lim), bisect_right(cols, c + lim)
        if r0 >= r1 or c0 >= c1:
            return None
        for _ in range(8):
            s = (rows[rng.randrange(r0, r1)], cols[rng.randrange(c0, c1)])
            if s != (r, c) and s in self.sites:
                return s
        return None


def lanes(net: Netlist) -> dict[str, list[list[str]]]:
    """The unrolled kernels: ``{kernel: [lane, ...]}`` for every kernel with at least two
    lanes (its ops, each a list of PE nodes sorted by ``knode``) that are copies of one
    template (the same ``knode`` set, docs/backend.md "Kernels")."""
    by_kernel: dict[str, dict[str, list[str]]] = {}
    for n, d in net.graph.nodes(data=True):
        if d["kind"] == "pe" and d.get("kernel") and d.get("op") is not None \
                and d.get("knode") is not None:
            by_kernel.setdefault(d["kernel"], {}).setdefault(d["op"], []).append(n)
    out = {}
    for kernel, ops in sorted(by_kernel.items()):
        group = [sorted(ops[o], key=lambda n: (net.graph.nodes[n]["knode"], n))
                 for o in sorted(ops)]
        shapes = {tuple(net.graph.nodes[n]["knode"] for n in lane) for lane in group}
        if len(group) > 1 and len(shapes) == 1 and len(group[0]) > 1:
            out[kernel] = group
    return out


def _initial(net: Netlist, nodes, kinds, sites, layout,
             replicate: bool = True) -> list[tuple[int, int]]:
    """Greedy cluster placement with replicated templates: breadth-first from the IO nodes,
    each node on the free site of its kind nearest to the mean position of its already placed
    neighbours. The first lane of an unrolled kernel (:func:`lanes`) reached this way is
    placed as one cluster, its *template*; every other lane of the kernel is the template
    moved by the shift (rows, and columns by multiples of the MEM column period so that PE
    tiles stay PE tiles) nearest to its placed neighbours at which every template site is
    free (HiMap: place one copy, replicate it), or node by node when no shift fits."""
    g = net.graph
    index = {n: i for i, n in enumerate(nodes)}
    pos: list = [None] * len(nodes)
    free = {k: list(v) for k, v in sites.items()}
    free_set = {k: set(v) for k, v in sites.items()}
    centre = (layout.rows / 2.0, layout.columns / 2.0)
    period = layout.arch.array.mem_period
    lane_of: dict[str, tuple[str, int]] = {}
    kernel_lanes = lanes(net) if replicate else {}
    for kernel, group in kernel_lanes.items():
        for k, lane in enumerate(group):
            for n in lane:
                lane_of[n] = (kernel, k)
    template: dict[str, list[tuple[int, int]]] = {}

    def take(n, site):
        i = index[n]
        pos[i] = site
        free[kinds[i]].remove(site)
        free_set[kinds[i]].discard(site)

    def target(ns):
        placed = [pos[index[m]] for n in ns for m in set(g.predecessors(n)) | set(g.successors(n))
                  if m not in ns and pos[index[m]] is not None]
        if not placed:
            return centre
        return (sum(p[0] for p in placed) / len(placed), sum(p[1] for p in placed) / len(placed))

    def greedy(n):
        tr, tc = target([n])
        cand = free[kinds[index[n]]]
        take(n, min(cand, key=lambda s: (abs(s[0] - tr) + abs(s[1] - tc), s)))

    def place_lane(kernel, k):
        lane = kernel_lanes[kernel][k]
        if kernel not in template:
            inside = set(lane)
            order, seen_l, queue_l = [], set(), deque([lane[0]])
            while queue_l or len(order) < len(lane):
                if not queue_l:
                    queue_l.append(next(n for n in lane if n not in seen_l))
                n = queue_l.popleft()
                if n in seen_l:
                    continue
                seen_l.add(n)
                order.append(n)
                for m in sorted((set(g.successors(n)) | set(g.predecessors(n))) & inside):
                    if m not in seen_l:
                        queue_l.append(m)
            for n in order:
                greedy(n)
            template[kernel] = [pos[index[n]] for n in lane]
            return
        shape = template[kernel]
        tr, tc = target(lane)
        sr = sum(p[0] for p in shape) / len(shape)
        sc = sum(p[1] for p in shape) / len(shape)
        best = None
        for dr in range(-layout.rows, layout.rows + 1):
            for dc in range(-layout.columns // period * period, layout.columns + 1, period):
                moved = [(r + dr, c + dc) for r, c in shape]
                if all(m in free_set["pe"] for m in moved):
                    key = (abs(sr + dr - tr) + abs(sc + dc - tc), dr, dc)
                    if best is None or key < best[0]:
                        best = (key, moved)
        if best is None:
            for n in lane:
                greedy(n)
            return
        for n, site in zip(lane, best[1]):
            take(n, site)

    ios = [n for n in nodes if g.nodes[n]["kind"] == "io"]
    # IO nodes: side by side from the middle of the IO row, inputs first
    ios.sort(key=lambda n: (g.nodes[n].get("stream") != "glb2f", n))
    io_sites = sorted(free["io"], key=lambda s: (abs(s[1] - centre[1] + 0.5), s[1]))
    for n, s_ in zip(ios, io_sites):
        take(n, s_)
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
        if pos[index[n]] is None:
            if n in lane_of:
                place_lane(*lane_of[n])
            else:
                greedy(n)
        for m in sorted(set(g.successors(n)) | set(g.predecessors(n))):
            if m not in seen:
                seen.add(m)
                queue.append(m)
    return pos
