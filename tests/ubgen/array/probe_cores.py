"""Probe cores for interconnect tests: the port sets of the PE, MEM and IO cores (the core
contract) with no logic, so a testbench can drive every ``out_<port>`` and observe every
``in_<port>`` of every tile of a real array. One config register (``probe``) each, so the
tile's register map has a core part followed by the interconnect part as with real cores."""
from __future__ import annotations

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ubgen.config import ConfigRegisters, config_bus_signature
from ubgen.regmap import RegisterMap

PE_PORTS = {"data0": ("in", 16), "data1": ("in", 16), "data2": ("in", 16), "bit0": ("in", 1),
            "bit1": ("in", 1), "bit2": ("in", 1), "res": ("out", 16), "res_p": ("out", 1)}
MEM_PORTS = {"data_in0": ("in", 16), "data_in1": ("in", 16), "chain_in0": ("in", 16),
             "chain_in1": ("in", 16), "chain_valid_in0": ("in", 1), "chain_valid_in1": ("in", 1),
             "data_out0": ("out", 16), "data_out1": ("out", 16), "valid_out0": ("out", 1),
             "valid_out1": ("out", 1)}
IO_PORTS = {"f2io_16": ("in", 16), "f2io_1": ("in", 1), "io2f_16": ("out", 16),
            "io2f_1": ("out", 1)}


def probe_core(kind: str, ports: dict, extra: dict | None = None):
    class Probe(wiring.Component):
        PORTS = ports

        def __init__(self, arch=None):
            self.regmap = RegisterMap(f"{kind}_probe")
            self.regmap.add("probe", 16, 0, "scratch register")
            members = {"cfg": In(config_bus_signature(self.regmap.addr_width)),
                       "run": In(1), "stall": In(1)}
            for p, (d, w) in ports.items():
                members[f"{d}_{p}"] = In(w) if d == "in" else Out(w)
            members.update(extra or {})
            super().__init__(members)

        def elaborate(self, platform):
            m = Module()
            regs = m.submodules.regs = ConfigRegisters(self.regmap)
            wiring.connect(m, wiring.flipped(self.cfg), regs.bus)
            return m

    Probe.__name__ = f"{kind.upper()}Probe"
    return Probe


PROBE_CORES = {"pe": probe_core("pe", PE_PORTS), "mem": probe_core("mem", MEM_PORTS, {"error": Out(1)}),
               "io": probe_core("io", IO_PORTS)}


def glb_signature(arch) -> wiring.Signature:
    """The IO core's GLB port of the core contract (read latency 1)."""
    aw = max(1, (arch.glb.bank_words - 1).bit_length())
    return wiring.Signature({"addr": Out(aw), "wdata": Out(16), "we": Out(1), "re": Out(1),
                             "rdata": In(16)})


class StreamIO(wiring.Component):
    """Placeholder IO core for array RTL tests (until the real IO core is used there): the GLB
    port's ``rdata`` drives ``out_io2f_16`` and ``in_f2io_16``/``in_f2io_1`` drive
    ``wdata``/``we``, all combinational, so a testbench streams through the array's
    ``glb_<col>`` ports with zero IO latency."""

    PORTS = IO_PORTS

    def __init__(self, arch):
        self.regmap = RegisterMap("stream_io")
        self.regmap.add("probe", 16, 0, "scratch register")
        members = {"cfg": In(config_bus_signature(self.regmap.addr_width)), "run": In(1),
                   "stall": In(1), "glb": Out(glb_signature(arch))}
        for p, (d, w) in IO_PORTS.items():
            members[f"{d}_{p}"] = In(w) if d == "in" else Out(w)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        regs = m.submodules.regs = ConfigRegisters(self.regmap)
        wiring.connect(m, wiring.flipped(self.cfg), regs.bus)
        m.d.comb += [self.out_io2f_16.eq(self.glb.rdata), self.out_io2f_1.eq(0),
                     self.glb.wdata.eq(self.in_f2io_16), self.glb.we.eq(self.in_f2io_1)]
        return m
