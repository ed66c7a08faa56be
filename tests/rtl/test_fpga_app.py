"""Applications' FPGA designs in Verilator (docs/fpga.md "Applications on the FPGA"): the design
ubgen builds from the compiler's description runs the app's inputs bit-exactly against the
golden and its own cycle counter equals the schedule's prediction; a corrupted constant and a
schedule one cycle off fail the check; ``ubc fpga --sim-only`` runs the same steps from the
command line. Every app at its Table 7.1 size, and the synthesis and place and route of
gaussian, are ``regress``."""
from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from compiler.pipeline import compile_app
from sim.fpga_run import run_design

ROOT = Path(__file__).resolve().parents[2]
SMALL = dict(width=32, height=8)          # gaussian with a line-buffer RAM, 256 pixels

pytestmark = pytest.mark.rtl


@pytest.fixture(scope="module")
def gaussian():
    r = compile_app("gaussian", sizes=SMALL, until="map")
    design, vectors = r.fpga_design()
    return design.to_dict(), vectors


def test_gaussian_passes(gaussian):
    design, vectors = gaussian
    res = run_design(design, vectors)
    assert res["passed"], res["failures"]
    assert res["cycles_measured"] == vectors["cycles_predicted"]
    assert res["mismatches"] == 0 and res["writes"] == vectors["output_writes"]
    assert res["taken"] == [len(w) for w in vectors["inputs"]]


def test_corrupted_constant_fails(gaussian):
    """Negative control: one constant of the kernel (a weight or the final shift) changed."""
    design, vectors = copy.deepcopy(gaussian[0]), gaussian[1]
    node = next(n for n in design["nodes"] if n["kind"] == "pe" and n["params"]["consts"])
    port = next(iter(node["params"]["consts"]))
    node["params"]["consts"][port] += 1
    res = run_design(design, vectors)
    assert not res["passed"]
    assert res["mismatches"] > 0 and any("output words differ" in f for f in res["failures"])


def test_schedule_one_cycle_off_fails(gaussian):
    """Negative control: the output stream's schedule one cycle late: it samples the kernel's
    result a cycle after it was valid, and the design's counter sees the last write one cycle
    after the prediction."""
    design, vectors = copy.deepcopy(gaussian[0]), gaussian[1]
    out = next(n for n in design["nodes"] if n["kind"] == "out")
    out["params"]["controller"]["registers"]["out_cycle_start"] += 1
    res = run_design(design, vectors)
    assert not res["passed"]
    assert res["cycles_measured"] == vectors["cycles_predicted"] + 1
    assert res["mismatches"] > 0


def test_ubc_fpga_sim_only(tmp_path):
    """``ubc fpga APP --sim-only``: design, vectors and the Verilator verdict on disk."""
    out = tmp_path / "g"
    proc = subprocess.run([sys.executable, "-m", "compiler", "fpga", "gaussian", "--size",
                           "width=32", "--size", "height=8", "--sim-only", "--out", str(out),
                           "--json"], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["sim_passed"] and report["cycles_measured"] == report["cycles_predicted"]
    assert report["pixels"] == 30 * 6
    assert json.loads((out / "sim.json").read_text())["passed"]
    assert {"design.json", "vectors.json", "report.json"} <= {p.name for p in out.iterdir()}


def test_ubc_fpga_bad_app_one_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "compiler", "fpga", "nosuchapp", "--sim-only",
                           "--out", str(tmp_path / "x")], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode != 0
    assert len(proc.stderr.strip().splitlines()) == 1 and "nosuchapp" in proc.stderr
    assert not (tmp_path / "x").exists()


APPS = ["gaussian", "cascade", "harris", "unsharp", "upsample", "camera", "gpyr", "laplacian",
        "brighten_blur", "mobilenet", "resnet", "gemm"]


@pytest.mark.regress
@pytest.mark.parametrize("app", APPS)
def test_regress_app_fpga_design(app):
    """Every app at its Table 7.1 size: bit-exact, cycles equal to the prediction."""
    r = compile_app(app, until="map")
    design, vectors = r.fpga_design()
    res = run_design(design.to_dict(), vectors)
    assert res["passed"], res["failures"]


@pytest.mark.regress
def test_regress_gaussian_on_ecp5(tmp_path):
    """``ubc fpga gaussian``: the simulated check, then Yosys and nextpnr on the LFE5U-85F:
    a routed Fmax and the resources."""
    proc = subprocess.run([sys.executable, "-m", "compiler", "fpga", "gaussian", "--out",
                           str(tmp_path / "g"), "--json"], cwd=ROOT, capture_output=True,
                          text=True, timeout=3600)
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    assert r["sim_passed"] and r["fmax_mhz"] > 0 and r["luts"] > 0 and r["ns_per_pixel"] > 0
