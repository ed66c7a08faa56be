"""The AXI4 burst port (docs/top.md "The burst port") in Amaranth's simulator: the AXI4 slave
and the AXI4-Lite slave sharing one host bus through the arbiter, in front of a model target
with the top's kinds of space (read-write and read-only 32-bit registers, a 64-bit row window
with byte strobes, holes). A cycle-stepped master drives random bursts (FIXED, INCR, WRAP and
refused ones; narrow, unaligned, crossing the end of a region; random strobes, W valid gaps,
B/R back-pressure) while AXI4-Lite traffic runs concurrently on its own registers; every
response, every read beat and the target's final state are checked against the plain-Python
reference :mod:`sim.tb.axi4_model`. Negative controls: a slave whose INCR bursts do not realign
after an unaligned first beat, one whose WRAP bursts do not wrap, and an arbiter that lets the
burst port win are each caught.
"""
from __future__ import annotations

import random

import pytest
from amaranth.hdl import Cat, Const, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

from sim.tb.axi4_model import (FIXED, INCR, OKAY, SLVERR, WRAP, Burst, Space, burst_beats,
                               check_read, expect_write, lane_strobes)
from tests.gateware import run_testbench
from ubgen.top import axi4 as axi4_rtl
from ubgen.top import hostbus
from ubgen.top.axi4 import AXI4Slave
from ubgen.top.axil import AXILiteSlave
from ubgen.top.hostbus import HostArbiter, host_bus_signature

REGS, RO_REGS, ROWS, LITE_REGS = 16, 4, 16, 4
RO_VALUE = 0x1111_0000


class ModelTarget(wiring.Component):
    """The host-bus contract (:mod:`ubgen.top.hostbus`) over four regions (bits 31..28):
    0: ``REGS`` read-write registers; 1: ``RO_REGS`` read-only registers (``RO_VALUE + i``);
    2: ``ROWS`` 64-bit rows under byte strobes; 3: ``LITE_REGS`` registers the AXI4-Lite
    traffic uses. Anything else is refused; reads answer one cycle later."""

    def __init__(self):
        super().__init__({"bus": In(host_bus_signature())})

    def elaborate(self, platform):
        m = Module()
        bus = self.bus
        m.d.comb += bus.gnt.eq(1)
        region, word, row = bus.addr[28:], bus.addr[2:28], bus.addr[3:28]
        half = bus.addr[2]
        w32 = bus.wdata.word_select(half, 32)
        whole = bus.wstrb.word_select(half, 4) == 0xF
        regs = [Signal(32, name=f"reg{i}") for i in range(REGS)]
        lite = [Signal(32, name=f"lite{i}") for i in range(LITE_REGS)]
        rows = [Signal(64, name=f"row{i}") for i in range(ROWS)]
        rw_ok = (region == 0) & (word < REGS)
        ro_ok = (region == 1) & (word < RO_REGS)
        lite_ok = (region == 3) & (word < LITE_REGS)
        row_ok = (region == 2) & (row < ROWS)
        rdata, rerr = Signal(64), Signal()
        m.d.comb += [bus.rdata.eq(rdata), bus.rerr.eq(rerr),
                     bus.werr.eq(bus.we & ~(((rw_ok | lite_ok) & whole) | row_ok))]
        m.d.sync += [bus.rvalid.eq(bus.re), rerr.eq(~(rw_ok | ro_ok | lite_ok | row_ok))]
        for group, ok in ((regs, rw_ok), (lite, lite_ok)):
            for i, r in enumerate(group):
                with m.If(ok & (word == i)):
                    with m.If(bus.we & whole):
                        m.d.sync += r.eq(w32)
                    m.d.sync += rdata.eq(Cat(r, r))
        for i in range(RO_REGS):
            with m.If(ro_ok & (word == i)):
                m.d.sync += rdata.eq(Cat(Const(RO_VALUE + i, 32), Const(RO_VALUE + i, 32)))
        for i, r in enumerate(rows):
            with m.If(row_ok & (row == i)):
                with m.If(bus.we):
                    for b in range(8):
                        with m.If(bus.wstrb[b]):
                            m.d.sync += r.word_select(b, 8).eq(bus.wdata.word_select(b, 8))
                m.d.sync += rdata.eq(r)
        return m


