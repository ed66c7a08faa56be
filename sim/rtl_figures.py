"""RTL figures for the evaluation (thesis Table 7.4), one run per call, as JSON:

    python -m sim.rtl_figures e2e APP --arch A [--size K=V ...] --out FILE
    python -m sim.rtl_figures buffet APP [--size K=V ...] --out FILE

* ``e2e``: the app end to end on ``A``'s ``cgra_top`` in Verilator (``sim.main.run_array``,
  what ``make sim`` runs): the record with ``cycles_measured`` (the top's ``LAST_WRITE``
  counter), ``cycles_predicted``, ``passed``, PEs and MEMs;
* ``buffet``: every buffet of the app at block level (``sim.buffet_run``: the compiler's buffet
  configurations on the buffet Verilog, one fill offered per cycle, the consumer always ready):
  ``buffets``, ``passed`` and ``cycles``, the clock cycles from the first fill to the last read
  response of the slowest buffet -- a block-level figure, not an application run (the
  ready-valid CGRA the thesis ran the buffets in is not built).

A run that cannot be made (a buffer the backend refuses, a design that does not fit) writes
``{"error": "<one line>"}`` and exits 0; the evaluation shows the line in the table cell.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def e2e(app: str, arch: str, sizes: dict) -> dict:
    import tempfile
    from sim.main import run_array
    with tempfile.TemporaryDirectory() as tmp:
        rec = run_array(app, arch, sizes, seed=0, out_dir=Path(tmp), log=lambda _m: None)
    keep = ("app", "arch", "sizes", "pes", "mems", "ios", "cycles_predicted",
            "cycles_measured", "passed", "match", "failures", "sim_seconds",
            "verilator_build_seconds")
    return {k: rec.get(k) for k in keep}


def buffet(app: str, sizes: dict) -> dict:
    from sim.buffet_run import app_buffet_jobs, run_buffet_jobs
    jobs = app_buffet_jobs(app, sizes=sizes)
    res = run_buffet_jobs(jobs, name=f"buffet_{app}")
    return {"app": app, "sizes": sizes, "buffets": len(jobs),
            "passed": all(r["passed"] for r in res),
            "cycles": max(r["cycles"] or 0 for r in res) if res else None,
            "per_buffet": {r["name"]: r["cycles"] for r in res}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sim.rtl_figures",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("kind", choices=("e2e", "buffet"))
    ap.add_argument("app")
    ap.add_argument("--arch", help="constraints file (e2e)")
    ap.add_argument("--size", action="append", default=[], metavar="K=V")
    ap.add_argument("--out", required=True, help="the JSON result")
    args = ap.parse_args(argv)
    from compiler.pipeline import user_errors
    from compiler.frontend.source import parse_sizes
    try:
        sizes = parse_sizes(args.size)
        out = e2e(args.app, args.arch, sizes) if args.kind == "e2e" else buffet(args.app, sizes)
    except user_errors() as e:
        out = {"error": str(e).splitlines()[0]}
    Path(args.out).write_text(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
