"""``ubc map APP``: buffer mapping report (thesis ch. 5; Tables 7.3, 7.5, 7.8).

    ubc map APP [--arch A] [--size K=V ...] [--threshold N] [--backend pub|dp|dp-pe|rv]
            [--no-delay] [--json]

Schedules the application, maps every unified buffer (compiler.mapping.map_buffer) and prints
per buffer: level, memory tiles, shift registers (count, total delay), register-file words
(banks small enough for registers, thesis §5.4), banks, chained tiles, SRAM words per memory,
and buffers the passes refuse (with the reason). ``--backend`` selects how memories are counted
(thesis Table 6.1 / 7.3):

* ``pub``: physical unified buffers as mapped (single-port wide-fetch SRAM, 2 in / 2 out);
* ``dp``, ``dp-pe``, ``rv``: one dual-port SRAM (``[dpbuf] sram_depth`` words) per output port
  of every mapped memory, times the tiles its words need. These three counts are derived from
  the PUB mapping, not from a separate DP mapping. ``dp-pe`` adds the PEs that synthesize the
  controllers (thesis §6.3: an n-dimensional affine controller is n counters, and for each of
  its address and schedule generators n multipliers and n - 1 adders, plus one comparator for
  the schedule); ``rv`` drops the schedule generator (ready-valid buffets).

Registered on D's parser by ``add_map_subcommand(subparsers)``.
"""
from __future__ import annotations

import json

from ubgen.arch import load_arch

from .ir.ubimpl import UBImpl

BACKENDS = ("pub", "dp", "dp-pe", "rv")


def controller_pes(dims: int, addr_gens: int, schedule: bool = True) -> int:
    """PEs for one affine controller synthesized on the array (thesis §6.3, Fig. 6.2a)."""
    gens = addr_gens + (1 if schedule else 0)
    return dims + gens * (dims + max(0, dims - 1)) + (1 if schedule else 0)


def backend_counts(impls: dict[str, UBImpl], backend: str, arch) -> dict:
    """Memory count (and controller PEs) of the mapped buffers on ``backend``."""
    mems = pes = 0
    for impl in impls.values():
        for pub in impl.pubs:
            if backend == "pub":
                mems += pub.tiles
                continue
            depth = arch.dpbuf.sram_depth
            tiles = -(-max(1, pub.sram_words) // depth)
            mems += max(1, len(pub.outputs)) * tiles
            if backend in ("dp-pe", "rv"):
                for name, cfg in pub.configs.items():
                    if cfg.extents and name.split("_")[0] in ("in2agg", "tb2out"):
                        pes += controller_pes(cfg.dims, 1, schedule=backend == "dp-pe")
    out = {"backend": backend, "mems": mems}
    if backend in ("dp-pe", "rv"):
        out["controller_pes"] = pes
    return out


def map_report(app: str, impls: dict[str, UBImpl], refused: dict[str, str], backend: str,
               arch) -> dict:
    from .mapping.registers import pack_register_files
    bufs = []
    for name, impl in impls.items():
        st = impl.stats()
        rf_tiles = len(pack_register_files(impl.register_files, arch.pub, arch.mem))
        bufs.append({"name": name, "level": impl.level, "mems": st["mems"],
                     "shift_registers": st["shift_registers"],
                     "register_delay": st["register_delay"], "wires": st["wires"],
                     "banks": len(impl.pubs), "chained_tiles": st["chained_tiles"],
                     "sram_words": st["sram_words"],
                     "register_file_words": st["register_file_words"],
                     "register_file_tiles": rf_tiles, "notes": impl.notes})
    return {
        "app": app,
        "mems": sum(b["mems"] for b in bufs),
        "shift_registers": {"count": sum(b["shift_registers"] for b in bufs),
                            "total_delay": sum(b["register_delay"] for b in bufs)},
        "registers": sum(b["register_delay"] for b in bufs),
        "register_file_words": sum(b["register_file_words"] for b in bufs),
        "register_file_tiles": sum(b["register_file_tiles"] for b in bufs),
        "banks": sum(b["banks"] for b in bufs),
        "chained_tiles": sum(b["chained_tiles"] for b in bufs),
        "sram_words_per_mem": [w for b in bufs for w in b["sram_words"]],
        "backend": backend_counts(impls, backend, arch),
        "buffers": bufs,
        "refused": refused,
    }


def cmd_map(args) -> int:
    from .source import load_program, parse_sizes as _sizes
    from .schedule.params import HwParams
    from .schedule.report import schedule_program
    arch = load_arch(args.arch)
    if args.threshold < 0:
        raise ValueError(f"--threshold must be non-negative, got {args.threshold}")
    program = load_program(args.app, _sizes(args.size))
    result = schedule_program(program, HwParams.from_arch(arch), delay=not args.no_delay)
    from .pipeline import map_scheduled
    result, impls, refused = map_scheduled(program, result, arch, args.threshold)
    rep = map_report(args.app, impls, refused, args.backend, arch)
    if args.json:
        print(json.dumps(rep))
        return 0
    b = rep["backend"]
    print(f"{args.app}: {rep['mems']} PUB tiles, {rep['shift_registers']['count']} shift "
          f"registers ({rep['registers']} register stages), {rep['register_file_words']} "
          f"register-file words in {rep['register_file_tiles']} MEM tiles' register files, "
          f"{rep['chained_tiles']} chained tiles; "
          f"backend {b['backend']}: {b['mems']} memories"
          + (f", {b['controller_pes']} controller PEs" if "controller_pes" in b else ""))
    for buf in rep["buffers"]:
        print(f"  {buf['name']:<18} {buf['level']:<4} mems {buf['mems']:>3}  shift regs "
              f"{buf['shift_registers']:>3} (delay {buf['register_delay']:>4})  reg words "
              f"{buf['register_file_words']:>3}  sram words {buf['sram_words']}")
    for name, why in refused.items():
        print(f"  {name:<18} not mapped: {why}")
    return 0


def add_map_subcommand(subparsers) -> None:
    s = subparsers.add_parser(
        "map", help="map every unified buffer to shift registers and memories; report counts",
        description="Schedule APP, then run buffer mapping (thesis ch. 5) on every unified "
        "buffer and report memories, shift registers, banks, chained tiles and SRAM words; "
        "--backend selects how memories are counted (thesis Table 7.3).")
    from .cli import add_app_arguments
    add_app_arguments(s)
    s.add_argument("--threshold", type=int, default=20, metavar="N",
                   help="largest delay kept in shift registers (default 20, thesis §5.1.2)")
    s.add_argument("--backend", default="pub", choices=BACKENDS,
                   help="memory backend to count for (default: pub)")
    from .cli import add_delay_argument
    add_delay_argument(s)
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.set_defaults(func=cmd_map)
