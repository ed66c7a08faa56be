"""An AXI4-Lite slave (AMBA AXI and ACE Protocol Specification, AXI4-Lite: channels AW, W, B,
AR, R; 32-bit data) bridging to a simple request/acknowledge register bus.

AXI side: members named ``<prefix>_awaddr`` ... ``<prefix>_rready`` (flat, so that the
generated Verilog ports match cocotbext-axi's ``AxiLiteBus.from_prefix(dut, prefix)``).

* AW and W are accepted independently, in any order (each handshake is captured; ``awready``
  / ``wready`` drop once their half of the write is held). When both halves are held the write
  is issued on the register bus; its response goes out on B.
* AR is accepted while no complete write is waiting; a read is issued and its data goes out on R.
* One transaction at a time (a full write waiting has priority over a read).
* Responses: OKAY, or SLVERR (``0b10``) when the register bus reports ``err`` (an illegal
  address) or the write strobe is not all ones (only whole-word writes are supported) or the
  address is not word-aligned. A rejected write changes nothing.

Register bus (member ``bus``): ``addr`` (32-bit byte address), ``wdata``, ``we`` and ``re``
are one-cycle strobes; the target answers with ``ack`` (in the strobe's cycle or any later
cycle), together with ``rdata`` and ``err``. Exactly one ``ack`` per strobe.
"""
from __future__ import annotations

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["AXILiteSlave", "axil_members", "reg_bus_signature", "OKAY", "SLVERR"]

OKAY, SLVERR = 0b00, 0b10


def axil_members(prefix: str, addr_width: int = 32, data_width: int = 32) -> dict:
    """Flat AXI4-Lite slave members ``<prefix>_<signal>`` (directions as seen by the slave)."""
    sigs = {
        "awaddr": In(addr_width), "awprot": In(3), "awvalid": In(1), "awready": Out(1),
        "wdata": In(data_width), "wstrb": In(data_width // 8), "wvalid": In(1), "wready": Out(1),
        "bresp": Out(2), "bvalid": Out(1), "bready": In(1),
        "araddr": In(addr_width), "arprot": In(3), "arvalid": In(1), "arready": Out(1),
        "rdata": Out(data_width), "rresp": Out(2), "rvalid": Out(1), "rready": In(1),
    }
    return {f"{prefix}_{k}": v for k, v in sigs.items()}


def reg_bus_signature(addr_width: int = 32, data_width: int = 32) -> wiring.Signature:
    """The register bus as driven by its initiator (the AXI slave)."""
    return wiring.Signature({"addr": Out(addr_width), "wdata": Out(data_width), "we": Out(1),
                             "re": Out(1), "ack": In(1), "rdata": In(data_width),
                             "err": In(1)})


class AXILiteSlave(wiring.Component):
    def __init__(self, prefix: str = "s_axil", addr_width: int = 32):
        self.prefix = prefix
        super().__init__({**axil_members(prefix, addr_width),
                          "bus": Out(reg_bus_signature(addr_width))})

    def _s(self, name):
        return getattr(self, f"{self.prefix}_{name}")

    def elaborate(self, platform):
        m = Module()
        s, bus = self._s, self.bus
        aw_addr, aw_held = Signal.like(s("awaddr")), Signal()
        w_data, w_strb, w_held = Signal.like(s("wdata")), Signal.like(s("wstrb")), Signal()
        ar_addr = Signal.like(s("araddr"))
        resp_err = Signal()
        rdata = Signal.like(s("rdata"))
        full_strb = (1 << len(w_strb)) - 1

        m.d.comb += [s("bresp").eq(resp_err * SLVERR), s("rresp").eq(resp_err * SLVERR),
                     s("rdata").eq(rdata)]

        with m.FSM():
            with m.State("IDLE"):
                m.d.comb += [s("awready").eq(~aw_held), s("wready").eq(~w_held)]
                with m.If(s("awvalid") & ~aw_held):
                    m.d.sync += [aw_addr.eq(s("awaddr")), aw_held.eq(1)]
                with m.If(s("wvalid") & ~w_held):
                    m.d.sync += [w_data.eq(s("wdata")), w_strb.eq(s("wstrb")), w_held.eq(1)]
                with m.If(aw_held & w_held):
                    m.d.sync += [aw_held.eq(0), w_held.eq(0)]
                    with m.If((w_strb == full_strb) & (aw_addr[:2] == 0)):
                        m.d.comb += [bus.we.eq(1), bus.addr.eq(aw_addr), bus.wdata.eq(w_data)]
                        with m.If(bus.ack):
                            m.d.sync += resp_err.eq(bus.err)
                            m.next = "B"
                        with m.Else():
                            m.next = "WRITE_WAIT"
                    with m.Else():
                        m.d.sync += resp_err.eq(1)
                        m.next = "B"
                with m.Else():
                    m.d.comb += s("arready").eq(1)
                    with m.If(s("arvalid")):
                        m.d.sync += ar_addr.eq(s("araddr"))
                        m.next = "READ"
            with m.State("WRITE_WAIT"):
                with m.If(bus.ack):
                    m.d.sync += resp_err.eq(bus.err)
                    m.next = "B"
            with m.State("B"):
                m.d.comb += s("bvalid").eq(1)
                with m.If(s("bready")):
                    m.next = "IDLE"
            with m.State("READ"):
                with m.If(ar_addr[:2] == 0):
                    m.d.comb += [bus.re.eq(1), bus.addr.eq(ar_addr)]
                    with m.If(bus.ack):
                        m.d.sync += [resp_err.eq(bus.err), rdata.eq(bus.rdata)]
                        m.next = "R"
                    with m.Else():
                        m.next = "READ_WAIT"
                with m.Else():
                    m.d.sync += [resp_err.eq(1), rdata.eq(0)]
                    m.next = "R"
            with m.State("READ_WAIT"):
                with m.If(bus.ack):
                    m.d.sync += [resp_err.eq(bus.err), rdata.eq(bus.rdata)]
                    m.next = "R"
            with m.State("R"):
                m.d.comb += s("rvalid").eq(1)
                with m.If(s("rready")):
                    m.next = "IDLE"
        return m
