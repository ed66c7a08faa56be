"""Performance counters of ``cgra_top`` (docs/top.md "Performance counters"): an independent
measurement of when the array wrote its results, for the end-to-end check against the
compiler's predicted completion (docs/simulation.md).

:class:`WriteCounters` watches the IO tiles' global-buffer write strobes and records, for one
run, the unstalled cycle (the array's ``cycle_count``) of the first and of the last GLB write,
and the number of words written (several IO tiles writing in one cycle count once each).

Contract: ``clear`` (the host starting a run) zeroes the three counters; then every cycle with
``run`` and at least one strobe updates them. They hold their values after the run stops, so
the host may read them before or after writing ``START`` = 0. ``first`` and ``last`` are
meaningful only when ``writes`` > 0.
"""
from __future__ import annotations

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["WriteCounters", "COUNTER_WIDTH"]

COUNTER_WIDTH = 32


class WriteCounters(wiring.Component):
    """``n`` GLB write strobes -> ``first``, ``last`` (cycles) and ``writes`` (count)."""

    def __init__(self, n: int, cycle_width: int = COUNTER_WIDTH):
        if n < 1:
            raise ValueError("WriteCounters needs at least one write strobe")
        self.n = n
        super().__init__({"clear": In(1), "run": In(1), "cycle": In(cycle_width),
                          "we": In(n), "first": Out(COUNTER_WIDTH), "last": Out(COUNTER_WIDTH),
                          "writes": Out(COUNTER_WIDTH)})

    def elaborate(self, platform):
        m = Module()
        count = Signal(range(self.n + 1))
        m.d.comb += count.eq(sum(self.we[i] for i in range(self.n)))
        with m.If(self.clear):
            m.d.sync += [self.first.eq(0), self.last.eq(0), self.writes.eq(0)]
        with m.Elif(self.run & self.we.any()):
            with m.If(self.writes == 0):
                m.d.sync += self.first.eq(self.cycle)
            m.d.sync += [self.last.eq(self.cycle), self.writes.eq(self.writes + count)]
        return m
