"""MEM tile core (DESIGN §5.1/§5.3, thesis §6.1.3 Fig. 6.4, paper Fig. 11): the
:class:`~ubgen.pub.pub.PhysicalUnifiedBuffer` behind the tile core contract.

Routed ports (``PORTS``; ``p`` < input ports, ``q`` < output ports of ``arch.pub``):
``in_data_in<p>`` (16) -> PUB ``data_in[p]``; ``in_chain_in<q>`` (16) / ``in_chain_valid_in<q>``
(1) -> PUB ``chain_in_data[q]`` / ``chain_in_valid[q]`` (the chaining inputs of paper Fig. 10,
routed from the previous tile of a chain); ``out_data_out<q>`` (16) / ``out_valid_out<q>`` (1)
<- PUB ``data_out[q]`` / ``valid_out[q]``. Not routed: ``error`` (the PUB's sticky SRAM
conflict flag, ORed into the array's ``error``), ``run``, ``stall`` and ``cfg``.

The core's register map is the PUB's (:func:`ubgen.pub.pub.pub_regmap`, its ``sram`` window
included); ``cfg.rdata`` is combinational. Timing is the PUB's: every controller counts the
tile's own unstalled cycles (``run``/``stall`` are the array's broadcast, so all MEM and IO
tiles stay in lockstep).
"""
from __future__ import annotations

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..arch import Arch, PUBParams
from ..config import config_bus_signature
from ..pub.pub import PhysicalUnifiedBuffer, pub_regmap


def mem_ports(params: PUBParams) -> dict[str, tuple[str, int]]:
    w = params.word_width
    ports = {f"data_in{p}": ("in", w) for p in range(params.input_ports)}
    ports.update({f"chain_in{q}": ("in", w) for q in range(params.output_ports)})
    ports.update({f"chain_valid_in{q}": ("in", 1) for q in range(params.output_ports)})
    ports.update({f"data_out{q}": ("out", w) for q in range(params.output_ports)})
    ports.update({f"valid_out{q}": ("out", 1) for q in range(params.output_ports)})
    return ports


class MemCore(wiring.Component):
    """The MEM tile core. ``MemCore(arch)`` (or a :class:`PUBParams`)."""

    PORTS = mem_ports(PUBParams())

    def __init__(self, arch: Arch | PUBParams):
        params = arch.pub if isinstance(arch, Arch) else arch
        self.params = params
        self.PORTS = mem_ports(params)
        self.regmap = pub_regmap(params)
        members = {"cfg": In(config_bus_signature(self.regmap.addr_width)), "run": In(1),
                   "stall": In(1), "error": Out(1)}
        for name, (direction, width) in self.PORTS.items():
            members[f"{direction}_{name}"] = (In if direction == "in" else Out)(width)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        pub = m.submodules.pub = PhysicalUnifiedBuffer(self.params)
        prm = self.params
        m.d.comb += [
            pub.cfg_addr.eq(self.cfg.addr), pub.cfg_wdata.eq(self.cfg.wdata),
            pub.cfg_we.eq(self.cfg.we), self.cfg.rdata.eq(pub.cfg_rdata),
            pub.run.eq(self.run), pub.stall.eq(self.stall), self.error.eq(pub.error),
        ]
        for p in range(prm.input_ports):
            m.d.comb += pub.data_in[p].eq(getattr(self, f"in_data_in{p}"))
        for q in range(prm.output_ports):
            m.d.comb += [
                pub.chain_in_data[q].eq(getattr(self, f"in_chain_in{q}")),
                pub.chain_in_valid[q].eq(getattr(self, f"in_chain_valid_in{q}")),
                getattr(self, f"out_data_out{q}").eq(pub.data_out[q]),
                getattr(self, f"out_valid_out{q}").eq(pub.valid_out[q]),
            ]
        return m
