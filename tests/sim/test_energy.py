"""The energy flow's parts (docs/energy.md): the switching counters of the gate-level netlist
on a tiny design in Verilator (quiet inputs count no data toggles, nothing is counted outside the
window, SRAM accesses are counted exactly), the energy arithmetic, the SRAM model, the
categories, the command line's one-line errors. The Table 7.2 designs and whole-array runs are
large: tests/rtl/test_energy_rtl.py (regress)."""
import json
import subprocess
from pathlib import Path

import pytest

from sim.energy.gates import EnergyError, ModuleInfo, emit_verilog, parse_counts, synthesize
from sim.energy.model import energy, load_tech
from sim.energy.sram import organisation

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The tiny design mapped to gates, instrumented, built with its testbench."""
    work = tmp_path_factory.mktemp("tiny")
    netlist = synthesize([DATA / "energy_tiny.v"], "tiny", work / "synth")
    run, infos = _counting_model(netlist, "tiny", DATA / "energy_tiny_tb.v", work)
    return run, infos, netlist


def _counting_model(netlist: dict, top: str, tb: Path, work: Path):
    """``netlist`` instrumented and built with the testbench ``tb`` (module ``tb``): a function
    of the scenario number returning the run's counts, and the modules' infos."""
    from sim.runner import build_model
    files, infos = emit_verilog(netlist, top, work / "gl")
    m = build_model(name=f"energy_{top}", sources=[*files, tb], top="tb", timing=True,
                    opt="-O0")

    def run(scenario: int) -> dict:
        out = subprocess.run([str(m.binary), f"+scenario={scenario}"], capture_output=True,
                             text=True, check=True).stdout
        return parse_counts(out)
    return run, infos


def _sum(counts, key):
    return sum(m[key] for m in counts["modules"].values())


def test_quiet_inputs_count_clock_cycles_and_no_data_toggles(tiny):
    run, infos, _ = tiny
    c = run(0)
    assert _sum(c, "cycles") >= 40
    assert _sum(c, "tdrv") == 0 and _sum(c, "tfan") == 0
    (sram,) = c["srams"].values()
    assert sram["reads"] == 0 and sram["writes"] == 0
    assert sum(i.ffs for i in infos.values()) >= 8           # q (rd is the macro's port)


def test_nothing_is_counted_outside_the_window(tiny):
    run, _, _ = tiny
    c = run(1)
    assert _sum(c, "cycles") == 0 and _sum(c, "tdrv") == 0 and _sum(c, "tfan") == 0


def test_running_accumulator_toggles_and_sram_accesses_are_exact(tiny):
    run, infos, _ = tiny
    c1, c3 = run(2), run(3)
    (s,) = c1["srams"].values()
    assert (s["kind"], s["depth"], s["width"]) == ("dp", 256, 8)
    assert s["writes"] == 10 and s["reads"] == 7
    # q counts 0, 1, 2, ... over 40 cycles: its bit i toggles about 40 / 2^i times
    assert _sum(c1, "tdrv") >= sum(40 >> i for i in range(8)) - 8
    assert _sum(c3, "tdrv") > _sum(c1, "tdrv")               # more bits move with a = 3
    tech = load_tech()
    b = energy(c1, infos, tech, lambda path, mod, part: part)
    assert b.categories["data"] > 0 and b.categories["clock"] > 0
    r, w = tech.sram("dp", 256, 8)
    assert b.categories["sram"] == pytest.approx(7 * r + 10 * w)


def test_energy_arithmetic():
    tech = load_tech()
    infos = {"m": ModuleInfo("m", "top.m", ffs=10)}
    counts = {"modules": {"TOP.m": {"module": "m", "tdrv": 100, "tfan": 300, "thop": 5,
                                    "cycles": 50}}, "srams": {}}
    b = energy(counts, infos, tech, lambda path, mod, part: part)
    hv = 0.5 * tech.vdd ** 2 * 1e-3
    assert b.categories["data"] == pytest.approx(
        hv * (100 * tech.c_out + 300 * (tech.c_in + tech.c_wire_fanout)))
    assert b.categories["hop"] == pytest.approx(hv * 5 * tech.c_hop)
    assert b.categories["clock"] == pytest.approx(2 * hv * 10 * 50 * tech.c_clock)
    # negative control: counts of a module the netlist does not have are refused
    with pytest.raises(EnergyError):
        energy({"modules": {"TOP.x": dict(counts["modules"]["TOP.m"], module="x")},
                "srams": {}}, infos, tech, lambda *a: "x")


def test_sram_model_orders_and_scales():
    tech = load_tech()
    assert organisation(512, 64) == (128, 256, 4)         # OpenRAM's 512x64 array
    sp_r, sp_w = tech.sram("sp", 512, 64)
    dp_r, dp_w = tech.sram("dp", 2048, 16)
    assert 0 < sp_r < sp_w and 0 < dp_r < dp_w            # a write swings its columns fully
    assert tech.sram("sp", 4096, 16)[0] > tech.sram("sp", 2048, 16)[0]   # deeper costs more
    assert tech.sram("dp", 2048, 16)[0] > tech.sram("sp", 2048, 16)[0]   # the larger cell
    half = tech.scaled(0.5)
    assert half.sram("sp", 512, 64)[0] == pytest.approx(sp_r / 2)
    with pytest.raises(EnergyError, match="no SRAM energy"):
        tech.sram("qp", 512, 64)                          # no such macro kind


def test_bad_assumptions_file_is_one_line(tmp_path):
    bad = tmp_path / "energy.toml"
    bad.write_text("[technology]\nname = 'x'\n")
    with pytest.raises(EnergyError) as e:
        load_tech(bad)
    assert "\n" not in str(e.value) and "energy.toml" in str(e.value)


def test_parse_counts_reads_both_kinds_of_line():
    text = ("junk\nUBGEN_ENERGY TOP.top.i_a g_a 1 2 3 4\n"
            "UBGEN_ENERGY TOP.top.i_t g_t 1 9 3 4 7\n"
            "UBGEN_SRAM TOP.top.i_b mem0 sp 512 64 5 6\n")
    c = parse_counts(text)
    assert c["modules"]["TOP.top.i_a"] == {"module": "g_a", "tdrv": 1, "tfan": 2, "thop": 3,
                                           "cycles": 4, "tin": 0}
    assert c["modules"]["TOP.top.i_t"]["tin"] == 7
    assert c["srams"]["TOP.top.i_b.mem0"]["reads"] == 5


def test_array_categories():
    from sim.energy.array import array_category, tile_of
    assert array_category("x", "cgra_pe_tile.tile.core.alu", "data") == "PE logic"
    assert array_category("x", "cgra_pe_tile.tile.sb16", "data") == "interconnect"
    assert array_category("x", "cgra_mem_tile.tile.core.sram", "sram") == "SRAM"
    assert array_category("x", "cgra_mem_tile.tile.cb_data_in0", "data") == "interconnect"
    assert array_category("x", "cgra_io_tile.tile.core", "data") == "GLB/IO"
    assert array_category("x", "cgra_top_cgra_4x4.glb", "sram") == "GLB/IO"
    # a MEM tile's macro whose owner has no gates (module unknown): booked by its path
    mem = "cgra_top.i_array.i_tile_r2_c3.i_tile.cgra_mem_tile.i_tile.i_core.i_pub.i_sram"
    assert array_category(mem, "", "sram") == "SRAM"
    assert array_category("cgra_top.i_glb", "", "sram") == "GLB/IO"
    assert array_category("x", "cgra_pe_tile.tile.core", "input") == "interconnect"
    assert array_category("x", "cgra_pe_tile", "clock") == "clock"
    assert array_category("x", "cgra_pe_tile", "hop") == "interconnect"
    assert tile_of("TOP.cgra_top.i_array.i_tile_r1_c2.i_tile") == "tile_r1_c2"
    assert tile_of("TOP.cgra_top.i_glb") is None


def _tile_netlist():
    """top -> two instances of tile ``tl`` (a feeds b); tl -> ``sub`` twice: ``s0`` fed by the
    tile's input, ``s1`` by a gate inside the tile."""
    gate = {"type": "$_NOT_", "connections": {"A": [2], "Y": [3]}}
    sub = {"ports": {"i": {"direction": "input", "bits": [2]},
                     "o": {"direction": "output", "bits": [3]}},
           "netnames": {}, "cells": {"g": gate}}
    tl = {"ports": {"a": {"direction": "input", "bits": [2]},
                    "y": {"direction": "output", "bits": [5]}},
          "netnames": {}, "cells": {
              "s0": {"type": "sub", "connections": {"i": [2], "o": [3]}},
              "n": {"type": "$_NOT_", "connections": {"A": [2], "Y": [4]}},
              "s1": {"type": "sub", "connections": {"i": [4], "o": [5]}}}}
    top = {"ports": {"x": {"direction": "input", "bits": [2]},
                     "z": {"direction": "output", "bits": [4]}},
           "netnames": {}, "cells": {
               "a": {"type": "tl", "connections": {"a": [2], "y": [3]}},
               "b": {"type": "tl", "connections": {"a": [3], "y": [4]}}}}
    return {"modules": {"top": top, "tl": tl, "sub": sub}}


