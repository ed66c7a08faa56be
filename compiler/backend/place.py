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
of its first lane's placed template (HiMap: place one copy, replicate it). Annealing
(:class:`_Annealer`) then swaps nodes (or moves one to a free site) inside a window that shrinks
as the acceptance rate drops, on VPR's adaptive schedule (:class:`AnnealSchedule`: the starting
temperature from the cost changes of random moves, the cooling factor by acceptance rate, the
range limiter, the exit rule). Everything is driven by one ``random.Random(seed)``: the same
netlist, array, seed and schedule give the same placement.
"""
from __future__ import annotations

import math
import random
from bisect import bisect_left, bisect_right
from collections import deque
from dataclasses import dataclass

from .netlist import Netlist

# the cost function (module docstring): weight of an ordinary net and of a MEM chain's net,
# weight of the timing terms, switch boxes per register an edge may cross without a penalty
NET_WEIGHT = 1.0
CHAIN_WEIGHT = 4.0
TIMING_WEIGHT = 2.0
COMB_HOPS = 4


@dataclass(frozen=True)
class AnnealSchedule:
    """The annealing schedule of :func:`place`: VPR's adaptive schedule (Betz and Rose, "VPR:
    A New Packing, Placement and Routing Tool for FPGA Research", FPL 1997).

    * **starting temperature**: VPR makes random moves, accepts them all and starts at 20
      times the standard deviation of the cost; here a first round of
      :meth:`moves_per_temperature` moves keeps only the improving ones (a quench from the
      greedy start, which is already good) and the temperature starts at
      ``initial_temperature_factor`` times the mean absolute cost change of its moves;
    * **moves per temperature**: VPR's ``inner_num * blocks ** (4/3)`` (``inner_num`` 10);
      here ``effort * moves_scale * nodes ** moves_exponent``, at least ``min_moves``.
      ``effort`` is the user's knob (``ubc pnr --effort``): more moves per temperature, slower,
      a different placement (not necessarily a better one, docs/pnr.md);
    * **cooling**: ``T <- alpha * T`` with alpha from VPR's table by the acceptance rate ``R``
      of the last temperature: 0.5 above 0.96, 0.9 above 0.8, 0.95 above 0.15, else 0.8
      (:attr:`alpha_table`, :attr:`alpha_floor`): fast through the hot and the frozen phases,
      slow where the rate is useful;
    * **range limiter**: moves stay within ``limit`` rows and columns of the moved node;
      ``limit <- limit * (1 - target_acceptance + R)``, clamped to ``[min_range_limit, max(rows,
      columns)]``, which keeps the acceptance rate near VPR's 0.44;
    * **exit**: when ``T < exit_epsilon * cost / nets`` (VPR: a move would then change a net's
      cost by a negligible fraction), or after ``max_idle_temperatures`` temperatures in a row
      without an accepted move.
    """
    effort: float = 0.5                    # scales the moves per temperature (ubc pnr --effort)
    moves_scale: float = 8.0               # moves per temperature per node ** moves_exponent
    moves_exponent: float = 1.2            # growth of the moves per temperature with the nodes
    min_moves: int = 50                    # moves per temperature at least
    initial_temperature_factor: float = 2.0  # starting T over the mean |cost change| of a move
    min_spread: float = 1e-3               # the mean |cost change| used is at least this
    empty_spread: float = 1.0              # the spread when the first round tried no move
    # the cooling factors: (acceptance rate above which, factor), highest rate first
    alpha_table: tuple[tuple[float, float], ...] = ((0.96, 0.5), (0.8, 0.9), (0.15, 0.95))
    alpha_floor: float = 0.8               # cooling factor at or below the table's last rate
    target_acceptance: float = 0.44        # acceptance rate the range limiter steers to
    min_range_limit: float = 1.0           # the range limiter's smallest window, in tiles
    exit_epsilon: float = 0.005            # exit when T < exit_epsilon * cost / nets
    max_idle_temperatures: int = 3         # exit after this many temperatures accepting nothing
    sampler_tries: int = 8                 # random draws for a site in the window per move

    def __post_init__(self):
        if not (isinstance(self.effort, (int, float)) and math.isfinite(self.effort)
                and self.effort > 0):
            raise ValueError(f"placement effort must be a positive number, not {self.effort!r}")

    def moves_per_temperature(self, nodes: int) -> int:
        return max(self.min_moves, int(self.effort * self.moves_scale
                                       * nodes ** self.moves_exponent))

    def initial_temperature(self, deltas: list[float]) -> float:
        """The starting temperature from the absolute cost changes of the first round."""
        spread = (sum(deltas) / len(deltas)) if deltas else self.empty_spread
        return max(spread, self.min_spread) * self.initial_temperature_factor

    def alpha(self, rate: float) -> float:
        """The cooling factor after a temperature with acceptance rate ``rate``."""
        for above, factor in self.alpha_table:
            if rate > above:
                return factor
        return self.alpha_floor

    def range_limit(self, limit: float, rate: float, largest: float) -> float:
        """The next move window (VPR's range limiter)."""
        return min(largest, max(self.min_range_limit,
                                limit * (1 - self.target_acceptance + rate)))

    def frozen(self, temp: float, cost: float, nets: int) -> bool:
        """VPR's exit rule: the temperature is small against the cost per net."""
        return temp < self.exit_epsilon * max(1, cost) / max(1, nets)


DEFAULT_SCHEDULE = AnnealSchedule()


class PlaceError(ValueError):
    """The netlist does not fit the array (one line: the resource, the need, the capacity)."""


@dataclass
class Placement:
    """``node -> (row, col)`` and the array's column count (``tile_id = row * columns + col``)."""
    sites: dict[str, tuple[int, int]]
    columns: int
    cost: float                       # the annealing cost (wirelength and timing terms)
    wirelength: int                   # unweighted half-perimeter wirelength, in tiles

    def tile_id(self, node: str) -> int:
        r, c = self.sites[node]
        return r * self.columns + c

    def to_dict(self) -> dict:
        return {"columns": self.columns, "cost": self.cost, "wirelength": self.wirelength,
                "sites": {n: list(rc) for n, rc in sorted(self.sites.items())}}

    @staticmethod
    def from_dict(d: dict) -> "Placement":
        return Placement({n: (int(r), int(c)) for n, (r, c) in d["sites"].items()},
                         int(d["columns"]), float(d["cost"]), int(d["wirelength"]))


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
            nets.append((CHAIN_WEIGHT if chain else NET_WEIGHT, members))
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


def place(net: Netlist, layout, seed: int = 0,
          schedule: AnnealSchedule = DEFAULT_SCHEDULE) -> Placement:
    """Place ``net`` on the array of ``layout`` (see the module docstring): the cheaper greedy
    start, then simulated annealing on ``schedule``."""
    check_fit(net, layout)
    rng = random.Random(seed)
    cost = _Cost.of(net)
    sites = site_lists(layout)
    # the better of the two starts: clusters, or clusters with replicated kernel templates
    starts = [_initial(net, cost.nodes, cost.kinds, sites, layout, replicate=False)]
    if lanes(net):
        starts.append(_initial(net, cost.nodes, cost.kinds, sites, layout, replicate=True))
    pos = list(min(starts, key=cost.total))
    annealer = _Annealer(cost, pos, sites, rng, schedule)
    if annealer.order and (cost.nets or cost.edges):
        annealer.anneal(float(max(layout.rows, layout.columns)))
    return Placement({cost.nodes[i]: p for i, p in enumerate(pos)}, layout.columns,
                     cost.total(pos), cost.wirelength(pos))


@dataclass
class _Cost:
    """The netlist as node indices and the placement cost of a position list ``pos``
    (``node index -> (row, col)``): one wirelength term per net, one timing term per edge, and
    which terms each node touches (for the incremental cost of a move)."""
    nodes: list[str]
    kinds: list[str]
    nets: list[tuple[float, list[int]]]       # (weight, member node indices)
    edges: list[tuple[int, int, int]]         # (u, v, latency)
    node_nets: list[list[int]]
    node_edges: list[list[int]]

    @classmethod
    def of(cls, net: Netlist) -> "_Cost":
        nodes = sorted(net.graph.nodes)
        nets, edges = _nets(net, nodes)
        node_nets: list[list[int]] = [[] for _ in nodes]
        for i, (_w, members) in enumerate(nets):
            for m in members:
                node_nets[m].append(i)
        node_edges: list[list[int]] = [[] for _ in nodes]
        for i, (u, v, _l) in enumerate(edges):
            node_edges[u].append(i)
            node_edges[v].append(i)
        return cls(nodes, [net.graph.nodes[n]["kind"] for n in nodes], nets, edges,
                   node_nets, node_edges)

    def net(self, pos, i: int) -> float:
        """Weighted half perimeter of net ``i``'s bounding box."""
        w, members = self.nets[i]
        rs = [pos[m][0] for m in members]
        cs = [pos[m][1] for m in members]
        return w * (max(rs) - min(rs) + max(cs) - min(cs))

    def edge(self, pos, i: int) -> float:
        """Timing cost of edge ``i``: a detour for a latency above the distance, or a
        combinational run longer than ``COMB_HOPS`` per register."""
        u, v, lat = self.edges[i]
        d = abs(pos[u][0] - pos[v][0]) + abs(pos[u][1] - pos[v][1])
        if lat > d:
            return TIMING_WEIGHT * (lat - d)
        return TIMING_WEIGHT * max(0, d - COMB_HOPS * (lat + 1))

    def total(self, pos) -> float:
        return sum(self.net(pos, i) for i in range(len(self.nets))) + \
            sum(self.edge(pos, i) for i in range(len(self.edges)))

    def wirelength(self, pos) -> int:
        """Unweighted half-perimeter wirelength, in tiles."""
        wl = 0
        for _w, members in self.nets:
            rs = [pos[m][0] for m in members]
            cs = [pos[m][1] for m in members]
            wl += max(rs) - min(rs) + max(cs) - min(cs)
        return wl


@dataclass
class _Move:
    """A tried move: node ``a`` from ``pa`` to ``target``, swapped with node ``b`` (``None``:
    ``target`` was free), the new costs of the terms it touches and the cost change."""
    a: int
    b: int | None
    pa: tuple[int, int]
    target: tuple[int, int]
    new_nets: dict[int, float]
    new_edges: dict[int, float]
    delta: float


class _Annealer:
    """Simulated annealing of the positions ``pos`` (changed in place) on ``schedule``, with
    the per-term costs kept up to date move by move."""

    def __init__(self, cost: _Cost, pos: list, sites, rng: random.Random,
                 schedule: AnnealSchedule):
        self.cost, self.pos, self.rng, self.schedule = cost, pos, rng, schedule
        self.ncost = [cost.net(pos, i) for i in range(len(cost.nets))]
        self.ecost = [cost.edge(pos, i) for i in range(len(cost.edges))]
        self.total = sum(self.ncost) + sum(self.ecost)
        self.occupant = {p: i for i, p in enumerate(pos)}
        # nodes with somewhere else to go
        self.order = [i for i, k in enumerate(cost.kinds) if len(sites[k]) > 1]
        self.samplers = {k: _Sampler(v, rng, schedule.sampler_tries) for k, v in sites.items()}

    def anneal(self, largest_limit: float) -> None:
        """Temperatures until the schedule's exit rule holds; the first round (no
        temperature: improving moves only) measures the starting temperature."""
        s = self.schedule
        moves = s.moves_per_temperature(len(self.pos))
        limit = largest_limit
        _accepted, _tried, deltas = self.round(moves, limit, None)
        temp = s.initial_temperature(deltas)
        idle = 0
        while True:
            accepted, tried, _ = self.round(moves, limit, temp)
            rate = accepted / max(1, tried)
            limit = s.range_limit(limit, rate, largest_limit)
            temp *= s.alpha(rate)
            idle = idle + 1 if accepted == 0 else 0
            if s.frozen(temp, self.total, len(self.cost.nets)) \
                    or idle >= s.max_idle_temperatures:
                return

    def round(self, moves: int, limit: float, temp: float | None):
        """``moves`` tries at temperature ``temp`` (Metropolis: a move that raises the cost by
        ``delta`` is kept with probability ``exp(-delta / temp)``; ``None``: only moves that do
        not raise it). Returns the accepted and tried counts and, without a temperature, the
        absolute cost change of every tried move."""
        accepted = tried = 0
        deltas = []
        for _ in range(moves):
            move = self.propose(limit)
            if move is None:
                continue
            tried += 1
            delta = move.delta
            if temp is None:
                deltas.append(abs(delta))
                ok = delta <= 0
            else:
                ok = delta <= 0 or self.rng.random() < math.exp(-delta / temp)
            if ok:
                accepted += 1
                self.commit(move)
            else:
                self.undo(move)
        return accepted, tried, deltas

    def propose(self, limit: float) -> _Move | None:
        """Move a random node to a random site of its kind within ``limit`` (swapping with its
        occupant) and cost the terms it touches; ``None`` when no site was drawn."""
        cost, pos, rng = self.cost, self.pos, self.rng
        a = self.order[rng.randrange(len(self.order))]
        ra, ca = pos[a]
        target = self.samplers[cost.kinds[a]](ra, ca, max(1, int(limit)))
        if target is None:
            return None
        b = self.occupant.get(target)
        touched_n = set(cost.node_nets[a])
        touched_e = set(cost.node_edges[a])
        if b is not None:
            touched_n.update(cost.node_nets[b])
            touched_e.update(cost.node_edges[b])
        old = sum(self.ncost[i] for i in touched_n) + sum(self.ecost[i] for i in touched_e)
        pa = pos[a]
        pos[a] = target
        if b is not None:
            pos[b] = pa
        newn = {i: cost.net(pos, i) for i in touched_n}
        newe = {i: cost.edge(pos, i) for i in touched_e}
        delta = sum(newn.values()) + sum(newe.values()) - old
        return _Move(a, b, pa, target, newn, newe, delta)

    def commit(self, m: _Move) -> None:
        for i, c in m.new_nets.items():
            self.ncost[i] = c
        for i, c in m.new_edges.items():
            self.ecost[i] = c
        self.total += m.delta
        del self.occupant[m.pa]
        self.occupant[m.target] = m.a
        if m.b is not None:
            self.occupant[m.pa] = m.b

    def undo(self, m: _Move) -> None:
        self.pos[m.a] = m.pa
        if m.b is not None:
            self.pos[m.b] = m.target


class _Sampler:
    """A random site of one kind inside a window around ``(r, c)``, other than ``(r, c)``
    (``None`` after a few misses): rows and columns drawn from the kind's rows and columns
    inside the window, kept when the pair is a site."""

    def __init__(self, sites, rng: random.Random, tries: int):
        self.sites = set(sites)
        self.tries = tries
        self.rows = sorted({s[0] for s in sites})
        self.cols = sorted({s[1] for s in sites})
        self.rng = rng

    def __call__(self, r: int, c: int, lim: int):
        rows, cols, rng = self.rows, self.cols, self.rng
        r0, r1 = bisect_left(rows, r - lim), bisect_right(rows, r + lim)
        c0, c1 = bisect_left(cols, c - lim), bisect_right(cols, c + lim)
        if r0 >= r1 or c0 >= c1:
            return None
        for _ in range(self.tries):
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
    start = _GreedyStart(net, nodes, kinds, sites, layout, lanes(net) if replicate else {})
    start.breadth_first(start.place_ios())
    return start.pos


class _GreedyStart:
    """The state of :func:`_initial`: the positions so far (``None``: not placed), the free
    sites of each kind and the placed template of each unrolled kernel."""

    def __init__(self, net: Netlist, nodes, kinds, sites, layout, kernel_lanes):
        self.g = net.graph
        self.nodes, self.kinds, self.layout = nodes, kinds, layout
        self.index = {n: i for i, n in enumerate(nodes)}
        self.pos: list = [None] * len(nodes)
        self.free = {k: list(v) for k, v in sites.items()}
        self.free_set = {k: set(v) for k, v in sites.items()}
        self.centre = (layout.rows / 2, layout.columns / 2)
        self.kernel_lanes = kernel_lanes
        self.lane_of: dict[str, tuple[str, int]] = {}
        for kernel, group in kernel_lanes.items():
            for k, lane in enumerate(group):
                for n in lane:
                    self.lane_of[n] = (kernel, k)
        self.template: dict[str, list[tuple[int, int]]] = {}

    def neighbours(self, n: str) -> set[str]:
        return set(self.g.successors(n)) | set(self.g.predecessors(n))

    def take(self, n: str, site: tuple[int, int]) -> None:
        i = self.index[n]
        self.pos[i] = site
        self.free[self.kinds[i]].remove(site)
        self.free_set[self.kinds[i]].discard(site)

    def target(self, ns) -> tuple[float, float]:
        """The mean position of the placed neighbours of the nodes ``ns`` outside them (the
        array's centre when there are none)."""
        pos, index = self.pos, self.index
        placed = [pos[index[m]] for n in ns
                  for m in set(self.g.predecessors(n)) | set(self.g.successors(n))
                  if m not in ns and pos[index[m]] is not None]
        if not placed:
            return self.centre
        return (sum(p[0] for p in placed) / len(placed), sum(p[1] for p in placed) / len(placed))

    def greedy(self, n: str) -> None:
        """``n`` on the free site of its kind nearest to :meth:`target`."""
        tr, tc = self.target([n])
        cand = self.free[self.kinds[self.index[n]]]
        self.take(n, min(cand, key=lambda s: (abs(s[0] - tr) + abs(s[1] - tc), s)))

    def place_ios(self) -> list[str]:
        """IO nodes side by side from the middle of the IO row, inputs first; returns them in
        that order."""
        g = self.g
        ios = sorted((n for n in self.nodes if g.nodes[n]["kind"] == "io"),
                     key=lambda n: (g.nodes[n].get("stream") != "glb2f", n))
        # distance of a column's centre from the row's middle, in half tiles
        io_sites = sorted(self.free["io"],
                          key=lambda s: (abs(2 * s[1] + 1 - self.layout.columns), s[1]))
        for n, site in zip(ios, io_sites):
            self.take(n, site)
        return ios

    def breadth_first(self, ios: list[str]) -> None:
        """Every other node, breadth-first from the IO nodes ``ios`` (then from the first
        unreached node by name): a lane of an unrolled kernel as a whole, others greedily."""
        seen = set(ios)
        queue = deque(ios)
        rest = sorted(n for n in self.nodes if n not in seen)
        while queue or rest:
            if not queue:
                n0 = rest.pop(0)
                if n0 in seen:
                    continue
                seen.add(n0)
                queue.append(n0)
            n = queue.popleft()
            if self.pos[self.index[n]] is None:
                if n in self.lane_of:
                    self.place_lane(*self.lane_of[n])
                else:
                    self.greedy(n)
            for m in sorted(self.neighbours(n)):
                if m not in seen:
                    seen.add(m)
                    queue.append(m)

    def place_lane(self, kernel: str, k: int) -> None:
        lane = self.kernel_lanes[kernel][k]
        if kernel not in self.template:
            for n in self.lane_order(lane):
                self.greedy(n)
            self.template[kernel] = [self.pos[self.index[n]] for n in lane]
            return
        moved = self.best_shift(self.template[kernel], lane)
        if moved is None:
            for n in lane:
                self.greedy(n)
            return
        for n, site in zip(lane, moved):
            self.take(n, site)

    def lane_order(self, lane: list[str]) -> list[str]:
        """The lane's nodes breadth-first along its own edges from its first node (restarting
        at the first unreached node when the lane is not connected)."""
        inside = set(lane)
        order, seen, queue = [], set(), deque([lane[0]])
        while queue or len(order) < len(lane):
            if not queue:
                queue.append(next(n for n in lane if n not in seen))
            n = queue.popleft()
            if n in seen:
                continue
            seen.add(n)
            order.append(n)
            for m in sorted(self.neighbours(n) & inside):
                if m not in seen:
                    queue.append(m)
        return order

    def best_shift(self, shape: list[tuple[int, int]], lane: list[str]):
        """The template ``shape`` moved (by rows, and by columns in multiples of the MEM
        period) onto free PE sites with its centre nearest to the lane's placed neighbours;
        ``None`` when no shift fits."""
        layout, period = self.layout, self.layout.arch.array.mem_period
        tr, tc = self.target(lane)
        sr = sum(p[0] for p in shape) / len(shape)
        sc = sum(p[1] for p in shape) / len(shape)
        best = None
        for dr in range(-layout.rows, layout.rows + 1):
            for dc in range(-layout.columns // period * period, layout.columns + 1, period):
                moved = [(r + dr, c + dc) for r, c in shape]
                if all(m in self.free_set["pe"] for m in moved):
                    key = (abs(sr + dr - tr) + abs(sc + dc - tc), dr, dc)
                    if best is None or key < best[0]:
                        best = (key, moved)
        return None if best is None else best[1]
