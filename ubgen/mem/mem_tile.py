"""MEM tile core (docs/design.md §5.1/§5.3, thesis §6.1.3 Fig. 6.4, paper Fig. 11): the
:class:`~ubgen.pub.pub.PhysicalUnifiedBuffer` behind the tile core contract.

Routed ports (``PORTS``; ``p`` < input ports, ``q`` < output ports of ``arch.pub``):
``in_data_in<p>`` (16) -> PUB ``data_in[p]``; ``in_chain_in<q>`` (16) / ``in_chain_valid_in<q>``
(1) -> PUB ``chain_in_data[q]`` / ``chain_in_valid[q]`` (the chaining inputs of paper Fig. 10,
routed from the previous tile of a chain); ``out_data_out<q>`` (16) / ``out_valid_out<q>`` (1)
<- PUB ``data_out[q]`` / ``valid_out[q]``. Not routed: ``error`` (the PUB's sticky SRAM
conflict flag, ORed into the array's ``error``), ``run``, ``stall`` and ``cfg``.

Register-file mode (docs/mem_rf.md): :class:`~ubgen.mem.register_file.MemRegisterFile` sits
beside the PUB on the same routed ports. With its ``rf_en`` = 1 the PUB's streams stop and the
PUB lends the controllers :func:`~ubgen.mem.spec.rf_ports` names (``agg2sram_<p>`` drives
write port p, ``sram2tb_<q>`` read port q, the word address the low bits of their ``sram``
generator); ``out_data_out<q>`` / ``out_valid_out<q>`` are the register file's and
``in_data_in<p>`` feed its write ports (the chain ports are unused). With ``rf_en`` = 0 (the
reset value) they are the PUB's, exactly as without the register file. ``error`` is the PUB's
flag ORed with the register file's.

The core's register map (:func:`ubgen.mem.spec.mem_regmap`) is the PUB's
(:func:`ubgen.pub.spec.pub_regmap`, its ``sram`` window included) followed by the register
file's at :func:`~ubgen.mem.spec.rf_base`; the core decodes that range and passes every other
address to the PUB. ``cfg.rdata`` is combinational. Timing is the PUB's: every controller
counts the tile's own unstalled cycles (the PUB's ``cycle_count``; ``run``/``stall`` are the
array's broadcast, so all MEM and IO tiles stay in lockstep).
"""
from __future__ import annotations

from amaranth.hdl import Module, Mux
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..arch import Arch, MemParams, PUBParams
from ..config import config_bus_signature
from ..pub.control import CycleCounter
from ..pub.pub import PhysicalUnifiedBuffer
from .register_file import MemRegisterFile
from .spec import RF_CONTEXT_INPUT, mem_ports, mem_regmap, rf_base, rf_ports


class MemCore(wiring.Component):
    """The MEM tile core. ``MemCore(arch)`` (or a :class:`PUBParams` and a :class:`MemParams`)."""

    PORTS = mem_ports(PUBParams())

    def __init__(self, arch: Arch | PUBParams, mem: MemParams | None = None):
        params = arch.pub if isinstance(arch, Arch) else arch
        self.params = params
        self.mem = mem or (arch.mem if isinstance(arch, Arch) else MemParams())
        self.PORTS = mem_ports(params)
        self.regmap = mem_regmap(params, self.mem)
        members = {"cfg": In(config_bus_signature(self.regmap.addr_width)), "run": In(1),
                   "stall": In(1), "error": Out(1)}
        for name, (direction, width) in self.PORTS.items():
            members[f"{direction}_{name}"] = (In if direction == "in" else Out)(width)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        ports = rf_ports(self.params, self.mem)
        borrowed = [port for port in ports.values() if port.context == 0]
        pub = m.submodules.pub = PhysicalUnifiedBuffer(
            self.params, lend=tuple(port.layout.name for port in borrowed))
        rf = m.submodules.rf = MemRegisterFile(self.params, self.mem)
        prm = self.params
        m.d.comb += pub.lend_en.eq(rf.enabled)
        if rf.contexts:       # the register file's own controllers count the PUB's cycles
            # and see ``run`` only in register-file mode, the only one they fire in
            # (docs/energy.md "An unused tile")
            timing = m.submodules.rf_timing = CycleCounter(0)
            m.d.comb += [timing.run.eq(self.run), timing.stall.eq(self.stall),
                         timing.enable.eq(rf.enabled), rf.tick.eq(timing.tick),
                         rf.restart.eq(timing.restart), rf.cycle.eq(pub.cycle_count)]
            for p in range(prm.input_ports):
                m.d.comb += rf.data_in_c1[p].eq(getattr(self, f"in_{RF_CONTEXT_INPUT}{p}"))
        for port in borrowed:
            fire = getattr(pub, f"{port.layout.name}_fire")
            addr = getattr(pub, f"{port.layout.name}_{port.ag}")[:port.addr_width]
            en, a = (rf.re, rf.raddr) if port.is_read else (rf.we, rf.waddr)
            m.d.comb += [en[port.index].eq(fire), a[port.index].eq(addr)]

        # configuration decode: the register file's range, every other address to the PUB
        addr, base = self.cfg.addr, rf_base(self.params, self.mem)
        pub_aw = len(pub.cfg_addr)
        to_rf = (addr >= base) & (addr < base + len(rf.regmap.registers))
        to_pub = ~to_rf & (addr < (1 << pub_aw))
        m.d.comb += [
            pub.cfg_addr.eq(addr[:pub_aw]), pub.cfg_wdata.eq(self.cfg.wdata),
            pub.cfg_we.eq(self.cfg.we & to_pub),
            rf.cfg_addr.eq(addr - base), rf.cfg_wdata.eq(self.cfg.wdata),
            rf.cfg_we.eq(self.cfg.we & to_rf),
            self.cfg.rdata.eq(Mux(to_rf, rf.cfg_rdata, Mux(to_pub, pub.cfg_rdata, 0))),
            pub.run.eq(self.run), pub.stall.eq(self.stall),
            self.error.eq(pub.error | rf.error),
        ]
        for p in range(prm.input_ports):
            data_in = getattr(self, f"in_data_in{p}")
            m.d.comb += [pub.data_in[p].eq(data_in), rf.data_in[p].eq(data_in)]
        for q in range(prm.output_ports):
            m.d.comb += [
                pub.chain_in_data[q].eq(getattr(self, f"in_chain_in{q}")),
                pub.chain_in_valid[q].eq(getattr(self, f"in_chain_valid_in{q}")),
                getattr(self, f"out_data_out{q}").eq(
                    Mux(rf.enabled, rf.data_out[q], pub.data_out[q])),
                getattr(self, f"out_valid_out{q}").eq(
                    Mux(rf.enabled, rf.valid_out[q], pub.valid_out[q])),
            ]
        return m