class Rig(wiring.Component):
    """AXI4 slave + AXI4-Lite slave -> arbiter -> model target; the two ports are the rig's."""

    def __init__(self):
        self.axi = AXI4Slave("s_axi", 4, wide_shift=28, wide_value=2)
        self.axil = AXILiteSlave("s_axil")
        self.target = ModelTarget()
        super().__init__({})

    def elaborate(self, platform):
        m = Module()
        m.submodules.axi, m.submodules.axil = self.axi, self.axil
        arb = m.submodules.arb = HostArbiter()
        m.submodules.target = self.target
        wiring.connect(m, self.axil.bus, arb.lite)
        wiring.connect(m, self.axi.bus, arb.burst)
        wiring.connect(m, arb.target, self.target.bus)
        return m


def model_space() -> Space:
    region = lambda a: a >> 28
    word = lambda a: (a & 0x0FFF_FFFF) >> 2
    sp = Space(wide=lambda a: region(a) == 2,
               row_ok=lambda a: (a & 0x0FFF_FFFF) >> 3 < ROWS,
               read_ok=lambda a: (region(a) == 0 and word(a) < REGS)
               or (region(a) == 1 and word(a) < RO_REGS),
               write_ok=lambda a: region(a) == 0 and word(a) < REGS)
    for i in range(REGS):
        sp.mem.update({4 * i + b: 0 for b in range(4)})
    for i in range(RO_REGS):
        sp.mem.update({(1 << 28) + 4 * i + b: (RO_VALUE + i) >> 8 * b & 0xFF for b in range(4)})
    for i in range(8 * ROWS):
        sp.mem[(2 << 28) + i] = 0
    return sp


