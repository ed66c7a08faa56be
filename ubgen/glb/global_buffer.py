"""The global buffer (thesis §7.1, Fig. 7.1): banks of SRAM between the host and the IO tiles.

``GlobalBuffer(glb, io_columns)``: ``glb.banks`` banks of ``glb.bank_words`` 16-bit words. A
bank is one :class:`amaranth.lib.memory.Memory` of rows of :data:`~.spec.ROW_WORDS` words
(64 bits) with byte write enables, one read port (synchronous, read latency 1) and one write
port. IO tile column ``c`` uses bank ``c % banks`` through the member ``io_<c>`` (signature
:func:`glb_port_signature`, seen from the IO tile: one 16-bit word per access, the word's lane
of its row); the host (the top's bus) uses ``host`` (:func:`host_port_signature`): one row per
access, addressed bank-major (row ``(bank * bank_words + offset) // 4``), written under byte
enables, so the host moves four words per cycle.

Priority rules: while ``run`` is 1 each bank belongs to its IO tiles and host accesses are
ignored (the top answers them with SLVERR); while ``run`` is 0 the host owns every bank and IO
requests are ignored. With ``share`` = 1 (the top's ``SHARE`` register) a running bank lends
the host the port its IO tiles leave free in that cycle: a host write is taken when no IO tile
writes the bank in that cycle, a host read when none reads it (``host_wok`` / ``host_rok`` say
so for the host's current address; the top refuses the access otherwise). So the host can
load the next data tile into words a run does not read and read back words it no longer
writes (docs/top.md "Sharing the global buffer"). The IO tiles sharing a bank share it by schedule (as the PUB's SRAM is
shared): two of them accessing the bank in the same cycle is a compiler bug; the lowest column
wins and the sticky ``error`` flag rises (cleared while ``run`` is 0).

Read timing (both sides): ``re`` with ``addr`` in cycle *n* gives ``rdata`` in cycle *n + 1*;
``rdata`` then holds until the next read of that bank.
"""
from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..arch import GLBParams
from .spec import (GLB_READ_LATENCY, ROW_BYTES, ROW_WIDTH, ROW_WORDS, WORD_WIDTH,
                   bank_addr_width, host_row_width)

__all__ = ["GlobalBuffer", "glb_port_signature", "host_port_signature", "GLB_READ_LATENCY",
           "WORD_WIDTH"]

LANE_BITS = (ROW_WORDS - 1).bit_length()


def glb_port_signature(addr_width: int) -> wiring.Signature:
    """A GLB word port as seen from its user (an IO tile): read latency 1."""
    return wiring.Signature({"addr": Out(addr_width), "wdata": Out(WORD_WIDTH), "we": Out(1),
                             "re": Out(1), "rdata": In(WORD_WIDTH)})


def host_port_signature(glb: GLBParams) -> wiring.Signature:
    """The host's row port as seen from the host: ``addr`` a bank-major row, ``be`` one write
    enable per byte of the row; read latency 1."""
    return wiring.Signature({"addr": Out(host_row_width(glb)), "wdata": Out(ROW_WIDTH),
                             "be": Out(ROW_BYTES), "we": Out(1), "re": Out(1),
                             "rdata": In(ROW_WIDTH)})


def _lane_enables(lane) -> "Cat":
    """Byte enables of one word lane of a row."""
    per_word = ROW_BYTES // ROW_WORDS
    return Cat(*(Cat(*([lane == i] * per_word)) for i in range(ROW_WORDS)))


