"""``python -m sim.rtl_figures`` (the RTL runs behind thesis Table 7.4 in ``make evaluate``):
a run that cannot be made writes a one-line error instead of failing the evaluation."""
from __future__ import annotations

import json

from sim.rtl_figures import main


def test_refused_buffer_is_a_one_line_error(tmp_path):
    out = tmp_path / "r.json"
    assert main(["e2e", "resnet", "--arch", "cgra_dp_16x32", "--size", "width=4", "--size",
                 "height=4", "--size", "in_channels=4", "--size", "out_channels=4", "--size",
                 "ic_unroll=2", "--size", "oc_unroll=2", "--out", str(out)]) == 0
    err = json.loads(out.read_text())["error"]
    assert "buffer out_mem" in err and "\n" not in err


def test_bad_size_is_a_one_line_error(tmp_path):
    out = tmp_path / "r.json"
    assert main(["buffet", "gaussian", "--size", "width", "--out", str(out)]) == 0
    assert "--size expects NAME=INTEGER" in json.loads(out.read_text())["error"]
