"""Gate-level energy runs (docs/energy.md), large: `make regress`.

Table 7.2's four designs on the 3x3 convolution's line buffer as the compiler maps it onto each
(sim/energy/workload.py): every run's testbench checks each read word at its cycle (a wrong
configuration fails it: the negative controls), the words expected are the image delayed by 64
and 128 cycles, the SRAM accesses equal what the configurations ask for, and the all-zero image
(the negative control of the switching) switches less logic than the random one. The whole
accelerator (a two-level gpyr on cgra_4x4, which leaves 7 of the 20 tiles unused; gaussian no
longer fits cgra_4x4's 12 PE tiles): the gate-level netlist reproduces the golden output in the
predicted cycles, all-zero inputs cost less dynamic energy than random ones, a tile no route or
node uses costs clock energy and no data energy, and twice the output pixels cost about twice
the data energy."""
import json
import pickle

import pytest

pytestmark = [pytest.mark.rtl, pytest.mark.regress]

DESIGNS = ("pub", "dp", "dppe", "buffet")


@pytest.fixture(scope="module")
def table():
    from sim.energy.blocks import design_energy
    return {d: (design_energy(d), design_energy(d, zero=True)) for d in DESIGNS}


def _spec(delay: int, start: int) -> list[tuple[int, int]]:
    """The image's pixels delayed by ``delay`` cycles after their input at ``start + x +
    64y`` (written from the unified buffer's specification, not from a model)."""
    from sim.tb.pub_cases import delayed, image
    return [(start + c, v) for c, v in delayed(image(64, 64, seed=11), delay)]


def test_table_7_2_workload_reads_the_delayed_rows():
    from sim.energy.workload import buffet_jobs, dp_case, dppe_case, line_buffer_blocks, \
        line_image, pub_case
    pub = pub_case()
    start = min(pub.inputs[0])
    assert pub.inputs[0] == {start + k: v for k, v in enumerate(line_image())}
    assert (pub.expected[0], pub.expected[1]) == (_spec(64, start), _spec(128, start))
    blocks = line_buffer_blocks()
    assert [b.name for b in blocks] == ["hw_input_d64", "hw_input_d128"]
    for b, delay in zip(blocks, (64, 128)):
        c = dp_case(b)
        assert c.inputs == pub.inputs and c.expected[0] == _spec(delay, start)
    _writes, pe = dppe_case()
    assert pe.inputs == pub.inputs and pe.expected == pub.expected
    jobs = buffet_jobs()
    assert [j.expected for j in jobs] == [line_image()] * 2
    assert [j.fill_at[0] for j in jobs] == [start] * 2
    assert [j.read_at[0] for j in jobs] == [start + 63, start + 127]


def test_table_7_2_sram_accesses_follow_the_configuration(table):
    def macros(design, case):
        return [(d["kind"], d["depth"], d["width"], d["writes"], d["reads"])
                for d in table[design][0]["srams"][case].values()]
    # 4096 pixels in: one wide write per 4 words; two rows out: one wide read per 4 words each
    assert macros("pub", "line") == [("sp", 512, 64, 1024, 2048)]
    for case in ("hw_input_d64", "hw_input_d128"):
        assert macros("dp", case) == [("dp", 2048, 16, 4096, 4096)]
    assert macros("dppe", "line") == [("dp", 2048, 16, 4096, 4096)] * 2
    # one buffet run of both delay lines, one after the other
    assert macros("buffet", "line") == [("dp", 2048, 16, 8192, 8192)]
    assert {d: r["accesses"] for d, (r, _z) in table.items()} == \
        {"pub": 12288, "dp": 16384, "dppe": 16384, "buffet": 16384}


