"""The interconnect's mux tree gives what the ``m.Switch`` muxes it replaced gave, for every
select value, out-of-range ones included (Amaranth simulator).

The reference is the former RTL, kept here: ``with m.Switch(sel): with m.Case(i): out.eq(in_i)``
over the defined inputs, so an undefined select value (the connection box's constant-0 input
and every value past the last input) leaves ``out`` at its comb default 0.
"""
from __future__ import annotations

import random

import pytest
from amaranth.hdl import Module, Signal
from amaranth.sim import Simulator

from tests.gateware import run_testbench
from ubgen.interconnect import ConnectionBox, ConnectionBoxSpec, SwitchBox, SwitchBoxSpec, \
    mux_tree
from ubgen.interconnect.switch_box import track_name


def switch_reference(m: Module, sel, inputs, width: int, name: str) -> Signal:
    """The former mux: a ``Switch`` with one ``Case`` per defined input, comb default 0."""
    out = Signal(width, name=name)
    with m.Switch(sel):
        for i, value in enumerate(inputs):
            if value is not None:
                with m.Case(i):
                    m.d.comb += out.eq(value)
    return out


def patterns(rng: random.Random, n: int, width: int, rounds: int = 3) -> list[list[int]]:
    """Values for ``n`` inputs: ``rounds`` sets of different non-zero words, or walking ones
    when ``width`` is too narrow for ``n`` different words."""
    if (1 << width) - 1 < n:
        return [[int(i == j) for i in range(n)] for j in range(n)]
    return [rng.sample(range(1, 1 << width), n) for _ in range(rounds)]


@pytest.mark.parametrize("n_inputs, sel_width, none_at", [
    (21, 5, (0,)),            # a connection box: constant 0, 20 tracks, 11 values out of range
    (5, 3, ()),               # a MEM tile's switch box: 3 tracks + 2 core outputs
    (4, 2, ()),               # a PE tile's: every select value defined
    (3, 2, ()),               # no core output: select 3 out of range
    (9, 4, (0, 4, 5)),        # holes inside the range
    (1, 1, ()),
    (5, 6, (2,)),             # a select wider than the inputs need (a register-file address)
    (1, 3, ()),
])
@pytest.mark.parametrize("tree_bits", [None, 0, 1, 2, 9])
def test_mux_tree_matches_switch(n_inputs, sel_width, none_at, tree_bits):
    width = 8
    m = Module()
    sel = Signal(sel_width)
    ins = [None if i in none_at else Signal(width, name=f"in{i}") for i in range(n_inputs)]
    out = Signal(width)
    m.d.comb += out.eq(mux_tree(sel, ins, tree_bits=tree_bits))
    ref = switch_reference(m, sel, ins, width, "ref")
    rng = random.Random(n_inputs * 100 + sel_width)

    async def bench(ctx):
        for values in patterns(rng, n_inputs, width):
            for sig, v in zip((s for s in ins if s is not None), values):
                ctx.set(sig, v)
            for v in range(1 << sel_width):
                ctx.set(sel, v)
                want = 0 if v >= n_inputs or ins[v] is None else ctx.get(ins[v])
                assert ctx.get(ref) == want, v
                assert ctx.get(out) == want, v

    sim = Simulator(m)
    sim.add_testbench(bench)
    sim.run()


def test_mux_tree_rejects_too_many_inputs():
    with pytest.raises(ValueError, match="5 inputs for a 2-bit select"):
        mux_tree(Signal(2), [Signal(4)] * 5)


@pytest.mark.parametrize("width, tracks", [(16, 5), (1, 5), (16, 3), (16, 2)])
def test_connection_box_matches_switch(width, tracks):
    spec = ConnectionBoxSpec(port="data0", width=width, tracks=tracks)
    dut = ConnectionBox(spec)
    m = Module()
    m.submodules.dut = dut
    ins = [None if src is None else getattr(dut, track_name("in", src.side, src.track))
           for src in spec.inputs()]
    ref = switch_reference(m, dut.sel, ins, width, "ref")
    rng = random.Random(tracks)
    assert len(ins) < 1 << spec.sel_width         # there are out-of-range select values

    async def bench(ctx):
        for values in patterns(rng, len(ins) - 1, width):
            for sig, v in zip(ins[1:], values):
                ctx.set(sig, v)
            for v in range(1 << spec.sel_width):
                ctx.set(dut.sel, v)
                want = ctx.get(ins[v]) if 1 <= v < len(ins) else 0
                assert ctx.get(ref) == want, v
                assert ctx.get(dut.out) == want, v

    sim = Simulator(m)                # purely combinational: no clock
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.parametrize("width, core_outputs, topology", [
    (16, ("d0", "d1"), "wilton"),     # MEM tile: 5 inputs, selects 5..7 out of range
    (16, ("res",), "imran"),          # PE / IO tile: 4 inputs, every select defined
    (1, (), "disjoint"),              # no core output: select 3 out of range
])
def test_switch_box_matches_switch(width, core_outputs, topology):
    spec = SwitchBoxSpec(width=width, tracks=5, topology=topology, core_outputs=core_outputs)
    dut = SwitchBox(spec)
    m = Module()
    m.submodules.dut = dut
    refs = {}
    for s, t in spec.outputs():
        ins = [getattr(dut, track_name("in", src.side, src.track)) if src.kind == "track"
               else getattr(dut, f"core_{src.port}") for src in spec.mux_inputs(s, t)]
        refs[s, t] = switch_reference(m, getattr(dut, f"sel_{s}_{t}"), ins, width,
                                      f"ref_{s}_{t}")
    sources = [getattr(dut, track_name("in", s, t)) for s, t in spec.outputs()] + \
        [getattr(dut, f"core_{p}") for p in core_outputs]
    rng = random.Random(width + len(core_outputs))

    async def bench(ctx):
        for values in patterns(rng, len(sources), width, rounds=2):
            for sig, v in zip(sources, values):
                ctx.set(sig, v)
            for v in range(1 << spec.sel_width):
                for s, t in spec.outputs():
                    ctx.set(getattr(dut, f"sel_{s}_{t}"), v)
                    ctx.set(getattr(dut, f"pipe_{s}_{t}"), 0)
                want = {}
                for (s, t), ref in refs.items():
                    srcs = spec.mux_inputs(s, t)
                    want[s, t] = 0 if v >= len(srcs) else ctx.get(
                        getattr(dut, track_name("in", srcs[v].side, srcs[v].track))
                        if srcs[v].kind == "track" else getattr(dut, f"core_{srcs[v].port}"))
                    assert ctx.get(ref) == want[s, t], (s, t, v)
                    assert ctx.get(getattr(dut, f"out_{s}_{t}")) == want[s, t], (s, t, v)
                # the pipeline register holds the same mux output
                for s, t in spec.outputs():
                    ctx.set(getattr(dut, f"pipe_{s}_{t}"), 1)
                await ctx.tick()
                for s, t in spec.outputs():
                    assert ctx.get(getattr(dut, f"out_{s}_{t}")) == want[s, t], (s, t, v)

    run_testbench(m, bench)
