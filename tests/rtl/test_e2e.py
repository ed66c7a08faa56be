"""End to end on the generated accelerator (docs/simulation.md): applications compiled, placed
and routed for cgra_8x8, loaded into ``cgra_top`` by the host testbench (``sim.tb.test_e2e``:
bursts on the AXI4 port, control over AXI4-Lite), run in Verilator and checked bit-exactly
against the golden interpreter, with the cycles measured by the top's performance counters
equal to the compiler's prediction. Every test shares ONE Verilator build (the model is cached
by the SHA-256 of the generated Verilog and the build options, ``sim.array_run.model_for``).

Negative controls: one corrupted bitstream word, one input word changed after the golden
output was computed, a host whose idea of the address map is wrong (the reliability check's
teeth, on both ports) and a sweep point whose simulation is fed a wrong input must each fail.

``make regress`` (``compiler.sweep.regress``): every app of apps/ at its Table 7.1 size on the
smallest shipped arch it fits and routes on, one sweep point with the ``sim`` stage each.
"""
from __future__ import annotations

import copy
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from compiler.pipeline import compile_app
from sim.array_run import model_for, run_bundle
from tests.apps.test_apps import SMALL

pytestmark = pytest.mark.rtl

ARCH = "cgra_8x8"
# The CI set: three stencil pipelines, a nearest-neighbour upsample and two DNN kernels, at
# reduced sizes (unsharp and camera need cgra_16x32: `make regress`), and an app file with a
# Bayer-phase select and a division (test_loop_phase_and_divider_end_to_end).
CI_APPS = ["gaussian", "brighten_blur", "cascade", "upsample", "gemm", "resnet"]
DATA_APPS = Path(__file__).resolve().parents[1] / "data" / "apps"


@pytest.fixture(scope="module")
def model():
    return model_for(ARCH)


@lru_cache(maxsize=None)
def _compiled(app: str, arch: str, sizes: tuple):
    return compile_app(app, arch, dict(sizes), until="bundle")


def bundle_of(app: str, arch: str = ARCH, sizes: dict | None = None) -> dict:
    sizes = SMALL[app] if sizes is None else sizes
    return _compiled(app, arch, tuple(sorted(sizes.items()))).bundle


def describe(r: dict) -> str:
    return "; ".join(r["failures"]) + f" (run dir {r.get('run_dir')})"


@pytest.mark.parametrize("app", CI_APPS)
def test_app_end_to_end(app, model):
    b = bundle_of(app)
    r = run_bundle(b, ARCH, model=model)
    assert r["passed"], describe(r)
    assert r["match"] and r["output_mismatches"] == 0 and r["readback_mismatches"] == 0
    assert r["cycles_measured"] == b["cycles_predicted"]
    assert r["writes"] == b["output_writes"] >= len(b["glb_outputs"]) > 0
    assert r["error"] == 0
    assert r["cycle"] >= b["done_cycle"] > r["last_write"] >= r["first_write"]
    assert r["clock"] == "gpi"


def test_clock_in_c_and_the_python_clock_as_control(model, monkeypatch):
    """The top's clock is cocotb's C (GPI) clock, so the run the host sleeps through wakes no
    Python (docs/simulation.md "Speed"); the control, ``UBGEN_E2E_CLOCK=py`` (the Python clock
    task, as before), reports itself as such, and both runs pass with the host's handshakes
    taking the same clock cycles, step by step."""
    b = bundle_of("gaussian")
    c = run_bundle(b, ARCH, model=model)
    monkeypatch.setenv("UBGEN_E2E_CLOCK", "py")
    py = run_bundle(b, ARCH, model=model)
    assert (c["clock"], py["clock"]) == ("gpi", "py")
    assert c["passed"] and py["passed"], describe(c if not c["passed"] else py)
    assert c["cycles_measured"] == py["cycles_measured"] == b["cycles_predicted"]
    steps = ("configure", "load", "read back")
    assert [c["stages"][k]["cycles"] for k in steps] == \
        [py["stages"][k]["cycles"] for k in steps]


def test_loop_phase_and_divider_end_to_end(model):
    """What camera and unsharp added to the hardware, in CI on cgra_8x8: loop phases (schedule
    generators driving SEL PEs) and the PE's UDIV, in tests/data/apps/bayer_ratio.py."""
    result = compile_app(str(DATA_APPS / "bayer_ratio.py"), ARCH, until="bundle")
    labels = [d.get("label", "") for _n, d in result.netlist.graph.nodes(data=True)]
    assert any(lb.endswith("udiv") for lb in labels) and any("schedule generators" in lb
                                                            for lb in labels)
    b = result.bundle
    r = run_bundle(b, ARCH, model=model)
    assert r["passed"], describe(r)
    assert r["output_mismatches"] == 0 and r["cycles_measured"] == b["cycles_predicted"]


