"""``ubc``: the unified-buffer compiler's command line (docs/design.md §1, §3).

    ubc schedule APP ...           extract, schedule, verify (:mod:`.schedule`)
    ubc map APP ...                buffer mapping report (:mod:`.map`)
    ubc compile / netlist APP ...  every stage, the netlist and its model (:mod:`.backend`)
    ubc sweep APP ...              a design-space sweep (:mod:`.sweep`)
    ubc pnr APP ...                place and route, bitstream and its check (:mod:`.pnr`)
    ubc sim APP ...                the main job: end to end on the RTL (:mod:`.sim`, sim.main)
    ubc evaluate ...               the thesis/paper tables (:mod:`.sim`, sweep.evaluate)
    ubc fpga APP ...               the app as an FPGA design: Verilator, Yosys, nextpnr
                                   (:mod:`.fpga`)

One module per command family, each with an ``add_*_subcommand(subparsers)``; the shared
argument and file-writing helpers are in :mod:`.common`. The command modules import
:mod:`.common` and the compiler, never this package, so there is no import circle.

Exit status (docs/cli.md): 0 success, 1 a check failed (the netlist model, the bitstream
checker, the golden, a simulation), 2 bad input or usage: a bad program, constraints file or
size, an unschedulable program, a buffer mapping refuses, a design that does not fit, print one
line ``ubc: error: ...`` and write no output file. A program that compiles but probably not as
meant (``ProgramWarning``, e.g. a Halide-style input read without ``stream_to_accelerator()``)
prints one line ``ubc: warning: ...`` once.
"""
from __future__ import annotations

import argparse
import sys

from ..pipeline import user_errors
from ..frontend.source import warnings_once
from .backend import add_backend_subcommands
from .common import add_app_arguments
from .fpga import add_fpga_subcommand
from .map import add_map_subcommand
from .pnr import add_pnr_subcommand
from .schedule import add_schedule_subcommand
from .sim import add_sim_subcommands
from .sweep import add_sweep_subcommand

__all__ = ["main", "build_parser", "add_app_arguments", "USER_ERRORS"]

USER_ERRORS = user_errors()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ubc", description="Unified-buffer compiler for push-memory CGRAs: polyhedral "
        "extraction, cycle-accurate scheduling, verification, buffer mapping, place and "
        "route, and the app end to end on the generated accelerator. Exit status: 0 success, "
        "1 a check failed, 2 bad input or usage (docs/cli.md).")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    add_schedule_subcommand(sub)
    add_map_subcommand(sub)
    add_backend_subcommands(sub)
    add_sweep_subcommand(sub)
    add_pnr_subcommand(sub)
    add_sim_subcommands(sub)
    add_fpga_subcommand(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        with warnings_once("ubc"):
            return args.func(args)
    except USER_ERRORS as e:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        print(f"ubc: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
