"""``ubgen fpga`` / ``python -m ubgen.fpga``: the FPGA flow's command line."""
from __future__ import annotations

import argparse
import sys

from .common import FPGAError
from .designs import DESIGNS
from .flow import run_fpga_flow
from .targets import TARGETS

__all__ = ["add_arguments", "run_from_args", "main"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``ubgen fpga`` (shared with ``python -m ubgen.fpga``)."""
    parser.add_argument("--target", required=True, help=f"one of {', '.join(TARGETS)}")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--design", help=f"one of {', '.join(DESIGNS)}")
    which.add_argument("--app-design", metavar="FILE", default=None,
                       help="an application's FPGA design description (design.json, written by "
                       "`ubc fpga APP`; docs/fpga.md \"Applications on the FPGA\")")
    which.add_argument("--bitstream", metavar="FILE", default=None,
                       help="the array configured for one application: a bitstream the "
                       "compiler wrote (`ubc pnr APP --out DIR`: <app>-<arch>.bitstream.json, "
                       "or a bundle JSON) folded into cgra_top's tiles, checked in simulation "
                       "against the configured array, then synthesized, placed and routed "
                       "(docs/fpga.md \"The array configured for one application\")")
    parser.add_argument("--check-cycles", type=int, default=64, metavar="N",
                        help="with --bitstream: random cycles per tile of the simulation "
                        "check (default 64)")
    parser.add_argument("--arch", default=None, help="ubgen/constraints/arch name or path "
                        "(default: the design's, pub for the bare blocks, cgra_4x4 for tiles)")
    parser.add_argument("--out", default=None, help="output directory "
                        "(default build/fpga/<target>_<design>)")
    parser.add_argument("--device", default=None,
                        help="nextpnr device arguments, e.g. '--85k --package CABGA381' "
                        "(default: the design's for this target, else the target's)")
    parser.add_argument("--freq", type=float, default=None, help="clock constraint in MHz")
    parser.add_argument("--router", default=None, help="nextpnr router, router1 or router2 "
                        "(default: router1 on ecp5, the tool's default on ice40)")
    parser.add_argument("--ignore-loops", action=argparse.BooleanOptionalAction, default=None,
                        help="nextpnr --ignore-loops: its timing analysis breaks combinational "
                        "loops instead of stopping (default: on for the arrays, whose switch "
                        "boxes make structural loops; off otherwise)")
    parser.add_argument("--mapping", default=None, help="LUT mapping: delay (the stock synth "
                        "script) or area (ABC maps for the clock constraint and recovers area; "
                        "ECP5 wide muxes); default: the design's (area for cgra_4x4)")


def _design(args):
    """The registered design's name, the application design ``--app-design`` describes, or
    the array configured by ``--bitstream``."""
    if getattr(args, "bitstream", None):
        from .designs import folded_design
        if args.check_cycles < 1:
            raise FPGAError(f"--check-cycles must be at least 1, not {args.check_cycles}")
        return folded_design(args.bitstream, args.arch, args.check_cycles)
    if not getattr(args, "app_design", None):
        return args.design
    import json
    from .designs import app_design
    try:
        desc = json.loads(open(args.app_design).read())
    except (OSError, ValueError) as e:
        raise FPGAError(f"cannot read {args.app_design}: {e}") from None
    return app_design(desc)


def run_from_args(args) -> int:
    try:
        run_fpga_flow(args.target, _design(args), args.arch, args.out,
                      device=tuple(args.device.split()) if args.device else None,
                      freq_mhz=args.freq, router=args.router, mapping=args.mapping,
                      ignore_loops=args.ignore_loops)
    except FPGAError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ubgen.fpga", description="FPGA flows: Yosys + nextpnr utilization and "
        "Fmax for the generated blocks, tiles and top (docs/fpga.md).",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    return run_from_args(parser.parse_args(argv))