def test_table_7_2_zero_image_switches_less(table):
    assert sorted(table) == sorted(DESIGNS)
    for design, (rand, zero) in table.items():
        assert zero["dynamic_logic_pj"] < rand["dynamic_logic_pj"], design
        # the SRAM accesses and the clock are the same: only data switching differs
        assert zero["categories_pj"]["SRAM"] == pytest.approx(rand["categories_pj"]["SRAM"])
        assert zero["categories_pj"]["clock"] == pytest.approx(rand["categories_pj"]["clock"])


def test_table_7_2_controller_pes_are_counted(table):
    """DP SRAM + PEs: the PE cores' energy is booked as controllers, the SRAM cores' as SRAM
    and port logic; the buffet's own logic as buffet control."""
    pe = table["dppe"][0]["categories_pj"]
    assert pe["controllers"] > 0 and pe["SRAM"] > 0
    assert table["buffet"][0]["categories_pj"]["buffet control"] > 0
    assert "controllers" not in table["buffet"][0]["categories_pj"]


def test_table_7_2_runs_fail_on_a_wrong_configuration(tmp_path):
    """Negative controls of the runs' check: the DP-SRAM + PEs with its second read
    controller's schedule generator starting one cycle late delivers its words a cycle late,
    and the buffets releasing no word after a read (so every read returns the first pixel)
    deliver wrong words: both runs fail (the cocotb runner exits)."""
    from dataclasses import asdict, replace
    from sim.energy.blocks import _model, simulate
    from sim.energy.workload import buffet_jobs, dppe_case, dppe_controllers, pe_slots
    from sim.runner import BUILD as SIM_BUILD
    from ubgen.array.tilespec import TILE_ADDR_WIDTH
    from ubgen.pe.spec import pe_regmap
    writes, case = dppe_case()
    k = [name for name, _n in pe_slots(dppe_controllers())].index("rd1_sg")
    addr = (k << TILE_ADDR_WIDTH) | pe_regmap()["data2_const"].offset
    bad = [(a, v + 1 if a == addr else v) for a, v in writes]
    assert bad != writes
    path = tmp_path / "dppe.pickle"
    path.write_bytes(pickle.dumps((bad, case)))
    with pytest.raises((AssertionError, SystemExit)):
        simulate("dppe", "energy_file", {"UBGEN_ENERGY_CASE": str(path)})
    log = (SIM_BUILD / _model("dppe", "pub", print).name / "test_energy_file.log").read_text()
    assert "port 1: 4096 words, expected 4096; first difference at #0: got (131," in log
    jobs = [asdict(replace(j, requests=[(i, 0) for i, _s in j.requests]))
            for j in buffet_jobs()]
    jobs_path, results = tmp_path / "jobs.json", tmp_path / "results.json"
    jobs_path.write_text(json.dumps(jobs))
    with pytest.raises((AssertionError, SystemExit)):
        simulate("buffet", "buffet_jobs", {"UBGEN_BUFFET_JOBS": str(jobs_path),
                                           "UBGEN_BUFFET_RESULTS": str(results)})
    got = json.loads(results.read_text())
    assert [r["passed"] for r in got] == [False, False]
    assert all(r["mismatches"] > 4000 for r in got)


