"""Routing on the exported graph for tests (a tiny maze router; the compiler has the real one)."""
from __future__ import annotations

import networkx as nx

from ubgen.array.graph import cb_node, port_node


def _hops(u, v, d):
    return 1 + 100 * d["latency"]        # prefer few hops, never a pipeline register


def route(g: nx.DiGraph, src: str, dst: str, avoid=(), via_tile: int | None = None) -> list[str]:
    """A path ``src -> dst`` avoiding the nodes in ``avoid``; through a switch box of
    ``via_tile`` when given. Raises ``nx.NetworkXNoPath`` when there is none."""
    free = nx.restricted_view(g, list(avoid), [])
    if via_tile is None:
        return nx.shortest_path(free, src, dst, weight=_hops)
    best = None
    for n, d in g.nodes(data=True):
        if d["tile"] != via_tile or d["kind"] != "sb_mux" or n in avoid:
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


def add_pipeline_registers(g: nx.DiGraph, path: list[str], count: int) -> list[str]:
    """The same route with the pipeline register of its first ``count`` switch-box outputs
    enabled (``mux -> out`` replaced by ``mux -> reg -> out``)."""
    out, added = [], 0
    for u, v in zip(path, path[1:]):
        out.append(u)
        if added < count and g.nodes[u]["kind"] == "sb_mux" and g.nodes[v]["kind"] == "sb_out":
            reg = u.replace(".mux.", ".reg.")
            assert g.has_edge(u, reg) and g.has_edge(reg, v)
            out.append(reg)
            added += 1
    out.append(path[-1])
    if added != count:
        raise ValueError(f"route has only {added} switch-box outputs")
    return out


__all__ = ["route", "add_pipeline_registers", "port_node", "cb_node"]
