"""bench/fig7_11.py's record (docs/data/fig7_11.json): a run over some apps keeps the others."""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import fig7_11  # noqa: E402


def test_a_partial_run_replaces_its_apps_and_keeps_the_others(tmp_path):
    record = tmp_path / "fig7_11.json"
    record.write_text(json.dumps({"rows": [{"app": "gaussian", "cgra_ns": 1.0},
                                           {"app": "laplacian", "cgra_ns": 0.9},
                                           {"app": "gemm", "cgra_ns": 3.0}]}))
    rows = fig7_11.merged_rows(record, [{"app": "laplacian", "cgra_ns": 1.75},
                                        {"app": "brighten_blur", "cgra_ns": 1.2}])
    # the bench used to write the measured rows alone: gaussian and gemm were lost
    assert [r["app"] for r in rows] == ["gaussian", "laplacian", "gemm", "brighten_blur"]
    assert rows[1]["cgra_ns"] == 1.75 and rows[0]["cgra_ns"] == 1.0


def test_without_a_record_the_measured_rows_are_the_record(tmp_path):
    rows = [{"app": "upsample", "cgra_ns": 2.0}]
    assert fig7_11.merged_rows(tmp_path / "none.json", rows) == rows
