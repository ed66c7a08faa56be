"""``ubc sweep APP``: a design-space sweep over the Cartesian product of parameters
(thesis §7.3.1, Fig. 7.5; docs/sweep.md).

    ubc sweep APP --param unroll=1,2,4,8 [--param arch=cgra_8x8,cgra_16x32] [--size K=V ...]
                  [--stages schedule,map,netlist] [--scheduler ADDRESS] [--workers N] [--json]
                  [--plot FILE] [--cache DIR | --no-cache] [--quiet]

Each point is one Dask task (``compiler.sweep.point.evaluate_point``); see
:mod:`compiler.sweep.engine` for where the tasks run and :mod:`compiler.sweep.cache` for the
cache.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from ubgen.arch import load_arch

from .common import check_dir

__all__ = ["add_sweep_subcommand", "cmd_sweep"]

SUMMARY = ("status", "pes", "mems", "sram_words", "cycles", "runs", "fits")


def _points(args) -> tuple[list[dict], list[tuple[str, ...]]]:
    from ..sweep.engine import SweepError, grid, parse_param, parse_value
    params = [parse_param(p) for p in args.param]
    fixed = {}
    for item in args.size:
        key, sep, value = item.partition("=")
        if not sep or not value.lstrip("-").isdigit():
            raise SweepError(f"--size expects NAME=INTEGER, got '{item}'")
        fixed[key] = parse_value(value)
    swept = {k for keys, _ in params for k in keys}
    for k in fixed:
        if k in swept:
            raise SweepError(f"{k} is both swept (--param) and fixed (--size)")
    points = [dict(p, **fixed) for p in grid(params)] if params else [dict(fixed)]
    return points, [keys for keys, _ in params]


def _validate(app: str, points: list[dict], stages: tuple[str, ...]) -> None:
    """Reject bad input before any work: unknown app, parameter, stage or constraints file."""
    from ..sweep.point import REQUIRES, STAGES, PointError, split_params
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        raise PointError(f"unknown stage(s) {', '.join(unknown)}; stages: {', '.join(STAGES)}")
    for s in stages:
        if s in REQUIRES and REQUIRES[s] not in stages:
            raise PointError(f"the {s} stage needs the {REQUIRES[s]} stage (--stages ..."
                             f"{REQUIRES[s]},{s})")
    if app.endswith(".json") and not Path(app).is_file():
        raise ValueError(f"program file {app} not found")
    for p in points:
        split_params(app, p)
    for arch in {str(p["arch"]) for p in points if "arch" in p}:
        load_arch(arch)


def _table(results: list[dict], keys: list[str]) -> str:
    cols = keys + list(SUMMARY) + ["seconds", "error"]
    rows = []
    for r in results:
        row = []
        for c in cols:
            v = r.get(c)
            if c == "seconds":
                v = f"{sum((r.get('seconds') or {}).values()):.1f}"
            elif c == "pes" and v is None:
                v = "pending"
            elif v is None:
                v = "-"
            row.append(str(v))
        rows.append(row)
    widths = [max(len(c), *(len(row[i]) for row in rows)) for i, c in enumerate(cols)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines)


def cmd_sweep(args) -> int:
    from ..sweep.cache import DEFAULT_DIR, Cache
    from ..sweep.engine import SweepError, run_sweep
    from ..sweep.plot import plot_sweep, varying
    check_dir(args.plot)
    if args.workers is not None and args.workers < 0:
        raise SweepError(f"--workers must be 0 or more, got {args.workers}")
    stages = tuple(s.strip() for s in args.stages.split(",") if s.strip())
    points, swept = _points(args)
    _validate(args.app, points, stages)
    cache = Cache(None if args.no_cache else (args.cache or DEFAULT_DIR))
    workers = args.workers if args.workers is not None else (os.cpu_count() or 1)
    results = run_sweep(args.app, points, stages, scheduler=args.scheduler, workers=workers,
                        cache=cache, progress=not args.quiet, desc=f"sweep {args.app}")
    if args.plot:
        keys = [k for keys in swept for k in keys]
        x = next((keys_ for keys_ in swept if varying(results, keys_)), swept[0] if swept else ())
        panels = [k for k in varying(results, keys) if k not in x]
        plot_sweep(results, list(x) or ["app"], args.plot, args.app, panels)
    if args.json:
        print(json.dumps(results))
    else:
        keys = list(dict.fromkeys(k for p in points for k in p))
        print(_table(results, keys if "arch" in keys else keys + ["arch"]))
        failed = sum(r["status"] == "error" for r in results)
        print(f"{len(results)} points: {cache.hits} from the cache, "
              f"{len(results) - cache.hits} computed, {failed} failed, "
              f"{sum(r['status'] == 'does-not-fit' for r in results)} do not fit"
              + (f"; cache {cache.dir}" if cache.dir else ""))
    # a point that failed (an error, not a design that does not fit) is a failed check
    return 1 if any(r["status"] == "error" for r in results) else 0


def add_sweep_subcommand(subparsers) -> None:
    s = subparsers.add_parser(
        "sweep", help="evaluate APP over the Cartesian product of parameters (Dask)",
        description="Compile APP at every point of the Cartesian product of the --param "
        "lists, one Dask task per point (a LocalCluster of --workers processes, an existing "
        "cluster with --scheduler, or in-process with --workers 0), and report per point: "
        "PEs, MEMs (of the netlist), SRAM words, cycles, whether it "
        "fits the arch and seconds per stage. Points are cached on disk by a hash of their "
        "inputs (docs/sweep.md). A failing point is reported, never stops the sweep.")
    s.add_argument("app", metavar="APP", help="application name (apps/) or a Program JSON file")
    s.add_argument("--param", action="append", default=[], metavar="NAME=V1,V2",
                   help="swept parameter: an app size (unroll=1,2,4,8) or an option (arch, "
                   "threshold, policy, backend, fetch_width); NAME+NAME=... ties two sizes to "
                   "one value (resnet: ic_unroll+oc_unroll=1,2,4,8); repeatable: the points "
                   "are the Cartesian product (default arch: the smallest shipped array each "
                   "point fits; name one with --param arch=... to compare figures over time)")
    s.add_argument("--size", action="append", default=[], metavar="NAME=N",
                   help="a size fixed for every point, e.g. --size width=32 (repeatable)")
    s.add_argument("--stages", default="schedule,map,netlist", metavar="S1,S2",
                   help="stages to run per point (default: schedule,map,netlist)")
    s.add_argument("--scheduler", metavar="ADDRESS",
                   help="address of an existing Dask scheduler, e.g. tcp://host:8786")
    s.add_argument("--workers", type=int, metavar="N",
                   help="worker processes of the local cluster (default: the number of "
                   "cores; 0: evaluate in this process, for debugging)")
    s.add_argument("--json", action="store_true",
                   help="print one JSON list, one object per point")
    s.add_argument("--plot", metavar="FILE",
                   help="draw resources and cycles against the swept parameter (PNG, thesis "
                   "Fig. 7.5 style; designs that do not fit shaded)")
    s.add_argument("--cache", metavar="DIR", help="cache directory (default: build/sweep/cache "
                   "of the checkout)")
    s.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    s.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    s.set_defaults(func=cmd_sweep)
