"""Speed and quality of place and route (compiler/backend/pnr.py, docs/pnr.md) on every app.

    .venv/bin/python bench/pnr.py [APP ...] [--arch A ...] [--seed N] [--effort E] [--small]
                                  [--all-fitting]

For each app at its Table 7.1 sizes (``--small``: the tests' reduced sizes) on each given arch
(default: the smallest shipped arch that it fits, by the netlist's counts, of cgra_4x4,
cgra_4x16, cgra_8x8 and cgra_16x32; ``--all-fitting``: every one of them it fits), compile it,
place and route it and check the bitstream. Prints one markdown table row per app and arch:
place seconds, route seconds (wall clock, this machine), routing iterations, wirelength
(routing-graph nodes used), pipeline registers, register PEs, longest combinational path in
switch-box hops, PEs/MEMs/IOs, bitstream writes and the checker's verdict. An app that does not
fit gets the resource that ran out. Exit status 1 when any checker fails.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ARCHS = ("cgra_4x4", "cgra_4x16", "cgra_8x8", "cgra_16x32")   # the shipped arrays, by size


def main(argv=None) -> int:
    from apps import NAMES
    from compiler.backend.place import DEFAULT_SCHEDULE
    from compiler.backend.pnr import PnRError, array_data
    from compiler.pipeline import compile_app
    from tests.apps.test_apps import SMALL

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("apps", nargs="*", default=sorted(NAMES))
    ap.add_argument("--arch", nargs="+", default=None,
                    help="arches to run every app on (default: the smallest of "
                    f"{', '.join(ARCHS)} that fits)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--effort", type=float, default=DEFAULT_SCHEDULE.effort,
                    help="annealing effort (ubc pnr --effort; default "
                    f"{DEFAULT_SCHEDULE.effort})")
    ap.add_argument("--small", action="store_true", help="the tests' reduced sizes")
    ap.add_argument("--all-fitting", action="store_true",
                    help="every shipped arch the app fits, not only the smallest")
    args = ap.parse_args(argv)
    print("| app | arch | place s | route s | iterations | wirelength | pipeline registers | "
          "register PEs | max comb hops | PEs | MEMs | IOs | bitstream words | check |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    failed = False
    for app in args.apps:
        sizes = SMALL[app] if args.small else None
        compiled = lambda a: compile_app(app, a, sizes, seed=args.seed, effort=args.effort)
        if args.arch:
            runs = [(a, compiled(a)) for a in args.arch]
        else:
            runs = [(a, compiled(a)) for a in ARCHS]
            fit = [(a, r) for a, r in runs if r.fits()[0]]
            runs = fit if args.all_fitting else fit[:1]
            runs = runs or [(ARCHS[-1], compiled(ARCHS[-1]))]
        for arch, result in runs:
            ok, why = result.fits()
            if not ok:
                print(f"| {app} | {arch} | does not fit: {why} |" + " |" * 11, flush=True)
                continue
            array_data(result.arch)             # the routing graph is built once per arch
            try:
                pnr = result.run("pnr").pnr
            except PnRError as e:
                print(f"| {app} | {arch} | error: {e} |" + " |" * 11, flush=True)
                failed = True
                continue
            s = pnr.summary()
            failed |= s["check"] != "pass"
            print(f"| {app} | {arch} | {s['place_seconds']:.2f} | {s['route_seconds']:.2f} | "
                  f"{s['routing_iterations']} | {s['wirelength']} | {s['pipeline_registers']} | "
                  f"{s['register_pes']} | {s['max_comb_hops']} | {s['pes']} | {s['mems']} | "
                  f"{s['ios']} | {s['bitstream_words']} | {s['check']} |", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
