"""``ubc map`` (compiler/cli/map.py) registered on its own parser, and the mapping counts
(compiler/mapping/report.py)."""
import argparse
import json

import pytest

from compiler.cli.map import add_map_subcommand
from compiler.mapping.report import controller_pes


def run(capsys, *argv):
    p = argparse.ArgumentParser(prog="ubc")
    add_map_subcommand(p.add_subparsers(dest="command", required=True))
    args = p.parse_args(list(argv))
    rc = args.func(args)
    return rc, capsys.readouterr().out


def test_map_json_gaussian(capsys):
    rc, out = run(capsys, "map", "gaussian", "--size", "width=32", "--size", "height=32",
                  "--json")
    rep = json.loads(out)
    assert rc == 0 and rep["mems"] == 1 and rep["refused"] == {}
    assert rep["shift_registers"] == {"count": 6, "total_delay": 6}
    assert rep["backend"] == {"backend": "pub", "mems": 1}
    rc, out = run(capsys, "map", "gaussian", "--size", "width=32", "--size", "height=32",
                  "--json", "--backend", "dp-pe")
    rep = json.loads(out)
    # one DP-SRAM per output port of the line-buffer memory; controllers on PEs
    assert rep["backend"]["mems"] == 2 and rep["backend"]["controller_pes"] > 0


def test_controller_pe_formula():
    # 2-d: 2 counters, AG and SG each 2 multipliers + 1 adder, 1 comparator
    assert controller_pes(2, 1) == 2 + 2 * 3 + 1
    assert controller_pes(2, 1, schedule=False) == 2 + 3


def test_bad_threshold(capsys):
    with pytest.raises(ValueError, match="--threshold"):
        run(capsys, "map", "gaussian", "--threshold", "-1")