def test_loads_of_nets_entering_a_tile_are_counted_apart(tmp_path):
    from sim.energy.gates import _tile_inputs
    nl = _tile_netlist()
    entering = _tile_inputs(nl, "top", {"tl"})
    assert entering["tl"] == {2} and entering["top"] == set()
    # sub is fed from the tile's input in s0 but from a gate of the tile in s1: not entering
    assert entering["sub"] == set()
    files, _ = emit_verilog(nl, "top", tmp_path, keep={"tl"}, tiles={"tl"})
    text = "\n".join(f.read_text() for f in files)
    tl = text[text.index("module tl"):]
    tl = tl[:tl.index("endmodule")]
    assert "e_tin" in tl                         # the NOT gate on the tile's input a
    assert "e_tin" not in text.replace(tl, "")   # nowhere else
    # negative control: without tiles nothing is counted apart
    files, _ = emit_verilog(nl, "top", tmp_path / "plain", keep={"tl"})
    assert files and all("e_tin" not in f.read_text() for f in files)


def test_unsupported_cell_is_a_one_line_error(tmp_path):
    netlist = {"modules": {"t": {"ports": {}, "netnames": {}, "cells": {
        "c": {"type": "$_XOR_", "connections": {"A": [2], "B": [3], "Y": [4]}}}}}}
    with pytest.raises(EnergyError) as e:
        emit_verilog(netlist, "t", tmp_path)
    assert "$_XOR_" in str(e.value) and "\n" not in str(e.value)


