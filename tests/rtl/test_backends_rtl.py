"""The other memory backends of thesis Table 6.1 on the generated RTL (docs/backends.md):

* DP-SRAM + AG (``[mem] kind = "dp"``) and DP-SRAM + PEs (``"dp-pe"``, controllers built from
  PEs) end to end: compiled, placed and routed on an array of those MEM tiles, run on
  ``cgra_top`` in Verilator by the host testbench, bit-exact with the cycles the hardware
  counters measure equal to the prediction (``sim.array_run.run_bundle``);
* the buffet at block level: the compiler's buffet configurations run on the buffet Verilog
  against the golden read streams, with random gaps and back-pressure on every ready/valid port
  (``sim.buffet_run``).

CI: one small case per backend, each with its negative control (a corrupted controller
configuration in the bitstream; the buffet without its dependency check). ``-m regress``:
gaussian, harris and upsample at their Table 7.1 sizes on cgra_dp_16x32 and cgra_dppe_16x32,
and the buffets of the 3x3 convolution's line buffer (gaussian's), harris and upsample at full
size under back-pressure; the figures go to ``build/regress/backends.json`` (docs/backends.md).
"""
from __future__ import annotations

import copy
import json
from functools import lru_cache
from pathlib import Path

import pytest

from compiler.pipeline import compile_app
from sim.array_run import model_for, run_bundle
from sim.buffet_run import app_buffet_jobs, run_buffet_jobs

pytestmark = pytest.mark.rtl

CI = {"dp": ("cgra_dp_4x8", "gaussian", dict(width=32, height=12)),
      "dp-pe": ("cgra_dppe_4x8", "upsample", dict(width=16, height=8))}
FULL = {"dp": "cgra_dp_16x32", "dp-pe": "cgra_dppe_16x32"}
APPS = ("gaussian", "harris", "upsample")
REGRESS = Path(__file__).resolve().parents[2] / "build" / "regress" / "backends.json"


@lru_cache(maxsize=None)
def compiled(app: str, arch: str, sizes: tuple):
    return compile_app(app, arch, dict(sizes), until="bundle")


def describe(r: dict) -> str:
    return "; ".join(r["failures"]) + f" (run dir {r.get('run_dir')})"


def tile_word(res, node: str, register: str) -> int:
    """Index in the bundle's bitstream of ``register`` of the tile holding netlist ``node``."""
    from compiler.backend.pnr import array_data
    addr = array_data(res.arch).index.address(res.pnr.placement.tile_id(node), register)
    return next(i for i, (a, _v) in enumerate(res.bundle["bitstream"]) if a == addr)


@pytest.mark.parametrize("kind", sorted(CI))
def test_small_case_end_to_end_and_corrupted_controller(kind):
    arch, app, sizes = CI[kind]
    res = compiled(app, arch, tuple(sorted(sizes.items())))
    b = res.bundle
    model = model_for(arch)
    r = run_bundle(b, arch, model=model)
    assert r["passed"], describe(r)
    assert r["cycles_measured"] == b["cycles_predicted"] and r["match"]
    # negative control: the read controller of the first memory fires one cycle late
    net = res.netlist
    if kind == "dp":
        mem = next(n for n, d in net.graph.nodes(data=True) if d["kind"] == "mem")
        i = tile_word(res, mem, "rd_cycle_start")
    else:
        sg = next(n for n in net.graph if n.endswith(".rd.sg"))
        i = tile_word(res, sg, "data2_const")
    bad = copy.deepcopy(b)
    bad["bitstream"][i][1] += 1
    r = run_bundle(bad, arch, model=model, keep=False)
    assert not r["passed"] and r["output_mismatches"] > 0, r["failures"]


def test_buffet_block_with_back_pressure_and_without_its_check():
    jobs = app_buffet_jobs("gaussian", sizes=dict(width=32, height=16))
    runs = jobs + [j.pressured(0.3, 11) for j in jobs]
    res = run_buffet_jobs(runs)
    assert len(res) == 4 and all(r["passed"] for r in res), res
    assert all(r["cycles"] > 0 for r in res)
    eager = [j.pressured(0.6, 5, p_read=0.0, p_stall=0.0) for j in jobs]
    assert all(r["passed"] for r in run_buffet_jobs(eager))
    bad = run_buffet_jobs(eager, check=False)
    assert not any(r["passed"] for r in bad) and all(r["mismatches"] for r in bad)


def _record(key: str, value: dict) -> None:
    REGRESS.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(REGRESS.read_text()) if REGRESS.exists() else {}
    data[key] = value
    REGRESS.write_text(json.dumps(data, indent=1, sort_keys=True))


@pytest.mark.regress
@pytest.mark.parametrize("kind", sorted(FULL))
@pytest.mark.parametrize("app", APPS)
def test_full_size_end_to_end(app, kind):
    arch = FULL[kind]
    res = compile_app(app, arch, until="bundle")
    r = run_bundle(res.bundle, arch)
    _record(f"{kind} {app}", {
        "arch": arch, "pes": res.netlist.count("pe"), "mems": res.netlist.count("mem"),
        "ios": res.netlist.count("io"), "cycles_predicted": r["cycles_predicted"],
        "cycles_measured": r["cycles_measured"], "passed": r["passed"], "match": r["match"]})
    assert r["passed"], describe(r)


@pytest.mark.regress
def test_full_size_buffets_under_back_pressure():
    out = {}
    for app in APPS:
        jobs = app_buffet_jobs(app)
        fast = run_buffet_jobs(jobs)
        slow = run_buffet_jobs([j.pressured(0.25, 3) for j in jobs])
        out[app] = {"buffets": len(jobs), "passed": all(r["passed"] for r in fast + slow),
                    "cycles": max(r["cycles"] for r in fast),
                    "cycles_back_pressure": max(r["cycles"] for r in slow)}
        assert out[app]["passed"], [r for r in fast + slow if not r["passed"]][:2]
    _record("buffet", out)
