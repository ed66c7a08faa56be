"""bench/fpga_folded.py (docs/fpga.md "The array configured for one application"): a flow
report becomes a table row and the table lands between the document's markers."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import fpga_folded  # noqa: E402

REPORT = {"design": "folded_cgra_4x4_gpyr", "arch": "cgra_4x4", "luts": 4392, "ffs": 2471,
          "wrapper": {"ffs": 606}, "brams": 20, "dsps": 0,
          "logic_cells": {"used": 4782, "available": 83640}, "fmax_mhz": 60.18,
          "check": {"tiles": 20, "cycles": 64, "ok": True},
          "seconds": {"elaborate + write Verilog": 51.5, "check in simulation": 113.7,
                      "yosys synth_ecp5": 228.3, "nextpnr --85k --package CABGA381": 218.2,
                      "total": 611.6}}


def test_a_report_becomes_its_row():
    r = fpga_folded.row(REPORT)
    assert (r["app"], r["seconds"]["yosys"], r["seconds"]["nextpnr"]) == ("gpyr", 228.3, 218.2)
    lines = fpga_folded.table([r])
    assert len(lines) == 3
    assert lines[2] == ("| cgra_4x4 | gpyr | 4392 | 2471 (606) | 20 | 0 | 4782 / 83640 | 60.2 | "
                        "20 x 64 | 52 / 114 / 228 / 218 | 10.2 |")


def test_render_replaces_only_the_marked_table(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("a\n<!-- FOLDED-TABLE -->\nold\n<!-- /FOLDED-TABLE -->\nb\n")
    fpga_folded.render(doc, [fpga_folded.row(REPORT)])
    text = doc.read_text()
    assert "old" not in text and text.startswith("a\n<!-- FOLDED-TABLE -->\n| arch |")
    assert text.endswith("<!-- /FOLDED-TABLE -->\nb\n") and "| gpyr |" in text
    doc.write_text("no markers\n")
    with pytest.raises(SystemExit, match="no <!-- FOLDED-TABLE -->"):
        fpga_folded.render(doc, [])
