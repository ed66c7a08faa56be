"""The PUB's single-port wide-fetch SRAM (thesis §6.1.3).

One storage array of ``fetch_width * word_width`` bits by ``depth`` wide words behind a single
address: a cycle either writes (with per-word lane enables, so the configuration window can load
one 16-bit word at a time) or reads, never both by design. The schedule, not an arbiter, keeps
accesses apart; the PUB flags a same-cycle conflict (docs/design.md §5.1).
"""
from __future__ import annotations

from amaranth.hdl import Module
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
