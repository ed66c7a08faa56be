"""The dual-port MEM tile cores (thesis Table 6.1; ports and register maps in
:mod:`ubgen.mem.dp_spec`) and :func:`mem_core`, the core ``[mem] kind`` selects.

* :class:`DPCore` (``kind = "dp"``): :class:`~ubgen.dpbuf.DPBuffer` (thesis Fig. 6.1, a
  dual-port SRAM with a write and a read controller) behind the tile core contract;
* :class:`DPRAMCore` (``kind = "dp-pe"``): a plain dual-port SRAM whose ports are routed, for
  controllers built from PEs (thesis §6.3, Fig. 6.2a). A write with ``wen`` in an unstalled
  running cycle c stores ``data_in0`` at ``waddr`` (low ``sram_addr_width`` bits) at the end of
  c; a read with ``ren`` in c shows the word at ``raddr`` on ``data_out0`` with ``valid_out0``
  = 1 in the next unstalled cycle, and the word stays on ``data_out0`` until the next read.
  While ``stall`` is high or ``run`` is low nothing is written or read (``valid_out0`` is 0
  while ``run`` is low).
"""
from __future__ import annotations

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In

from ..arch import Arch
from ..config import config_bus_signature
from ..dpbuf import DPBuffer
from .dp_spec import dp_ports, dpram_ports, dpram_regmap, dpbuf_regmap

__all__ = ["DPCore", "DPRAMCore", "mem_core"]


class _DualPortCore(wiring.Component):
    """A dual-port MEM core: routed ``PORTS``, its ``regmap`` on the core's config port."""

    def __init__(self, arch: Arch, ports: dict, regmap):
        self.params, self.PORTS, self.regmap = arch.dpbuf, ports, regmap
        members = {"cfg": In(config_bus_signature(regmap.addr_width)), "run": In(1),
                   "stall": In(1)}
        for name, (direction, width) in ports.items():
            members[f"{direction}_{name}"] = (In if direction == "in" else wiring.Out)(width)
        super().__init__(members)


class DPCore(_DualPortCore):
    """The DP-SRAM + AG MEM tile core (``[mem] kind = "dp"``)."""

    def __init__(self, arch: Arch):
        super().__init__(arch, dp_ports(arch.dpbuf), dpbuf_regmap(arch.dpbuf))

    def elaborate(self, platform):
        m = Module()
        dp = m.submodules.dpbuf = DPBuffer(self.params)
        m.d.comb += [
            dp.cfg_addr.eq(self.cfg.addr), dp.cfg_wdata.eq(self.cfg.wdata),
            dp.cfg_we.eq(self.cfg.we), self.cfg.rdata.eq(dp.cfg_rdata),
            dp.run.eq(self.run), dp.stall.eq(self.stall),
            dp.data_in.eq(self.in_data_in0),
            dp.chain_in_data.eq(self.in_chain_in0), dp.chain_in_valid.eq(self.in_chain_valid_in0),
            self.out_data_out0.eq(dp.data_out), self.out_valid_out0.eq(dp.valid_out),
        ]
        return m


class DPRAMCore(_DualPortCore):
    """The plain dual-port SRAM MEM tile core (``[mem] kind = "dp-pe"``; module docstring)."""

    def __init__(self, arch: Arch):
        super().__init__(arch, dpram_ports(arch.dpbuf), dpram_regmap(arch.dpbuf))

    def elaborate(self, platform):
        m = Module()
        prm = self.params
        saw = prm.sram_addr_width
        tick = self.run & ~self.stall
        m.submodules.mem = mem = Memory(shape=prm.word_width, depth=prm.sram_depth, init=[])
        wr = mem.write_port()
        rd = mem.read_port(domain="sync")
        m.d.comb += [wr.addr.eq(self.in_waddr[:saw]), wr.data.eq(self.in_data_in0),
                     wr.en.eq(self.in_wen & tick),
                     rd.addr.eq(self.in_raddr[:saw]), rd.en.eq(self.in_ren & tick),
                     self.out_data_out0.eq(rd.data), self.cfg.rdata.eq(0)]
        valid = Signal()
        with m.If(~self.run):
            m.d.sync += valid.eq(0)
        with m.Elif(~self.stall):
            m.d.sync += valid.eq(self.in_ren)
        m.d.comb += self.out_valid_out0.eq(valid)
        return m


def mem_core(arch: Arch):
    """The MEM tile core of ``arch`` (``[mem] kind``): the PUB's
    (:class:`~ubgen.mem.mem_tile.MemCore`), :class:`DPCore` or :class:`DPRAMCore`."""
    kind = arch.mem.kind
    if kind == "dp":
        return DPCore(arch)
    if kind == "dp-pe":
        return DPRAMCore(arch)
    from .mem_tile import MemCore
    return MemCore(arch)