def test_non_unrolled_reduction_end_to_end(model):
    """A 32 x 32 matrix-vector product written as a reduction that is not unrolled, the
    reduction innermost (tests/data/apps/matvec.py): reordered to stream its weights
    (compiler.passes.reduction_order), it runs at about one multiply-accumulate per cycle,
    bit-exact, in the predicted cycles."""
    result = compile_app(str(DATA_APPS / "matvec.py"), ARCH, until="bundle")
    assert result.scheduled.optimized.info["reduction_order"]
    b = result.bundle
    assert b["cycles_predicted"] < 1.1 * 32 * 32 + 64
    r = run_bundle(b, ARCH, model=model)
    assert r["passed"], describe(r)
    assert r["output_mismatches"] == 0 and r["cycles_measured"] == b["cycles_predicted"]


def test_second_app_reuses_the_verilator_model(model):
    """The fixture built (or found) the model; asking again finds it by the Verilog's hash."""
    again = model_for(ARCH)
    assert again["cached"] and again["verilator_build_seconds"] == 0
    assert again["build_dir"] == model["build_dir"] and again["sha256"] == model["sha256"]


def test_negative_control_corrupted_bitstream_word(model):
    """The output IO tile's connection-box select, one word of the bitstream, points at
    another track: the run must fail (wrong words written)."""
    b = bundle_of("gaussian")
    amap = model["address_map"]
    io = next(k for k in amap["tiles"]["kinds"] if k == "io")
    off = next(r["offset"] for r in amap["tiles"]["kinds"][io]["registers"]
               if r["name"] == "cb_f2io_16_sel")
    io_tiles = {t["base"] for t in amap["tiles"]["list"] if t["kind"] == "io"}
    bad = copy.deepcopy(b)
    hits = [i for i, (a, v) in enumerate(bad["bitstream"])
            if a - 4 * off in io_tiles and v != 0]
    assert hits, "the bundle configures an f2glb connection box"
    i = hits[0]
    bad["bitstream"][i][1] ^= 1
    r = run_bundle(bad, ARCH, model=model, keep=False)
    assert not r["passed"] and not r["match"] and r["output_mismatches"] > 0, r["failures"]
    assert r["readback_mismatches"] == 0        # the hardware holds what it was given


def test_negative_control_changed_input_word(model):
    """An input word changed after the golden output was computed: the run must fail."""
    b = bundle_of("gaussian")
    bad = copy.deepcopy(b)
    k = len(bad["glb_inputs"]) // 2
    bad["glb_inputs"][k][1] ^= 0x00FF
    r = run_bundle(bad, ARCH, model=model, keep=False)
    assert not r["passed"] and not r["match"] and r["output_mismatches"] > 0, r["failures"]
    assert r["cycles_measured"] == b["cycles_predicted"]     # timing is data-independent


def test_reliability_random_axi_traffic(model):
    """Random traffic on both host ports: the bulk steps in bursts of random lengths and beat
    sizes with random timing on the AXI4 port, random bursts woven in (crossing region ends,
    unaligned, narrow, refused, while stopped and while running), random AXI4-Lite accesses
    running concurrently (random addresses over every region, strobes, AW/W orders,
    back-pressure), STALL toggled during the run: no handshake hangs, every rejected access
    answers SLVERR and changes nothing, and the application still computes its exact output
    in its predicted cycles."""
    b = bundle_of("gaussian")
    r = run_bundle(b, ARCH, model=model, stress=7)
    assert r["passed"], describe(r)
    assert r["clock"] == "gpi"          # the traffic during the run is clocked in C too
    s, t = r["stress"], r["stress_bursts"]
    assert s["transactions"] > 300 and s["rejected"] > 100 and s["reads_checked"] > 20, s
    assert s["running"] > 15, s
    assert t["bursts"] > 100 and t["running"] > 5 and t["refused_beats"] > 100, t
    assert t["reads_checked"] > 10, t
    assert r["stress_mismatches"] == 0


