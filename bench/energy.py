"""Energy figures from simulated switching (docs/energy.md): thesis Table 7.2's energy columns,
their sensitivity to the SRAM energies, the negative controls and the per-application energy
(the analogue of thesis Figs. 7.3 and 7.10).

    .venv/bin/python bench/energy.py [--table] [--controls] [--gate] [--charz ARCH ...]
                                     [--apps gpyr@cgra_4x4:levels=2 gaussian@cgra_8x8 ...]
                                     [--validate [APP@ARCH]]
                                     [--out docs/data/energy.json] [--img docs/img]

What is MEASURED: the toggles of every net of the generated RTL mapped by Yosys to CMOS gates
(the mapping of bench/area.py) and the SRAM macros' accesses, in Verilator, with the stimulus of
the 3x3 convolution's line buffer (Table 7.2) or the application's own configuration and data
through the ``make sim`` host testbench (per application: by the shortcut, the RTL run's toggles
priced by the arch's gate-level tile characterisation, or with ``--gate`` the whole gate-level
array; ``--validate`` compares the two). What is MODELLED:
``ubgen/constraints/energy.toml`` (gate, wire, hop and clock capacitances, Vdd, the SRAM access
energies). Heavy: the first gate-level model of an arch takes tens of minutes to build (cached
under build/energy/); run it with ``nice``.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from compiler.figures import THESIS_7_2_ENERGY  # noqa: E402
from sim.energy.gates import EnergyError  # noqa: E402

OUT = ROOT / "docs" / "data" / "energy.json"     # the committed record docs/evaluation.md renders
IMG = ROOT / "docs" / "img"
SCALES = (0.5, 1.0, 1.5)
# (app, arch, sizes): the per-application points
APPS = [("gpyr", "cgra_4x4", {"levels": 2}), ("cascade", "cgra_8x8", {}),
        ("gaussian", "cgra_8x8", {}), ("gpyr", "cgra_8x8", {}), ("upsample", "cgra_8x8", {})]
# the array's negative controls: an app on cgra_4x4 that leaves tiles unused (a two-level
# Gaussian pyramid: 13 of the 20 tiles), at its size, and half and twice that many outputs
CONTROL = ("gpyr", "cgra_4x4", {"levels": 2})
CONTROL_HALF = {"levels": 2, "width": 32, "height": 32}
CONTROL_DOUBLE = {"levels": 2, "width": 32, "height": 64}


def parse_point(spec: str) -> tuple[str, str, dict]:
    """``APP@ARCH[:k=v,...]`` (integer sizes) -> (app, arch, sizes); a malformed size is a
    one-line error."""
    head, _, sizes = spec.partition(":")
    app, _, arch = head.partition("@")
    out = {}
    for kv in filter(None, sizes.split(",")):
        k, eq, v = kv.partition("=")
        if not eq or not v.strip().lstrip("-").isdigit():
            raise EnergyError(f"{spec}: sizes are k=integer pairs, got {kv!r}")
        out[k.strip()] = int(v)
    return app, arch or "cgra_4x4", out


def point_key(app: str, arch: str, sizes: dict) -> str:
    return f"{app}@{arch}" + (":" + ",".join(f"{k}={v}" for k, v in sizes.items())
                              if sizes else "")


def table(log=print) -> dict:
    """Table 7.2's energy columns for the built designs, at every SRAM scale of
    :data:`SCALES` (re-priced from the same simulations), the all-zero-image control, each
    design's ratio to DP SRAM + AG, and when, where and under what load it was measured."""
    from sim.energy.blocks import DESIGNS, design_energy
    from sim.energy.model import load_tech
    base = load_tech()
    t0, cpu0 = time.time(), _cpu()
    out = {"designs": {}, "scales": list(SCALES)}
    for design in DESIGNS:
        runs = design_energy(design, base, log=log, scales=SCALES)
        zero = design_energy(design, base, zero=True, log=log)
        out["designs"][design] = dict(runs, zero_image=zero)
    d = out["designs"]
    out["ratio_over_dp"] = {k: {str(s): round(d[k]["by_scale"][str(s)]["pj_per_access"]
                                              / d["dp"]["by_scale"][str(s)]["pj_per_access"], 3)
                                for s in SCALES} for k in d}
    out["ratio_pub_over_dp"] = out["ratio_over_dp"]["pub"]
    out["thesis"] = THESIS_7_2_ENERGY
    out["measured"] = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                       "commit": _commit(), "wall_seconds": round(time.time() - t0),
                       "cpu_seconds": round(_cpu() - cpu0),
                       "load_average": [round(x, 2) for x in os.getloadavg()]}
    return out