class Master:
    """A cycle-stepped AXI4 master and AXI4-Lite master on the rig: write and read bursts
    issued concurrently (each side one burst after another), lite operations alongside; random
    valid gaps and ready back-pressure. ``run`` returns what was observed."""

    def __init__(self, rig: Rig, rng: random.Random, gaps: bool = True):
        self.rig, self.rng, self.gaps = rig, rng, gaps
        self.axi = lambda n: getattr(rig.axi, f"s_axi_{n}")
        self.lite = lambda n: getattr(rig.axil, f"s_axil_{n}")

    def maybe(self, p: float) -> bool:
        return not self.gaps or self.rng.random() < p

    async def run(self, ctx, bursts: list[Burst], lite_ops: list[tuple], limit: int = 20_000):
        writes = [b for b in bursts if b.write]
        reads = [b for b in bursts if not b.write]
        order, bresps, rbeats, lite_out = [], [], [[] for _ in reads], []
        self.done = []                                 # (burst, cycle of its B / last R)
        w = {"i": 0, "aw": False, "beat": 0, "b": False}
        r = {"i": 0, "ar": False}
        lite = {"i": 0, "phase": 0}
        g, s, L = ctx.get, ctx.set, self.lite
        for cycle in range(limit):
            if w["i"] >= len(writes) and r["i"] >= len(reads) and lite["i"] >= len(lite_ops) \
                    and all(len(x) == b.length + 1 for x, b in zip(rbeats, reads)):
                return order, bresps, rbeats, lite_out
            # --- write side: AW, W beats (W may come before AW is taken), B
            wb = writes[w["i"]] if w["i"] < len(writes) else None
            s(self.axi("awvalid"), 0)
            s(self.axi("wvalid"), 0)
            if wb is not None:
                if not w["aw"] and self.maybe(0.7):
                    for k, v in (("awid", wb.id), ("awaddr", wb.addr), ("awlen", wb.length),
                                 ("awsize", wb.size), ("awburst", wb.kind), ("awvalid", 1)):
                        s(self.axi(k), v)
                if w["beat"] <= wb.length and self.maybe(0.8):
                    k = w["beat"]
                    s(self.axi("wdata"), wb.data[k])
                    s(self.axi("wstrb"), wb.strobes[k])
                    s(self.axi("wlast"), int(k == wb.length))
                    s(self.axi("wvalid"), 1)
            s(self.axi("bready"), int(self.maybe(0.6)))
            # --- read side: AR, then R with back-pressure
            rb = reads[r["i"]] if r["i"] < len(reads) else None
            s(self.axi("arvalid"), 0)
            if rb is not None and not r["ar"] and self.maybe(0.7):
                for k, v in (("arid", rb.id), ("araddr", rb.addr), ("arlen", rb.length),
                             ("arsize", rb.size), ("arburst", rb.kind), ("arvalid", 1)):
                    s(self.axi(k), v)
            s(self.axi("rready"), int(self.maybe(0.6)))
            # --- AXI4-Lite side: one operation at a time (AW and W together)
            op = lite_ops[lite["i"]] if lite["i"] < len(lite_ops) else None
            for k in ("awvalid", "wvalid", "arvalid"):
                s(L(k), 0)
            s(L("bready"), 1)
            s(L("rready"), 1)
            if op is not None and lite["phase"] == 0:
                if op[0] == "w":
                    for k, v in (("awaddr", op[1]), ("wdata", op[2]), ("wstrb", 0xF),
                                 ("awvalid", 1), ("wvalid", 1)):
                        s(L(k), v)
                else:
                    s(L("araddr"), op[1])
                    s(L("arvalid"), 1)
            # --- sample the handshakes, then the clock edge
            hs = {k: g(self.axi(k + "valid")) and g(self.axi(k + "ready"))
                  for k in ("aw", "w", "b", "ar", "r")}
            b_resp = (g(self.axi("bresp")), g(self.axi("bid")))
            r_beat = (g(self.axi("rresp")), g(self.axi("rdata")), g(self.axi("rlast")),
                      g(self.axi("rid")))
            lite_hs = {k: g(L(k + "valid")) and g(L(k + "ready")) for k in ("aw", "w", "ar", "b", "r")}
            lite_resp = (g(L("bresp")), g(L("rresp")), g(L("rdata")))
            await ctx.tick()
            if hs["aw"]:
                w["aw"] = True
                order.append(("w", w["i"], cycle))
            if hs["w"]:
                w["beat"] += 1
            if hs["b"]:
                assert b_resp[1] == wb.id, "BID differs from AWID"
                bresps.append(b_resp[0])
                self.done.append((wb, cycle))
                w.update(i=w["i"] + 1, aw=False, beat=0)
            if hs["ar"]:
                r["ar"] = True
                order.append(("r", r["i"], cycle))
            if hs["r"]:
                k = next(i for i, (x, b) in enumerate(zip(rbeats, reads)) if len(x) < b.length + 1)
                rbeats[k].append((r_beat[0], r_beat[1]))
                assert r_beat[3] == reads[k].id, "RID differs from ARID"
                assert r_beat[2] == (len(rbeats[k]) == reads[k].length + 1), "RLAST misplaced"
                if r_beat[2]:
                    self.done.append((reads[k], cycle))
            if r["ar"] and rb is not None:
                r.update(i=r["i"] + 1, ar=False)
            if op is not None:
                if lite["phase"] == 0 and ((op[0] == "w" and lite_hs["aw"] and lite_hs["w"])
                                           or (op[0] == "r" and lite_hs["ar"])):
                    lite["phase"] = 1
                elif lite["phase"] == 1 and (lite_hs["b"] if op[0] == "w" else lite_hs["r"]):
                    lite_out.append(lite_resp[0] if op[0] == "w" else (lite_resp[1], lite_resp[2]))
                    lite.update(i=lite["i"] + 1, phase=0)
        raise AssertionError(f"the bus hung: no completion within {limit} cycles")


def simulate(bursts: list[Burst], lite_ops: list[tuple], seed: int, gaps: bool = True):
    """Run the bursts and lite operations on a fresh rig; returns the observations and the
    rig's final register and row values."""
    rig = Rig()
    master = Master(rig, random.Random(seed), gaps)
    out = {}

    async def bench(ctx):
        out["obs"] = await master.run(ctx, bursts, lite_ops)

    run_testbench(rig, bench)
    return out["obs"]


