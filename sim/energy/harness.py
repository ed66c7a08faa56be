"""The blocks of thesis Table 7.2 that have no Verilog of their own, put together from the
generated cores for the gate-level energy runs (:mod:`sim.energy.blocks`, docs/energy.md):

* :class:`DPPELineBuffer` -- DP-SRAM + PEs: per memory block, the plain dual-port SRAM core of
  the ``dp-pe`` MEM tile (:class:`ubgen.mem.dp_tile.DPRAMCore`) and the PE cores
  (:class:`ubgen.pe.pe.PE`, with the STEP op) of its write and read controllers as
  :func:`compiler.backend.pe_controllers.synthesize` builds them, every netlist edge of the
  controllers a plain wire (the PEs' interconnect -- connection and switch boxes, routing hops
  -- is not part of the block, as in the area row of Table 7.2). The PEs are configured over
  one configuration bus (``cfg_addr``: the PE's index above its 16-bit tile-local offset), as
  the bitstream configures them on the array; ``data_in`` feeds every SRAM's write port (the
  line buffer's input stream), ``data_out<i>``/``valid_out<i>`` are memory ``i``'s read port;
* :class:`WindowedBuffet` -- the buffet (:class:`ubgen.buffet.Buffet`) with a ``run`` input that
  drives nothing: the testbench raises it while a job runs, and the energy window counts those
  cycles (the buffet has no ``run`` of its own).
"""
from __future__ import annotations

from amaranth.hdl import ClockSignal, Instance, Module, ResetSignal, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ubgen.array.tilespec import TILE_ADDR_WIDTH
from ubgen.buffet import Buffet
from ubgen.buffet.spec import BuffetParams, buffet_ports
from ubgen.config import CONFIG_DATA_WIDTH
from ubgen.mem.dp_tile import DPRAMCore
from ubgen.pe.pe import PE
from ubgen.pe.spec import PE_PORTS

from .workload import PE_MODULE, pe_slots

__all__ = ["DPPELineBuffer", "WindowedBuffet", "pe_verilog"]

WORD = 16


def pe_verilog() -> str:
    """The Verilog of the PE core (with the STEP op, the configurable output register), top
    module :data:`PE_MODULE`: :class:`DPPELineBuffer` instantiates it once per controller PE
    (a netlist of PEs wired combinationally is a cycle to Amaranth, though not through a PE
    configured with its output register, as every controller PE is)."""
    from amaranth.back import verilog
    return verilog.convert(PE(), name=PE_MODULE, emit_src=False)


class DPPELineBuffer(wiring.Component):
    """DP-SRAM + PEs (module docstring); ``controllers``: ``(wr, rd)`` per memory. Its
    Verilog needs :func:`pe_verilog` beside it."""

    def __init__(self, arch, controllers):
        self.arch, self.controllers = arch, list(controllers)
        self.slots = pe_slots(self.controllers)
        self.sel_bits = max(1, (len(self.slots) - 1).bit_length())
        members = {"cfg_addr": In(TILE_ADDR_WIDTH + self.sel_bits),
                   "cfg_wdata": In(CONFIG_DATA_WIDTH), "cfg_we": In(1),
                   "cfg_rdata": Out(CONFIG_DATA_WIDTH), "run": In(1), "stall": In(1),
                   "data_in": In(WORD)}
        for i in range(len(self.controllers)):
            members[f"data_out{i}"] = Out(WORD)
            members[f"valid_out{i}"] = Out(1)
        super().__init__(members)

    def _pes(self, m: Module) -> dict[str, dict[str, Signal]]:
        """One :data:`PE_MODULE` instance per controller PE on the configuration bus; its
        routed ports as signals (inputs 0 unless an edge drives them)."""
        pes = {}
        sel = self.cfg_addr[TILE_ADDR_WIDTH:]
        for k, (sub, node) in enumerate(self.slots):
            sig = {p: Signal(w, name=f"{sub}_{p}") for p, (_d, w) in PE_PORTS.items()}
            rdata = Signal(CONFIG_DATA_WIDTH, name=f"{sub}_rdata")
            m.submodules[sub] = Instance(
                PE_MODULE, i_clk=ClockSignal(), i_rst=ResetSignal(),
                i_cfg__addr=self.cfg_addr[:TILE_ADDR_WIDTH], i_cfg__wdata=self.cfg_wdata,
                i_cfg__we=self.cfg_we & (sel == k), o_cfg__rdata=rdata,
                i_run=self.run, i_stall=self.stall,
                **{("i_in_" if d == "in" else "o_out_") + p: sig[p]
                   for p, (d, _w) in PE_PORTS.items()})
            with m.If(sel == k):
                m.d.comb += self.cfg_rdata.eq(rdata)
            pes[node.name] = sig
        return pes

    def elaborate(self, platform):
        m = Module()
        pes = self._pes(m)
        for i, pair in enumerate(self.controllers):
            mem = m.submodules[f"mem{i}"] = DPRAMCore(self.arch)
            m.d.comb += [mem.run.eq(self.run), mem.stall.eq(self.stall), mem.cfg.we.eq(0),
                         mem.in_data_in0.eq(self.data_in),
                         getattr(self, f"data_out{i}").eq(mem.out_data_out0),
                         getattr(self, f"valid_out{i}").eq(mem.out_valid_out0)]
            for ctl, (en, addr) in zip(pair, (("wen", "waddr"), ("ren", "raddr"))):
                for e in ctl.edges:
                    m.d.comb += pes[e.dst][e.dst_port].eq(pes[e.src][e.src_port])
                m.d.comb += [getattr(mem, f"in_{en}").eq(pes[ctl.fire[0]][ctl.fire[1]]),
                             getattr(mem, f"in_{addr}").eq(pes[ctl.addr[0]][ctl.addr[1]])]
        return m


class WindowedBuffet(wiring.Component):
    """The buffet with a ``run`` input for the energy window (module docstring)."""

    def __init__(self, params: BuffetParams):
        self.params = params
        ports = {n: (In if d == "in" else Out)(w) for n, (d, w) in buffet_ports(params).items()}
        super().__init__({**ports, "run": In(1)})

    def elaborate(self, platform):
        m = Module()
        b = m.submodules.buffet = Buffet(self.params)
        for name, (d, _w) in buffet_ports(self.params).items():
            if d == "in":
                m.d.comb += getattr(b, name).eq(getattr(self, name))
            else:
                m.d.comb += getattr(self, name).eq(getattr(b, name))
        return m
