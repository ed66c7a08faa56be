"""The PUB's single-port wide-fetch SRAM (thesis §6.1.3).

One storage array of ``fetch_width * word_width`` bits by ``depth`` wide words behind a single
address: a cycle either writes (with per-word lane enables, so the configuration window can load
one 16-bit word at a time) or reads, never both by design. The schedule, not an arbiter, keeps
accesses apart; the PUB flags a same-cycle conflict (docs/design.md §5.1).
"""
from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..arch import _clog2


class WideSRAM(wiring.Component):
    """Single-port SRAM: ``addr``; ``we`` (one enable per word lane) + ``wdata``; ``re`` + ``rdata``.

    Reads are synchronous with latency 1: ``rdata`` shows the word at ``addr`` from the cycle after
    ``re`` and holds until the next ``re``. A write at cycle c is visible to a read issued at
    cycle c+1 or later.
    """

    def __init__(self, word_width: int = 16, fetch_width: int = 4, depth: int = 512):
        self.word_width, self.fetch_width, self.depth = word_width, fetch_width, depth
        super().__init__({
            "addr": In(_clog2(depth)),
            "we": In(fetch_width),
            "wdata": In(word_width * fetch_width),
            "re": In(1),
            "rdata": Out(word_width * fetch_width),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.mem = mem = Memory(shape=self.word_width * self.fetch_width,
                                        depth=self.depth, init=[])
        wr = mem.write_port(granularity=self.word_width)
        rd = mem.read_port(domain="sync")
        m.d.comb += [
            wr.addr.eq(self.addr), wr.data.eq(self.wdata), wr.en.eq(self.we),
            rd.addr.eq(self.addr), rd.en.eq(self.re), self.rdata.eq(rd.data),
        ]
        return m


class SRAMPort(wiring.Component):
    """The single SRAM port's logic (docs/pub.md): who drives the :class:`WideSRAM` in a cycle,
    in priority order the configuration window (``win_we``: one word at ``win_addr`` while not
    running), the ROM read (``rom_re`` at word address ``rom_addr``), the stream writes
    (``wr_req[p]``: wide word ``wr_data[p]`` at ``wr_addr[p]``) and reads (``rd_req[q]`` at
    ``rd_addr[q]``); and the sticky ``error`` flag, set when two streams ask in one cycle (a
    schedule bug: the compiler keeps accesses apart) and cleared by ``clear``. The SRAM signals
    come out as ``addr``/``we``/``wdata``/``re``."""

    def __init__(self, word_width: int, fetch_width: int, depth: int, writes: int, reads: int):
        self.word_width, self.fetch_width, self.depth = word_width, fetch_width, depth
        aw = _clog2(depth)
        super().__init__({
            "win_we": In(1), "win_addr": In(_clog2(depth * fetch_width)),
            "win_data": In(word_width),
            "rom_re": In(1), "rom_addr": In(_clog2(depth * fetch_width)),
            "wr_req": In(1).array(writes), "wr_addr": In(aw).array(writes),
            "wr_data": In(word_width * fetch_width).array(writes),
            "rd_req": In(1).array(reads), "rd_addr": In(aw).array(reads),
            "addr": Out(aw), "we": Out(fetch_width), "wdata": Out(word_width * fetch_width),
            "re": Out(1), "clear": In(1), "error": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        fw, w = self.fetch_width, self.word_width
        lane_bits = (fw - 1).bit_length()
        with m.If(self.win_we):
            m.d.comb += [self.addr.eq(self.win_addr[lane_bits:]),
                         self.we.eq(Const(1, fw) << self.win_addr[:lane_bits]),
                         self.wdata.eq(Cat(self.win_data for _ in range(fw)))]
        with m.Elif(self.rom_re):
            m.d.comb += [self.addr.eq(self.rom_addr[lane_bits:]), self.re.eq(1)]
        for req, addr, data in zip(self.wr_req, self.wr_addr, self.wr_data):
            with m.Elif(req):
                m.d.comb += [self.addr.eq(addr), self.we.eq((1 << fw) - 1), self.wdata.eq(data)]
        for req, addr in zip(self.rd_req, self.rd_addr):
            with m.Elif(req):
                m.d.comb += [self.addr.eq(addr), self.re.eq(1)]
        reqs = list(self.wr_req) + list(self.rd_req)
        conflict = Const(0)
        for i in range(len(reqs)):
            for j in range(i + 1, len(reqs)):
                conflict = conflict | (reqs[i] & reqs[j])
        error = Signal()
        with m.If(self.clear):
            m.d.sync += error.eq(0)
        with m.Elif(conflict):
            m.d.sync += error.eq(1)
        m.d.comb += self.error.eq(error)
        return m