def mismatches(bursts: list[Burst], lite_ops: list[tuple], seed: int,
               gaps: bool = True) -> list[str]:
    """Everything the rig did differently from the reference (empty when it is right)."""
    order, bresps, rbeats, lite_out = simulate(bursts, lite_ops, seed, gaps)
    writes = [b for b in bursts if b.write]
    reads = [b for b in bursts if not b.write]
    space, bad = model_space(), []
    for kind, i, _cycle in sorted(order, key=lambda o: o[2]):
        if kind == "w":
            want = expect_write(space, writes[i])
            if bresps[i] != want:
                bad.append(f"{writes[i].describe()}: BRESP {bresps[i]}, expected {want}")
        else:
            bad += check_read(space, reads[i], rbeats[i])
    lite_model = [0] * LITE_REGS
    for op, got in zip(lite_ops, lite_out):
        idx = (op[1] & 0xFF) >> 2
        if op[0] == "w":
            lite_model[idx] = op[2]
            if got != OKAY:
                bad.append(f"lite write {op[1]:#x}: {got}")
        elif got != (OKAY, lite_model[idx]):
            bad.append(f"lite read {op[1]:#x}: {got}, expected {(OKAY, lite_model[idx])}")
    return bad


def make_burst(rng: random.Random, write: bool, addr: int, length: int, size: int, kind: int,
               random_strobes: bool = False) -> Burst:
    b = Burst(write, addr, length, size, kind, id=rng.randrange(16))
    if write:
        beats = burst_beats(addr, length, size, kind) or [addr] * (length + 1)
        b.data = [rng.randrange(1 << 64) for _ in beats]
        b.strobes = [rng.randrange(256) if random_strobes else lane_strobes(a, min(size, 3))
                     for a in beats]
    return b


BASES = [0x0000_0000, 0x1000_0000, 0x2000_0000, 0x2000_0000, 0x8000_0000]


@st.composite
def bursts(draw):
    rng = random.Random(draw(st.integers(0, 1 << 30)))
    out = []
    for _ in range(draw(st.integers(3, 10))):
        base = draw(st.sampled_from(BASES))
        off = draw(st.integers(0, 140))
        size = draw(st.sampled_from([0, 1, 2, 3, 3, 3, 4]))
        kind = draw(st.sampled_from([FIXED, INCR, INCR, INCR, WRAP, WRAP, 3]))
        length = draw(st.sampled_from([0, 1, 2, 3, 7, 15, 19]))
        if kind == WRAP and draw(st.booleans()):
            off -= off % (1 << min(size, 3))        # mostly legal WRAP bursts
        out.append(make_burst(rng, draw(st.booleans()), base + off, length, size, kind,
                              random_strobes=draw(st.integers(0, 3)) == 0))
    return out


