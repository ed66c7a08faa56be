"""Transpose buffer (TB): the parallel-to-serial buffer between the wide SRAM and an output port.

Thesis §6.1.3 and Fig. 6.4: the ``sram2tb`` controller fills one wide slot per SRAM read, and the
``tb2out`` controller reads single words in any affine order, which gives full-rate small-block
transposes and lets sliding windows reuse fetched data (thesis §5.5.2). Each slot also carries an
*owned* bit for chaining (paper Fig. 10): it says whether this tile's SRAM supplied the slot.
"""
from __future__ import annotations

from amaranth.hdl import Module, Signal, Array
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..arch import _clog2


class TransposeBuffer(wiring.Component):
    """``depth`` wide slots of ``fetch_width`` words held in registers.

    Write side (wide): when ``we``, slot ``waddr`` takes ``wdata`` and the owned bit ``wowned``
    at the end of the cycle. Read side (word granular): ``rdata`` is word ``raddr`` (slot
    ``raddr >> log2(fetch_width)``, lane ``raddr % fetch_width``) and ``rowned`` that slot's
    owned bit, combinationally from the registers.
    """

    def __init__(self, word_width: int = 16, fetch_width: int = 4, depth: int = 2):
        self.word_width, self.fetch_width, self.depth = word_width, fetch_width, depth
        super().__init__({
            "we": In(1),
            "waddr": In(_clog2(depth)),
            "wdata": In(word_width * fetch_width),
            "wowned": In(1),
            "raddr": In(_clog2(depth * fetch_width)),
            "rdata": Out(word_width),
            "rowned": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        fw, w = self.fetch_width, self.word_width
        slots = Array(Signal(w * fw, name=f"tb_{s}") for s in range(self.depth))
        owned = Array(Signal(name=f"tb_owned_{s}") for s in range(self.depth))
        with m.If(self.we):
            m.d.sync += [slots[self.waddr].eq(self.wdata), owned[self.waddr].eq(self.wowned)]
        lane_bits = _clog2(fw) if fw > 1 else 0
        slot = self.raddr[lane_bits:] if self.depth > 1 else 0
        lane = self.raddr[:lane_bits] if lane_bits else 0
        m.d.comb += [
            self.rdata.eq(slots[slot].word_select(lane, w)),
            self.rowned.eq(owned[slot]),
        ]
        return m
