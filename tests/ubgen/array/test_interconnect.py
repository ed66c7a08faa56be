"""Switch box, connection box and pipeline register (Amaranth simulator)."""
from __future__ import annotations

import itertools

import pytest
from amaranth.hdl import Module
from amaranth.sim import Simulator

from tests.gateware import run_testbench
from ubgen.interconnect import SIDES, SwitchBox, SwitchBoxSpec, ConnectionBox, \
    ConnectionBoxSpec, track_map
from ubgen.interconnect.switch_box import OPPOSITE, TOPOLOGIES

# The literature's turn formulas (Wilton 1997; Masud & Wilton 1999), written independently of
# the implementation's table: (from, to) -> f(t, W), taken mod W.
REFERENCE_TURNS = {
    "wilton": {("W", "S"): lambda t, w: w - t, ("S", "W"): lambda t, w: w - t,
               ("S", "E"): lambda t, w: t + 1, ("E", "S"): lambda t, w: t - 1,
               ("E", "N"): lambda t, w: 2 * w - 2 - t, ("N", "E"): lambda t, w: 2 * w - 2 - t,
               ("N", "W"): lambda t, w: t + 1, ("W", "N"): lambda t, w: t - 1},
    "imran": {("W", "N"): lambda t, w: w - t, ("N", "W"): lambda t, w: w - t,
              ("N", "E"): lambda t, w: t + 1, ("E", "N"): lambda t, w: t - 1,
              ("S", "E"): lambda t, w: w - t - 2, ("E", "S"): lambda t, w: w - t - 2,
              ("W", "S"): lambda t, w: t - 1, ("S", "W"): lambda t, w: t + 1},
}


@pytest.mark.parametrize("topology", TOPOLOGIES)
@pytest.mark.parametrize("w", [1, 2, 3, 5, 8])
def test_track_map_matches_literature(topology, w):
    for a, b in itertools.permutations(SIDES, 2):
        image = [track_map(topology, w, a, t, b) for t in range(w)]
        assert sorted(image) == list(range(w)), (a, b, image)      # a bijection
        for t in range(w):
            if topology == "disjoint" or OPPOSITE[a] == b:
                want = t
            else:
                want = REFERENCE_TURNS[topology][(a, b)](t, w) % w
            assert image[t] == want, (topology, a, b, t)
            assert track_map(topology, w, b, image[t], a) == t      # the reverse is the inverse


def test_wilton_turn_loop_changes_domain():
    # A net turning W->S->E->N->W around four switch boxes comes back on another track in a
    # Wilton box (t - 2 mod W), on the same one in a disjoint box.
    w = 5
    for t in range(w):
        x = t
        for a, b in (("W", "S"), ("S", "E"), ("E", "N"), ("N", "W")):
            x = track_map("wilton", w, OPPOSITE[a], x, b)
        y = t
        for a, b in (("W", "S"), ("S", "E"), ("E", "N"), ("N", "W")):
            y = track_map("disjoint", w, OPPOSITE[a], y, b)
        assert y == t
        assert x != t


def test_bad_topology():
    with pytest.raises(ValueError, match="unknown switch-box topology"):
        SwitchBoxSpec(width=16, tracks=5, topology="benes")


def _value(i: int, width: int) -> int:
    return (0x1111 * (i + 1) + 7 * i) & ((1 << width) - 1)


@pytest.mark.parametrize("topology", TOPOLOGIES)
def test_switch_box_mux_every_select(topology):
    spec = SwitchBoxSpec(width=16, tracks=3, topology=topology, core_outputs=("res", "res2"),
                         pipeline=True)
    dut = SwitchBox(spec)
    inputs = {(s, t): getattr(dut, f"in_{s}_{t}") for s in SIDES for t in range(3)}
    values = {}

    async def bench(ctx):
        for k, (key, sig) in enumerate(inputs.items()):
            values[key] = _value(k, 16)
            ctx.set(sig, values[key])
        for k, p in enumerate(spec.core_outputs):
            values[p] = _value(100 + k, 16)
            ctx.set(getattr(dut, f"core_{p}"), values[p])
        assert len(set(values.values())) == len(values)
        for s, t in spec.outputs():
            srcs = spec.mux_inputs(s, t)
            assert len(srcs) == 3 + 2
            for i, src in enumerate(srcs):
                ctx.set(getattr(dut, f"sel_{s}_{t}"), i)
                want = values[(src.side, src.track)] if src.kind == "track" else values[src.port]
                if src.kind == "track":
                    assert src.side != s
                    # the topology's definition, from the input's point of view
                    assert track_map(topology, 3, src.side, src.track, s) == t
                assert ctx.get(getattr(dut, f"out_{s}_{t}")) == want, (s, t, i, src)

    run_testbench(dut, bench)


