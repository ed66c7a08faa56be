"""Aggregator (thesis §6.1.3; docs/pub.md "The input side"): filled in order, read in order,
each full slot due for its SRAM write 1 + slack (1 + row_slack) cycles later, against a
plain-Python model."""
import random

import pytest

from ubgen.pub import Aggregator
from tests.gateware import run_testbench


class Model:
    """The aggregator's behaviour, written from its docstring."""

    def __init__(self, fw=4, depth=2, swap=False):
        self.fw, self.depth, self.swap = fw, depth, swap
        self.words = [0] * (fw * depth)
        self.lane = self.slot = self.rslot = 0
        self.pending: list[int] = []           # cycles at which a write is due

    def rdata(self):
        return sum(self.words[self.rslot * self.fw + k] << (16 * k) for k in range(self.fw))

    def filled(self, we, last):
        return we and (self.lane == self.fw - 1 or last)

    def step(self, cycle, we, last, wdata, re, slack, row_slack):
        """One unstalled cycle: the end-of-cycle updates."""
        if self.filled(we, last):
            wait = slack if (self.lane == self.fw - 1) != self.swap else row_slack
            self.pending.append(cycle + 1 + wait)
        if we:
            self.words[self.slot * self.fw + self.lane] = wdata
            if self.filled(we, last):
                self.lane, self.slot = 0, (self.slot + 1) % self.depth
            else:
                self.lane += 1
        if re:
            self.rslot = (self.rslot + 1) % self.depth


def _against_model(seed, swap=False):
    dut = Aggregator(word_width=16, fetch_width=4, depth=2, slack_width=3)
    rng = random.Random(seed)
    slack, row_slack = rng.randrange(4), 4 + rng.randrange(4)

    async def bench(ctx):
        ref = Model(swap=swap)
        ctx.set(dut.slack, slack)
        ctx.set(dut.row_slack, row_slack)
        ctx.set(dut.restart, 1)
        await ctx.tick()
        ctx.set(dut.restart, 0)
        cycle = 0
        for _ in range(300):
            tick = rng.random() < 0.8
            we = tick and rng.random() < 0.7
            last = rng.random() < 0.2
            re = tick and rng.random() < 0.3
            wdata = rng.randrange(1 << 16)
            for sig, v in ((dut.tick, tick), (dut.we, we), (dut.last, last), (dut.re, re),
                           (dut.wdata, wdata)):
                ctx.set(sig, v)
            assert ctx.get(dut.rdata) == ref.rdata()
            assert ctx.get(dut.filled) == ref.filled(we, last)
            assert ctx.get(dut.due) == (cycle in ref.pending)
            await ctx.tick()
            if tick:
                ref.step(cycle, we, last, wdata, re, slack, row_slack)
                cycle += 1

    run_testbench(dut, bench)


@pytest.mark.parametrize("seed", range(4))
def test_aggregator_against_model(seed):
    """Random writes (with random row ends), reads, slacks and stalls: the read word, the fill
    flag and the due flag in every cycle match the model (stalled cycles change nothing and a
    due write stays due)."""
    _against_model(seed)


def test_model_with_swapped_slacks_fails():
    """Negative control: a model that delays full words by row_slack and partial ones by slack
    disagrees with the hardware."""
    with pytest.raises(AssertionError):
        _against_model(0, swap=True)


def test_aggregator_fills_wide_word_in_lane_order():
    """Four writes fill slot 0 in lane order; the SRAM write is due 1 + slack cycles after the
    fourth; a row's partial last word (``last`` on its second lane) is due 1 + row_slack
    later."""
    dut = Aggregator(word_width=16, fetch_width=4, depth=2, slack_width=3)

    async def bench(ctx):
        ctx.set(dut.slack, 2)
        ctx.set(dut.row_slack, 5)
        ctx.set(dut.tick, 1)
        ctx.set(dut.we, 1)
        for i, v in enumerate([0x1111, 0x2222, 0x3333, 0x4444, 0x5555, 0x6666]):
            ctx.set(dut.wdata, v)
            ctx.set(dut.last, i == 5)                 # a row of 6 words ends on lane 1
            assert ctx.get(dut.filled) == (i in (3, 5))
            await ctx.tick()
        ctx.set(dut.we, 0)
        ctx.set(dut.last, 0)
        assert ctx.get(dut.rdata) == 0x4444_3333_2222_1111
        due = []
        for c in range(6, 16):
            if ctx.get(dut.due):
                due.append((c, ctx.get(dut.rdata)))
                ctx.set(dut.re, 1)
            await ctx.tick()
            ctx.set(dut.re, 0)
        # word 0 filled at cycle 3 -> due at 3 + 1 + 2 = 6; word 1 at 5 -> 5 + 1 + 5 = 11
        # (slot 1's lanes 2-3 were never written)
        assert due == [(6, 0x4444_3333_2222_1111), (11, 0x6666_5555)]

    run_testbench(dut, bench)
