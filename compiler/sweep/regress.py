"""``make regress`` (``ubc regress``; docs/simulation.md "Regression"): every application of
apps/ at its Table 7.1 size (thesis Table 7.1, the apps' default sizes) end to end on the
generated accelerator, in one run. Each application is one point of the sweep engine
(:mod:`.engine`, Dask: ``--workers N`` local processes, or ``--scheduler tcp://H:P`` for an
existing cluster whose workers run this checkout) with the stages schedule, map, netlist, pnr
and sim (:func:`.point.stage_sim`: ``make sim``'s run), on the smallest shipped array it fits
and places and routes on. The table (one row per application, the wall time and the machine's
load) goes to ``build/regress/table.md`` and, with ``--doc``, between the markers of
docs/simulation.md. Exit status 1 if any application fails (a check, not a design that fits
no array).

Points are not read from the sweep cache (a regression runs everything); the Verilator model of
each array is built once (``sim.array_run.model_for``, cached by the Verilog's and the build's
keys; concurrent workers wait for one build).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from ubgen.paths import build_dir

from .engine import Task, run_tasks

__all__ = ["REGRESS_STAGES", "regress", "table", "write_doc", "add_arguments", "run_from_args"]

REGRESS_STAGES = ("schedule", "map", "netlist", "pnr", "sim")
TABLE = build_dir("regress", "table.md")
DOC = Path(__file__).resolve().parents[2] / "docs" / "simulation.md"
BEGIN, END = "<!-- regress:begin -->", "<!-- regress:end -->"
COLUMNS = ("app", "arch", "PEs", "MEMs", "IOs", "cycles predicted", "cycles measured",
           "passed", "seconds", "session cycles / run cycles", "run cycles/s", "note")


def regress(apps: list[str], *, workers: int = 1, scheduler: str | None = None,
            progress: bool = True) -> tuple[list[dict], float]:
    """Every app of ``apps`` through :data:`REGRESS_STAGES`; (results, wall seconds)."""
    t = time.perf_counter()
    results = run_tasks([Task(app, {}, REGRESS_STAGES) for app in apps], scheduler=scheduler,
                        workers=workers, progress=progress, desc="regress")
    return results, time.perf_counter() - t


def _row(r: dict) -> list:
    seconds = round(sum(r.get("seconds", {}).values()))
    ratio = (f"{r['session_cycles']:,} / {r['run_cycles']:,}"
             f" = {r['session_cycles'] / r['run_cycles']:.2f}"
             if r.get("session_cycles") and r.get("run_cycles") else "")
    note = []
    if r["status"] == "does-not-fit":
        note.append(r.get("arch_choice") or "fits no shipped array")
    elif r.get("error"):
        note.append(r["error"])
    passed_over = (r.get("arch_choice") or "").partition("passed over: ")[2]
    if passed_over and r["status"] != "does-not-fit":
        note.append(f"passed over {passed_over}")
    passed = {True: "yes", False: "no"}.get(r.get("sim_passed"), "")
    return [r["app"], r.get("arch") if r["status"] != "does-not-fit" else "—", r.get("pes"),
            r.get("mems"), r.get("ios"), r.get("cycles_predicted"), r.get("cycles_measured"),
            passed, seconds, ratio, r.get("run_cycles_per_s") or "", "; ".join(note)]


def table(results: list[dict], wall: float, workers: str, load: tuple[float, ...]) -> str:
    """The regression table in Markdown, with the wall time and the load."""
    lines = ["| " + " | ".join(COLUMNS) + " |",
             "|---|---|" + "---:|" * 5 + "---|---:|---|---:|---|"]
    from ..pipeline import shipped_arrays
    order = {a: i for i, a in enumerate(shipped_arrays())}       # small arrays first
    placed = lambda r: order.get(r.get("arch"), len(order)) if r["status"] != "does-not-fit" \
        else len(order) + 1
    lines += ["| " + " | ".join("" if v is None else str(v) for v in _row(r)) + " |"
              for r in sorted(results, key=lambda r: (placed(r), r["app"]))]
    failed = [r["app"] for r in results if r["status"] == "error"]
    lines += ["", f"`make regress` ({workers}): {len(results)} applications, "
              f"{sum(r.get('sim_passed') is True for r in results)} passed end to end, "
              f"{sum(r['status'] == 'does-not-fit' for r in results)} fit no shipped array, "
              f"{len(failed)} failed{' (' + ', '.join(failed) + ')' if failed else ''}; "
              f"wall time {wall / 60:.1f} min; load average before/after "
              f"{load[0]:.1f}/{load[1]:.1f} on {os.cpu_count()} cores."]
    return "\n".join(lines) + "\n"


def write_doc(text: str, doc: Path = DOC) -> None:
    """Put ``text`` between the regression markers of ``doc``."""
    body = doc.read_text()
    if BEGIN not in body or END not in body:
        raise ValueError(f"{doc}: no {BEGIN} ... {END} markers for the regression table")
    head, rest = body.split(BEGIN, 1)
    doc.write_text(head + BEGIN + "\n" + text + END + rest.split(END, 1)[1])


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--apps", nargs="+", metavar="APP",
                    help="applications (default: every app of apps/)")
    ap.add_argument("--workers", type=int, default=1, metavar="N",
                    help="worker processes of the local Dask cluster (default 1; 0: in this "
                         "process)")
    ap.add_argument("--scheduler", metavar="ADDRESS",
                    help="address of an existing Dask scheduler, e.g. tcp://host:8786")
    ap.add_argument("--doc", action="store_true",
                    help="also write the table into docs/simulation.md (between its markers)")
    ap.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    ap.add_argument("--quiet", action="store_true", help="no progress bar")


def run_from_args(args) -> int:
    from apps import APPS
    apps = args.apps or sorted(APPS)
    unknown = [a for a in apps if a not in APPS]
    if unknown:
        raise ValueError(f"unknown application(s) {', '.join(unknown)}; apps: "
                         f"{', '.join(sorted(APPS))}")
    before = os.getloadavg()[0]
    results, wall = regress(apps, workers=args.workers, scheduler=args.scheduler,
                            progress=not args.quiet)
    where = f"scheduler {args.scheduler}" if args.scheduler else f"{args.workers} workers"
    text = table(results, wall, where, (before, os.getloadavg()[0]))
    TABLE.parent.mkdir(parents=True, exist_ok=True)
    TABLE.write_text(text)
    if args.doc:
        write_doc(text)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str))
    print(text, end="")
    print(f"-> {TABLE}" + (f", {DOC}" if args.doc else ""), file=sys.stderr)
    return 1 if any(r["status"] == "error" for r in results) else 0