@pytest.mark.parametrize("kind", ["pe", "mem", "io"])
def test_switch_box_reset_select_passes_nothing_on(kind):
    """Every switch box the array builds resets its selects to the constant 0 (``zero_sel``,
    one past the mux inputs, with room in the select register), so an output no route
    configures is 0 whatever its tracks and its core carry (docs/energy.md "An unused tile").
    Negative control: select 0, the reset value before, passes a neighbour's track on."""
    from ubgen.array.layout import ArrayLayout
    from ubgen.arch import load_arch
    specs = ArrayLayout(load_arch("cgra_4x4")).specs[kind].sbs
    assert specs
    for spec in specs.values():
        regs = {name: (width, reset) for name, width, reset, _doc in spec.registers()}
        for s, t in spec.outputs():
            assert spec.zero_sel == len(spec.mux_inputs(s, t))
            assert regs[spec.sel_reg(s, t)] == (spec.sel_width, spec.zero_sel)
            assert spec.zero_sel < 1 << spec.sel_width
        dut = SwitchBox(spec)

        async def bench(ctx, spec=spec, dut=dut):
            mask = (1 << spec.width) - 1
            for k, (s, t) in enumerate(spec.outputs()):
                ctx.set(getattr(dut, f"in_{s}_{t}"), _value(k, spec.width) or mask)
            for k, p in enumerate(spec.core_outputs):
                ctx.set(getattr(dut, f"core_{p}"), _value(50 + k, spec.width) or mask)
            for s, t in spec.outputs():
                ctx.set(getattr(dut, f"sel_{s}_{t}"), spec.sel_reset)
            assert all(ctx.get(getattr(dut, f"out_{s}_{t}")) == 0 for s, t in spec.outputs())
            for s, t in spec.outputs():                 # the former reset value
                ctx.set(getattr(dut, f"sel_{s}_{t}"), 0)
            assert all(ctx.get(getattr(dut, f"out_{s}_{t}")) != 0 for s, t in spec.outputs())

        run_testbench(dut, bench)


def test_switch_box_pipeline_register_and_stall():
    spec = SwitchBoxSpec(width=16, tracks=2, topology="wilton", core_outputs=("res",))
    dut = SwitchBox(spec)
    core_sel = len(spec.mux_inputs("E", 1)) - 1        # the core output

    async def bench(ctx):
        ctx.set(dut.sel_E_1, core_sel)
        ctx.set(dut.core_res, 0x1234)
        assert ctx.get(dut.out_E_1) == 0x1234           # bypass: combinational
        ctx.set(dut.pipe_E_1, 1)
        await ctx.tick()
        assert ctx.get(dut.out_E_1) == 0x1234           # registered the cycle before
        ctx.set(dut.core_res, 0x5678)
        assert ctx.get(dut.out_E_1) == 0x1234           # not yet
        await ctx.tick()
        assert ctx.get(dut.out_E_1) == 0x5678           # one cycle of latency
        ctx.set(dut.stall, 1)
        ctx.set(dut.core_res, 0x9abc)
        for _ in range(3):
            await ctx.tick()
            assert ctx.get(dut.out_E_1) == 0x5678       # frozen while stalled
        ctx.set(dut.stall, 0)
        await ctx.tick()
        assert ctx.get(dut.out_E_1) == 0x9abc
        ctx.set(dut.pipe_E_1, 0)
        ctx.set(dut.core_res, 0x0042)
        assert ctx.get(dut.out_E_1) == 0x0042

    run_testbench(dut, bench)


def test_switch_box_without_pipeline_has_no_pipe_registers():
    spec = SwitchBoxSpec(width=1, tracks=2, topology="disjoint", pipeline=False)
    assert all(not name.endswith("_pipe") for name, *_ in spec.registers())
    assert "pipe_N_0" not in SwitchBox(spec).signature.members


