"""The netlist IR: what an application needs of the array (thesis §6.3 "an application graph
which is then mapped onto the CGRA"; paper §V "Finishing Steps").

A :class:`Netlist` is a networkx ``MultiDiGraph`` of *nodes* that each occupy one tile of the
array and of port-level *edges* between them, plus the global-buffer layout of every IO stream.

Nodes (string ids; attributes):

* ``kind``: ``"pe"``, ``"mem"`` or ``"io"``: the tile kind it needs;
* ``config``: ``{register name: value}``: the values of the tile *core's* registers (the names of
  the core's register map, ``ubgen.array`` ``TileSpec.core_regmap``); registers not named keep
  their reset value;
* ``window``: ``{offset: word}``: words written through the core's storage window (a MEM tile
  in ROM mode: the lookup table), empty otherwise;
* ``label``: a short human-readable description (``"blur: add"``);
* ``op`` / ``buffer``: the Program op or the buffer the node implements (``None`` when not
  applicable); ``kernel`` and ``knode``: for kernel PEs, the kernel's name and the index of the
  node in the kernel's DAG, so that the unrolled lanes of one kernel (same ``kernel``, distinct
  ``op``) are recognisable as copies of one template (HiMap's replicated template, for
  placement);
* ``chain``: for a chained MEM tile, ``(chain name, index)``: the tiles of one chain are
  consecutive (index 0 first) and should be placed next to each other;
* IO nodes: ``stream`` (``"glb2f"``: GLB to fabric, or ``"f2glb"``) and ``glb``: a
  :class:`GLBLayout` as a dict (:meth:`GLBLayout.to_dict`).

Edges ``u -> v`` (the key is ``dst_port``, unique per destination node):

* ``src_port``: the core output of ``u`` (``res``, ``res_p``, ``data_out0``, ``valid_out0``,
  ``io2f_16``, ...); ``dst_port``: the core input of ``v`` (``data0``, ``bit0``,
  ``data_in0``, ``chain_in0``, ``f2io_16``, ...);
* ``width``: 16 or 1 (the network);
* ``latency``: the exact number of cycles between the value leaving ``src_port`` and reaching
  ``dst_port``: the pipeline registers (switch-box registers, or register PEs) the route must
  put on the path. Every edge may absorb routing registers: the latency is what the static
  schedule requires, and place and route must realise it exactly.

All edges leaving one ``(u, src_port)`` form one *net* (a fan-out tree when routed).

Timing of the cores (docs/top.md, docs/pub.md): a PE with ``out_reg = 1`` shows ``f(inputs of
cycle c - 1)`` at cycle ``c`` (``out_reg = 0``: ``f(inputs of cycle c)``); a MEM tile's
``data_out`` is valid in its ``tb2out`` fire cycle and ``data_in`` is sampled in the
``in2agg`` fire cycle (ROM mode: ``data_out0`` at ``c + 1`` is the word at address
``data_in0`` of cycle ``c``); an IO tile's ``glb2f`` fire at ``c`` shows the word at ``c + 1``
(held until the next fire) and ``f2glb`` samples ``f2io_16`` in its fire cycle.
"""
from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field

import networkx as nx

from ubgen.arch import WORD_WIDTH

KINDS = ("pe", "mem", "io")
WIDTHS = (WORD_WIDTH, 1)


class NetlistError(ValueError):
    """The application cannot be turned into a netlist (one line, names the cause)."""


@dataclass
class GLBLayout:
    """Where an IO stream's words live in its global-buffer bank.

    The stream accesses a (strided) box of its ``buffer``: in dimension ``d`` (first index
    innermost, like the buffer's shape) the indices ``lows[d] + steps[d] * j`` for ``0 <= j <
    extents[d]``. Its words are that box in row-major order, first dimension fastest, from
    ``base``: element ``i`` is at offset ``base + sum_d (i[d] - lows[d]) / steps[d] *
    prod_{e<d} extents[e]``. ``words`` is the box's size. The bank is chosen by placement (an
    IO tile in column ``c`` uses bank ``c % banks``)."""
    buffer: str
    lows: tuple[int, ...]
    steps: tuple[int, ...]
    extents: tuple[int, ...]
    base: int = 0

    @property
    def words(self) -> int:
        n = 1
        for e in self.extents:
            n *= e
        return n

    def contains(self, index) -> bool:
        return all(0 <= i - lo < st * e and (i - lo) % st == 0
                   for i, lo, st, e in zip(index, self.lows, self.steps, self.extents))

    def offset(self, index) -> int:
        off, scale = self.base, 1
        for i, lo, st, e in zip(index, self.lows, self.steps, self.extents):
            off += (i - lo) // st * scale
            scale *= e
        return off

    def elements(self):
        """Every element index of the box, in offset order."""
        ranges = [range(lo, lo + st * e, st) for lo, st, e in
                  zip(self.lows, self.steps, self.extents)]
        for idx in itertools.product(*reversed(ranges)):
            yield idx[::-1]

    def to_dict(self) -> dict:
        return {"buffer": self.buffer, "lows": list(self.lows), "steps": list(self.steps),
                "extents": list(self.extents), "base": self.base, "words": self.words}

    @staticmethod
    def from_dict(d: dict) -> "GLBLayout":
        return GLBLayout(d["buffer"], tuple(d["lows"]), tuple(d["steps"]), tuple(d["extents"]),
                         d.get("base", 0))


