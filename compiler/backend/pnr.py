"""Place and route: a netlist onto an array, down to its bitstream (docs/pnr.md; paper §V
"Finishing Steps").

``place_and_route(netlist, arch, seed, effort=...)`` runs register padding (:mod:`.pad`:
latencies above what one route carries become register PEs), placement (:mod:`.place`:
simulated annealing on :class:`~.place.AnnealSchedule` with the given effort), routing with
exact latencies (:mod:`.route`), the bitstream assembler (:mod:`.bitstream`) and the independent
bitstream checker (:mod:`.check`). If routing fails at the default route latency, the netlist
is padded again with a smaller one (shorter detours, more register PEs); if the register PEs do
not fit the array, with a larger one (fewer register PEs, longer detours); the first that
places and routes wins (:data:`ROUTE_LATENCY_STEPS`).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from ubgen.arch import Arch, load_arch
from ubgen.areas import app_area
from ubgen.array.graph import full_regmap, port_node, routing_graph
from ubgen.array.layout import ArrayLayout

from .bitstream import Bitstream, RegisterIndex, assemble
from .check import CheckReport, check_bitstream
from .netlist import Netlist
from .pad import DEFAULT_MAX_ROUTE_LATENCY, pad_latencies
from .place import DEFAULT_SCHEDULE, AnnealSchedule, Placement, PlaceError, check_fit, place
from .route import RouteError, RouteGraph, Routing, route

# tried in order: shorter routes (more register PEs) when routing fails, longer routes (fewer
# register PEs) when the register PEs do not fit
ROUTE_LATENCY_STEPS = (DEFAULT_MAX_ROUTE_LATENCY, 3, 2, 8, 12, 20)


class PnRError(ValueError):
    """Place and route failed (one line naming the resource)."""


@dataclass
class ArrayData:
    """What place and route reads of an array: its layout, routing graph and register map
    (ubgen's exports, built once per arch)."""
    arch: Arch
    layout: ArrayLayout
    graph: object
    rgraph: RouteGraph
    index: RegisterIndex


_CACHE: dict[str, ArrayData] = {}


def array_data(arch: Arch | str) -> ArrayData:
    a = load_arch(arch) if isinstance(arch, (str, Path)) else arch
    key = repr(a)
    if key not in _CACHE:
        lay = ArrayLayout(a)
        g = routing_graph(lay)
        _CACHE[key] = ArrayData(a, lay, g, RouteGraph(g), RegisterIndex(full_regmap(lay)))
    return _CACHE[key]


@dataclass
class PnRResult:
    netlist: Netlist                 # the netlist as given
    padded: Netlist                  # with the register PEs that were placed
    arch: Arch
    placement: Placement
    routing: Routing
    bitstream: Bitstream
    check: CheckReport
    max_route_latency: int
    seed: int
    place_seconds: float
    route_seconds: float
    max_comb_hops: int = 0
    effort: float = DEFAULT_SCHEDULE.effort
    extra: dict = field(default_factory=dict)

    def io_banks(self) -> dict[str, dict]:
        """``{io node: {"bank", "column", "tile_id"}}``: the GLB bank of each IO stream."""
        banks = self.arch.glb.banks
        out = {}
        for n in sorted(self.netlist.nodes("io")):
            r, c = self.placement.sites[n]
            out[n] = {"bank": c % banks, "column": c, "tile_id": self.placement.tile_id(n)}
        return out

    def summary(self) -> dict:
        """The figures of the placed and routed design; ``tile_area_um2``: the area of the
        tiles its nodes occupy (``ubgen.areas``, measured by ``bench/tile_area.py``; ``None``
        with a ``tile_area_note`` for an arch whose tiles were never measured),
        ``bitstream_words``: its configuration words."""
        net, pad = self.netlist, self.padded
        area = app_area(self.arch, {k: pad.count(k) for k in ("pe", "mem", "io")})
        return {"app": net.app, "arch": self.arch.name, "seed": self.seed,
                "effort": self.effort,
                "pes": pad.count("pe"), "register_pes": pad.count("pe") - net.count("pe"),
                "mems": pad.count("mem"), "ios": pad.count("io"),
                "wirelength": self.routing.wire_nodes(),
                "placement_wirelength": self.placement.wirelength,
                "routing_iterations": self.routing.iterations,
                "pipeline_registers": self.routing.pipeline_registers(),
                "max_route_latency": self.max_route_latency,
                "max_comb_hops": self.max_comb_hops,
                "bitstream_words": len(self.bitstream),
                "bitstream_sha256": self.bitstream.sha256(),
                "check": "pass" if self.check.ok else "fail",
                "check_detail": self.check.summary(),
                "place_seconds": round(self.place_seconds, 3),
                "route_seconds": round(self.route_seconds, 3), **area}


def routing_nets(net: Netlist, placement: Placement):
    """The netlist's nets as routing-graph port nodes: ``[((u, port), source, [(sink,
    latency)])]``."""
    out = []
    for (u, port), sinks in net.nets().items():
        src = port_node(placement.tile_id(u), "out", port)
        out.append(((u, port), src, [(port_node(placement.tile_id(v), "in", dst), lat)
                                     for v, dst, lat, _w in sinks]))
    return out


def place_and_route(net: Netlist, arch: Arch | str, seed: int = 0,
                    max_route_latency: int | None = None,
                    effort: float = DEFAULT_SCHEDULE.effort) -> PnRResult:
    """Place and route ``net`` on ``arch`` (see the module docstring); ``effort`` scales the
    annealer's moves per temperature (:class:`~.place.AnnealSchedule`). Raises
    :class:`PnRError` when it does not fit or cannot be routed, ``ValueError`` for an effort
    that is not a positive number."""
    schedule = AnnealSchedule(effort=effort)
    data = array_data(arch)
    try:
        check_fit(net, data.layout)
    except PlaceError as e:
        raise PnRError(str(e)) from None
    steps = (max_route_latency,) if max_route_latency else ROUTE_LATENCY_STEPS
    t_place = t_route = 0.0
    error = None
    for m in steps:
        padded = pad_latencies(net, m)
        try:
            check_fit(padded, data.layout)
        except PlaceError as e:
            error = error or PnRError(f"with the register PEs of latencies above {m}: {e}")
            continue
        t0 = time.perf_counter()
        placement = place(padded, data.layout, seed, schedule)
        t1 = time.perf_counter()
        t_place += t1 - t0
        try:
            routing = route(routing_nets(padded, placement), data.rgraph)
        except RouteError as e:
            t_route += time.perf_counter() - t1
            error = e
            continue
        t_route += time.perf_counter() - t1
        bits = assemble(padded, placement, routing, data.graph, data.index, data.arch.name)
        check = check_bitstream(bits, net, {n: placement.tile_id(n) for n in net.graph.nodes},
                                data.graph, data.index)
        return PnRResult(net, padded, data.arch, placement, routing, bits, check, m, seed,
                         t_place, t_route, max_comb_hops=check.max_comb_hops, effort=effort)
    raise PnRError(str(error))