def test_negative_control_reliability_check_has_teeth(model):
    """A host that believes every tile answers 8 more offsets than it does expects OKAY where
    the top answers SLVERR, on both ports: the reliability run must report wrong responses."""
    b = bundle_of("gaussian")
    r = run_bundle(b, ARCH, model=model, stress=7, plan_patch={"tile_span_extra": 8},
                   keep=False)
    assert not r["passed"] and r["stress_mismatches"] > 0, r["failures"]
    first = r["stress_first"]
    assert all("got 2, expected 0" in m or "answered 2, expected 0" in m for m in first), first
    assert r["match"] and r["cycles_measured"] == b["cycles_predicted"]   # only the bus differs


def test_shared_compute_end_to_end(model):
    """gpyr with compute sharing (thesis §4.3.3, Table 7.6): one 2x2-average kernel on PEs with
    input contexts serves every pyramid level, fewer PEs than without sharing, the same
    output bit for bit (both equal the golden) at the predicted cycles."""
    b = bundle_of("gpyr", sizes={**SMALL["gpyr"], "share": 1})
    plain = _compiled("gpyr", ARCH, tuple(sorted(SMALL["gpyr"].items())))
    shared = _compiled("gpyr", ARCH, tuple(sorted({**SMALL["gpyr"], "share": 1}.items())))
    assert shared.netlist.count("pe") < plain.netlist.count("pe")
    want, same = plain.establish_golden().outputs, shared.establish_golden().outputs
    assert want and want.keys() == same.keys() and all(np.array_equal(want[k], same[k]) for k in want)
    r = run_bundle(b, ARCH, model=model)
    assert r["passed"], describe(r)
    assert r["cycles_measured"] == b["cycles_predicted"] and r["error"] == 0


def test_negative_control_context_switched_one_cycle_late(model):
    """The schedule generator of one shared op's context starts one cycle late (one bitstream
    word): the shared PEs read the wrong operands at its switches and the run must fail."""
    sizes = {**SMALL["gpyr"], "share": 1}
    result = _compiled("gpyr", ARCH, tuple(sorted(sizes.items())))
    net, pnr = result.netlist, result.pnr
    node, q = next((n, d["generators"][0]) for n, d in net.graph.nodes(data=True)
                   if d.get("generators"))
    from compiler.backend.pnr import array_data
    addr = array_data(result.arch).index.address(pnr.placement.tile_id(node),
                                                 f"tb2out_{q}_cycle_start")
    bad = copy.deepcopy(result.bundle)
    hits = [w for w in bad["bitstream"] if w[0] == addr]
    assert len(hits) == 1
    hits[0][1] += 1
    r = run_bundle(bad, ARCH, model=model, keep=False)
    assert not r["passed"] and r["output_mismatches"] > 0, r["failures"]


def test_resnet18_layer_occupancy_on_the_rtl(model):
    """Figs. 7.8/7.9's occupancy is measured from the schedule (compiler.schedule.occupancy);
    here it is confirmed on the RTL for a ResNet-18 conv5_x-shaped layer (7x7 output, 3x3,
    stride 1; 4 channels blocked 2 x 2 to fit cgra_8x8): the run is bit-exact, every op
    instance the occupancy counts produced its output, and the cycles it divides by are the
    measured ones."""
    from compiler.backend.kernel_map import map_kernel
    from compiler.schedule.occupancy import occupancy
    res = _compiled("resnet", ARCH, tuple(sorted(dict(SMALL["resnet"], width=7, height=7,
                                                      ksize=3, stride=1).items())))
    s, b = res.scheduled, res.bundle
    pes = {op.name: map_kernel(op.kernel, res.arch.schedule.pe_latency).pes
           for op in s.program.ops()}
    occ = occupancy(s.program, s.optimized, pes)
    r = run_bundle(b, ARCH, model=model)
    assert r["passed"], describe(r)
    assert r["cycles_measured"] == b["cycles_predicted"] == occ.cycles
    assert occ.pes == res.netlist.count("pe") and 0 < occ.value < 1
    assert occ.busy == sum(p * n for p, n in occ.units.values())


# --- a tiled app: one configuration run once per output tile by the host runtime (sim/host.py)

TILED_SIZES = {"width": 22, "height": 18}      # output 20 x 16
TILED_SHAPE = (10, 8)                          # 2 x 2 runs


@lru_cache(maxsize=None)
def _tiled():
    """gaussian as runs of a fixed 10 x 8 output tile on cgra_8x8, with the whole golden."""
    from compiler.frontend.source import app_inputs, load_app
    from compiler.interp import run as interp
    from compiler.pipeline import compile_tiled
    source = load_app("gaussian", TILED_SIZES)
    result = compile_tiled(source, ARCH, "bundle", shape=TILED_SHAPE)
    inputs = app_inputs(source, 0)
    return result, inputs, interp(source.program, inputs)