@dataclass
class Netlist:
    """An application's netlist (see the module docstring) and what it was made from."""
    app: str
    arch: str
    graph: nx.MultiDiGraph = field(default_factory=nx.MultiDiGraph)
    cycles_predicted: int = 0          # the schedule's completion (the last GLB write's cycle)

    kinds = KINDS                      # the node kinds this graph accepts (a class constant)

    # --- construction -----------------------------------------------------------------
    def add_node(self, node: str, kind: str, config: dict[str, int] | None = None, *,
                 label: str = "", window: dict[int, int] | None = None, **attrs) -> str:
        if kind not in self.kinds:
            raise ValueError(f"node {node}: unknown kind {kind!r}")
        if node in self.graph:
            raise ValueError(f"node {node} added twice")
        self.graph.add_node(node, kind=kind, config=dict(config or {}), label=label,
                            window=dict(window or {}), **attrs)
        return node

    def add_edge(self, u: str, src_port: str, v: str, dst_port: str, latency: int,
                 width: int = WORD_WIDTH) -> None:
        if width not in WIDTHS:
            raise ValueError(f"edge {u}.{src_port} -> {v}.{dst_port}: width {width}")
        if latency < 0:
            raise NetlistError(f"edge {u}.{src_port} -> {v}.{dst_port} needs a negative "
                               f"latency ({latency}): the value arrives too late")
        if self.graph.has_edge(u, v, key=dst_port) or any(
                k == dst_port for _, _, k in self.graph.in_edges(v, keys=True)):
            raise ValueError(f"input {v}.{dst_port} is driven twice")
        self.graph.add_edge(u, v, key=dst_port, src_port=src_port, dst_port=dst_port,
                            width=width, latency=int(latency))

    # --- queries -------------------------------------------------------------------------
    def nodes(self, kind: str | None = None) -> list[str]:
        return [n for n, d in self.graph.nodes(data=True) if kind is None or d["kind"] == kind]

    def count(self, kind: str) -> int:
        return len(self.nodes(kind))

    def nets(self) -> dict[tuple[str, str], list[tuple[str, str, int, int]]]:
        """``(u, src_port) -> [(v, dst_port, latency, width), ...]``, sinks sorted."""
        out: dict[tuple[str, str], list] = {}
        for u, v, d in self.graph.edges(data=True):
            out.setdefault((u, d["src_port"]), []).append(
                (v, d["dst_port"], d["latency"], d["width"]))
        return {k: sorted(s) for k, s in sorted(out.items())}

    def register_stages(self) -> int:
        """A lower bound on the pipeline registers routing needs: per net, its largest
        latency (a fan-out tree shares the registers of its trunk)."""
        return sum(max(s[2] for s in sinks) for sinks in self.nets().values())

    # --- serialisation ----------------------------------------------------------------
    def to_dict(self) -> dict:
        nodes = []
        for n, d in sorted(self.graph.nodes(data=True)):
            item = {"id": n, **{k: v for k, v in d.items() if k != "window"}}
            item["config"] = dict(sorted(d["config"].items()))
            if d["window"]:
                item["window"] = [[o, w] for o, w in sorted(d["window"].items())]
            if "chain" in d and d["chain"] is not None:
                item["chain"] = list(d["chain"])
            nodes.append(item)
        edges = [{"src": u, "src_port": d["src_port"], "dst": v, "dst_port": d["dst_port"],
                  "width": d["width"], "latency": d["latency"]}
                 for u, v, d in sorted(self.graph.edges(data=True),
                                       key=lambda e: (e[1], e[2]["dst_port"]))]
        return {"app": self.app, "arch": self.arch, "cycles_predicted": self.cycles_predicted,
                "nodes": nodes, "edges": edges}

    def to_json(self, **kw) -> str:
        return json.dumps(self.to_dict(), **kw)

    @staticmethod
    def from_dict(data: dict) -> "Netlist":
        net = Netlist(data["app"], data["arch"], cycles_predicted=data["cycles_predicted"])
        for item in data["nodes"]:
            attrs = {k: v for k, v in item.items() if k not in ("id", "kind", "config",
                                                                "label", "window")}
            if attrs.get("chain") is not None:
                attrs["chain"] = tuple(attrs["chain"])
            net.add_node(item["id"], item["kind"], item["config"], label=item.get("label", ""),
                         window={o: w for o, w in item.get("window", [])}, **attrs)
        for e in data["edges"]:
            net.add_edge(e["src"], e["src_port"], e["dst"], e["dst_port"], e["latency"],
                         e["width"])
        return net

    def __str__(self) -> str:
        lines = [f"netlist {self.app} for {self.arch}: {self.count('pe')} PEs, "
                 f"{self.count('mem')} MEMs, {self.count('io')} IOs, "
                 f"{self.register_stages()} register stages, cycles {self.cycles_predicted}"]
        for n, d in sorted(self.graph.nodes(data=True)):
            lines.append(f"  {d['kind']:3s} {n}: {d['label']}")
            for u, _v, e in sorted(self.graph.in_edges(n, data=True),
                                   key=lambda x: x[2]["dst_port"]):
                lines.append(f"        {e['dst_port']} <- {u}.{e['src_port']}"
                             + (f" (+{e['latency']})" if e["latency"] else ""))
        return "\n".join(lines)
