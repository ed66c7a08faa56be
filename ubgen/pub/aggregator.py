"""Aggregator (AGG): the serial-to-parallel buffer between an input port and the wide SRAM.

Thesis §6.1.3 and Fig. 6.4: words arrive one per fire of the ``in2agg`` controller and are
assembled into wide words of ``fetch_width`` lanes; the ``agg2sram`` controller writes one wide
word to the SRAM per fire. Storage is registers (``depth`` wide words), not SRAM.
"""
from __future__ import annotations

from amaranth.hdl import Module, Signal, Array, Cat
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..arch import _clog2


class Aggregator(wiring.Component):
    """``depth`` wide words of ``fetch_width`` x ``word_width`` bits held in registers.

    Write side (word granular): when ``we``, ``wdata`` is stored at word address ``waddr``
    (wide slot ``waddr >> log2(fetch_width)``, lane ``waddr % fetch_width``) at the end of the cycle.
    Read side (wide): ``rdata`` is wide slot ``raddr``, combinationally from the registers, so a
    word written in cycle c is visible from cycle c+1.
    """

    def __init__(self, word_width: int = 16, fetch_width: int = 4, depth: int = 2):
        self.word_width, self.fetch_width, self.depth = word_width, fetch_width, depth
        super().__init__({
            "we": In(1),
            "waddr": In(_clog2(depth * fetch_width)),
            "wdata": In(word_width),
            "raddr": In(_clog2(depth)),
            "rdata": Out(word_width * fetch_width),
        })

    def elaborate(self, platform):
        m = Module()
        words = Array(Signal(self.word_width, name=f"agg_{i}")
                      for i in range(self.depth * self.fetch_width))
        with m.If(self.we):
            m.d.sync += words[self.waddr].eq(self.wdata)
        slots = Array(Cat(words[s * self.fetch_width + lane] for lane in range(self.fetch_width))
                      for s in range(self.depth))
        m.d.comb += self.rdata.eq(slots[self.raddr])
        return m