@pytest.mark.parametrize("overlap", [True, False])
def test_tiled_app_end_to_end(model, overlap):
    """Every tile loaded and read back in bursts on the AXI4 port and run over AXI4-Lite, the
    stitched whole output equal to the whole program's golden, every run in the predicted
    cycles: overlapped (the plan's two GLB regions; tile k + 1 loaded and tile k - 1 read back
    during run k, SHARE = 1) and in turn (the plan's overlap turned off by the host)."""
    result, inputs, expected = _tiled()
    b = copy.deepcopy(result.bundle)
    assert result.runs == 4 and len(b["tiling"]["tiles"]) == 4
    assert b["overlap"]["overlap"] is True, b["overlap"]["why"]
    b["overlap"]["overlap"] = overlap
    r = run_bundle(b, ARCH, model=model, arrays={"inputs": inputs, "expected": expected})
    assert r["passed"], describe(r)
    assert r["overlap"] is overlap
    assert r["match"] and r["error"] == 0
    assert len(r["tiles"]) == 4
    assert all(t["last_write"] < b["done_cycle"] for t in r["tiles"])
    assert r["cycles_measured"] == b["cycles_predicted"]
    for name, want in expected.items():
        assert np.array_equal(r["outputs"][name], want)


def test_negative_control_tiled_wrong_golden(model):
    """The same tiled run checked against a golden with one element changed must fail."""
    result, inputs, expected = _tiled()
    bad = {k: v.copy() for k, v in expected.items()}
    name = next(iter(bad))
    bad[name][7, 9] ^= 1
    r = run_bundle(result.bundle, ARCH, model=model, keep=False,
                   arrays={"inputs": inputs, "expected": bad})
    assert not r["passed"] and not r["match"], r["failures"]


def test_negative_control_tiled_overlap_into_the_running_region(model):
    """Overlapped, with the plan's two regions collapsed into one (every bank's delta 0): tile
    k + 1's inputs are written into the words run k is still reading, and the stitched output
    must differ from the golden (while every run still ends at the predicted cycle)."""
    result, inputs, expected = _tiled()
    b = copy.deepcopy(result.bundle)
    ov = b["overlap"]
    ov["delta"] = {k: 0 for k in ov["delta"]}
    ov["registers"] = [[a, v0, v0] for a, v0, _v1 in ov["registers"]]
    r = run_bundle(b, ARCH, model=model, keep=False,
                   arrays={"inputs": inputs, "expected": expected})
    assert r["overlap"] is True and r["error"] == 0
    assert {t["last_write"] for t in r["tiles"]} == {b["cycles_predicted"]}
    assert not r["passed"] and not r["match"] and r["output_mismatches"] > 0, r["failures"]


# --- the sweep's sim stage: a design-space point confirmed on the RTL (make regress runs it for
# every app at its Table 7.1 size, compiler.sweep.regress)

SIM_STAGES = ("schedule", "map", "netlist", "pnr", "sim")


def test_sweep_point_confirmed_on_the_rtl(model):
    from compiler.sweep.point import evaluate_point
    r = evaluate_point("gaussian", dict(SMALL["gaussian"], arch=ARCH), SIM_STAGES)
    assert r["status"] == "ok" and r["sim_passed"] is True, r.get("error")
    assert r["cycles_measured"] == r["cycles_predicted"] > 0
    assert r["session_cycles"] > r["run_cycles"] > 0 and r["run_cycles_per_s"] > 0
    assert r["verilator_build_seconds"] == 0 and "sim" in r["seconds"]


