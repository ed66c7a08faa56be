"""The FPGA design of an application as plain data (thesis §6.3, Fig. 6.6 and Table 6.1:
the "BRAM + LUTs" backend; docs/fpga.md "Applications on the FPGA").

An :class:`FPGADesign` is what the compiler hands to the hardware generator: JSON-able values
only, no Amaranth. ``ubgen.fpga.app`` builds the Amaranth design from its dictionary form
(:meth:`FPGADesign.to_dict`, format :data:`FORMAT`) and imports nothing of the compiler; the
compiler never builds hardware (docs/design.md §2).

Nodes (``kind``; ``params``; input and output ports):

* ``pe``: one operation of a kernel's datapath: ``op`` (a ``ubgen.pe.ops.PEOp`` name),
  ``out_reg`` (1: registered, latency 1), ``consts`` (``{port: word}`` for the operands that
  are constants); inputs ``data0..2``, ``bit0..2``; outputs ``res``, ``res_p``;
* ``rom``: a lookup table ``table``; input ``data_in0`` (the index), output ``data_out0`` one
  cycle later (0 for an index past the table);
* ``ram``: a memory block of ``words`` 16-bit words (``addr_width`` address bits), one
  controller per write stream (``writes``: ``data_in<p>`` stored at the controller's address
  in its fire cycle) and per read stream (``reads``: the controller fires one cycle before the
  read, the word is on ``data_out<q>`` in the read cycle, with ``valid_out<q>`` = 1);
  ``share_write`` / ``share_read``: the write (read) streams never fire in the same cycle, so
  one memory port serves them;
* ``regfile``: ``words`` registers, write controllers as ``ram``, read controllers that fire
  in the read cycle and see the writes of that cycle (``data_out<q>``, ``valid_out<q>``
  combinational);
* ``timer``: a schedule-only controller; output ``valid`` (1 in its fire cycles), the select
  bit of a bank select whose source has no valid bit of its own;
* ``in``: a host input stream: its controller fires at each read; the design asserts
  ``take`` and samples the host's word, which is on output ``data`` from the next cycle;
* ``out``: a host output stream: its controller fires at each landing cycle; the design
  registers input ``data`` onto its output port with a valid bit.

A controller is ``{"name", "max_dims", "extent_width", "cycle_width", "addr_widths",
"registers"}``: the register values ``ubgen.controller.encode_controller`` computed for a
``ControllerLayout`` of exactly those widths (docs/design.md §4). All controllers compare
against one unstalled-cycle counter of ``cycle_width`` bits.

Edges carry a value from ``src.src_port`` to ``dst.dst_port`` ``latency`` cycles later
(registers), ``width`` 16 or 1, exactly as the CGRA netlist's edges (compiler.backend.netlist).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

FORMAT = "ubgen-fpga-app/1"
KINDS = ("pe", "rom", "ram", "regfile", "timer", "in", "out")


class FPGADesignError(ValueError):
    """The application cannot be built as an FPGA design (one line, names the cause)."""


@dataclass
class FNode:
    """One node: its id, kind, parameters (module docstring) and a label."""
    id: str
    kind: str
    params: dict
    label: str = ""

    def to_dict(self) -> dict:
        return {"id": self.id, "kind": self.kind, "label": self.label, "params": self.params}


@dataclass
class FEdge:
    src: str
    src_port: str
    dst: str
    dst_port: str
    width: int
    latency: int

    def to_dict(self) -> dict:
        return {"src": self.src, "src_port": self.src_port, "dst": self.dst,
                "dst_port": self.dst_port, "width": self.width, "latency": self.latency}


@dataclass
class FPGADesign:
    """An application's FPGA design (module docstring). ``inputs`` / ``outputs`` list the
    ``in`` / ``out`` nodes in port order (the design's ports ``in<k>_*`` / ``out<k>_*``);
    ``cycles_predicted`` is the schedule's completion, the cycle of the last output write."""
    app: str
    cycles_predicted: int
    cycle_width: int
    nodes: list[FNode] = field(default_factory=list)
    edges: list[FEdge] = field(default_factory=list)

    @property
    def inputs(self) -> list[FNode]:
        return [n for n in self.nodes if n.kind == "in"]

    @property
    def outputs(self) -> list[FNode]:
        return [n for n in self.nodes if n.kind == "out"]

    def node(self, name: str) -> FNode:
        for n in self.nodes:
            if n.id == name:
                return n
        raise KeyError(name)

    def count(self, kind: str) -> int:
        return sum(n.kind == kind for n in self.nodes)

    def summary(self) -> dict:
        """Node counts by kind, the memory words and the register stages of the edges."""
        nets: dict[tuple[str, str], int] = {}
        for e in self.edges:
            key = (e.src, e.src_port)
            nets[key] = max(nets.get(key, 0), e.latency * e.width)
        return {**{k: self.count(k) for k in KINDS},
                "ram_words": sum(n.params["words"] for n in self.nodes if n.kind == "ram"),
                "regfile_words": sum(n.params["words"] for n in self.nodes
                                     if n.kind == "regfile"),
                "delay_bits": sum(nets.values()),
                "cycles_predicted": self.cycles_predicted}

    def to_dict(self) -> dict:
        return {"format": FORMAT, "app": self.app, "cycles_predicted": self.cycles_predicted,
                "cycle_width": self.cycle_width, "nodes": [n.to_dict() for n in self.nodes],
                "edges": [e.to_dict() for e in self.edges]}

    def to_json(self, **kw) -> str:
        return json.dumps(self.to_dict(), **kw)

    @staticmethod
    def from_dict(d: dict) -> "FPGADesign":
        if d.get("format") != FORMAT:
            raise FPGADesignError(f"not an FPGA design description (format "
                                  f"{d.get('format')!r}, expected {FORMAT!r})")
        return FPGADesign(d["app"], d["cycles_predicted"], d["cycle_width"],
                          [FNode(n["id"], n["kind"], n["params"], n.get("label", ""))
                           for n in d["nodes"]],
                          [FEdge(**e) for e in d["edges"]])