def test_connection_box():
    spec = ConnectionBoxSpec(port="data0", width=16, tracks=3)
    dut = ConnectionBox(spec)

    async def bench(ctx):
        values = {}
        for k, (s, t) in enumerate((s, t) for s in SIDES for t in range(3)):
            values[s, t] = _value(k, 16)
            ctx.set(getattr(dut, f"in_{s}_{t}"), values[s, t])
        assert ctx.get(dut.out) == 0                    # reset select: constant 0
        for sel in range(1, 1 + 4 * 3):
            ctx.set(dut.sel, sel)
            side, track = SIDES[(sel - 1) // 3], (sel - 1) % 3   # documented encoding
            assert ctx.get(dut.out) == values[side, track]

    sim = Simulator(dut)              # purely combinational: no clock
    sim.add_testbench(bench)
    sim.run()


# --- boxes built for the array edge (FPGA synthesis, Tile ``edges``) ----------------------

@pytest.mark.parametrize("edges", [("N",), ("S", "W"), ("N", "E", "W")])
def test_switch_box_edges_match_tied_off_box(edges):
    """A switch box built for ``edges`` gives what the plain box gives with those sides'
    incoming tracks at 0 (as the array ties them), for every select value (out-of-range ones
    too) and through the pipeline registers, whatever its ignored edge inputs carry; its
    outgoing tracks on the edge sides are 0."""
    spec = SwitchBoxSpec(width=16, tracks=2, topology="wilton", core_outputs=("res", "res2"))
    ref, dut = SwitchBox(spec), SwitchBox(spec, edges)
    m = Module()
    m.submodules.ref, m.submodules.dut = ref, dut

    async def bench(ctx):
        for k, (s, t) in enumerate(spec.outputs()):
            ctx.set(getattr(dut, f"in_{s}_{t}"), _value(k, 16))   # garbage on the edge sides
            ctx.set(getattr(ref, f"in_{s}_{t}"), 0 if s in edges else _value(k, 16))
        for k, p in enumerate(spec.core_outputs):
            for box in (ref, dut):
                ctx.set(getattr(box, f"core_{p}"), _value(50 + k, 16))
        seen = set()
        for pipe in (0, 1):
            for sel in range(1 << spec.sel_width):
                for box in (ref, dut):
                    for s, t in spec.outputs():
                        ctx.set(getattr(box, f"sel_{s}_{t}"), sel)
                        ctx.set(getattr(box, f"pipe_{s}_{t}"), pipe)
                await ctx.tick()
                for s, t in spec.outputs():
                    got = ctx.get(getattr(dut, f"out_{s}_{t}"))
                    seen.add(got)
                    if s in edges:
                        assert got == 0, (s, t, sel)
                    else:
                        assert got == ctx.get(getattr(ref, f"out_{s}_{t}")), (s, t, sel, pipe)
        assert len(seen) >= 3                 # the comparison saw real data (core outputs)

    run_testbench(m, bench)


@pytest.mark.parametrize("edges", [("E",), ("N", "W")])
def test_connection_box_edges_match_tied_off_box(edges):
    spec = ConnectionBoxSpec(port="data0", width=16, tracks=3)
    ref, dut = ConnectionBox(spec), ConnectionBox(spec, edges)
    m = Module()
    m.submodules.ref, m.submodules.dut = ref, dut

    async def bench(ctx):
        for k, (s, t) in enumerate((s, t) for s in SIDES for t in range(3)):
            ctx.set(getattr(dut, f"in_{s}_{t}"), _value(k, 16))
            ctx.set(getattr(ref, f"in_{s}_{t}"), 0 if s in edges else _value(k, 16))
        nonzero = 0
        for sel in range(1 << spec.sel_width):
            ctx.set(ref.sel, sel)
            ctx.set(dut.sel, sel)
            assert ctx.get(dut.out) == ctx.get(ref.out), sel
            nonzero += ctx.get(dut.out) != 0
        assert nonzero == 3 * (4 - len(edges))

    sim = Simulator(m)
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.filterwarnings("ignore::amaranth.hdl.UnusedElaboratable")   # refused in __init__
def test_bad_edges_are_one_line_errors():
    spec = ConnectionBoxSpec(port="data0", width=16, tracks=3)
    with pytest.raises(ValueError, match=r"unknown side\(s\) X in edges") as e:
        ConnectionBox(spec, ("N", "X"))
    assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match="unknown side"):
        SwitchBox(SwitchBoxSpec(width=1, tracks=2, topology="wilton"), ("up",))
