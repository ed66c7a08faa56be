"""``ubgen`` command line: generated Verilog, register maps, FPGA flows.

    ubgen verilog --arch pub --out rtl       rtl/pub.v, rtl/dpbuf.v, rtl/{pub,dpbuf}_regmap.json
    ubgen verilog --arch cgra_4x4            the same plus the whole accelerator (cgra_top_<arch>.v,
                                             tile modules, address map, routing graph, regmap)
    ubgen regmap --arch pub [--block pub|dpbuf|mem|all] [--markdown]
    ubgen fpga --target ice40|ecp5 --design pub|dpbuf|pe [--arch pub]
    ubgen graph --arch cgra_4x4 [--out F]     the array's routing-resource graph (JSON)
    ubgen array-regmap --arch cgra_4x4        every tile register with its global address

User errors (a missing or malformed constraints file, ...) print one line and exit with 2;
no output file is written unless every output was generated.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from .arch import Arch, ArchError, load_arch
from .blocks import BLOCKS, REGMAP_BLOCKS, block_regmap, generate_outputs
from .mem.spec import rf_ports, rf_registers
from .regmap import RegisterMap
REGMAP_DOC = "docs/regmap.md"
REGEN_CMD = "python -m ubgen regmap --arch pub --markdown > docs/regmap.md"


class UsageError(ValueError):
    """Bad command-line input; reported in one line."""


def regmap_markdown(arch: Arch) -> str:
    """The register-map document (docs/regmap.md), generated from the register maps."""
    parts = [
        "# Register maps",
        "",
        f"Generated from the `RegisterMap` objects that build the RTL, for `ubgen/constraints/arch/"
        f"{arch.name}.toml`; do not edit. Regenerate with `{REGEN_CMD}`.",
        "",
        "Each register is one 32-bit word on the block's configuration bus (`cfg_addr` is the "
        "word offset). Controller registers follow docs/design.md §4 and are produced by "
        "`ubgen.controller.encode_controller`. Read-only status registers ignore writes, except "
        "that writing 1 to `error` clears it. The `sram` window takes one 16-bit word per write "
        "(word address = offset into the window) while `run` is low; it is not readable.",
        "",
    ]
    for block in BLOCKS:
        parts.append(block_regmap(arch, block).to_markdown())
    parts += [
        "The MEM tile core's map (`--block mem`, `ubgen.mem.spec.mem_regmap`) is the `pub` map "
        "above, window included, followed by the register file's registers "
        f"(`mem.rf_words` = {arch.mem.rf_words}; docs/mem_rf.md):",
        "",
        RegisterMap("mem", rf_registers(arch.pub, arch.mem)).to_markdown(),
        "",
        "In register-file mode (`rf_en` = 1) the register file's ports are driven by the PUB "
        "controllers below (`ubgen.mem.spec.rf_ports`), configured through their registers in "
        "the `pub` map; the word address is the low "
        f"{arch.mem.rf_addr_width} bits of the named address generator:",
        "",
        "| port | PUB controller | address generator |",
        "|---|---|---|",
        *[f"| `{name}` | `{p.layout.name}` | `{p.ag}` |"
          for name, p in rf_ports(arch.pub, arch.mem).items()],
    ]
    return "\n".join(parts)


def has_array(arch: Arch) -> bool:
    """Whether the constraints file describes a whole CGRA (an ``[array]`` section), not only
    the memory blocks."""
    return "array" in arch.raw


def array_outputs(arch: Arch) -> dict[str, str]:
    """The array's exports next to its Verilog: the routing-resource graph and the full register
    map (``ubgen graph`` / ``ubgen array-regmap``), from the objects that build the RTL."""
    from .array.graph import full_regmap, graph_to_json, routing_graph
    return {f"{arch.name}_graph.json": json.dumps(graph_to_json(routing_graph(arch))) + "\n",
            f"{arch.name}_regmap.json": json.dumps(full_regmap(arch), indent=1) + "\n"}


def cmd_verilog(args) -> int:
    arch = load_arch(args.arch)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: not a directory")
    outputs = generate_outputs(arch)   # everything in memory before any write
    if has_array(arch):
        from .array import write_texts
        from .top import cached_verilog
        outputs.update(array_outputs(arch))
        print(f"the {arch.raw['array'].get('rows', '?')}x{arch.raw['array'].get('columns', '?')}"
              f" array of {arch.name}: from the Verilog cache, or generated (the largest arrays "
              f"take minutes)", file=sys.stderr, flush=True)
        entry = cached_verilog(arch)    # generates everything on a miss, before any write
        print(f"Verilog {'cached' if entry.hit else f'generated in {entry.seconds:.1f} s'}: "
              f"{entry.dir}", file=sys.stderr, flush=True)
        texts = entry.texts()
        out.mkdir(parents=True, exist_ok=True)
        write_texts(out, {**texts, **outputs})      # temporary names, then renamed
        names = list(texts) + list(outputs)
    else:
        out.mkdir(parents=True, exist_ok=True)
        for name, text in outputs.items():
            (out / name).write_text(text)
        names = list(outputs)
    print(f"wrote {', '.join(str(out / n) for n in names)}")
    return 0


def cmd_regmap(args) -> int:
    arch = load_arch(args.arch)
    if args.markdown:
        if args.block == "all":
            sys.stdout.write(regmap_markdown(arch))
        else:
            sys.stdout.write(block_regmap(arch, args.block).to_markdown())
        return 0
    if args.block == "all":
        data = {b: block_regmap(arch, b).to_dict() for b in REGMAP_BLOCKS}
    else:
        data = block_regmap(arch, args.block).to_dict()
    print(json.dumps(data, indent=2))
    return 0


def cmd_fpga(args) -> int:
    from .fpga import run_from_args
    return run_from_args(args)


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="ubgen", description="Unified-buffer hardware generator: "
                                 "Verilog, register maps and FPGA reports for the PUB and the "
                                 "DP-SRAM + AG buffer.")
    sub = ap.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    arch_help = ("constraints file: a name in ubgen/constraints/arch/ or a path (default: pub, a "
                 "single PUB and the DP-SRAM + AG buffer; an arch with an array adds the "
                 "whole accelerator)")

    v = sub.add_parser("verilog", help="write generated Verilog and register maps",
                       description="Write <block>.v and <block>_regmap.json for the PUB and the "
                                   "DP-SRAM + AG buffer; for an arch with an [array] section "
                                   "(cgra_4x4, cgra_4x16, cgra_8x8, cgra_16x32) also the whole "
                                   "accelerator: cgra_top_<arch>.v (AXI4-Lite top, global "
                                   "buffer, array), "
                                   "one module per tile kind, the address map, the routing graph "
                                   "and the full register map.")
    v.add_argument("--arch", default="pub", help=arch_help)
    v.add_argument("--out", default="rtl", help="output directory (default: rtl)")
    v.set_defaults(func=cmd_verilog)

    r = sub.add_parser("regmap", help="print a register map (JSON or markdown)",
                       description="Print the register map of a block as JSON, or as markdown "
                                   f"(--block all --markdown is {REGMAP_DOC}).")
    r.add_argument("--arch", default="pub", help=arch_help)
    r.add_argument("--block", choices=REGMAP_BLOCKS + ("all",), default="all",
                   help="which block (default: all)")
    r.add_argument("--markdown", action="store_true", help="markdown tables instead of JSON")
    r.set_defaults(func=cmd_regmap)

    f = sub.add_parser("fpga", help="Yosys + nextpnr utilization and Fmax report",
                       description="Synthesize, place and route a design for an FPGA and write "
                                   "build/fpga/<target>_<design>/report.json (ubgen.fpga).")
    from .fpga import add_arguments
    add_arguments(f)
    f.set_defaults(func=cmd_fpga)

    from .array.cli import register_subcommand
    register_subcommand(sub)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:            # `ubgen regmap | head`: the reader went away
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (ArchError, UsageError, OSError, ValueError, RuntimeError) as e:
        # user errors: bad arch file, value that does not fit, FPGA tool failure (FPGAError)
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        print(f"ubgen: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
