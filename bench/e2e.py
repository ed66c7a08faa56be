"""End-to-end wall time per stage and simulated cycles per second (docs/simulation.md).

For each application, through the driver (``compiler.pipeline.compile_app``): compile, place and
route, the bundle (with the golden of ``compiler.frontend.source.establish_golden``); then the arch's Verilog and Verilator model
(``sim.array_run.model_for``: built once per arch and cached by the Verilog's SHA-256, so only
the first app of an arch pays the build, unless ``--cold`` removes the cached model first), and
the cocotb host run (``sim.array_run.run_bundle``). Prints one row per app: seconds of each
stage, the simulated clock cycles of the whole host session (configure, read back, load, run,
read back) and of the run alone, and cycles per wall-clock second for both (the session's
figure includes the Python host's AXI-Lite traffic, the run's is dominated by the model).
Every run must pass (bit-exact, cycles as predicted); a failing app is reported and the exit
status is 1.

Usage: ``python bench/e2e.py [--arch cgra_8x8] [--apps gaussian cascade ...] [--full]
[--cold]``. ``--full``: the apps' Table 7.1 sizes (default: the reduced sizes of the tests).
The machine's load average is printed with the figures.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_APPS = ["gaussian", "brighten_blur", "cascade", "upsample", "gemm", "resnet"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arch", default="cgra_8x8")
    ap.add_argument("--apps", nargs="+", default=DEFAULT_APPS)
    ap.add_argument("--full", action="store_true", help="Table 7.1 sizes")
    ap.add_argument("--cold", action="store_true",
                    help="remove the cached Verilator model first (measure the build)")
    args = ap.parse_args(argv)

    from compiler.pipeline import compile_app, require_fit
    from sim.array_run import model_for, run_bundle
    from tests.apps.test_apps import SMALL

    if args.cold:
        from sim.array_run import generate_verilog, E2E_BUILD
        _rtl, sha, _s = generate_verilog(args.arch)
        for d in E2E_BUILD.glob(f"{args.arch}-{sha[:16]}*"):
            shutil.rmtree(d)
    print(f"end to end on {args.arch} ({'Table 7.1' if args.full else 'reduced'} sizes); "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)
    cols = ("app", "compile s", "pnr s", "Verilog s", "Verilator build s", "sim s",
            "session cycles", "session cycles/s", "run cycles", "run cycles/s", "pass")
    print("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols), flush=True)
    failed = []
    for app in args.apps:
        sizes = {} if args.full else SMALL.get(app, {})
        t = time.perf_counter()
        result = compile_app(app, args.arch, sizes)
        require_fit(result)
        t_compile = time.perf_counter() - t
        t = time.perf_counter()
        result.run("pnr")
        t_pnr = time.perf_counter() - t
        bundle = result.run("bundle").bundle
        model = model_for(result.arch)
        r = run_bundle(bundle, result.arch, model=model)
        run = r["stages"].get("run", {"cycles": 0, "seconds": 0})
        row = (app, f"{t_compile:.1f}", f"{t_pnr:.1f}", f"{model['verilog_seconds']:.1f}",
               f"{model['verilator_build_seconds']:.0f}", f"{r['sim_seconds']:.1f}",
               r["sim_cycles"], f"{r['sim_cycles'] / r['sim_seconds']:.0f}", run["cycles"],
               f"{run['cycles'] / run['seconds']:.0f}" if run["seconds"] else "-",
               "yes" if r["passed"] else "NO")
        print("| " + " | ".join(map(str, row)) + " |", flush=True)
        if not r["passed"]:
            failed.append(f"{app}: {'; '.join(r['failures'])}")
    print(f"load average {os.getloadavg()[0]:.1f}")
    for f in failed:
        print(f"FAIL {f}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
