"""The shared apps end to end on the RTL (thesis §7.3.1, Tables 7.6 and 7.7; docs/backend.md
"Compute sharing"): the records ``ubc sim APP --size share=1`` writes
(``build/sim/<app>-<arch>-share1.json``, docs/simulation.md) kept in
``docs/data/share_rtl.json`` (``python -m compiler.sweep.share_rtl`` after the runs) and rendered
as a table of docs/evaluation.md. ``make evaluate`` does not run them (srcnn's Verilator model of
cgra_16x32 alone takes half an hour to build); it shows the records that exist, so the table
holds what was measured, never a prediction.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ubgen.paths import build_dir

from .cache import ROOT

DATA = ROOT / "docs" / "data" / "share_rtl.json"
KEYS = ("app", "arch", "sizes", "pes", "mems", "cycles_predicted", "cycles_measured", "match",
        "error", "passed", "compile_seconds", "pnr_seconds", "verilog_seconds",
        "verilator_build_seconds", "sim_seconds", "model_sha256")


def collect(apps, sim_dir: Path | None = None, data: Path | None = None) -> dict[str, dict]:
    """The array-level records of ``apps`` run with ``share=1`` (``app arch`` -> the record's
    :data:`KEYS`): those kept in ``data``, replaced by the ones found in ``sim_dir`` (default
    ``build/sim``; ``data`` default :data:`DATA`). Reads only."""
    data = data or DATA
    runs = json.loads(data.read_text()) if data.exists() else {}
    for path in sorted((sim_dir or build_dir("sim")).glob("*-share1.json")):
        r = json.loads(path.read_text())
        if r.get("app") in apps and r.get("level") == "array" and \
                (r.get("sizes") or {}).get("share") == 1:
            runs[f"{r['app']} {r['arch']}"] = {k: r.get(k) for k in KEYS}
    return runs


def table(runs: dict[str, dict]) -> list[str]:
    """Markdown lines: one row per run, its verdict from the record (bit-exact output, measured
    == predicted cycles, ERROR 0: ``sim.main``'s pass rule)."""
    lines = ["Shared apps end to end in Verilator (`ubc sim APP --arch ARCH --size share=1`; the "
             "records in `docs/data/share_rtl.json`): the host testbench configures the array, "
             "loads the inputs, runs to DONE and reads the outputs back; the verdict is the "
             "record's (bit-exact against the golden, the counters' cycles equal to the "
             "compiler's prediction, ERROR 0).", "",
             "| app | arch | PEs | MEMs | cycles predicted | cycles measured | bit-exact | "
             "verdict | Verilator build s | simulation s | model |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs.values():
        verdict = "pass" if r.get("passed") else "FAIL"
        lines.append(f"| {r['app']} | {r['arch']} | {r.get('pes')} | {r.get('mems')} | "
                     f"{r.get('cycles_predicted')} | {r.get('cycles_measured')} | "
                     f"{'yes' if r.get('match') else 'no'} | {verdict} | "
                     f"{r.get('verilator_build_seconds')} | {r.get('sim_seconds')} | "
                     f"{(r.get('model_sha256') or '')[:16]} |")
    if not runs:
        lines.append("| — | — | — | — | — | — | — | not run | — | — | — |")
    return lines + [""]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Keep the shared apps' RTL run records "
                                 "(build/sim/*-share1.json) in docs/data/share_rtl.json.")
    ap.add_argument("--apps", nargs="+", default=["gpyr", "srcnn"], help="apps to keep")
    ap.add_argument("--sim-dir", type=Path, default=None, help="where the records are "
                    "(default build/sim)")
    args = ap.parse_args(argv)
    runs = collect(set(args.apps), args.sim_dir)
    if not runs:
        print("share_rtl: no records of a shared run", file=sys.stderr)
        return 1
    DATA.parent.mkdir(parents=True, exist_ok=True)
    DATA.write_text(json.dumps(runs, indent=1, sort_keys=True) + "\n")
    print(f"share_rtl: {len(runs)} runs in {DATA}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