def _cpu() -> float:
    """CPU seconds of this process and its finished children (Yosys, Verilator, the runs)."""
    r, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime + c.ru_utime + c.ru_stime


def _commit() -> str:
    """The checkout's commit (``+`` when the tree has changes), or ``unknown``."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
                              capture_output=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=ROOT, text=True, capture_output=True).stdout.strip()
        return head + ("+" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def app_point(app: str, arch: str, sizes: dict, zero: bool = False, log=print,
              method: str = "shortcut") -> dict:
    """One application's energy (``method``: the shortcut or the whole gate-level array):
    compile, place, route, bundle (the app's inputs, or all-zero inputs with their own golden
    for the control), run, price."""
    import numpy as np
    from compiler.interp import run as interp
    from compiler.pipeline import compile_app
    from compiler.backend.bundle import make_bundle
    from sim.energy.report import energy_record
    t = time.perf_counter()
    r = compile_app(app, arch, sizes or None, until="bundle")
    bundle = r.bundle
    if zero:
        inputs = {k: np.zeros_like(v) for k, v in r.inputs.items()}
        bundle = make_bundle(r.netlist, r.arch, r.pnr, inputs, interp(r.program, inputs))
    compile_s = time.perf_counter() - t
    e = energy_record(bundle, r.arch, r.program, log=log, method=method)
    return {"app": app, "arch": arch, "sizes": sizes, "zero_inputs": zero,
            "compile_seconds": round(compile_s, 1), "energy": e,
            "configured_tiles": configured_tiles(bundle, r.arch)}


def category_rows(ref: dict, new: dict, ref_name: str, new_name: str, digits: int) -> dict:
    """Per category and in total, two energies of the same run (``{"categories_pj",
    "total_pj"}``) and the second's difference in percent of the first."""
    from sim.energy.array import CATEGORIES
    pairs = {c: (ref["categories_pj"][c], new["categories_pj"][c]) for c in CATEGORIES}
    pairs["total"] = (ref["total_pj"], new["total_pj"])
    return {c: {f"{ref_name}_pj": a, f"{new_name}_pj": b,
                "diff_pct": round(100 * (b - a) / a, digits) if a else None}
            for c, (a, b) in pairs.items()}


def validate(app: str, arch: str, sizes: dict, log=print, gate: dict | None = None) -> dict:
    """The shortcut against the whole gate-level array on the same bundle: total and per
    category, the shortcut's difference in percent of the gate-level figure. ``gate``: a
    gate-level point of the same app, arch and RTL to reuse (``--reuse-gate``)."""
    short = app_point(app, arch, sizes, log=log)
    gate = gate or app_point(app, arch, sizes, log=log, method="gate")
    g, s_ = gate["energy"], short["energy"]
    rows = category_rows(g, s_, "gate", "shortcut", 2)
    return {"app": app, "arch": arch, "sizes": sizes, "rows": rows,
            "gate_window_cycles": g["window_cycles"], "shortcut_window_cycles":
            s_["window_cycles"], "gate": gate, "shortcut": short}


def compare_counting(app: str, arch: str, sizes: dict, log=print) -> dict:
    """The shortcut's two ways of counting RTL events on one run of the same bundle (the
    event counters it uses, and Verilator's toggle coverage, each priced by the
    characterisation fitted on its own counts): per category, the counters' difference in
    percent of the coverage's figure."""
    from compiler.pipeline import compile_app
    from sim.energy.shortcut import coverage_reference
    r = compile_app(app, arch, sizes or None, until="bundle")
    ref = coverage_reference(r.bundle, r.arch, log=log)
    b = ref["counters"]
    rows = category_rows(ref["coverage"], b, "coverage", "counters", 3)
    return {"app": app, "arch": arch, "sizes": sizes, "passed": ref["passed"], "rows": rows,
            "window_cycles": b["window_cycles"], "sim_seconds": ref["sim_seconds"]}


