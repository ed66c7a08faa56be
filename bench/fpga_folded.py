"""The array configured for one application on the FPGA (``ubgen fpga --bitstream``,
docs/fpga.md "The array configured for one application"): collects the flows' reports into
``docs/data/fpga_folded.json`` (merged with the rows of earlier runs, one per design) and
renders its table into docs/fpga.md (between the ``FOLDED-TABLE`` markers).

    python bench/fpga_folded.py [REPORT.json ...]      (default: build/fpga/*_folded_*/report.json)

Each report must be a finished flow's (``report.json`` is written only when every step
succeeded); the load average at collection time is not recorded (the table's note gives it).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = ROOT / "docs" / "data" / "fpga_folded.json"
DOC = ROOT / "docs" / "fpga.md"
MARKER = "FOLDED-TABLE"


def row(report: dict) -> dict:
    """The table's fields of one flow report."""
    s = report["seconds"]
    step = lambda prefix: next((v for k, v in s.items() if k.startswith(prefix)), None)
    return {"design": report["design"], "arch": report["arch"],
            "app": report["design"].split(f"folded_{report['arch']}_", 1)[-1],
            "luts": report["luts"], "ffs": report["ffs"], "wrapper_ffs": report["wrapper"]["ffs"],
            "brams": report["brams"], "dsps": report["dsps"],
            "logic_cells": report["logic_cells"], "fmax_mhz": report["fmax_mhz"],
            "check": report.get("check"),
            "seconds": {"elaborate": step("elaborate"), "check": step("check"),
                        "yosys": step("yosys"), "nextpnr": step("nextpnr"), "total": s["total"]}}


def table(rows: list[dict]) -> list[str]:
    out = ["| arch | app | LUT4 | FF (wrapper) | BRAM DP16KD | DSP | logic cells | Fmax MHz | "
           "check: tiles x cycles | elaborate / check / Yosys / nextpnr s | flow min |",
           "|---|---|---:|---:|---:|---:|---|---:|---|---|---:|"]
    for r in sorted(rows, key=lambda r: (r["arch"], r["app"])):
        sec, chk, lc = r["seconds"], r["check"] or {}, r["logic_cells"]
        out.append(f"| {r['arch']} | {r['app']} | {r['luts']} | {r['ffs']} ({r['wrapper_ffs']}) "
                   f"| {r['brams']} | {r['dsps']} | {lc.get('used')} / {lc.get('available')} | "
                   f"{r['fmax_mhz']:.1f} | {chk.get('tiles')} x {chk.get('cycles')} | "
                   f"{sec['elaborate']:.0f} / {sec['check']:.0f} / {sec['yosys']:.0f} / "
                   f"{sec['nextpnr']:.0f} | {sec['total'] / 60:.1f} |")
    return out


def render(doc: Path, rows: list[dict]) -> None:
    """The table between the document's ``FOLDED-TABLE`` markers (the evaluation's
    ``replace_marked``)."""
    from compiler.sweep.evaluate import replace_marked
    try:
        doc.write_text(replace_marked(doc.read_text(), MARKER, table(rows)))
    except ValueError as e:
        raise SystemExit(f"error: {doc}: {e}") from None


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("reports", nargs="*", help="report.json files of finished flows")
    args = p.parse_args(argv)
    paths = [Path(r) for r in args.reports] or sorted(
        (ROOT / "build" / "fpga").glob("*_folded_*/report.json"))
    if not paths:
        print("error: no report.json of a folded design (run `make fpga BITSTREAM=...`)",
              file=sys.stderr)
        return 2
    old = json.loads(DATA.read_text())["rows"] if DATA.exists() else []
    rows = {r["design"]: r for r in old}
    for path in paths:
        try:
            rows[json.loads(path.read_text())["design"]] = row(json.loads(path.read_text()))
        except (OSError, ValueError, KeyError) as e:
            print(f"error: {path}: not a finished flow's report ({e})", file=sys.stderr)
            return 2
    DATA.write_text(json.dumps({"rows": list(rows.values())}, indent=1) + "\n")
    render(DOC, list(rows.values()))
    print("\n".join(table(list(rows.values()))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
