"""``ubc map APP``: the buffer mapping report (thesis ch. 5; Tables 7.3, 7.5, 7.8).

    ubc map APP [--arch A] [--size K=V ...] [--threshold N] [--backend pub|dp|dp-pe|rv]
            [--no-delay] [--no-reorder] [--json]

Compiles the application up to buffer mapping (``compiler.pipeline.compile_app(...,
until="map")``) and prints per buffer: level, memory tiles, shift registers (count, total
delay), register-file words, banks, chained tiles, SRAM words per memory, and the buffers the
passes refuse (with the reason). The counts are :func:`compiler.mapping.report.map_report`.
``--backend`` maps onto another memory of thesis Table 6.1 (default: the arch's ``[mem]
kind``): ``pub``, ``dp`` (dual-port SRAM + AG), ``dp-pe`` (dual-port SRAM, controllers on PEs:
their PEs are counted) or ``rv`` (the dual-port memories as ready-valid buffets: their local
schedules are derived); the arch's array is kept (:func:`compiler.mapping.report.backend_arch`).
"""
from __future__ import annotations

import json

from ..mapping.report import BACKENDS
from ..mapping.shift_register import DEFAULT_THRESHOLD
from .common import add_app_arguments, add_delay_argument, add_reorder_argument

__all__ = ["add_map_subcommand", "cmd_map"]


def _print_report(app: str, rep: dict) -> None:
    b = rep["backend"]
    print(f"{app}: {rep['mems']} memory tiles, {rep['shift_registers']['count']} shift "
          f"registers ({rep['registers']} register stages), {rep['register_file_words']} "
          f"register-file words in {rep['register_file_tiles']} MEM tiles' register files, "
          f"{rep['chained_tiles']} chained tiles; "
          f"backend {b['backend']}: {b['mems']} memories"
          + (f", {b['controller_pes']} controller PEs" if "controller_pes" in b else "")
          + (f", {b['buffets']} buffets" if "buffets" in b else ""))
    for buf in rep["buffers"]:
        print(f"  {buf['name']:<18} {buf['level']:<4} mems {buf['mems']:>3}  shift regs "
              f"{buf['shift_registers']:>3} (delay {buf['register_delay']:>4})  reg words "
              f"{buf['register_file_words']:>3}  sram words {buf['sram_words']}")
    for name, why in rep["refused"].items():
        print(f"  {name:<18} not mapped: {why}")


def cmd_map(args) -> int:
    from ubgen.arch import load_arch
    from ..mapping.report import backend_arch, map_report
    from ..pipeline import backend_figures, compile_app
    from ..frontend.source import parse_sizes
    if args.threshold < 0:
        raise ValueError(f"--threshold must be non-negative, got {args.threshold}")
    arch = load_arch(args.arch)
    backend = args.backend or arch.mem.kind
    result = compile_app(args.app, backend_arch(arch, backend), parse_sizes(args.size),
                         threshold=args.threshold, until="map", delay=not args.no_delay,
                         reorder=not args.no_reorder)
    extra = backend_figures(result.impls, backend) if not result.refused else {}
    rep = map_report(args.app, result.impls, result.refused, backend, result.arch, extra)
    if args.json:
        print(json.dumps(rep))
    else:
        _print_report(args.app, rep)
    if result.refused:          # a buffer that cannot be mapped: bad input (docs/cli.md)
        from ..mapping.common import MappingError
        raise MappingError(result.refusal())
    return 0


def add_map_subcommand(subparsers) -> None:
    s = subparsers.add_parser(
        "map", help="map every unified buffer to shift registers and memories; report counts",
        description="Schedule APP, then run buffer mapping (thesis ch. 5) on every unified "
        "buffer and report memories, shift registers, banks, chained tiles and SRAM words; "
        "--backend maps onto another memory backend (thesis Tables 6.1, 7.3).")
    add_app_arguments(s, on_array=False)
    s.add_argument("--threshold", type=int, default=DEFAULT_THRESHOLD, metavar="N",
                   help=f"largest delay kept in shift registers (default {DEFAULT_THRESHOLD}, "
                   f"thesis §5.1.2)")
    s.add_argument("--backend", default=None, choices=BACKENDS,
                   help="memory backend to map onto (thesis Table 6.1): pub, dp (dual-port "
                   "SRAM + AG), dp-pe (dual-port SRAM, controllers on PEs), rv (ready-valid "
                   "buffets); default: the arch's [mem] kind")
    add_delay_argument(s)
    add_reorder_argument(s)
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.set_defaults(func=cmd_map)