def charz_summary(arch: str, log=print) -> dict:
    """The arch's characterisation (made when missing) in brief: per tile kind its flip-flops,
    blocks, each stimulus's gate-level data energy and the fit's error on it."""
    from sim.energy.charz import characterise
    c = characterise(arch, log=log)
    kinds = {k: {"module": v["module"], "ffs": v["ffs"], "blocks": len(v["blocks"]),
                 "input_pj_per_toggle": v["input_pj_per_toggle"],
                 "max_data_error_pct": v["max_data_error_pct"],
                 "runs": [{kk: r[kk] for kk in ("stimulus", "gate_data_pj",
                                                "shortcut_data_pj", "data_error_pct",
                                                "hop_bits_gate", "hop_bits_rtl")}
                          for r in v["runs"]]} for k, v in c["kinds"].items()}
    return {"arch": arch, "key": c["key"], "kinds": kinds, "top_ffs": c["top"]["ffs"],
            "pooled_pj_per_toggle": c["pooled_pj_per_toggle"],
            "pj_per_toggle_per_gate_per_bit": c["pj_per_toggle_per_gate_per_bit"],
            "seconds": c["seconds"]}


def configured_tiles(bundle: dict, arch) -> list[str]:
    """``tile_r<r>_c<c>`` of every tile the bitstream writes a register of (the others keep
    their reset configuration: no core operation, no route)."""
    from ubgen.top.spec import TILE_ID_BITS, TILE_ID_SHIFT, TILE_REGION_BIT
    cols = arch.array.columns
    ids = {(a >> TILE_ID_SHIFT) & ((1 << TILE_ID_BITS) - 1) for a, _ in bundle["bitstream"]
           if a >> TILE_REGION_BIT & 1}
    return sorted(f"tile_r{i // cols}_c{i % cols}" for i in ids)