LITE_OPS = st.lists(st.tuples(st.sampled_from(["w", "r"]),
                              st.sampled_from([0x3000_0000 + 4 * i for i in range(LITE_REGS)]),
                              st.integers(0, 0xFFFF_FFFF)), min_size=0, max_size=12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(bursts(), LITE_OPS, st.integers(0, 1 << 20))
def test_axi4_bursts_against_reference(bs, lite_ops, seed):
    rng = random.Random(seed)
    sweep = [make_burst(rng, False, 0x0000_0000, REGS // 2 - 1, 3, INCR),      # final state
             make_burst(rng, False, 0x2000_0000, ROWS - 1, 3, INCR)]
    assert mismatches(bs + sweep, lite_ops, seed) == []


def directed() -> list[Burst]:
    """Bursts every check below needs: a row burst crossing the end of the row window, an
    unaligned narrow INCR burst over 32-bit registers, a WRAP burst, a FIXED one, and reads of
    all of it."""
    rng = random.Random(5)
    return [make_burst(rng, True, 0x2000_0000 + 8 * (ROWS - 3) + 2, 5, 3, INCR),
            make_burst(rng, True, 0x0000_0006, 6, 2, INCR),
            make_burst(rng, True, 0x0000_0028, 3, 3, WRAP),
            make_burst(rng, True, 0x2000_0010, 2, 1, FIXED),
            make_burst(rng, False, 0x2000_0000 + 8 * (ROWS - 3) + 2, 5, 3, INCR),
            make_burst(rng, False, 0x0000_0006, 6, 2, INCR),
            make_burst(rng, False, 0x0000_0028, 3, 3, WRAP),
            make_burst(rng, False, 0x0000_0000, 15, 3, INCR)]


def test_directed_bursts_and_throughput():
    """The directed bursts pass; and without gaps or back-pressure a 16-beat row burst moves
    one beat per cycle, written and read back."""
    assert mismatches(directed(), [("w", 0x3000_0004, 7), ("r", 0x3000_0004, 0)], 3) == []
    rng = random.Random(0)
    wr = make_burst(rng, True, 0x2000_0000, 15, 3, INCR)
    rd = make_burst(rng, False, 0x2000_0000, 15, 3, INCR)
    rig = Rig()
    master = Master(rig, rng, gaps=False)
    spans = []

    async def bench(ctx):
        for b in (wr, rd):
            order, bresps, rbeats, _ = await master.run(ctx, [b], [])
            spans.append(master.done[-1][1] - order[0][2])
            assert bresps == [OKAY] if b.write else [x[0] for x in rbeats[0]] == [OKAY] * 16

    run_testbench(rig, bench)
    assert spans[0] <= 16 + 2 and spans[1] <= 16 + 3, spans


@pytest.mark.parametrize("bug", ["narrow", "wrap", "arbiter"])
def test_negative_controls_are_caught(bug, monkeypatch):
    """Three wrong designs, each caught by the same check: bursts that always step by the bus
    width (narrow bursts skip registers), WRAP bursts that do not wrap, and an arbiter that lets
    the burst port take the bus while the AXI4-Lite slave strobes (the lite access is lost)."""
    if bug in ("narrow", "wrap"):
        def advance(self, m, _bug=bug):
            from amaranth.hdl import Const, Mux
            step = (Const(1, 9) << self.size)[:9]
            if _bug == "narrow":
                step = Const(8, 9)
            step_mask = Cat((step - 1)[:9], Const(0, 23))
            span = ((self.len + 1) << self.size)[:12]
            span_mask = Cat((span - 1)[:12], Const(0, 20))
            incr = ((self.addr & ~step_mask) + step)[:32]
            wrap = incr if _bug == "wrap" else (self.addr & ~span_mask) | (incr & span_mask)
            nxt = Mux(self.type == FIXED, self.addr, Mux(self.type == WRAP, wrap, incr))
            m.d.sync += [self.addr.eq(nxt), self.count.eq(self.count + 1)]
        monkeypatch.setattr(axi4_rtl._Burst, "advance", advance)
        bad = mismatches(directed(), [], 3)
    else:
        def elaborate(self, platform):
            m = Module()
            lite, burst, t = self.lite, self.burst, self.target
            m.d.comb += [t.addr.eq(burst.addr), t.wdata.eq(burst.wdata), t.wstrb.eq(burst.wstrb),
                         t.we.eq(burst.we), t.re.eq(burst.re), burst.gnt.eq(1),
                         burst.werr.eq(t.werr), burst.rvalid.eq(t.rvalid),
                         burst.rdata.eq(t.rdata), burst.rerr.eq(t.rerr)]
            with m.If(~(burst.we | burst.re)):
                m.d.comb += [t.addr.eq(lite.addr), t.wdata.eq(Cat(lite.wdata, lite.wdata)),
                             t.wstrb.eq(0xFF), t.we.eq(lite.we), t.re.eq(lite.re),
                             lite.ack.eq(lite.we), lite.err.eq(t.werr)]
            pend = Signal()
            m.d.sync += pend.eq(lite.re & ~(burst.we | burst.re))
            with m.If(pend):
                m.d.comb += [lite.ack.eq(1), lite.rdata.eq(t.rdata[:32]), lite.err.eq(t.rerr)]
            return m
        monkeypatch.setattr(hostbus.HostArbiter, "elaborate", elaborate)
        rng = random.Random(9)
        long = [make_burst(rng, True, 0x2000_0000, 15, 3, INCR) for _ in range(6)]
        ops = [("w", 0x3000_0000 + 4 * (i % LITE_REGS), i) for i in range(12)]
        ops += [("r", 0x3000_0000 + 4 * i, 0) for i in range(LITE_REGS)]
        try:
            bad = mismatches(long, ops, 1, gaps=False)
        except AssertionError as e:                 # a lost strobe hangs the lite access
            bad = [str(e)]
    assert bad, f"the {bug} bug was not caught"