@pytest.fixture(scope="module", params=["gate", "shortcut"])
def control(request):
    """The control app's runs (bench/energy.py CONTROL), on the whole gate-level array and by
    the shortcut (RTL toggles priced by the tile characterisation)."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from energy import CONTROL, CONTROL_DOUBLE, CONTROL_HALF, app_point
    app, arch, sizes = CONTROL
    m = request.param
    runs = {"random": lambda: app_point(app, arch, sizes, method=m),
            "zero": lambda: app_point(app, arch, sizes, zero=True, method=m),
            "half": lambda: app_point(app, arch, CONTROL_HALF, method=m),
            "double": lambda: app_point(app, arch, CONTROL_DOUBLE, method=m)}
    return _Lazy(runs)


class _Lazy(dict):
    """The control runs, each simulated when a test first asks for it (a gate-level run takes
    minutes)."""
    def __init__(self, makers):
        super().__init__()
        self.makers = makers

    def __missing__(self, key):
        self[key] = self.makers[key]()
        return self[key]

    def all(self):
        return {k: self[k] for k in self.makers}


def _data(p) -> float:
    c = p["energy"]["categories_pj"]
    return sum(v for k, v in c.items() if k not in ("clock", "SRAM"))


def test_gate_level_run_passes(control):
    for key, p in control.all().items():
        assert p["energy"]["passed"], (key, p["energy"]["failures"])
        assert p["energy"]["window_cycles"] == p["energy"]["cycles_measured"] + 1


def test_zero_inputs_cost_less_dynamic_energy(control):
    assert _data(control["zero"]) < _data(control["random"])


def test_unused_tile_costs_clock_and_no_data(control):
    p = control["random"]
    tiles = p["energy"]["tiles"]
    unused = set(tiles) - set(p["configured_tiles"])
    assert unused, "the bitstream configures every tile"
    for t in unused:
        assert tiles[t]["clock_pj"] > 0, t
        assert tiles[t]["data_pj"] == 0 and tiles[t].get("sram_pj", 0) == 0, (t, tiles[t])
    # and a configured tile does switch (the control of the control)
    used = [t for t in p["configured_tiles"] if t in tiles]
    assert any(tiles[t]["data_pj"] > 0 for t in used)


def test_twice_the_pixels_about_twice_the_data_energy(control):
    ratio = _data(control["double"]) / _data(control["half"])
    assert 1.7 < ratio < 2.3, ratio


# --- an unused tile's parts at gate level (docs/energy.md "An unused tile") ------------------

def _random_tb(ports: dict, top: str, noise: set[str], cycles: int = 200,
               rise: tuple[str, ...] = ()) -> str:
    """A testbench for the gate-level ``top``: its inputs from the plusarg file ``cfg`` (one hex
    value per input port that is not a ``noise`` port, in port order) held from reset on, except
    the ``noise`` ports, which take new random values every cycle (unless ``+quiet=1``: then 0),
    and the ``rise`` ports, which are 0 until two cycles into the counted window and then take
    their held value (``run`` rising at ``START``, as in an application's run); ``cycles``
    cycles are counted after three settling ones."""
    ins = [p for p, d in ports.items() if d["direction"] == "input" and p not in ("clk", "rst")]
    decl = [f"  reg [{len(ports[p]['bits']) - 1}:0] {p} = 0;" for p in ins]
    conns = [".clk(clk)", ".rst(rst)", ".energy_clk(clk)", ".energy_en(en)"] + \
        [f".{p}({p if p in ins else ''})" for p in ports if p not in ("clk", "rst")]
    rand = [f"      {p} = quiet ? 0 : {{{(len(ports[p]['bits']) + 31) // 32}{{$random}}}};"
            for p in ins if p in noise]
    held = [q for q in ins if q not in noise]
    hold = [f"    {p} = v[{i}];" for i, p in enumerate(held) if p not in rise]
    late = [f"      if (i == 5) {p} = v[{held.index(p)}];" for p in rise]
    return "\n".join([
        "`timescale 1ns/1ps", "module tb;", "  reg clk = 0, rst = 1, en = 0;",
        "  always #5 clk = ~clk;", *decl, f"  reg [31:0] v [0:{len(ins)}];",
        "  reg [1023:0] fn; integer i, quiet;", f"  {top} dut(" + ", ".join(conns) + ");",
        "  initial begin", '    if ($value$plusargs("cfg=%s", fn)) $readmemh(fn, v);',
        '    if (!$value$plusargs("quiet=%d", quiet)) quiet = 0;', *hold,
        "    repeat (3) @(negedge clk); rst = 0;",
        f"    for (i = 0; i < {cycles + 3}; i = i + 1) begin", *rand,
        "      if (i == 3) en = 1;", *late, "      @(negedge clk);", "    end",
        "    en = 0; @(negedge clk); $finish;", "  end", "endmodule", ""])


def _gate_block(component, top: str, work, noise: set[str], hops=(), rise=()):
    """``component`` mapped to gates with its switching counted (its inputs entering from
    outside, as a tile's do; ``hops``: output ports counted as routing hops; ``rise``: ports
    that rise inside the window, :func:`_random_tb`): a function of the held input values
    ``{port: value}`` returning the run's summed counts, and under ``"by_module"`` the
    modules that switched (driven-net toggles and input loads, docs/energy.md)."""
    import subprocess
    from amaranth.back import verilog
    from sim.energy.gates import emit_verilog, parse_counts, synthesize
    from sim.runner import build_model
    src = work / f"{top}.v"
    src.write_text(verilog.convert(component, name=top))
    netlist = synthesize([src], top, work / "synth")
    ports = netlist["modules"][top]["ports"]
    files, infos = emit_verilog(netlist, top, work / "gl", tiles={top},
                                hop_ports={top: set(hops)})
    (work / "tb.v").write_text(_random_tb(ports, top, noise, rise=tuple(rise)))
    model = build_model(name=f"energy_unit_{top}", sources=[*files, work / "tb.v"], top="tb",
                        timing=True, opt="-O0")
    held = [p for p, d in ports.items() if d["direction"] == "input"
            and p not in ("clk", "rst") and p not in noise]

    def run(values: dict, quiet: bool = False) -> dict:
        f = work / "held.hex"
        f.write_text("".join(f"{values.get(p, 0):x}\n" for p in held) or "0\n")
        out = subprocess.run([str(model.binary), f"+cfg={f}", f"+quiet={int(quiet)}"],
                             capture_output=True, text=True, check=True).stdout
        mods = parse_counts(out)["modules"]
        sums = {k: sum(m[k] for m in mods.values())
                for k in ("tdrv", "tfan", "tin", "thop", "cycles")}
        sums["by_module"] = {path: (m["tdrv"], m["tfan"] - m["tin"], m["tin"])
                             for path, m in mods.items() if m["tdrv"] or m["tfan"]}
        return sums
    return run


def test_an_unconfigured_mem_core_switches_nothing_while_running(tmp_path):
    """The MEM tile's core (PUB and register file) with its configuration at reset and ``run``
    high for 200 cycles: no net switches (before the PUB's cycle counter held at 0 with nothing
    scheduled, its 20-bit count switched every cycle). Negative control: one controller
    configured (``in2agg_0_dim`` = 1, written every cycle) makes the PUB count, and switch."""
    from ubgen.arch import load_arch
    from ubgen.mem.mem_tile import MemCore
    core = MemCore(load_arch("cgra_4x4"))
    dim = {r.name: r.offset for r in core.regmap.registers}["in2agg_0_dim"]
    run = _gate_block(core, "mem_core", tmp_path, noise=set())
    idle = run({"run": 1})
    assert idle["cycles"] >= 200 and idle["tdrv"] == 0 and idle["tfan"] == 0, idle
    busy = run({"run": 1, "cfg__we": 1, "cfg__addr": dim, "cfg__wdata": 1})
    assert busy["tdrv"] > 0 and busy["tfan"] > busy["tin"], busy


@pytest.mark.parametrize("kind", ["pe", "mem"])
def test_unrouted_switch_box_outputs_pass_nothing_on(kind, tmp_path):
    """A tile's 16-bit switch box with every incoming track and core output random in every
    cycle and its selects at reset (a used tile's unused outputs, an unused tile's): no output
    bit switches (no routing hop), so the neighbour sees nothing. Negative control: select 0
    (the reset value of the first RTL) passes a track on every output."""
    from ubgen.arch import load_arch
    from ubgen.array.layout import ArrayLayout
    from ubgen.interconnect.switch_box import SwitchBox
    spec = ArrayLayout(load_arch("cgra_4x4")).specs[kind].sbs[16]
    noise = {f"in_{s}_{t}" for s, t in spec.outputs()} | \
        {f"core_{p}" for p in spec.core_outputs}
    run = _gate_block(SwitchBox(spec), f"sb16_{kind}", tmp_path, noise,
                      hops=[f"out_{s}_{t}" for s, t in spec.outputs()])
    quiet = run({f"sel_{s}_{t}": spec.sel_reset for s, t in spec.outputs()})
    assert quiet["cycles"] >= 200 and quiet["thop"] == 0, quiet
    forwarding = run({})
    assert forwarding["thop"] > 0, forwarding


# per tile kind, the register whose value makes the tile take part in a run (the gate of its
# ``run``, docs/energy.md "An unused tile"): a PE whose op keeps state, a configured controller
_TAKES_PART = {"pe": ("op", 29), "io": ("glb2f_dim", 1), "mem": ("in2agg_0_dim", 1)}


@pytest.mark.parametrize("kind", ["pe", "io", "mem"])
def test_an_unused_tile_switches_nothing_when_run_rises(kind, tmp_path):
    """A whole tile as the array instantiates it (``PackedTile``), configuration at reset,
    every incoming track quiet (as next to any traffic now: no tile passes data on an output
    no route uses), ``run`` rising two cycles into the 200 counted ones (as at ``START``): no
    net inside the tile switches; only ``run``'s own wire loads the tile's input gates (``tin``,
    interconnect), which shows the edge did arrive in the window. Negative controls: the same
    tile with the register that makes it take part in a run written (a PE's op COUNTER, one
    controller's ``dim``) switches when ``run`` rises; random incoming tracks (a neighbour
    forwarding, as with the first RTL's select reset 0) switch nets of the unused tile."""
    from ubgen.arch import load_arch
    from ubgen.array.layout import ArrayLayout
    from ubgen.array.tile import PackedTile
    from ubgen.pe.ops import PEOp
    arch = load_arch("cgra_4x4")
    lay = ArrayLayout(arch)
    spec, core = lay.specs[kind], lay.cores[kind](arch)
    reg, value = _TAKES_PART[kind]
    assert kind != "pe" or value == PEOp.COUNTER
    offset = {r.name: r.offset for r in core.regmap.registers}[reg]
    tracks = {f"sb{w}_in" for w in spec.widths}
    run = _gate_block(PackedTile(spec, core), f"tile_{kind}", tmp_path, noise=tracks,
                      rise=("run",))
    idle = run({"run": 1}, quiet=True)
    assert idle["cycles"] >= 200 and idle["tin"] > 0, idle
    assert idle["tdrv"] == 0 and idle["tfan"] == idle["tin"], idle
    used = run({"run": 1, "cfg__we": 1, "cfg__addr": offset, "cfg__wdata": value}, quiet=True)
    assert used["tdrv"] > 0, used
    traffic = run({"run": 1})
    assert traffic["tin"] > 0 and traffic["tdrv"] > 0, traffic


COUNTER_V = """module cnt(clk, go, q);
  input clk;
  input go;
  output [3:0] q;
  reg [3:0] q = 4'd0;
  always @(posedge clk) q <= q + 4'd1;
endmodule
"""


def _counter_model(tmp_path):
    """The free-running 4-bit counter ``cnt`` with the event counters and a testbench that
    raises its window ``go`` for ``+edges=`` clock edges (after 5 and before 40 more edges of
    counting)."""
    from sim.energy.events import instrument_events
    from sim.runner import build_model
    (tmp_path / "cnt.v").write_text(instrument_events(COUNTER_V, {"cnt"}, top="cnt",
                                                      window="go"))
    (tmp_path / "tb.v").write_text("\n".join([
        "`timescale 1ns/1ps", "module tb;", "  reg clk = 0, go = 0;", "  always #5 clk = ~clk;",
        "  cnt dut(.clk(clk), .go(go), .q());", "  integer n;", "  initial begin",
        '    if (!$value$plusargs("edges=%d", n)) n = 0;',
        "    repeat (5) @(negedge clk); go = 1; repeat (n) @(negedge clk); go = 0;",
        "    repeat (40) @(negedge clk); $finish;", "  end", "endmodule", ""]))
    return build_model(name="energy_events_counter", top="tb", timing=True,
                       sources=[tmp_path / "cnt.v", tmp_path / "tb.v"], opt="-O0").binary


def _events(binary, edges: int) -> dict:
    import subprocess
    from sim.energy.events import parse_events
    out = subprocess.run([str(binary), f"+edges={edges}"], capture_output=True, text=True,
                         check=True).stdout
    return dict(parse_events(out)["tb.dut"]["signals"])


def test_event_counters_count_each_toggle_in_the_window_once(tmp_path):
    """docs/energy.md "Shortcut": 16 increments of a 4-bit counter toggle 16 + 8 + 4 + 2 = 30
    bits whatever the start; the window's own rise (``go``) 1 more; the counter's 40 edges after
    the window and 5 before it count nothing."""
    binary = _counter_model(tmp_path)
    assert _events(binary, 16) == {"~rest": 31, "ubgen_cyc": 16}
    # control: twice the window, twice the counter's toggles (the rise of go once)
    assert _events(binary, 32) == {"~rest": 61, "ubgen_cyc": 32}


RUN_V = """module top(clk, start, q);
  input clk;
  input start;
  output [3:0] q;
  reg run = 1'b0;
  reg done = 1'b0;
  reg [3:0] n = 4'd0;
  always @(posedge clk) begin
    run <= run | start;
    if (run & ~done) n <= n + 4'd1;
    if (n == 4'd9) done <= 1'b1;
  end
  child c (
    .run(run),
    .q(q)
  );
endmodule
module child(run, q);
  input run;
  output [3:0] q;
  wire copy;
  assign copy = run;
  assign q = 4'd0;
endmodule
"""


def _run_window_events(tmp_path, lag: bool) -> dict:
    """The counts of ``RUN_V`` (a top whose ``run`` register the edge before the window sets,
    as the host's RUN write does, window ``run & ~done`` of ten edges, and a child that only
    carries copies of ``run``), instrumented as the array's model is (``lag``) or not."""
    import subprocess
    from sim.energy.events import instrument_events, parse_events
    from sim.runner import build_model
    d = tmp_path / ("lag" if lag else "plain")
    d.mkdir()
    (d / "top.v").write_text(instrument_events(RUN_V, {"top", "child"}, top="top", lag=lag))
    (d / "tb.v").write_text("\n".join([
        "`timescale 1ns/1ps", "module tb;", "  reg clk = 0, start = 0;", "  always #5 clk = ~clk;",
        "  top dut(.clk(clk), .start(start), .q());", "  initial begin",
        "    repeat (4) @(negedge clk); start = 1;", "    repeat (30) @(negedge clk); $finish;",
        "  end", "endmodule", ""]))
    binary = build_model(name=f"energy_events_run_{d.name}", top="tb", timing=True,
                         sources=[d / "top.v", d / "tb.v"], opt="-O0").binary
    out = subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout
    return {p: dict(i["signals"]) for p, i in parse_events(out).items()}


def test_the_arrays_window_does_not_count_the_run_write(tmp_path):
    """docs/energy.md "Shortcut": in the array's model the window's toggles are the changes its
    edges make. ``n`` counts 0 -> 10 in the ten window edges (18 bit toggles) and ``done``
    rises at the last one: 19 in the top; ``run`` rose at the edge before the window, so the
    child (only copies of ``run``, wires at gate level, as in an unused tile) counts 0.
    Negative control: counted at the edge itself, ``run``'s rise counts in the top and in both
    of the child's signals, the last edge's increment (2 toggles) and ``done`` do not."""
    lag = _run_window_events(tmp_path, lag=True)
    assert lag == {"tb.dut": {"~rest": 19, "ubgen_cyc": 10}, "tb.dut.c": {"~rest": 0}}
    plain = _run_window_events(tmp_path, lag=False)
    assert plain == {"tb.dut": {"~rest": 17, "ubgen_cyc": 10}, "tb.dut.c": {"~rest": 2}}


# --- the counting model's wrapper rewrite (docs/energy.md "Cost") ----------------------------

def _counts(ev: dict) -> dict:
    """Every module instance's counts of an event run: module, counted bits, every group's
    toggles, the window's cycles and the macros' accesses."""
    return {p: (i["module"], i["bits"], dict(i["signals"])) for p, i in ev["instances"].items()}


@pytest.fixture(scope="module")
def gaussian_events():
    """gaussian 64x64 on cgra_8x8 on the counting model with Verilator's own tile wrappers and
    with the rewritten ones (sim/hier_memo.py), and its all-zero image on the rewritten one;
    the host polls ``DONE`` every 256 cycles (not every half second of wall time), so the AXI
    traffic in the window is the same whatever the model's speed."""
    import numpy as np
    from compiler.backend.bundle import make_bundle
    from compiler.interp import run as interp
    from compiler.pipeline import compile_app
    from sim.energy.shortcut import run_events
    mp = pytest.MonkeyPatch()
    mp.setenv("UBGEN_E2E_POLL", "256")
    try:
        r = compile_app("gaussian", "cgra_8x8", None, until="bundle")
        zeros = {k: np.zeros_like(v) for k, v in r.inputs.items()}
        zero = make_bundle(r.netlist, r.arch, r.pnr, zeros, interp(r.program, zeros))
        return {"verilator": run_events(r.bundle, r.arch, rewrite=False),
                "rewritten": run_events(r.bundle, r.arch, rewrite=True),
                "zero": run_events(zero, r.arch, rewrite=True)}
    finally:
        mp.undo()


def test_the_wrapper_rewrite_counts_exactly_the_same_events(gaussian_events):
    """The rewrite is exact for the counters (clocked registers of the RTL, on their own clock
    ``ubgen_ck``): every instance's every count equal, with fewer evaluations."""
    ref, new = gaussian_events["verilator"], gaussian_events["rewritten"]
    assert ref["result"]["passed"] and new["result"]["passed"]
    assert ref["model"]["options"].hier_memo is False
    assert new["model"]["options"].hier_fall_skip is True
    a, b = _counts(ref), _counts(new)
    assert len(a) > 500                                  # every module instance of the array
    assert sum(n for _m, _b, s in a.values() for n in s.values()) > 10**6
    assert sum(s.get("ubgen_cyc", 0) for _m, _b, s in a.values()) == 4105
    assert b == a


def test_the_count_comparison_sees_other_switching(gaussian_events):
    """Negative control of the comparison above: the same configuration with an all-zero image
    (same cycles, same SRAM accesses) counts differently, in the tiles that carry data."""
    a = _counts(gaussian_events["rewritten"])
    z = _counts(gaussian_events["zero"])
    assert gaussian_events["zero"]["result"]["passed"]
    assert z.keys() == a.keys() and z != a
    differ = {p for p in a if a[p] != z[p]}
    assert any(".tile_r" in p for p in differ)
    assert sum(s.get("ubgen_cyc", 0) for _m, _b, s in z.values()) == 4105


def _no_plain_model(monkeypatch) -> list:
    """``sim.array_run.model_for`` recording its calls (the plain model): ENERGY=1 must not ask
    for it."""
    import sim.array_run
    calls = []
    real = sim.array_run.model_for
    monkeypatch.setattr(sim.array_run, "model_for",
                        lambda *a, **k: calls.append(a) or real(*a, **k))
    return calls


def test_energy_is_one_run_with_the_verdict_of_a_plain_run(tmp_path, monkeypatch):
    """``make sim APP=gaussian ENERGY=1``: one run, on the counting model, whose record carries
    the plain run's verdict (bit-exact, measured == predicted cycles, GLB writes, ERROR 0) and
    the energy of the same run."""
    from sim.main import run_array
    calls = _no_plain_model(monkeypatch)
    rec = run_array("gaussian", "cgra_8x8", {}, 0, out_dir=tmp_path, log=lambda _m: None,
                    progress=None, energy="shortcut")
    assert rec["passed"] and rec["match"], rec["failures"]
    assert rec["model_kind"] == "event-counting" and calls == []
    assert rec["cycles_measured"] == rec["cycles_predicted"] == 4104
    assert rec["glb_writes"] == rec["output_writes"] and rec["error"] == 0
    e = rec["energy"]
    assert e["passed"] and e["window_cycles"] == 4105 and e["output_pixels"] == 3844
    assert e["cycles_measured"] == rec["cycles_measured"]           # the same run


def test_energy_run_fails_a_wrong_bundle(tmp_path, monkeypatch):
    """Negative control: the same flow with one expected output word wrong fails the record
    (the counting run's testbench compares every word), and nothing is priced."""
    import sim.main as sim_main
    from sim.main import run_array
    real = sim_main._place_and_bundle

    def wrong(result, say):
        pnr, bundle, seconds = real(result, say)
        outs = [list(w) for w in bundle["glb_outputs"]]
        outs[0][1] ^= 1
        return pnr, dict(bundle, glb_outputs=outs), seconds
    monkeypatch.setattr(sim_main, "_place_and_bundle", wrong)
    calls = _no_plain_model(monkeypatch)
    rec = run_array("gaussian", "cgra_8x8", {}, 0, out_dir=tmp_path, log=lambda _m: None,
                    progress=None, energy="shortcut")
    assert not rec["passed"] and not rec["match"]
    assert [f for f in rec["failures"] if "1 output words differ" in f], rec["failures"]
    assert rec["cycles_measured"] == rec["cycles_predicted"]          # only the word is wrong
    assert "energy" not in rec and calls == []


def test_a_broken_rewrite_changes_the_counts(gaussian_events, tmp_path, monkeypatch):
    """Negative control at the array: the counting model built (in a directory of its own) with
    a rewrite that, on a skipped falling edge, records ``clk``'s trigger value but not the
    counters' ``ubgen_ck``: the design still runs right (bit-exact in the predicted cycles),
    and the counts differ from the exact ones (the counters miss most rising edges)."""
    import sim.energy.shortcut as sc
    import sim.hier_memo as hm
    from compiler.pipeline import compile_app
    real = hm.skip_falling_edge
    record = " handlep__V->rootp->__Vtrigprevexpr___TOP__ubgen_ck__0 = handlep__V->ubgen_ck;"

    def broken(text, block, rise_ico=False):
        good = real(text, block, rise_ico)
        assert record in good, block
        return good.replace(record, "")
    monkeypatch.setattr(hm, "skip_falling_edge", broken)
    monkeypatch.setattr(sc, "BUILD", tmp_path)
    monkeypatch.setenv("UBGEN_E2E_POLL", "256")
    r = compile_app("gaussian", "cgra_8x8", None, until="bundle")
    ev = sc.run_events(r.bundle, r.arch, rewrite=True)
    assert ev["result"]["passed"], ev["result"]["failures"]
    a, b = _counts(gaussian_events["rewritten"]), _counts(ev)
    assert b.keys() == a.keys() and b != a
    toggles = lambda c: sum(n for _m, _b, s in c.values() for k, n in s.items()
                            if not k.startswith("ubgen_"))
    assert toggles(b) < toggles(a)
