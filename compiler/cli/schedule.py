"""``ubc schedule APP``: extract, schedule and verify an application; report cycles and SRAM words
(thesis ch. 4, paper Tables VI/VII; docs/scheduling.md).

    ubc schedule APP [--arch A] [--size K=V ...] [--policy P] [--no-balance] [--no-delay] [--no-reorder]
                     [--json]
                     [--dump DIR] [--plot FILE]
"""
from __future__ import annotations

import json

from .common import (add_app_arguments, add_delay_argument, add_reorder_argument, check_dir,
                     write_dir, write_with)

__all__ = ["add_schedule_subcommand", "cmd_schedule"]


def _dump(result, app: str, directory: str) -> None:
    """Write every IR of the run into ``directory`` (all or nothing)."""
    bufs = result.buffers.values()
    write_dir(directory, {
        "program.json": lambda: result.program.to_json(indent=1),
        "program.txt": lambda: str(result.program) + "\n",
        "poly.json": lambda: json.dumps(result.poly.to_dict(), indent=1),
        "poly.isl": lambda: result.poly.to_isl(),
        "dependences.json": lambda: json.dumps([d.to_dict() for d in result.deps], indent=1),
        "schedule_sequential.json": lambda: result.sequential.to_json(indent=1),
        "schedule_sequential.isl": lambda: result.sequential.to_isl(),
        "schedule.json": lambda: result.optimized.to_json(indent=1),
        "schedule.isl": lambda: result.optimized.to_isl(),
        "buffers.json": lambda: json.dumps([b.to_dict() for b in bufs], indent=1),
        "buffers.isl": lambda: "\n".join(b.to_isl() for b in bufs),
        "summary.json": lambda: json.dumps(result.summary(app), indent=1),
    })


def _print_summary(app: str, summary: dict) -> None:
    print(f"{app}: policy {summary['policy']}")
    for reason in summary.get("fallback", []):
        print(f"  fell back from {reason}")
    print(f"  cycles     sequential {summary['cycles_sequential']:>9}   optimized "
          f"{summary['cycles_optimized']:>9}")
    print(f"  sram words sequential {summary['sram_words_sequential']:>9}   optimized "
          f"{summary['sram_words_optimized']:>9}")
    for b in summary["buffers"]:
        print(f"    {b['name']:<16} ports {b['ports']:>3}  live words {b['live_words']:>7}")
    print(f"  compile time {summary['compile_seconds']:.2f} s")


def cmd_schedule(args) -> int:
    from ..ir.hw import HwParams
    from ..schedule.report import schedule_program
    from ..frontend.source import load_program, parse_sizes
    check_dir(args.dump, args.plot)
    params = HwParams.from_arch(args.arch)
    program = load_program(args.app, parse_sizes(args.size))
    policy = None if args.policy == "auto" else args.policy
    result = schedule_program(program, params, policy, balance=not args.no_balance,
                              delay=not args.no_delay, reorder=not args.no_reorder)
    summary = result.summary(args.app)
    if args.plot:
        from ..plot import plot_schedule
        write_with(args.plot, lambda tmp: plot_schedule(result.poly, result.optimized, tmp),
                   default_suffix=".png")
    if args.dump:
        _dump(result, args.app, args.dump)
    if args.json:
        print(json.dumps(summary))
    else:
        _print_summary(args.app, summary)
    return 0


def add_schedule_subcommand(subparsers) -> None:
    s = subparsers.add_parser(
        "schedule", help="extract, schedule and verify an application; report cycles and SRAM",
        description="Extract the polyhedral program of APP, schedule it sequentially (baseline) "
        "and with the selected policy (stencil: fused II=1; dnn: coarse-grained modulo "
        "schedule with double buffering; dnn-db: the same without loop perfection and "
        "flattening; hls: the stages one after another, innermost loops pipelined: the baselines "
        "of thesis Fig. 7.8), verify both with isl and report completion cycles "
        "and live SRAM words per unified buffer (paper Tables VI/VII).")
    add_app_arguments(s, on_array=False)
    s.add_argument("--policy", default="auto",
                   choices=["auto", "stencil", "dnn", "dnn-db", "hls", "sequential"],
                   help="scheduling policy (default: auto, paper §V-B rule)")
    s.add_argument("--no-balance", action="store_true",
                   help="schedule the kernels as written, without tree-height reduction "
                   "(the ablation of compiler.passes.tree_height)")
    add_delay_argument(s)
    add_reorder_argument(s)
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.add_argument("--dump", metavar="DIR",
                   help="write the (balanced) Program, PolyProgram, Schedules, UnifiedBuffers "
                   "(JSON + ISL)")
    s.add_argument("--plot", metavar="FILE", help="draw the schedule reservation table (PNG)")
    s.set_defaults(func=cmd_schedule)
