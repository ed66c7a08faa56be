"""End to end on the generated accelerator (docs/simulation.md): applications compiled, placed
and routed for cgra_8x8, loaded into ``cgra_top`` over AXI4-Lite by the host testbench
(``sim.tb.test_e2e``), run in Verilator and checked bit-exactly against the golden
interpreter, with the cycles measured by the top's performance counters equal to the compiler's
prediction. Every test shares ONE Verilator build (the model is cached by the SHA-256 of the
generated Verilog, ``sim.array_run.model_for``).

Negative controls: one corrupted bitstream word, one input word changed after the golden
output was computed, and a host whose idea of the address map is wrong (the reliability
check's teeth) must each fail the run.

``make regress`` (``-m regress``): every app of apps/ at its Table 7.1 size on the smallest
shipped arch it fits, writing ``build/regress/table.md``.
"""
from __future__ import annotations

import copy
import time
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from compiler.pipeline import compile_app
from compiler.frontend.source import GoldenMismatch
from sim.array_run import model_for, run_bundle
from tests.apps.test_apps import SMALL

pytestmark = pytest.mark.rtl

ARCH = "cgra_8x8"
# The CI set: three stencil pipelines, an unsharp mask and two DNN kernels, at reduced sizes.
CI_APPS = ["gaussian", "brighten_blur", "cascade", "unsharp", "gemm", "resnet"]


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
    """Random AXI-Lite traffic (random addresses over every region, strobes, AW/W orders,
    back-pressure; reads and writes while stopped and while running, STALL toggled) woven into
    the host's steps: no handshake hangs, every rejected access answers SLVERR and changes
    nothing, and the application still computes its exact output in its predicted cycles."""
    b = bundle_of("gaussian")
    r = run_bundle(b, ARCH, model=model, stress=7)
    assert r["passed"], describe(r)
    s = r["stress"]
    assert s["transactions"] > 300 and s["rejected"] > 100 and s["reads_checked"] > 20, s
    assert s["running"] > 20, s
    assert r["stress_mismatches"] == 0


def test_negative_control_reliability_check_has_teeth(model):
    """A host that believes every tile answers 8 more offsets than it does expects OKAY where
    the top answers SLVERR: the reliability run must report wrong responses."""
    b = bundle_of("gaussian")
    r = run_bundle(b, ARCH, model=model, stress=7, plan_patch={"tile_span_extra": 8},
                   keep=False)
    assert not r["passed"] and r["stress_mismatches"] > 0, r["failures"]
    assert all("response: got 2, expected 0" in m for m in r["stress_first"]), r["stress_first"]
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
    assert all(np.array_equal(want[k], same[k]) for k in want)
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


# --- make regress: Table 7.1 sizes on the smallest shipped arch each app fits

REGRESS_ARCHS = ["cgra_4x4", "cgra_4x16", "cgra_8x8", "cgra_16x32"]
REGRESS_TABLE = Path(__file__).resolve().parents[2] / "build" / "regress" / "table.md"


def smallest_fit(app: str):
    """``(arch, CompileResult, PnRResult, notes)`` of the smallest shipped arch ``app`` fits
    at its default (Table 7.1) size and places and routes on (register padding may need more
    PEs than the netlist counts), or ``(None, None, None, notes)``; ``notes`` say why each
    smaller arch was passed over (the resource that ran out)."""
    notes = []
    for arch in REGRESS_ARCHS:
        result = compile_app(app, arch)
        ok, why = result.fits()
        if not ok:
            notes.append(why)
            continue
        try:
            return arch, result, result.run("pnr").pnr, notes
        except ValueError as e:                      # place and route ran out of a resource
            notes.append(f"{arch}: {str(e).splitlines()[0]}")
    return None, None, None, notes


def _table_row(row: dict) -> str:
    cols = ["app", "arch", "pes", "mems", "ios", "cycles_predicted", "cycles_measured",
            "match", "passed", "seconds", "run_cycles_per_s", "note"]
    return "| " + " | ".join(str(row.get(c, "")) for c in cols) + " |"


@pytest.mark.regress
def test_regress_every_app_on_its_smallest_arch():
    from apps import APPS
    rows, failed = [], []
    models = {}
    fits = {app: smallest_fit(app) for app in sorted(APPS)}
    # the small arrays first: their rows appear while the large model builds and runs
    order = sorted(APPS, key=lambda a: (REGRESS_ARCHS.index(fits[a][0]) if fits[a][0]
                                        else len(REGRESS_ARCHS), a))
    for app in order:
        t = time.perf_counter()
        arch, result, pnr, notes = fits[app]
        if arch is None:
            rows.append({"app": app, "note": f"does not fit: {notes[-1]}"})
            _write_table(rows)
            continue
        rep = result.report
        row = {"app": app, "arch": arch, "pes": rep["pes"], "mems": rep["mems"],
               "ios": rep["ios"], "cycles_predicted": rep["cycles_predicted"]}
        try:
            b = result.run("bundle").bundle
        except GoldenMismatch as e:                  # the golden itself is wrong: a failure
            row.update(passed=False, note=str(e))
            failed.append(f"{app}: {e}")
            rows.append(row)
            _write_table(rows)
            continue
        if arch not in models:
            models[arch] = model_for(arch)
        r = run_bundle(b, arch, model=models[arch])
        passed_over = [n for n in notes if n.startswith(tuple(f"{a}: " for a in REGRESS_ARCHS))]
        run = r["stages"].get("run", {})
        row.update(cycles_measured=r["cycles_measured"], match=r["match"], passed=r["passed"],
                   note="; ".join(r["failures"] + passed_over),
                   run_cycles_per_s=round(run["cycles"] / run["seconds"])
                   if run.get("seconds") else "")
        if not r["passed"]:
            failed.append(f"{app} on {arch}: {describe(r)}")
        row["seconds"] = round(time.perf_counter() - t, 1)
        rows.append(row)
        _write_table(rows)                 # after every app: a long run shows its progress
    _write_table(rows)
    assert not failed, "\n".join(failed)


def _write_table(rows: list[dict]) -> None:
    REGRESS_TABLE.parent.mkdir(parents=True, exist_ok=True)
    header = ("| app | arch | PEs | MEMs | IOs | cycles predicted | cycles measured | match | "
              "passed | seconds | run cycles/s | note |\n"
              "|---|---|---:|---:|---:|---:|---:|---|---|---:|---:|---|")
    tmp = REGRESS_TABLE.with_suffix(".md.tmp")
    tmp.write_text("# make regress: every app end to end on cgra_top (Verilator)\n\n"
                   + header + "\n" + "\n".join(map(_table_row, rows)) + "\n")
    tmp.replace(REGRESS_TABLE)


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