def test_operations_counts_kernel_ops_times_instances():
    from compiler.pipeline import compile_app
    from sim.energy.report import operations
    r = compile_app("gaussian", "cgra_4x4", {"width": 16, "height": 16}, until="frontend")
    n = operations(r.program)
    assert n > 0
    r2 = compile_app("gaussian", "cgra_4x4", {"width": 16, "height": 32}, until="frontend")
    assert operations(r2.program) > n                       # more pixels, more operations


def test_energy_needs_the_array_level(capsys):
    from sim import main as sim_main
    assert sim_main.main(["gaussian", "--level", "pub", "--energy"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("sim: error:") and "--energy" in err and "\n" not in err


def test_bad_sram_scale_is_refused_before_any_run(capsys):
    from sim import main as sim_main
    assert sim_main.main(["gaussian", "--energy", "--sram-scale", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("sim: error:") and "--sram-scale" in err and "\n" not in err


def test_energy_window_needs_the_run_and_done_nets():
    from sim.energy.array import _window
    nets = {"run": {"bits": [7]}, "done": {"bits": [9]}}
    assert _window({"modules": {"t": {"netnames": nets}}}, "t") == "n7 & ~n9"
    # negative control: a top without them (synthesis removed them) cannot be characterised
    with pytest.raises(EnergyError) as e:
        _window({"modules": {"t": {"netnames": {"run": {"bits": [7]}}}}}, "t")
    assert "done" in str(e.value) and "\n" not in str(e.value)


_CTL_TB = """`timescale 1ns/1ps
module tb;
  reg clk = 0, restart = 0, tick = 0, en = 0;
  reg [1:0] dim = 0; reg [5:0] ext = 0, ad = 0; reg [7:0] cs = 0, cd = 0;
  integer scenario = 0;
  always #5 clk = ~clk;
  ctl dut(.clk(clk), .rst(1'b0), .restart(restart), .tick(tick), .dim(dim),
          .extent_m1__0(ext), .extent_m1__1(6'd0), .cycle_start(cs), .cycle_delta__0(cd),
          .cycle_delta__1(8'd0), .a_start(6'd0), .a_delta__0(ad), .a_delta__1(6'd0),
          .a_addr(), .done(), .fire(), .last0(), .energy_clk(clk), .energy_en(en));
  initial begin
    if (!$value$plusargs("scenario=%d", scenario)) scenario = 0;
    if (scenario == 1) begin dim = 1; ext = 40; cs = 3; cd = 2; ad = 1; end
    restart = 1; repeat (2) @(negedge clk); restart = 0;
    tick = 1; repeat (2) @(negedge clk);          // the start's one-off transitions uncounted
    en = 1; repeat (100) @(negedge clk); en = 0;
    @(negedge clk);
    $finish;
  end
endmodule
"""


@pytest.fixture(scope="module")
def controller_gates(tmp_path_factory):
    """A schedule/address controller (the one in every MEM and IO tile) mapped to gates and
    counted: scenario 0 with its configuration all zero (an unused tile's), 1 configured."""
    from amaranth.back import verilog
    from ubgen.arch import ControllerParams
    from ubgen.controller import ControllerLayout
    from ubgen.controller_rtl import Controller
    work = tmp_path_factory.mktemp("ctl")
    layout = ControllerLayout("ctl", {"a": 6}, ControllerParams(max_dims=2, extent_width=6,
                                                                 cycle_width=8))
    (work / "ctl.v").write_text(verilog.convert(Controller(layout), name="ctl"))
    (work / "tb.v").write_text(_CTL_TB)
    netlist = synthesize([work / "ctl.v"], "ctl", work / "synth")
    return _counting_model(netlist, "ctl", work / "tb.v", work)


def test_an_unconfigured_controller_costs_clock_and_no_data(controller_gates):
    """The negative control of docs/energy.md ("an unused tile costs clock energy and no data
    energy") at the size of one controller: with its configuration all zero (done from the
    restart on), 100 cycles of ticking (after the start's own transitions) switch no net;
    configured, they do. Before the schedule generator's count stopped at done, the idle
    controller switched 23 nets a cycle (its count-down wrapping round)."""
    run, infos = controller_gates
    idle, busy = run(0), run(1)
    assert _sum(idle, "cycles") == 100 and sum(i.ffs for i in infos.values()) > 0
    assert _sum(idle, "tdrv") == 0 and _sum(idle, "tfan") == 0, idle
    assert _sum(busy, "tdrv") > 0 and _sum(busy, "tfan") > 0


# --- Table 7.2's designs (sim/energy/blocks.py, harness.py): the parts that need no model ------

@pytest.mark.parametrize("module, part, category", [
    # every module of the PE core instantiated as a controller PE is a controller
    ("ctl_pe.alu", "data", "controllers"), ("ctl_pe", "data", "controllers"),
    ("dppe.mem0", "data", "SRAM port + glue"), ("buffet_energy.buffet", "data", "buffet control"),
    ("buffet_energy.buffet", "sram", "SRAM"),
    # the control: a PUB module is not taken for a PE or the buffet
    ("pub.glue", "data", "SRAM port + glue")])
def test_table_7_2_categories_of_the_new_designs(module, part, category):
    from sim.energy.blocks import block_category
    assert block_category("TOP.x", module, part) == category


def test_table_7_2_unknown_design_or_case_is_a_one_line_error():
    from sim.energy.blocks import block_counts, design_cases
    with pytest.raises(EnergyError, match=r"no Table 7.2 design 'sram'.*pub, dp, dppe, buffet"):
        design_cases("sram")
    with pytest.raises(EnergyError, match=r"no energy case 'gaussian' for pub \(has line, "
                                          r"line_zero\)"):
        block_counts("pub", "gaussian")


def test_dppe_configuration_bus_writes_reach_every_controller_pe():
    """Each controller PE at its own index above the 16-bit tile-local offset, with its
    register values; the write and read controllers' PEs named for the category."""
    from compiler.backend.pe_controllers import synthesize
    from sim.energy.workload import dppe_writes, pe_slots
    from ubgen.controller import AffineMap, ControllerConfig
    from ubgen.pe.spec import pe_regmap
    wr = synthesize(ControllerConfig((8, 4), AffineMap(2, (1, 8)), {"addr": AffineMap(0, (1, 8))}),
                    "wr0")
    rd = synthesize(ControllerConfig((8, 4), AffineMap(9, (1, 8)), {"addr": AffineMap(0, (1, 0))}),
                    "rd0")
    slots = pe_slots([(wr, rd)])
    assert [n for n, _ in slots] == [f"wr0_{x.name[4:]}" for x in wr.nodes] + \
        [f"rd0_{x.name[4:]}" for x in rd.nodes]
    writes = dppe_writes([(wr, rd)])
    rm = pe_regmap()
    by_pe: dict[int, dict[int, int]] = {}
    for addr, value in writes:
        by_pe.setdefault(addr >> 16, {})[addr & 0xFFFF] = value
    assert sorted(by_pe) == list(range(len(slots)))
    for k, (_name, node) in enumerate(slots):
        assert by_pe[k] == dict(rm.writes(node.config()))
    # the schedule generator of the read stream starts at its first fire's cycle
    k = [n for n, _ in slots].index("rd0_sg")
    assert by_pe[k][rm["data2_const"].offset] == 9


def test_buffet_job_timing_holds_fills_and_reads_until_their_cycles():
    from sim.buffet_run import BuffetDriver, BuffetJob
    job = BuffetJob("t", [5, 6], [(0, 1), (0, 1)], [5, 6], fill_at=[2, 3], read_at=[4, 6])
    d = BuffetDriver(job)
    seen = []
    for _ in range(8):
        i = d.drive()
        seen.append((i["fill_valid"], i["rd_valid"]))
        d.observe({"fill_ready": 1, "rd_ready": 1, "rd_data": 0, "rd_data_valid": 0,
                   "upd_ready": 1})
    assert seen == [(0, 0), (0, 0), (1, 0), (1, 0), (0, 1), (0, 0), (0, 1), (0, 0)]
    # the control: without the cycles, the first fill and read are offered at once
    free = BuffetDriver(BuffetJob("t", [5, 6], [(0, 1), (0, 1)], [5, 6]))
    first = free.drive()
    assert (first["fill_valid"], first["rd_valid"]) == (1, 1)
