"""Aggregator (AGG): the serial-to-parallel buffer between an input port and the wide SRAM.

Thesis §6.1.3 and Fig. 6.4: words arrive one per fire of the ``in2agg`` controller and are
assembled into wide words of ``fetch_width`` lanes; the ``agg2sram`` controller writes one wide
word to the SRAM per fire. Storage is registers (``depth`` wide slots), not SRAM.

Area-optimised (docs/pub.md "The input side"): the aggregator fills **in order** and keeps its
own addresses, so neither controller needs an AGG address generator, and it tells when the SRAM
write is due, so ``agg2sram`` needs no schedule generator: a word goes to lane ``lane`` of slot
``slot``; after lane ``fetch_width - 1``, or after the last word of a row (``last``: the
``in2agg`` fire ends its level-0 loop), the slot is full and the next word starts a new slot.
Each full slot is due for its SRAM write ``1 + slack`` cycles later (``1 + row_slack`` for a
row's partial last word): a delay line of ``2**slack_width`` cycles. Reads take the slots in
the order they filled.
"""
from __future__ import annotations

from amaranth.hdl import Module, Signal, Array, Cat, Const, Mux
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out


class Aggregator(wiring.Component):
    """``depth`` wide slots of ``fetch_width`` x ``word_width`` bits held in registers.

    ``restart`` (while high): empty, first lane of slot 0, nothing due. In a cycle with
    ``tick`` (the unstalled-cycle counter advances):

    * ``we``: ``wdata`` is stored in the current lane at the end of the cycle (visible from the
      next); ``filled`` is high when that completes the slot (``last`` or the last lane);
    * ``re``: the oldest unread slot (``rdata``, combinational from the registers) is consumed;
    * ``due`` is high in the cycle an SRAM write of a filled slot is due: ``1 + slack`` cycles
      after its fill (``1 + row_slack`` when ``last`` filled it before its last lane); it stays
      high over stalled cycles.
    """

    def __init__(self, word_width: int = 16, fetch_width: int = 4, depth: int = 2,
                 slack_width: int = 4):
        self.word_width, self.fetch_width, self.depth = word_width, fetch_width, depth
        self.slack_width = slack_width
        super().__init__({
            "restart": In(1), "tick": In(1),
            "we": In(1), "last": In(1), "wdata": In(word_width), "filled": Out(1),
            "re": In(1), "rdata": Out(word_width * fetch_width),
            "slack": In(slack_width), "row_slack": In(slack_width), "due": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        fw = self.fetch_width
        lane = Signal(max(1, (fw - 1).bit_length()))
        slot = Signal(max(1, (self.depth - 1).bit_length()))
        rslot = Signal.like(slot)
        line = Signal(1 << self.slack_width)           # line[k]: a write due in k+1 cycles
        words = Array(Signal(self.word_width, name=f"agg_{i}")
                      for i in range(self.depth * fw))
        full = lane == fw - 1 if fw > 1 else Const(1)
        m.d.comb += [self.filled.eq(self.we & (full | self.last)), self.due.eq(line[0])]
        with m.If(self.restart):
            m.d.sync += [lane.eq(0), slot.eq(0), rslot.eq(0), line.eq(0)]
        with m.Elif(self.tick):
            wait = Mux(full, self.slack, self.row_slack)
            m.d.sync += line.eq((line >> 1) | (self.filled << wait))
            with m.If(self.we):
                m.d.sync += [words[Cat(lane, slot) if fw > 1 else slot].eq(self.wdata),
                             lane.eq(Mux(self.filled, 0, lane + 1)), slot.eq(slot + self.filled)]
            with m.If(self.re):
                m.d.sync += rslot.eq(rslot + 1)
        slots = Array(Cat(words[s * fw + k] for k in range(fw)) for s in range(self.depth))
        m.d.comb += self.rdata.eq(slots[rslot])
        return m
