"""Routing: PathFinder negotiated congestion on the exported routing graph, with exact
latencies (docs/pnr.md "Routing"; McMurchie and Ebeling's PathFinder, as HiMap uses it).

The graph is ``ubgen.array.graph.routing_graph`` (the 16-bit and the 1-bit network; never the
generator's objects). A route runs ``T<s>.out.<port> -> T<s>.sb<w>.mux.<side>.<t> ->
T<s>.sb<w>.out... -> T<n>.sb<w>.in... -> (mux -> out -> in)* -> T<d>.cb.<port> ->
T<d>.in.<port>``; every switch-box mux it crosses has an optional pipeline register
(``mux -> reg -> out``), so a route crossing ``h`` switch boxes can delay its value by any
``0 .. h`` cycles. Routing works on the graph without the ``reg`` nodes; which muxes register
is decided per net once its tree is known (:func:`assign_registers`).

Every net (one core output) is a tree. Its sinks are routed in increasing latency: the search
for a sink of latency ``L`` starts from every branch point of the tree built so far (the
source port and the tree's incoming tracks), each with the registers the tree can place above
it, and runs over states ``(node, registers available so far, capped at L)`` so that it only
ends at the sink's input with ``L`` registers available: a sink that is close but needs a long
delay gets a detour. Node costs are PathFinder's ``(base + history) * (1 + present * sharing)``;
after each iteration the overused nodes' history grows and the present factor is multiplied,
and only the nets on overused nodes are ripped up and routed again.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass, field

import networkx as nx

MAX_ITERATIONS = 60


class RouteError(ValueError):
    """The design cannot be routed (one line: the resource that ran out)."""


@dataclass
class NetRoute:
    """The routed tree of one net: ``parent`` of every tree node (graph node names; the source
    port's parent is ``None``), the sinks ``(sink port node, latency)``, and the muxes whose
    pipeline register is on."""
    source: str
    sinks: list[tuple[str, int]]
    parent: dict[str, str | None] = field(default_factory=dict)
    registers: set[str] = field(default_factory=set)

    def path(self, node: str) -> list[str]:
        out = [node]
        while self.parent[out[-1]] is not None:
            out.append(self.parent[out[-1]])
        return out[::-1]

    def latency(self, sink: str) -> int:
        return sum(1 for n in self.path(sink) if n in self.registers)

    def to_dict(self) -> dict:
        return {"source": self.source, "sinks": [list(s) for s in self.sinks],
                "parent": dict(sorted(self.parent.items())),
                "registers": sorted(self.registers)}

    @staticmethod
    def from_dict(d: dict) -> "NetRoute":
        return NetRoute(d["source"], [(n, int(lat)) for n, lat in d["sinks"]],
                        dict(d["parent"]), set(d["registers"]))


@dataclass
class Routing:
    nets: dict[tuple[str, str], NetRoute]
    iterations: int

    def pipeline_registers(self) -> int:
        return sum(len(r.registers) for r in self.nets.values())

    def wire_nodes(self) -> int:
        return sum(len(r.parent) for r in self.nets.values())

    def to_dict(self) -> dict:
        """JSON-able: every net (keyed ``"<driver node>:<port>"``) with its routed tree."""
        return {"iterations": self.iterations,
                "nets": [{"net": list(k), **r.to_dict()}
                         for k, r in sorted(self.nets.items())]}

    @staticmethod
    def from_dict(d: dict) -> "Routing":
        return Routing({tuple(n["net"]): NetRoute.from_dict(n) for n in d["nets"]},
                       int(d["iterations"]))


class RouteGraph:
    """The routing graph as integer arrays (the ``reg`` nodes left out), for fast search."""

    def __init__(self, g: nx.DiGraph):
        self.g = g
        names = [n for n, d in g.nodes(data=True) if d["kind"] != "pipe_reg"]
        names.sort()
        self.names = names
        self.index = {n: i for i, n in enumerate(names)}
        data = [g.nodes[n] for n in names]
        self.kind = [d["kind"] for d in data]
        self.row = [d["row"] for d in data]
        self.col = [d["col"] for d in data]
        self.capable = [d["kind"] == "sb_mux" and g.has_node(n.replace(".mux.", ".reg."))
                        for n, d in zip(names, data)]
        self.succ: list[list[int]] = [[] for _ in names]
        for u, v in g.edges():
            if u in self.index and v in self.index:
                self.succ[self.index[u]].append(self.index[v])
        for s in self.succ:
            s.sort()
        # a connection box leads only to its own input port: enter it only for that sink
        self.cb_port = {i: self.succ[i][0] for i, k in enumerate(self.kind) if k == "cb"}


def route(nets: list[tuple[tuple[str, str], str, list[tuple[str, int]]]], rg: RouteGraph,
          max_iterations: int = MAX_ITERATIONS) -> Routing:
    """Route ``nets`` = ``[(net key, source port node, [(sink port node, latency), ...])]``
    (see the module docstring). Raises :class:`RouteError` naming the most congested switch
    box when congestion is not resolved after ``max_iterations``."""
    n_nodes = len(rg.names)
    occ = [0] * n_nodes
    hist = [0.0] * n_nodes
    pres = 0.5
    routes: dict[int, dict[int, tuple[int | None, int]]] = {}
    order = list(range(len(nets)))
    todo = list(order)
    it = 0
    for it in range(1, max_iterations + 1):
        for i in todo:
            if i in routes:
                for nd in routes[i]:
                    occ[nd] -= 1
            routes[i] = _route_net(nets[i], rg, occ, hist, pres)
            for nd in routes[i]:
                occ[nd] += 1
        over = [nd for nd in range(n_nodes) if occ[nd] > 1]
        if not over:
            break
        for nd in over:
            hist[nd] += 0.5 * (occ[nd] - 1)
        overset = set(over)
        todo = [i for i in order if any(nd in overset for nd in routes[i])]
        pres *= 1.6
    else:
        raise RouteError(_congestion_message(rg, occ, it))
    out = {}
    for i, (key, src, sinks) in enumerate(nets):
        tree = routes[i]
        parent = {rg.names[nd]: (rg.names[p] if p is not None else None)
                  for nd, (p, _r) in tree.items()}
        nr = NetRoute(src, list(sinks), parent)
        nr.registers = assign_registers(nr, rg)
        out[key] = nr
    return Routing(out, it)


def _congestion_message(rg: RouteGraph, occ: list[int], it: int) -> str:
    worst = max(range(len(occ)), key=lambda nd: (occ[nd], -nd))
    name = rg.names[worst]
    d = rg.g.nodes[name]
    tracks = sum(1 for n in rg.names if n.startswith(name.rsplit(".", 1)[0] + "."))
    return (f"unroutable after {it} iterations: {occ[worst]} nets need {name}, "
            f"{d.get('side', '-')} side of the {d['width']}-bit switch box of tile {d['tile']} "
            f"(row {d['row']}, column {d['col']}), which has {tracks} tracks per side")


def _route_net(net, rg: RouteGraph, occ, hist, pres) -> dict[int, tuple[int | None, int]]:
    """One net's tree: ``{node: (parent, registers available at the node)}``."""
    key, src, sinks = net
    s = rg.index[src]
    tree: dict[int, tuple[int | None, int]] = {s: (None, 0)}
    for sink_name, lat in sorted(sinks, key=lambda x: (x[1], x[0])):
        t = rg.index[sink_name]
        if t in tree:
            raise RouteError(f"input {sink_name} is driven twice")
        starts = [(nd, min(r, lat)) for nd, (_p, r) in tree.items()
                  if rg.kind[nd] in ("port_out", "sb_in")]
        path = _search(rg, starts, t, lat, tree, occ, hist, pres)
        if path is None:
            raise RouteError(f"no route from {src} to {sink_name} with latency {lat}")
        for (nd, r), (prev, _pr) in zip(path[1:], path[:-1]):
            tree[nd] = (prev, r)
    return tree


def _search(rg: RouteGraph, starts, target: int, lat: int, tree, occ, hist, pres):
    """A* over ``(node, registers available)`` from ``starts`` to ``(target, lat)``; the path
    never visits a node twice nor a node of ``tree`` other than its start."""
    tr, tc = rg.row[target], rg.col[target]
    row, col, kind, capable, succ = rg.row, rg.col, rg.kind, rg.capable, rg.succ
    cb_port = rg.cb_port

    def h(nd, k):
        d = abs(row[nd] - tr) + abs(col[nd] - tc)
        return 3 * max(d, lat - k)

    best: dict[tuple[int, int], float] = {}
    parent: dict[tuple[int, int], tuple[int, int] | None] = {}
    heap = []
    for nd, k in starts:
        st = (nd, k)
        best[st] = 0.0
        parent[st] = None
        heapq.heappush(heap, (h(nd, k), 0.0, nd, k))
    while heap:
        f, gcost, nd, k = heapq.heappop(heap)
        if gcost > best.get((nd, k), float("inf")):
            continue
        if nd == target:
            if k == lat:
                path = []
                st = (nd, k)
                while st is not None:
                    path.append(st)
                    st = parent[st]
                return path[::-1]
            continue
        # nodes on the way to this state (no node twice in one path)
        on_path = set()
        st = parent[(nd, k)]
        while st is not None:
            on_path.add(st[0])
            st = parent[st]
        for m in succ[nd]:
            if m in tree or m in on_path:
                continue
            km = kind[m]
            if km == "cb":
                if cb_port[m] != target:
                    continue
            elif km == "port_in":
                if m != target:
                    continue
            k2 = min(k + 1, lat) if capable[m] else k
            cost = (1.0 + hist[m]) * (1.0 + pres * occ[m])
            g2 = gcost + cost
            st2 = (m, k2)
            if g2 < best.get(st2, float("inf")):
                best[st2] = g2
                parent[st2] = (nd, k)
                heapq.heappush(heap, (g2 + h(m, k2), g2, m, k2))
    return None


def assign_registers(nr: NetRoute, rg: RouteGraph) -> set[str]:
    """Which muxes of a routed tree register, so that every sink sees exactly its latency and
    the registers are spread along the paths (cutting long combinational runs).

    A mux ``a`` may register when every sink below it still wants one more register
    (``r + 1 <= min L``) and must when some sink below would otherwise run out of muxes
    (``L_s - r >= muxes left to s``). Between those bounds it registers when the run of
    unregistered hops since the last register has reached the even spacing of the tightest
    sink below (the smallest latency, the longest path among those). Falls back to registering as early as possible (always feasible when any
    assignment is) if the spread choice misses a latency."""
    children: dict[str, list[str]] = {}
    for n, p in nr.parent.items():
        if p is not None:
            children.setdefault(p, []).append(n)
    for c in children.values():
        c.sort()
    lat = dict(nr.sinks)
    capable = {n for n in nr.parent if rg.capable[rg.index[n]]}
    # per node: {sink: capable muxes from the node (inclusive) down to the sink}
    below: dict[str, dict[str, int]] = {}

    def collect(n):
        stack = [(n, False)]
        while stack:
            x, done = stack.pop()
            if not done:
                stack.append((x, True))
                for c in children.get(x, []):
                    stack.append((c, False))
                continue
            here = {x: 0} if x in lat else {}
            for c in children.get(x, []):
                for s, k in below[c].items():
                    here[s] = k
            if x in capable:
                here = {s: k + 1 for s, k in here.items()}
            below[x] = here
    collect(nr.source)

    def run(spread: bool) -> set[str]:
        regs = set()
        stack = [(nr.source, 0, 0)]
        while stack:
            n, r, since = stack.pop()
            if n in capable and below[n]:
                hi = min(lat[s] for s in below[n])
                must = any(lat[s] - r >= k for s, k in below[n].items())
                may = r + 1 <= hi
                want = False
                if spread and may:
                    s_min = min(below[n], key=lambda s: (lat[s], -below[n][s], s))
                    need, c = lat[s_min] - r, below[n][s_min]
                    want = need > 0 and (since + 1) * (need + 1) >= since + c
                elif may:
                    want = True
                if may and (must or want):
                    regs.add(n)
                    r, since = r + 1, 0
                else:
                    since += 1
            for c in children.get(n, []):
                stack.append((c, r, since))
        return regs

    for spread in (True, False):
        regs = run(spread)
        nr.registers = regs
        if all(nr.latency(s) == L for s, L in nr.sinks):
            return regs
    raise RouteError(f"net from {nr.source}: no register assignment meets its latencies")
