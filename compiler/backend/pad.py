"""Register padding: long edge latencies become chains of register PEs (docs/pnr.md
"Exact latencies"; paper §V "Finishing Steps": the delays of shift registers are realised by
the interconnect's pipeline registers, Fig. 11).

A route can carry at most one pipeline register per switch box it crosses, so an edge of the
netlist whose latency is larger than ``max_route_latency`` would need a long detour. This pass
rewrites every net whose largest latency exceeds ``max_route_latency`` into a *register chain*:
PEs configured as ``PASS`` with their output register on (``out_reg = 1``: one cycle,
docs/backend.md "Timing"), stage ``k`` showing the source's value ``k * step`` cycles late,
``step = max_route_latency + 1`` (an edge of latency ``max_route_latency`` into the stage, plus
the stage's own register). Each sink of latency ``L`` is fed by stage ``L // step`` with the
remaining ``L % step`` cycles on its own edge, so every edge of the result has a latency of at
most ``max_route_latency`` and every sink sees exactly the latency it had.

A 16-bit net passes through ``data0 -> res``; a 1-bit net through ``bit0 -> res_p`` (``PASS``
shows ``bit0`` on ``res_p``, ``ubgen.pe.ops``). The pass is a pure function: it returns a new
:class:`~.netlist.Netlist`; the register PEs carry ``register = True`` and ``pad_of = (node,
port)`` and a ``label`` saying so.
"""
from __future__ import annotations

import networkx as nx

from ubgen.arch import WORD_WIDTH
from ubgen.pe.ops import PEOp

from .netlist import Netlist

DEFAULT_MAX_ROUTE_LATENCY = 5


def register_pe_config() -> dict[str, int]:
    """The register values of a register PE (``PASS``, output register on)."""
    return {"op": int(PEOp.PASS), "out_reg": 1}


def copy_netlist(net: Netlist) -> Netlist:
    out = Netlist(net.app, net.arch, cycles_predicted=net.cycles_predicted)
    out.graph = nx.MultiDiGraph()
    for n, d in net.graph.nodes(data=True):
        out.graph.add_node(n, **{k: (dict(v) if isinstance(v, dict) else v)
                                 for k, v in d.items()})
    for u, v, k, d in net.graph.edges(keys=True, data=True):
        out.graph.add_edge(u, v, key=k, **d)
    return out


def pad_latencies(net: Netlist, max_route_latency: int = DEFAULT_MAX_ROUTE_LATENCY) -> Netlist:
    """``net`` with every edge latency above ``max_route_latency`` realised by register PEs
    (see the module docstring). The input netlist is not changed."""
    if max_route_latency < 1:
        raise ValueError(f"max_route_latency must be at least 1, got {max_route_latency}")
    out = copy_netlist(net)
    step = max_route_latency + 1
    for (u, port), sinks in net.nets().items():
        if max(s[2] for s in sinks) <= max_route_latency:
            continue
        width = sinks[0][3]
        inp, outp = ("data0", "res") if width == WORD_WIDTH else ("bit0", "res_p")
        stages = max(s[2] for s in sinks) // step
        names = []
        for k in range(1, stages + 1):
            name = f"reg.{u}.{port}.{k}"
            out.add_node(name, "pe", register_pe_config(),
                         label=f"register {k * step} of {u}.{port}", op=None, kernel=None,
                         knode=None, register=True, pad_of=(u, port))
            prev, prev_port = (u, port) if k == 1 else (names[-1], outp)
            out.add_edge(prev, prev_port, name, inp, max_route_latency, width)
            names.append(name)
        for v, dst, lat, w in sinks:
            k = lat // step
            if k == 0:
                continue
            out.graph.remove_edge(u, v, key=dst)
            out.add_edge(names[k - 1], outp, v, dst, lat - k * step, w)
    return out