def test_negative_control_sweep_sim_stage_fails_a_wrong_run(model, monkeypatch):
    """The sim stage's verdict has teeth: the same point with one bitstream word corrupted on
    its way to the simulator is an error of kind ``check`` (not cached), not a pass."""
    import sim.array_run as array_run
    from compiler.sweep.point import evaluate_point
    real = array_run.run_bundle

    def corrupted(bundle, arch, **kw):
        bad = copy.deepcopy(bundle)
        bad["glb_inputs"][len(bad["glb_inputs"]) // 2][1] ^= 0x00FF
        return real(bad, arch, keep=False, **kw)
    monkeypatch.setattr(array_run, "run_bundle", corrupted)
    r = evaluate_point("gaussian", dict(SMALL["gaussian"], arch=ARCH), SIM_STAGES)
    assert r["status"] == "error" and r["error_kind"] == "check", r
    assert r["error"].startswith("sim: ") and "output words differ" in r["error"]
    assert r["sim_passed"] is False


def test_negative_control_sweep_sim_stage_fails_a_refused_bitstream(monkeypatch):
    """A bitstream the independent checker refuses fails the sim stage before any simulation
    (make regress's application half relies on it for the full-size place and route)."""
    import compiler.backend.pnr as pnr_mod
    from compiler.backend.check import CheckReport
    from compiler.sweep.point import evaluate_point

    def refusing(*args, **kw):
        return CheckReport(ok=False, errors=["write 3: wrong latency (negative control)"])
    monkeypatch.setattr(pnr_mod, "check_bitstream", refusing)
    monkeypatch.setattr("sim.array_run.run_bundle", lambda *a, **k: pytest.fail("simulated"))
    r = evaluate_point("gaussian", dict(SMALL["gaussian"], arch=ARCH), SIM_STAGES)
    assert r["status"] == "error" and r["error_kind"] == "check", r
    assert r["error"] == "sim: bitstream checker fail: write 3: wrong latency (negative control)", \
        r["error"]


@pytest.mark.parametrize("kind", ["json", "py", "py-reference"])
def test_main_job_on_an_app_file(kind, tmp_path, monkeypatch, model, capsys):
    """``python -m sim.main --app FILE``: an application given as a Program JSON file (random
    inputs of its buffers' types; golden: the interpreter), as a user's Halide-style app file
    without a reference (examples/, docs/apps.md; golden: real Halide) or with one
    (tests/data/apps/box5.py; golden: its reference) runs end to end on the default arch and
    writes the JSON record with every figure of the main job and the golden it used."""
    import json
    from apps import get_app
    from sim import main as sim_main
    monkeypatch.setattr(sim_main, "BUILD_SIM", tmp_path / "out")
    root = Path(__file__).resolve().parents[2]
    if kind.startswith("py"):
        path = (root / "examples" / "halide_box_blur.py" if kind == "py"
                else root / "tests" / "data" / "apps" / "box5.py")
        assert sim_main.main([str(path), "--arch", ARCH, "--size", "width=12",
                              "--size", "height=10"]) == 0
        golden = "halide" if kind == "py" else "reference"
        _check_main_record(tmp_path / "out" / f"{path.stem}-{ARCH}-width12-height10.json",
                           capsys, golden)
        return
    program = get_app("brighten_blur").build(**SMALL["brighten_blur"])
    path = tmp_path / "my_blur.json"
    path.write_text(json.dumps(program.to_dict()))
    assert sim_main.main([str(path), "--arch", ARCH]) == 0
    _check_main_record(tmp_path / "out" / f"my_blur-{ARCH}.json", capsys, "interpreter")


def _check_main_record(path, capsys, golden: str) -> None:
    import json
    out = capsys.readouterr().out
    for stage in ("compile:", "place:", "route:", "Verilog:", "Verilator build:", "configure:",
                  "load:", "run:", "read back:"):
        assert stage in out, stage
    rec = json.loads(path.read_text())
    assert rec["level"] == "array" and rec["match"] is True and rec["passed"] is True
    assert rec["golden"] == golden and f"PASS  golden: {golden};" in out
    assert rec["cycles_measured"] == rec["cycles_predicted"] > 0
    for key in ("app", "arch", "pes", "mems", "ios", "registers", "compile_seconds",
                "pnr_seconds", "verilator_build_seconds", "sim_seconds"):
        assert key in rec, key
    assert rec["verilator_build_seconds"] == 0          # the module's model was reused


@pytest.mark.regress
def test_regress_srcnn_shared_on_cgra_16x32():
    """thesis §7.3.1, Tables 7.6/7.7: srcnn at its Table 7.1 size does not fit cgra_16x32
    unshared; with compute sharing (one set of MAC PEs per conv op across the three layers,
    PE input contexts) it fits, places, routes and runs bit-exact at the predicted cycles."""
    arch = "cgra_16x32"
    plain = compile_app("srcnn", arch)
    assert not plain.fits()[0]
    b = bundle_of("srcnn", arch, {"share": 1})
    assert _compiled("srcnn", arch, (("share", 1),)).netlist.count("pe") < plain.report["pes"]
    r = run_bundle(b, arch, model=model_for(arch))
    assert r["passed"], describe(r)
    assert r["cycles_measured"] == b["cycles_predicted"] and r["error"] == 0
