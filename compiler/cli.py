"""``ubc``: the unified-buffer compiler's command line (DESIGN §1, §3).

    ubc schedule APP [--arch A] [--size K=V ...] [--policy P] [--no-balance] [--json]
                     [--dump DIR] [--plot FILE]
    ubc map APP ...      (compiler/cli_map.py)
    ubc sweep APP ...    (compiler/cli_sweep.py)

User errors (bad program, bad constraints file, unschedulable program) print one line
``ubc: error: ...`` and exit with status 1 without writing any output file.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from ubgen.arch import ArchError

from .ir.index import IndexError_
from .ir.program import Program, ProgramError
from .poly.extract import ExtractError
from .source import load_program, parse_sizes as _sizes
from .verify import ScheduleError, VerifyError

USER_ERRORS = (ProgramError, IndexError_, ExtractError, VerifyError, ScheduleError, ArchError,
               ValueError, KeyError)   # MappingError, NetlistError and FitError are ValueErrors


def _dump(result, app: str, directory: str) -> None:
    """Write every IR of the run into ``directory`` (all or nothing)."""
    target = Path(directory)
    tmp = Path(tempfile.mkdtemp(prefix=".ubc-", dir=target.parent))
    try:
        files = {
            "program.json": result.program.to_json(indent=1),
            "program.txt": str(result.program) + "\n",
            "poly.json": json.dumps(result.poly.to_dict(), indent=1),
            "poly.isl": result.poly.to_isl(),
            "dependences.json": json.dumps([d.to_dict() for d in result.deps], indent=1),
            "schedule_sequential.json": result.sequential.to_json(indent=1),
            "schedule_sequential.isl": result.sequential.to_isl(),
            "schedule.json": result.optimized.to_json(indent=1),
            "schedule.isl": result.optimized.to_isl(),
            "buffers.json": json.dumps([b.to_dict() for b in result.buffers.values()], indent=1),
            "buffers.isl": "\n".join(b.to_isl() for b in result.buffers.values()),
            "summary.json": json.dumps(result.summary(app), indent=1),
        }
        for name, text in files.items():
            (tmp / name).write_text(text)
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _plot(result, path: str) -> None:
    from .plot import plot_schedule
    target = Path(path)
    fd, tmp = tempfile.mkstemp(suffix=target.suffix or ".png", dir=target.parent)
    os.close(fd)
    try:
        plot_schedule(result.poly, result.optimized, tmp)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def cmd_schedule(args) -> int:
    from .schedule.params import HwParams
    from .schedule.report import schedule_program
    for path in (args.dump, args.plot):
        if path and not Path(path).resolve().parent.is_dir():
            raise ValueError(f"cannot write {path}: directory {Path(path).parent} does not exist")
    params = HwParams.from_arch(args.arch)
    program = load_program(args.app, _sizes(args.size))
    policy = None if args.policy == "auto" else args.policy
    result = schedule_program(program, params, policy, balance=not args.no_balance)
    summary = result.summary(args.app)
    if args.plot:
        _plot(result, args.plot)
    if args.dump:
        _dump(result, args.app, args.dump)
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"{args.app}: policy {summary['policy']}")
        print(f"  cycles     sequential {summary['cycles_sequential']:>9}   optimized "
              f"{summary['cycles_optimized']:>9}")
        print(f"  sram words sequential {summary['sram_words_sequential']:>9}   optimized "
              f"{summary['sram_words_optimized']:>9}")
        for b in summary["buffers"]:
            print(f"    {b['name']:<16} ports {b['ports']:>3}  live words {b['live_words']:>7}")
        print(f"  compile time {summary['compile_seconds']:.2f} s")
    return 0


def add_app_arguments(s: argparse.ArgumentParser, default_arch: str = "pub") -> None:
    """``APP``, ``--arch`` and ``--size``: how every ``ubc`` subcommand names its input."""
    s.add_argument("app", metavar="APP", help="application name (apps/) or a Program JSON file")
    s.add_argument("--arch", default=default_arch, metavar="A",
                   help=f"constraints file name or path (default: {default_arch})")
    s.add_argument("--size", action="append", default=[], metavar="NAME=N",
                   help="override an application size, e.g. --size width=32 (repeatable)")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ubc", description="Unified-buffer compiler for push-memory CGRAs: polyhedral "
        "extraction, cycle-accurate scheduling, verification.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    s = sub.add_parser(
        "schedule", help="extract, schedule and verify an application; report cycles and SRAM",
        description="Extract the polyhedral program of APP, schedule it sequentially (baseline) "
        "and with the selected policy (stencil: fused II=1; dnn: coarse-grained modulo "
        "schedule with double buffering), verify both with isl and report completion cycles "
        "and live SRAM words per unified buffer (paper Tables VI/VII).")
    add_app_arguments(s)
    s.add_argument("--policy", default="auto", choices=["auto", "stencil", "dnn", "sequential"],
                   help="scheduling policy (default: auto, paper §V-B rule)")
    s.add_argument("--no-balance", action="store_true",
                   help="schedule the kernels as written, without tree-height reduction "
                   "(the ablation of compiler.frontend.tree_height)")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.add_argument("--dump", metavar="DIR",
                   help="write the (balanced) Program, PolyProgram, Schedules, UnifiedBuffers "
                   "(JSON + ISL)")
    s.add_argument("--plot", metavar="FILE", help="draw the schedule reservation table (PNG)")
    s.set_defaults(func=cmd_schedule)
    from .cli_map import add_map_subcommand
    add_map_subcommand(sub)
    from .cli_backend import add_backend_subcommands
    add_backend_subcommands(sub)
    from .cli_sweep import add_sweep_subcommand
    add_sweep_subcommand(sub)
    from .cli_pnr import add_pnr_subcommand
    add_pnr_subcommand(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except USER_ERRORS as e:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        print(f"ubc: error: {msg}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
