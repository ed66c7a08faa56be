"""Read-after-write dependences and the op dependency graph (thesis §4.2.3, eqs. 4.10–4.13,
Fig. 4.4).

Dependences are *value-based*: for every read instance, isl's dataflow analysis
(``compute_flow``) finds the last write of the same element that precedes it in program order
(the 2d+1 ``order`` maps of the PolyProgram). A buffer written repeatedly (a reduction, a buffer
reused by every tile) thus links each read to the one write whose value it sees.

A read that has no preceding writer although some op writes the element is an error: if the
writer itself depends (transitively) on the reader it is a *cyclic dependence* no schedule can
satisfy; otherwise the read happens before the value exists.
"""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl
import networkx as nx

from ..ir.poly import PolyAccess, PolyProgram
from .extract import ExtractError, _point_text


@dataclass
class Dependence:
    """``relation``: producer instance -> consumer instance, for load ``slot`` of ``consumer``."""
    producer: str
    consumer: str
    buffer: str
    slot: int
    relation: isl.Map

    def to_dict(self) -> dict:
        return {"producer": self.producer, "consumer": self.consumer, "buffer": self.buffer,
                "slot": self.slot, "relation": str(self.relation)}


def _maps(umap: isl.UnionMap) -> list[isl.Map]:
    out: list[isl.Map] = []
    umap.foreach_map(out.append)
    return out


def raw_dependences(poly: PolyProgram) -> list[Dependence]:
    """All RAW dependences (last writer before the read), one entry per (producer, load)."""
    order = poly.order()
    deps: list[Dependence] = []
    for op in poly.ops.values():
        for load in op.loads:
            if poly.buffers[load.buffer]["kind"] == "input":
                continue
            writes = poly.writes(load.buffer)
            flow = (isl.UnionAccessInfo.from_sink(isl.UnionMap.from_map(load.access))
                    .set_must_source(writes).set_schedule_map(order).compute_flow())
            for m in _maps(flow.get_must_dependence()):
                m = m.coalesce()
                if not m.is_empty():
                    deps.append(Dependence(m.get_tuple_name(isl.dim_type.in_), op.name,
                                           load.buffer, load.slot, m))
            orphan = flow.get_must_no_source()
            if not orphan.is_empty():
                _report_orphan(poly, load, orphan)
    return deps


def _report_orphan(poly: PolyProgram, load: PolyAccess, orphan: isl.UnionMap) -> None:
    elements = orphan.range()
    writers = [a for a in poly.accesses(load.buffer) if a.kind == "store"
               and not isl.UnionSet.from_set(a.access.range()).intersect(elements).is_empty()]
    example = _point_text(isl.Set.from_union_set(elements)) if elements.n_set() == 1 \
        else load.buffer
    if not writers:      # normally caught by extract(); kept for direct callers
        raise ExtractError(f"op {load.op}: load {load.slot} of {load.buffer} reads a value "
                           f"never written, e.g. {example}")
    graph = any_writer_graph(poly)
    for w in writers:
        if w.op == load.op or nx.has_path(graph, load.op, w.op):
            raise ExtractError(
                f"cyclic dependence: op {load.op} reads {example} of {load.buffer}, which op "
                f"{w.op} writes only after depending on op {load.op}")
    raise ExtractError(f"op {load.op}: reads {example} of {load.buffer} before op "
                       f"{writers[0].op} writes it (program order)")


def any_writer_graph(poly: PolyProgram) -> nx.DiGraph:
    """Edges writer -> reader whenever they touch a common element, ignoring program order."""
    g = nx.DiGraph()
    g.add_nodes_from(poly.ops)
    for op in poly.ops.values():
        for load in op.loads:
            for st in poly.accesses(load.buffer):
                if st.kind == "store" and st.op != op.name and not \
                        st.access.range().intersect(load.access.range()).is_empty():
                    g.add_edge(st.op, op.name)
    return g


def dependency_graph(poly: PolyProgram, deps: list[Dependence] | None = None) -> nx.DiGraph:
    """The op dependency graph (Fig. 4.4): nodes are ops (attrs ``latency``, ``unit``), an edge
    producer -> consumer carries its dependences in ``deps``; dependences of an op on itself
    (reductions) are kept in the node attribute ``self_deps``. (The thesis draws the arrows from
    consumer to producer; here they follow the data so topological order is execution order.)
    Every dependence points forward in program order, so a cycle here is a loop-carried
    recurrence, not an error (unsatisfiable reads are reported by :func:`raw_dependences`);
    an edge whose producer comes later in program order is marked ``carried=True``."""
    deps = raw_dependences(poly) if deps is None else deps
    g = nx.DiGraph()
    for op in poly.ops.values():
        g.add_node(op.name, latency=op.latency, unit=op.unit, self_deps=[])
    for d in deps:
        if d.producer == d.consumer:
            g.nodes[d.producer]["self_deps"].append(d)
        elif g.has_edge(d.producer, d.consumer):
            g.edges[d.producer, d.consumer]["deps"].append(d)
        else:
            g.add_edge(d.producer, d.consumer, deps=[d])
    rank = {name: k for k, name in enumerate(poly.ops)}
    for a, b, data in g.edges(data=True):
        data["carried"] = rank[a] > rank[b]
    return g


def topo_order(graph: nx.DiGraph, poly: PolyProgram) -> list[str]:
    """Topological order over the non-carried edges, ties broken by program order."""
    rank = {name: k for k, name in enumerate(poly.ops)}
    fwd = nx.DiGraph()
    fwd.add_nodes_from(graph)
    fwd.add_edges_from((a, b) for a, b, d in graph.edges(data=True) if not d["carried"])
    return list(nx.lexicographical_topological_sort(fwd, key=rank.__getitem__))