def format_table(t: dict) -> str:
    th = t["thesis"]
    dp_ref = th["DP SRAM + AG"][0]
    lines = ["Thesis Table 7.2, energy columns (ours: gate-level switching, FreePDK45; thesis: "
             "16 nm)", f"{'design':<38} {'pJ/access':>9} {'SRAM %':>7} {'/ DP+AG':>8}   thesis",
             "-" * 80]
    for key, d in t["designs"].items():
        s, r = d["by_scale"]["1.0"], t["ratio_over_dp"][key]
        ref = th.get(d["label"])
        lines.append(f"{d['label']:<38} {s['pj_per_access']:>9.3f} {s['sram_pct']:>6.1f}% "
                     f"{r['1.0']:>8.2f}   "
                     + (f"{ref[0]} pJ, {ref[1]}%, {ref[0] / dp_ref:.2f}" if ref else "-"))
    for key, r in t["ratio_over_dp"].items():
        if key != "dp":
            lines.append(f"{t['designs'][key]['label']} / DP+AG with the SRAM energies x0.5: "
                         f"{r['0.5']:.2f}, x1.0: {r['1.0']:.2f}, x1.5: {r['1.5']:.2f}")
    for key, d in t["designs"].items():
        z, s = d["zero_image"], d["by_scale"]["1.0"]
        lines.append(f"control {key}: all-zero image {z['dynamic_logic_pj']:.0f} pJ of logic "
                     f"switching vs {s['dynamic_logic_pj']:.0f} pJ on the random image")
    m = t.get("measured")
    if m:
        lines.append(f"measured {m['date']} at {m['commit']}: {m['wall_seconds']} s wall, "
                     f"{m['cpu_seconds']} CPU s, load average {m['load_average']}")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--table", action="store_true", help="Table 7.2's energy columns")
    ap.add_argument("--apps", nargs="*", metavar="APP@ARCH",
                    help="per-application points, APP@ARCH[:k=v,...] (default with no "
                         "option: " + ", ".join(point_key(*a) for a in APPS) + ")")
    ap.add_argument("--controls", action="store_true",
                    help="the array's negative controls: a two-level gpyr on cgra_4x4 (tiles "
                         "left unused) with all-zero inputs, and 32x32 against 32x64 (twice "
                         "the output pixels)")
    ap.add_argument("--validate", nargs="?", const=point_key(*CONTROL), metavar="APP@ARCH",
                    help="the shortcut against the whole gate-level array on one app (default "
                         f"{point_key(*CONTROL)}; the gate-level model takes about an hour to "
                         "build)")
    ap.add_argument("--compare-counting", nargs="*", metavar="APP@ARCH",
                    help="the event counters against Verilator's toggle coverage (the first "
                         "method) on one run of each app (builds a model with both)")
    ap.add_argument("--charz", nargs="*", metavar="ARCH",
                    help="the shortcut's characterisation of these archs (made when missing)")
    ap.add_argument("--reuse-gate", action="store_true",
                    help="--validate: reuse the gate-level run the output file holds for the "
                         "same point (only valid for the same RTL)")
    ap.add_argument("--gate", action="store_true",
                    help="--apps/--controls: the whole gate-level array instead of the shortcut")
    ap.add_argument("--out", default=str(OUT), help="JSON output (merged into an existing one)")
    ap.add_argument("--img", default=str(IMG), help="directory of the energy plots")
    return ap


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if not (args.table or args.apps is not None or args.controls or args.validate
            or args.charz or args.compare_counting):
        args.table, args.apps, args.controls = True, [point_key(*a) for a in APPS], True
    out = Path(args.out)
    result = json.loads(out.read_text()) if out.exists() else {}
    try:
        if args.table:
            result["table_7_2"] = table()
            print(format_table(result["table_7_2"]))
        points = result.setdefault("apps", {})
        for spec in args.apps or []:
            app, arch, sizes = parse_point(spec)
            p = app_point(app, arch, sizes, method="gate" if args.gate else "shortcut")
            points[point_key(app, arch, sizes)] = p
            e = p["energy"]
            print(f"{app} on {p['arch']}: {e['pj_per_pixel']} pJ/pixel, {e['pj_per_op']} pJ/op, "
                  f"passed {e['passed']}, energy run ({e.get('method')}) {e['energy_seconds']} s")
        for arch in args.charz or []:
            c = result.setdefault("characterisation", {})[arch] = charz_summary(arch)
            for k, v in c["kinds"].items():
                print(f"characterisation {arch} {k}: {v['ffs']} flip-flops, {v['blocks']} "
                      f"blocks, fit error up to {v['max_data_error_pct']} %")
        for spec in args.compare_counting or []:
            v = result.setdefault("counting", {})[spec] = compare_counting(*parse_point(spec))
            for c, r in v["rows"].items():
                print(f"counting {spec} {c}: coverage {r['coverage_pj']:.1f} pJ, counters "
                      f"{r['counters_pj']:.1f} pJ, {r['diff_pct']} %")
        if args.validate:
            old = result.get("validation") or {}
            same = [old.get(k) for k in ("app", "arch", "sizes")] == list(
                parse_point(args.validate))
            v = result["validation"] = validate(
                *parse_point(args.validate),
                gate=old.get("gate") if args.reuse_gate and same else None)
            for c, r in v["rows"].items():
                print(f"validation {c}: gate {r['gate_pj']:.1f} pJ, shortcut "
                      f"{r['shortcut_pj']:.1f} pJ, {r['diff_pct']} %")
        if args.controls:
            app, arch, sizes = CONTROL
            m = "gate" if args.gate else "shortcut"
            c = result.setdefault("controls" if m == "shortcut" else "controls_gate", {})
            c["zero"] = app_point(app, arch, sizes, zero=True, method=m)
            c["random"] = app_point(app, arch, sizes, method=m)
            c["half"] = app_point(app, arch, CONTROL_HALF, method=m)
            c["double"] = app_point(app, arch, CONTROL_DOUBLE, method=m)
    except EnergyError as e:
        print(f"energy: error: {e}", file=sys.stderr)
        return 2
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    if result.get("apps"):
        from sim.energy.report import plot_breakdown
        recs = list(result["apps"].values())
        for per in ("pixel", "op"):
            p = plot_breakdown(recs, Path(args.img) / f"energy_per_{per}.png", per)
            print(f"wrote {p}")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
