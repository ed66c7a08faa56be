"""Hand routing on the exported routing graph (:mod:`ubgen.array.graph`): a tiny maze router
for tests and benchmarks that configure a route by hand. It works on the graph only, never on
the generator (the graph's edges carry the register writes, :func:`.graph.route_writes`)."""
from __future__ import annotations

import networkx as nx



def _hops(u, v, d):
    return 1 + 100 * d["latency"]        # prefer few hops, never a pipeline register


def route(g: nx.DiGraph, src: str, dst: str, avoid=(), via_tile: int | None = None,
          width: int | None = None) -> list[str]:
    """A path ``src -> dst`` avoiding the nodes in ``avoid``; through a switch box of
    ``via_tile`` (of the ``width``-bit network, when given) when given. Raises
    ``nx.NetworkXNoPath`` when there is none."""
    free = nx.restricted_view(g, list(avoid), [])
    if via_tile is None:
        return nx.shortest_path(free, src, dst, weight=_hops)
    best = None
    for n, d in g.nodes(data=True):
        if d["tile"] != via_tile or d["kind"] != "sb_mux" or n in avoid \
                or (width is not None and d["width"] != width):
            continue
        try:
            head = nx.shortest_path(free, src, n, weight=_hops)
            rest = nx.restricted_view(g, list(avoid) + head[:-1], [])
            tail = nx.shortest_path(rest, n, dst, weight=_hops)
        except nx.NetworkXNoPath:
            continue
        if best is None or len(head) + len(tail) < len(best):
            best = head + tail[1:]
    if best is None:
        raise nx.NetworkXNoPath(f"no route {src} -> {dst} through tile {via_tile}")
    return best


def add_pipeline_registers(g: nx.DiGraph, path: list[str], count: int | None,
                           every: int = 1) -> list[str]:
    """The same route with the pipeline register of its first ``count`` switch-box outputs
    (all when ``None``) enabled, ``mux -> out`` replaced by ``mux -> reg -> out``; with
    ``every = k`` only every k-th switch-box output (the k-th, 2k-th, ...) is a candidate."""
    out, added, seen = [], 0, 0
    for u, v in zip(path, path[1:]):
        out.append(u)
        if g.nodes[u]["kind"] != "sb_mux" or g.nodes[v]["kind"] != "sb_out":
            continue
        seen += 1
        if (count is None or added < count) and seen % every == 0:
            reg = u.replace(".mux.", ".reg.")
            if not (g.has_edge(u, reg) and g.has_edge(reg, v)):
                raise ValueError(f"switch-box output {v} has no pipeline register")
            out.append(reg)
            added += 1
    out.append(path[-1])
    if count is not None and added != count:
        raise ValueError(f"route has only {added} switch-box outputs")
    return out


__all__ = ["route", "add_pipeline_registers"]
