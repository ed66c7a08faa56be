"""How long the array takes to generate and to build in Verilator (docs/design.md §5.3/§5.4).

    .venv/bin/python bench/array_build.py [--arch cgra_16x32] [--verilate] [--compile]

Measures (wall clock and the process's CPU time): the routing graph and the full register map,
``ubgen.array.write_verilog`` (tile modules + array), and optionally Verilator: ``--verilate``
translates to C++ (``verilator --cc``), ``--compile`` also compiles the C++ (``-O0``, two jobs).
Writes ``build/bench/array_<arch>.json``.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, {"wall_s": round(time.perf_counter() - w, 2),
                 "cpu_s": round(time.process_time() - c, 2)}


def run_timed(cmd: list[str], cwd: Path) -> dict:
    w = time.perf_counter()
    before = os.times()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    after = os.times()
    if proc.returncode:
        sys.stderr.write(proc.stdout[-2000:] + proc.stderr[-4000:])
        raise SystemExit(f"array_build: {cmd[0]} failed (exit {proc.returncode})")
    return {"wall_s": round(time.perf_counter() - w, 2),
            "cpu_s": round(after.children_user - before.children_user
                           + after.children_system - before.children_system, 2)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="cgra_16x32")
    ap.add_argument("--verilate", action="store_true", help="also run verilator --cc")
    ap.add_argument("--compile", action="store_true", help="also compile the C++ model")
    args = ap.parse_args(argv)

    from sim.runner import setup_verilator
    from ubgen.arch import ArchError, load_arch
    from ubgen.array import ARRAY_MODULE, write_verilog
    from ubgen.array.graph import full_regmap, routing_graph
    from ubgen.array.layout import ArrayLayout
    try:
        arch = load_arch(args.arch)
    except ArchError as e:
        print(f"array_build: {e}", file=sys.stderr)
        return 2
    out = ROOT / "build" / "bench" / f"array_{arch.name}"
    out.mkdir(parents=True, exist_ok=True)
    report = {"arch": arch.name}
    lay, report["layout"] = timed(lambda: ArrayLayout(arch))
    report["tiles"] = lay.rows * lay.columns
    g, report["routing_graph"] = timed(lambda: routing_graph(lay))
    report["graph_nodes"], report["graph_edges"] = g.number_of_nodes(), g.number_of_edges()
    regs, report["full_regmap"] = timed(lambda: full_regmap(lay))
    report["registers"] = len(regs)
    paths, report["write_verilog"] = timed(lambda: write_verilog(arch, out / "rtl"))
    report["verilog_bytes"] = {p.name: p.stat().st_size for p in paths}
    if args.verilate or args.compile:
        setup_verilator()
        mdir = out / "obj"
        cmd = ["verilator", "--cc", "-Mdir", str(mdir), "--top-module", ARRAY_MODULE,
               "-Wno-fatal", "-Wno-WIDTHEXPAND", "-Wno-WIDTHTRUNC", "-Wno-UNOPTFLAT",
               "-CFLAGS", "-O0"] + [str(p) for p in paths]
        report["verilate"] = run_timed(cmd, out)
        if args.compile:
            report["compile"] = run_timed(["make", "-j", "2", "-C", str(mdir), "-f",
                                           f"V{ARRAY_MODULE}.mk"], out)
    (ROOT / "build" / "bench").mkdir(parents=True, exist_ok=True)
    dst = ROOT / "build" / "bench" / f"array_{arch.name}.json"
    dst.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
