"""Routing-resource graph and full register map of the array (docs/design.md §5.3: place & route works
only on this graph; it is built from the same spec objects that build the RTL).

Nodes (string ids, attributes ``kind``, ``tile``, ``row``, ``col``, ``width`` and where it
applies ``side``, ``track``, ``port``):

* ``T<id>.out.<port>`` (``port_out``): a core output; ``T<id>.in.<port>`` (``port_in``): a core
  input;
* ``T<id>.sb<w>.in.<s>.<t>`` (``sb_in``): incoming track ``t`` on side ``s`` of the tile's
  ``w``-bit switch box;
* ``T<id>.sb<w>.mux.<s>.<t>`` (``sb_mux``), ``T<id>.sb<w>.reg.<s>.<t>`` (``pipe_reg``),
  ``T<id>.sb<w>.out.<s>.<t>`` (``sb_out``): the mux, pipeline register and outgoing track; a
  mux node's ``zero_sel`` is the select value of its constant 0 (the register's reset value:
  an output no route selects drives 0);
* ``T<id>.cb.<port>`` (``cb``): the connection-box mux of core input ``port``.

Edges carry ``reg`` = ``(tile_id, register name)`` and ``sel`` = the value of that register
that makes the connection (``None``/``None`` for fixed wires), ``latency`` (cycles) and
``width``. The pipeline register of an output is reached by ``mux -> reg`` (``pipe`` = 1,
latency 1) then ``reg -> out``; the bypass is ``mux -> out`` (``pipe`` = 0, latency 0).
Tracks at the array edges have no neighbour: their incoming tracks (tied to 0 in the RTL) and
outgoing tracks (driving nothing) are not in the graph.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import networkx as nx

from ..arch import Arch, load_arch
from ..interconnect.spec import OPPOSITE, SIDES
from .layout import ArrayLayout
from .tilespec import TILE_ADDR_WIDTH


def sb_node(tile_id: int, width: int, what: str, side: str, track: int) -> str:
    return f"T{tile_id}.sb{width}.{what}.{side}.{track}"


def port_node(tile_id: int, direction: str, port: str) -> str:
    return f"T{tile_id}.{direction}.{port}"


def cb_node(tile_id: int, port: str) -> str:
    return f"T{tile_id}.cb.{port}"


def _layout(arch, cores) -> ArrayLayout:
    if isinstance(arch, ArrayLayout):
        return arch
    return ArrayLayout(load_arch(arch) if isinstance(arch, (str, Path)) else arch, cores)


def routing_graph(arch: Arch | str, cores=None) -> nx.DiGraph:
    """The routing-resource graph of the array described by ``arch``."""
    lay = _layout(arch, cores)
    g = nx.DiGraph(arch=lay.arch.name, rows=lay.rows, columns=lay.columns)

    def node(name, kind, pos, width, **kw):
        g.add_node(name, kind=kind, tile=pos.tile_id, row=pos.row, col=pos.col, width=width,
                   **kw)

    def edge(u, v, width, reg=None, sel=None, latency=0):
        g.add_edge(u, v, reg=reg, sel=sel, latency=latency, width=width)

    for pos in lay.positions():
        spec, tid = lay.specs[pos.kind], pos.tile_id
        for p, (d, w) in spec.ports.items():
            node(port_node(tid, d, p), f"port_{d}", pos, w, port=p)
        sides = [s for s in SIDES if lay.neighbour(pos.row, pos.col, s) is not None]
        for w, sb in spec.sbs.items():
            for s in sides:
                for t in range(spec.tracks):
                    node(sb_node(tid, w, "in", s, t), "sb_in", pos, w, side=s, track=t)
            for s in sides:
                for t in range(spec.tracks):
                    mux, out = sb_node(tid, w, "mux", s, t), sb_node(tid, w, "out", s, t)
                    node(mux, "sb_mux", pos, w, side=s, track=t, zero_sel=sb.zero_sel)
                    node(out, "sb_out", pos, w, side=s, track=t)
                    sel_reg = (tid, sb.sel_reg(s, t))
                    for i, src in enumerate(sb.mux_inputs(s, t)):
                        if src.kind == "core":
                            edge(port_node(tid, "out", src.port), mux, w, sel_reg, i)
                        elif src.side in sides:
                            edge(sb_node(tid, w, "in", src.side, src.track), mux, w, sel_reg, i)
                    if sb.pipeline:
                        reg = sb_node(tid, w, "reg", s, t)
                        node(reg, "pipe_reg", pos, w, side=s, track=t)
                        pipe = (tid, sb.pipe_reg(s, t))
                        edge(mux, out, w, pipe, 0, 0)
                        edge(mux, reg, w, pipe, 1, 1)
                        edge(reg, out, w)
                    else:
                        edge(mux, out, w)
        for p, cb in spec.cbs.items():
            w = cb.width
            node(cb_node(tid, p), "cb", pos, w, port=p)
            edge(cb_node(tid, p), port_node(tid, "in", p), w)
            for i, src in enumerate(cb.inputs()):
                if src is not None and src.side in sides:
                    edge(sb_node(tid, w, "in", src.side, src.track), cb_node(tid, p), w,
                         (tid, cb.sel_reg), i)
    # tile-to-tile wires
    for pos in lay.positions():
        spec = lay.specs[pos.kind]
        for s in SIDES:
            nb = lay.neighbour(pos.row, pos.col, s)
            if nb is None:
                continue
            nid = lay.tile_id(*nb)
            for w in spec.widths:
                for t in range(spec.tracks):
                    edge(sb_node(pos.tile_id, w, "out", s, t),
                         sb_node(nid, w, "in", OPPOSITE[s], t), w)
    return g


def graph_to_json(g: nx.DiGraph) -> dict:
    return nx.node_link_data(g, edges="edges")


def save_graph(arch: Arch | str, path: str | Path, cores=None) -> Path:
    """Write the routing graph as JSON (``networkx.node_link_data``, edges under ``edges``)."""
    data = graph_to_json(routing_graph(arch, cores))
    path = Path(path)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data))
    tmp.replace(path)
    return path


def global_address(tile_id: int, offset: int) -> int:
    """Word address on the array's config bus: ``{tile_id[15:0], reg_offset[15:0]}``."""
    return tile_id << TILE_ADDR_WIDTH | offset


