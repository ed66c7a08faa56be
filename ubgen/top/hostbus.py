"""The top's internal host bus (docs/top.md "Inside the top"): one request per cycle from the
top's two host ports (the AXI4-Lite slave, :mod:`.axil`, and the AXI4 burst slave,
:mod:`.axi4`) to the address decoder of ``cgra_top``.

Signals (:func:`host_bus_signature`, as driven by an initiator): ``addr`` (32-bit byte
address), ``wdata`` (64 bits), ``wstrb`` (one strobe per byte), ``we``, ``re``; back:
``gnt``, ``werr``, ``rvalid``, ``rdata``, ``rerr``. Contract:

* a request (``we`` or ``re``, never both) is taken in a cycle with ``gnt`` = 1 and must be held
  until then;
* a taken write completes in its cycle: ``werr`` (in that cycle) says it was rejected, and a
  rejected write changes nothing;
* a taken read is answered exactly one cycle later: ``rvalid`` = 1 with ``rdata`` and ``rerr``;
  so reads can be issued back to back, one per cycle;
* the 32-bit registers (control, GLB words, tile registers) are addressed by ``addr & ~3`` and
  sit in half ``addr[2]`` of the data: a write needs that half's four strobes set (else
  ``werr``), a read returns the register in both halves; the GLB's row window takes the whole
  64-bit row under the byte strobes.

:class:`HostArbiter` merges the two ports: the AXI4-Lite slave's strobes (at most one every
few cycles, :class:`~.axil.AXILiteSlave`) always win; the burst slave is granted in every
cycle without one and holds its request while not granted. Read answers go back to the port that
asked.
"""
from __future__ import annotations

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .axil import reg_bus_signature

__all__ = ["host_bus_signature", "HostArbiter", "HOST_DATA_WIDTH", "HOST_ADDR_WIDTH"]

HOST_DATA_WIDTH = 64
HOST_ADDR_WIDTH = 32
LITE_WIDTH = 32


def host_bus_signature(addr_width: int = HOST_ADDR_WIDTH,
                       data_width: int = HOST_DATA_WIDTH) -> wiring.Signature:
    """The host bus as driven by its initiator (module docstring)."""
    return wiring.Signature({"addr": Out(addr_width), "wdata": Out(data_width),
                             "wstrb": Out(data_width // 8), "we": Out(1), "re": Out(1),
                             "gnt": In(1), "werr": In(1), "rvalid": In(1),
                             "rdata": In(data_width), "rerr": In(1)})


class HostArbiter(wiring.Component):
    """``lite`` (the AXI4-Lite slave's 32-bit register bus, ``ack``-based) and ``burst`` (the
    AXI4 slave's host bus) onto ``target`` (the decoder, which takes every request)."""

    def __init__(self):
        super().__init__({"lite": In(reg_bus_signature()), "burst": In(host_bus_signature()),
                          "target": Out(host_bus_signature())})

    def elaborate(self, platform):
        m = Module()
        lite, burst, t = self.lite, self.burst, self.target
        lite_req = lite.we | lite.re
        with m.If(lite_req):
            m.d.comb += [t.addr.eq(lite.addr), t.wdata.eq(Cat(lite.wdata, lite.wdata)),
                         t.wstrb.eq(Mux(lite.addr[2], 0xF0, 0x0F)), t.we.eq(lite.we),
                         t.re.eq(lite.re),
                         lite.ack.eq(lite.we & t.gnt), lite.err.eq(t.werr)]
        with m.Else():
            m.d.comb += [t.addr.eq(burst.addr), t.wdata.eq(burst.wdata),
                         t.wstrb.eq(burst.wstrb), t.we.eq(burst.we), t.re.eq(burst.re),
                         burst.gnt.eq(t.gnt)]
        m.d.comb += burst.werr.eq(t.werr)
        # whose read is answered this cycle, and which half of the data the lite port wants
        lite_read, half = Signal(), Signal()
        m.d.sync += [lite_read.eq(lite.re & t.gnt), half.eq(lite.addr[2])]
        with m.If(t.rvalid & lite_read):
            m.d.comb += [lite.ack.eq(1), lite.err.eq(t.rerr),
                         lite.rdata.eq(t.rdata.word_select(half, LITE_WIDTH))]
        m.d.comb += [burst.rvalid.eq(t.rvalid & ~lite_read), burst.rdata.eq(t.rdata),
                     burst.rerr.eq(t.rerr)]
        return m
