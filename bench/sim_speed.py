"""How fast the end-to-end model simulates, by build option (docs/simulation.md "Speed").

For each arch (default cgra_8x8 and cgra_16x32) and each variant of the Verilator build
(:class:`sim.array_run.ModelOptions`; the host's polling for one testbench variant), in one run:
build the model (wall seconds and the CPU seconds of every process of the build), then run the
same placed and routed application on it ``--reps`` times (default 3) and take the median of the
simulated clock cycles per second during the run phase (the array computing, the host asleep
until ``DONE_CYCLE``), per wall-clock second and per CPU second of the simulator process (the
machine is shared: the CPU figure is what the load does not move). Every run must pass
(bit-exact, cycles as predicted).

Variants (``--variants``, default all): ``before`` (the model as the project built it before
the options were compared: Verilator's default C++ flags ``OPT_FAST=-Os``, unoptimised
construction code, Verilator ``-O2``), ``default`` (:class:`ModelOptions` as shipped),
``verilator-O3``, ``opt-fast-O1`` / ``-O2`` / ``-O3`` (make's ``OPT_FAST``, with ``OPT_SLOW``
and ``OPT_GLOBAL`` alike), ``threads2`` (``--threads 2``), ``flat`` (no hierarchical blocks;
not built for cgra_16x32, whose flat Verilation needs about 6 GB and 9 minutes for 349 MB of
C++, docs/array.md "Verilator"), ``x-safe`` (``--x-assign unique --x-initial unique``,
Verilator's defaults, against ``fast``), ``public-all`` (every signal visible to VPI, cocotb's
own runner), ``poll-256`` (the default model; the host polls ``DONE`` every 256 cycles from the
start instead of sleeping until ``DONE_CYCLE``: more Python awaits), ``clock-py`` (the
default model; the top's clock a Python task woken twice a cycle, as before the C clock of
:func:`sim.tb.host.clock_impl`), ``no-memo`` (the tiles' hierarchical-block wrappers as
Verilator writes them: every call evaluates the tile), ``memo`` (a tile evaluated only when
one of its inputs changed, :mod:`sim.hier_memo`), ``memo-fall`` (``memo``, and no evaluation
on the clock's falling edge), ``memo-fall-ico`` (``memo-fall``, and no input-combinational
region on a rising edge: the default).

Usage: ``python bench/sim_speed.py [--arch cgra_8x8 cgra_16x32] [--variants ...] [--reps 3]
[--app gaussian] [--json FILE]``. Prints one Markdown table per arch and the load average.
Models are cached like ``make sim``'s (a second run of the bench reuses them and reports their
original build time).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sim.array_run import ModelOptions, model_for, run_bundle   # noqa: E402

BEFORE = ModelOptions(verilator_opt="-O2", opt_fast="-Os", opt_slow="", opt_global="-Os",
                      hier_memo=False, hier_fall_skip=False, hier_rise_no_ico=False)
VARIANTS: dict[str, tuple[ModelOptions, dict]] = {
    "before": (BEFORE, {}),
    "default": (ModelOptions(), {}),
    "verilator-O3": (replace(BEFORE, verilator_opt="-O3"), {}),
    "opt-fast-O1": (replace(BEFORE, opt_fast="-O1", opt_slow="-O1", opt_global="-O1"), {}),
    "opt-fast-O2": (replace(BEFORE, opt_fast="-O2", opt_slow="-O1", opt_global="-O2"), {}),
    "opt-fast-O3": (replace(BEFORE, opt_fast="-O3", opt_slow="-O1", opt_global="-O3"), {}),
    "threads2": (replace(ModelOptions(), threads=2), {}),
    "flat": (replace(ModelOptions(), hierarchical=False), {}),
    "x-safe": (replace(ModelOptions(), x_assign="unique", x_initial="unique"), {}),
    "public-all": (replace(ModelOptions(), public="all"), {}),
    "poll-256": (ModelOptions(), {"UBGEN_E2E_POLL": "256"}),
    "clock-py": (ModelOptions(), {"UBGEN_E2E_CLOCK": "py"}),
    "no-memo": (replace(ModelOptions(), hier_memo=False, hier_fall_skip=False,
                        hier_rise_no_ico=False), {}),
    "memo": (replace(ModelOptions(), hier_memo=True, hier_fall_skip=False,
                     hier_rise_no_ico=False), {}),
    "memo-fall": (replace(ModelOptions(), hier_memo=True, hier_fall_skip=True,
                          hier_rise_no_ico=False), {}),
    "memo-fall-ico": (replace(ModelOptions(), hier_memo=True, hier_fall_skip=True,
                              hier_rise_no_ico=True), {}),
}
NOT_BUILT = {("flat", "cgra_16x32"): "not built: the flat Verilation of cgra_16x32 needs ~6 GB "
                                    "and ~9 min for 349 MB of C++ (docs/array.md)"}


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def measure(arch: str, name: str, bundle: dict, reps: int) -> dict:
    options, env = VARIANTS[name]
    cpu = children_cpu()
    t = time.perf_counter()
    model = model_for(arch, options=options)
    built = {"build_s": model["verilator_build_seconds"] if not model["cached"] else None,
             "build_cpu_s": children_cpu() - cpu if not model["cached"] else None,
             "cached": model["cached"], "wall_s": time.perf_counter() - t}
    if model["cached"]:
        stamp = json.loads((model["build_dir"] / "model.json").read_text())
        built["build_s"] = stamp.get("seconds")
        built["build_cpu_s"] = stamp.get("cpu_seconds")
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    runs = []
    try:
        for _ in range(reps):
            r = run_bundle(bundle, arch, model=model)
            if not r["passed"]:
                raise SystemExit(f"{arch} {name}: the run failed: {'; '.join(r['failures'])}")
            run = r["stages"]["run"]
            runs.append({"wall": run["cycles"] / run["seconds"],
                         "cpu": run["cycles"] / max(run["cpu_seconds"], 1e-6),
                         "session": r["sim_cycles"] / r["sim_seconds"],
                         "load": os.getloadavg()[0]})
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    med = lambda k: statistics.median(x[k] for x in runs)
    return {**built, "run_cycles_per_s": med("wall"), "run_cycles_per_cpu_s": med("cpu"),
            "session_cycles_per_s": med("session"), "runs": runs,
            "options": options.describe(), "env": env}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arch", nargs="+", default=["cgra_8x8", "cgra_16x32"])
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--app", default="gaussian", help="the application run (default sizes)")
    ap.add_argument("--json", metavar="FILE", help="also write every figure as JSON")
    args = ap.parse_args(argv)
    from compiler.pipeline import compile_app, require_fit
    out = {}
    for arch in args.arch:
        result = compile_app(args.app, arch, {})
        require_fit(result)
        bundle = result.run("bundle").bundle
        print(f"\n{args.app} on {arch}: {bundle['cycles_predicted']} cycles; load average "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; median of {args.reps}",
              flush=True)
        print("| variant | options | build s (wall) | build s (CPU) | run cycles/s (wall) | "
              "run cycles/CPU s | session cycles/s | load |\n|---|---|---:|---:|---:|---:|---:|"
              "---:|", flush=True)
        for name in args.variants:
            if (name, arch) in NOT_BUILT:
                print(f"| {name} | | | | {NOT_BUILT[name, arch]} | | | |", flush=True)
                continue
            m = measure(arch, name, bundle, args.reps)
            out[f"{arch}/{name}"] = m
            fmt = lambda v, f="{:.0f}": f.format(v) if v is not None else "?"
            print(f"| {name} | {m['options']}{' ' + str(m['env']) if m['env'] else ''} | "
                  f"{fmt(m['build_s'])}{' (cached)' if m['cached'] else ''} | "
                  f"{fmt(m['build_cpu_s'])} | {m['run_cycles_per_s']:,.0f} | "
                  f"{m['run_cycles_per_cpu_s']:,.0f} | {m['session_cycles_per_s']:,.0f} | "
                  f"{statistics.median(r['load'] for r in m['runs']):.1f} |", flush=True)
            if args.json:
                Path(args.json).write_text(json.dumps(out, indent=1))
    print(f"\nload average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