class GlobalBuffer(wiring.Component):
    def __init__(self, glb: GLBParams, io_columns):
        self.glb = glb
        self.io_columns = list(io_columns)
        aw = bank_addr_width(glb)
        members = {"run": In(1), "share": In(1), "error": Out(1), "host_wok": Out(1),
                   "host_rok": Out(1), "host": In(host_port_signature(glb))}
        for c in self.io_columns:
            members[f"io_{c}"] = In(glb_port_signature(aw))
        super().__init__(members)

    def io_port(self, col: int):
        return getattr(self, f"io_{col}")

    def elaborate(self, platform):
        m = Module()
        g = self.glb
        rows = g.bank_words // ROW_WORDS
        row_bits = max(1, (rows - 1).bit_length())
        host_bank = Signal(range(g.banks)) if g.banks > 1 else None
        host_row = self.host.addr[:row_bits]
        if host_bank is not None:
            m.d.comb += host_bank.eq(self.host.addr[row_bits:])
        host_rbank = Signal.like(host_bank) if host_bank is not None else None
        conflicts = []
        host_rdata = {}
        io_we, io_re = [], []
        for b in range(g.banks):
            mem = m.submodules[f"bank{b}"] = Memory(shape=ROW_WIDTH, depth=rows, init=[])
            rd, wr = mem.read_port(), mem.write_port(granularity=8)
            ports = [self.io_port(c) for c in self.io_columns if c % g.banks == b]
            lane, lane_q = Signal(LANE_BITS, name=f"lane{b}"), Signal(LANE_BITS, name=f"lane{b}_q")
            m.d.comb += rd.en.eq(0)         # rdata holds between reads (en defaults to 1)
            with m.If(self.run):
                # IO side: the lowest column with a request drives the bank
                for p in reversed(ports):
                    with m.If(p.re | p.we):
                        m.d.comb += [rd.addr.eq(p.addr[LANE_BITS:]), rd.en.eq(p.re),
                                     wr.addr.eq(p.addr[LANE_BITS:]),
                                     wr.data.eq(Cat(*([p.wdata] * ROW_WORDS))),
                                     lane.eq(p.addr[:LANE_BITS])]
                        with m.If(p.we):
                            m.d.comb += wr.en.eq(_lane_enables(p.addr[:LANE_BITS]))
                if len(ports) > 1:
                    active = Cat(p.re | p.we for p in ports)
                    conflicts.append((active & (active - 1)).any())
                # shared: the host takes the port no IO tile of the bank uses in this cycle
                sel = host_bank == b if host_bank is not None else 1
                busy_w = Cat(p.we for p in ports).any() if ports else Const(0)
                busy_r = Cat(p.re for p in ports).any() if ports else Const(0)
                io_we.append(busy_w)
                io_re.append(busy_r)
                with m.If(self.share & self.host.we & sel & ~busy_w):
                    m.d.comb += [wr.addr.eq(host_row), wr.data.eq(self.host.wdata),
                                 wr.en.eq(self.host.be)]
                with m.If(self.share & self.host.re & sel & ~busy_r):
                    m.d.comb += [rd.addr.eq(host_row), rd.en.eq(1)]
            with m.Else():
                sel = host_bank == b if host_bank is not None else 1
                m.d.comb += [rd.addr.eq(host_row), rd.en.eq(self.host.re & sel),
                             wr.addr.eq(host_row), wr.data.eq(self.host.wdata)]
                with m.If(self.host.we & sel):
                    m.d.comb += wr.en.eq(self.host.be)
            with m.If(rd.en):
                m.d.sync += lane_q.eq(lane)
            for p in ports:
                m.d.comb += p.rdata.eq(rd.data.word_select(lane_q, WORD_WIDTH))
            host_rdata[b] = rd.data
        # may the host's current access be taken (always while stopped; shared: its port free)
        with m.If(~self.run):
            m.d.comb += [self.host_wok.eq(1), self.host_rok.eq(1)]
        with m.Elif(self.share):
            if host_bank is not None:
                m.d.comb += [self.host_wok.eq(~Cat(*io_we).bit_select(host_bank, 1)),
                             self.host_rok.eq(~Cat(*io_re).bit_select(host_bank, 1))]
            else:
                m.d.comb += [self.host_wok.eq(~io_we[0]), self.host_rok.eq(~io_re[0])]
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