def full_regmap(arch: Arch | str, cores=None) -> list[dict]:
    """Every register (and window) of every tile with its global config word address."""
    lay = _layout(arch, cores)
    out = []
    for pos in lay.positions():
        rm = lay.specs[pos.kind].regmap
        for r in rm.registers:
            out.append({"tile_id": pos.tile_id, "tile_kind": pos.kind, "name": r.name,
                        "width": r.width, "offset": r.offset,
                        "global_addr": global_address(pos.tile_id, r.offset), "reset": r.reset})
        for win in rm.windows:
            out.append({"tile_id": pos.tile_id, "tile_kind": pos.kind, "name": win.name,
                        "width": win.width, "offset": win.offset,
                        "global_addr": global_address(pos.tile_id, win.offset), "reset": None,
                        "window_size": win.size})
    return out


def edge_values(g: nx.DiGraph, edges) -> dict[tuple[int, str], int]:
    """The register values ``{(tile_id, name): value}`` that realize the routing-graph
    ``edges`` (the ``reg``/``sel`` of each configurable edge: switch-box and connection-box
    selects, pipeline enables); the one place that turns routes into register values, used by
    the gateware tests here and by the compiler's bitstream assembler. Raises ``ValueError``
    when two edges need different values of one register."""
    values: dict[tuple[int, str], int] = {}
    for u, v in edges:
        e = g.edges[u, v]
        if e["reg"] is None:
            continue
        key = (int(e["reg"][0]), e["reg"][1])
        if values.setdefault(key, int(e["sel"])) != int(e["sel"]):
            raise ValueError(f"edges need tile {key[0]} register {key[1]} = {values[key]} "
                             f"and {e['sel']}")
    return values


def route_writes(g: nx.DiGraph, path: list[str]) -> dict[tuple[int, str], int]:
    """Register values that realize a path of the graph (:func:`edge_values`)."""
    return edge_values(g, zip(path, path[1:]))


def register_writes(layout: ArrayLayout, values: dict[tuple[int, str], int],
                    address: Callable[[int, int], int] | None = None) -> list[tuple[int, int]]:
    """Bus writes ``(address, value)`` of named tile registers ``{(tile_id, name): value}``, each
    value checked against its register's width. ``address(tile_id, offset)`` places a tile
    register on the bus: by default the array's configuration bus (:func:`global_address`);
    ``ubgen.top.cgra_top.tile_address`` for the AXI4-Lite top."""
    address = address or global_address
    kinds = {p.tile_id: p.kind for p in layout.positions()}
    return [(address(tid, off), v) for (tid, name), value in values.items()
            for off, v in layout.specs[kinds[tid]].regmap.writes({name: value})]


def route_bus_writes(layout: ArrayLayout, g: nx.DiGraph, path: list[str],
                     address: Callable[[int, int], int] | None = None) -> list[tuple[int, int]]:
    """The bus writes that realize ``path``: :func:`route_writes`, then
    :func:`register_writes`."""
    return register_writes(layout, route_writes(g, path), address)


def path_latency(g: nx.DiGraph, path: list[str]) -> int:
    return sum(g.edges[u, v]["latency"] for u, v in zip(path, path[1:]))
