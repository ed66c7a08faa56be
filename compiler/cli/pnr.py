"""``ubc pnr``: place and route an app onto an array and assemble its bitstream
(compiler.backend.pnr, docs/pnr.md).

    ubc pnr APP [--arch A] [--seed N] [--effort E] [--size K=V ...] [--json] [--plot FILE]
            [--out DIR]

``--effort`` scales the annealer's moves per temperature (compiler.backend.place.AnnealSchedule,
default 0.5): larger tries more moves, is slower and gives another placement, not necessarily a
better one. Prints the placement, routing and bitstream figures and the bitstream checker's verdict
(``--json``: one JSON object). ``--plot FILE`` draws the placed and routed array; ``--out DIR``
writes ``<app>-<arch>.bitstream.json`` and ``.bin``. ``--arch`` defaults to the smallest shipped
array the app fits and routes on (docs/cli.md). Exit status 1 when the checker fails, 2 on bad
input. Nothing is written when anything fails.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..backend.place import DEFAULT_SCHEDULE, AnnealSchedule
from .common import add_app_arguments, check_dir, compile_for, write_with


def _check_out_dir(path: str | None) -> None:
    """``--out``: an existing directory, or one whose parent exists (created after the run)."""
    if not path:
        return
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise ValueError(f"cannot write into {path}: not a directory")
    check_dir(path)


def cmd_pnr(args) -> int:
    AnnealSchedule(effort=args.effort)          # a bad --effort fails before any work
    check_dir(args.plot)
    _check_out_dir(args.out)
    result, choice = compile_for(args, "pnr", say=None, seed=args.seed, effort=args.effort)
    pnr = result.pnr
    summary = pnr.summary()
    if choice:
        summary["arch_choice"] = choice.describe(result.app)
    if args.plot:
        from ..backend.pnr_plot import plot_pnr
        write_with(args.plot, lambda tmp: plot_pnr(pnr, tmp), ".png")
    if args.out:
        out = Path(args.out)
        created = not out.exists()
        out.mkdir(exist_ok=True)
        try:
            files = pnr.bitstream.save(out, f"{summary['app']}-{summary['arch']}")
        except BaseException:
            if created:
                out.rmdir()
            raise
        summary["bitstream_files"] = [str(f) for f in files]
    if args.json:
        print(json.dumps(summary))
    else:
        s = summary
        if choice:
            print(s["arch_choice"])
        print(f"{s['app']} on {s['arch']} (seed {s['seed']}, effort {s['effort']}): "
              f"{s['pes']} PEs "
              f"({s['register_pes']} register PEs), {s['mems']} MEMs, {s['ios']} IOs")
        print(f"  place {s['place_seconds']:.2f} s, route {s['route_seconds']:.2f} s "
              f"({s['routing_iterations']} iterations): wirelength {s['wirelength']} routing "
              f"nodes, {s['pipeline_registers']} pipeline registers, longest combinational "
              f"path {s['max_comb_hops']} switch-box hops")
        print(f"  bitstream: {s['bitstream_words']} writes, sha256 {s['bitstream_sha256']}")
        if s.get("tile_area_um2") is not None:
            kinds = ", ".join(f"{k} {v:.0f}" for k, v in s["tile_area_by_kind"].items())
            print(f"  tile area: {s['tile_area_um2']:.0f} um2 ({kinds}; docs/array.md \"Area\")")
        else:
            print(f"  tile area: not measured ({s['tile_area_note']})")
        print(f"  check: {s['check_detail']}")
        if args.plot:
            print(f"  plot: {args.plot}")
        for f in summary.get("bitstream_files", []):
            print(f"  wrote {f}")
    return 0 if pnr.check.ok else 1


def add_pnr_subcommand(subparsers) -> None:
    s = subparsers.add_parser(
        "pnr", help="place and route an app onto the array; assemble and check its bitstream",
        description="Compile APP to its netlist, place it (simulated annealing), route it "
        "(PathFinder on the array's routing graph, every edge with its exact latency through "
        "switch-box pipeline registers and register PEs), assemble the configuration "
        "bitstream and check it with the independent bitstream checker. Exit status 1 when "
        "the checker fails, 2 on bad input (an app that fits or routes on no arch included).")
    add_app_arguments(s, routes=True)
    s.add_argument("--seed", type=int, default=0, help="placement seed (default 0)")
    s.add_argument("--effort", type=float, default=DEFAULT_SCHEDULE.effort,
                   help="annealing effort: scales the moves tried per temperature; larger is "
                   f"slower (default {DEFAULT_SCHEDULE.effort})")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.add_argument("--plot", metavar="FILE", help="draw the placed and routed array (PNG)")
    s.add_argument("--out", metavar="DIR", help="write the bitstream as JSON and binary into "
                   "DIR")
    s.set_defaults(func=cmd_pnr)
