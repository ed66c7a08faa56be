"""The global buffer (thesis §7.1, Fig. 7.1): banks of SRAM between the host and the IO tiles.

``GlobalBuffer(glb, io_columns)``: ``glb.banks`` banks of ``glb.bank_words`` 16-bit words, each
one :class:`amaranth.lib.memory.Memory` with one read port (synchronous, read latency 1) and one
write port. IO tile column ``c`` uses bank ``c % banks`` through the member ``io_<c>``
(signature :func:`glb_port_signature`, seen from the IO tile); the host (the top's AXI side)
uses ``host``, addressed bank-major (word ``bank * bank_words + offset``).

Priority rules: while ``run`` is 1 each bank belongs to its IO tiles and host accesses are
ignored (the top answers them with SLVERR); while ``run`` is 0 the host owns every bank and IO
requests are ignored. The IO tiles sharing a bank share it by schedule (as the PUB's SRAM is
shared): two of them accessing the bank in the same cycle is a compiler bug; the lowest column
wins and the sticky ``error`` flag rises (cleared while ``run`` is 0).

Read timing (both sides): ``re`` with ``addr`` in cycle *n* gives ``rdata`` in cycle *n + 1*;
``rdata`` then holds until the next read of that bank.
"""
from __future__ import annotations

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..arch import GLBParams
from .spec import GLB_READ_LATENCY, WORD_WIDTH, bank_addr_width, host_addr_width

__all__ = ["GlobalBuffer", "glb_port_signature", "GLB_READ_LATENCY", "WORD_WIDTH"]


def glb_port_signature(addr_width: int) -> wiring.Signature:
    """A GLB access port as seen from its user (IO tile or host): read latency 1."""
    return wiring.Signature({"addr": Out(addr_width), "wdata": Out(WORD_WIDTH), "we": Out(1),
                             "re": Out(1), "rdata": In(WORD_WIDTH)})


class GlobalBuffer(wiring.Component):
    def __init__(self, glb: GLBParams, io_columns):
        self.glb = glb
        self.io_columns = list(io_columns)
        aw = bank_addr_width(glb)
        members = {"run": In(1), "error": Out(1),
                   "host": In(glb_port_signature(host_addr_width(glb)))}
        for c in self.io_columns:
            members[f"io_{c}"] = In(glb_port_signature(aw))
        super().__init__(members)

    def io_port(self, col: int):
        return getattr(self, f"io_{col}")

    def elaborate(self, platform):
        m = Module()
        g, aw = self.glb, bank_addr_width(self.glb)
        host_bank = Signal(range(g.banks)) if g.banks > 1 else None
        host_off = self.host.addr[:aw]
        if host_bank is not None:
            m.d.comb += host_bank.eq(self.host.addr[aw:])
        host_rbank = Signal.like(host_bank) if host_bank is not None else None
        conflicts = []
        host_rdata = {}
        for b in range(g.banks):
            mem = m.submodules[f"bank{b}"] = Memory(shape=WORD_WIDTH, depth=g.bank_words,
                                                     init=[])
            rd, wr = mem.read_port(), mem.write_port()
            ports = [self.io_port(c) for c in self.io_columns if c % g.banks == b]
            m.d.comb += rd.en.eq(0)         # rdata holds between reads (en defaults to 1)
            with m.If(self.run):
                # IO side: the lowest column with a request drives the bank
                for i, p in enumerate(reversed(ports)):
                    with m.If(p.re | p.we):
                        m.d.comb += [rd.addr.eq(p.addr), rd.en.eq(p.re), wr.addr.eq(p.addr),
                                     wr.data.eq(p.wdata), wr.en.eq(p.we)]
                if len(ports) > 1:
                    active = Cat(p.re | p.we for p in ports)
                    conflicts.append((active & (active - 1)).any())
            with m.Else():
                sel = host_bank == b if host_bank is not None else 1
                m.d.comb += [rd.addr.eq(host_off), rd.en.eq(self.host.re & sel),
                             wr.addr.eq(host_off), wr.data.eq(self.host.wdata),
                             wr.en.eq(self.host.we & sel)]
            for p in ports:
                m.d.comb += p.rdata.eq(rd.data)
            host_rdata[b] = rd.data
        # host read data: the bank read in the previous cycle
        if host_rbank is not None:
            with m.If(self.host.re):
                m.d.sync += host_rbank.eq(host_bank)
            with m.Switch(host_rbank):
                for b, d in host_rdata.items():
                    with m.Case(b):
                        m.d.comb += self.host.rdata.eq(d)
        else:
            m.d.comb += self.host.rdata.eq(host_rdata[0])
        with m.If(~self.run):
            m.d.sync += self.error.eq(0)
        if conflicts:
            with m.Elif(Cat(*conflicts).any()):
                m.d.sync += self.error.eq(1)
        return m
