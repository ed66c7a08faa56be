"""``ubc map`` (compiler/cli/map.py) registered on its own parser, and the mapping counts
(compiler/mapping/report.py)."""
import argparse
import json

import pytest

from compiler.cli.map import add_map_subcommand


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
    # mapped onto dual-port SRAMs: one per delay line (32 and 64 cycles), each with a write
    # and a read controller of 6 PEs (compiler.backend.pe_controllers)
    assert rep["backend"] == {"backend": "dp-pe", "mems": 2, "controller_pes": 24}
    assert rep["mems"] == 2 and rep["shift_registers"]["count"] == 6
    rc, out = run(capsys, "map", "gaussian", "--size", "width=32", "--size", "height=32",
                  "--json", "--backend", "rv")
    assert json.loads(out)["backend"] == {"backend": "rv", "mems": 2, "buffets": 2}


def test_map_refusal_of_a_backend_is_one_line(capsys):
    """resnet's accumulator has two writers: the dual-port SRAM refuses it, naming it."""
    from compiler.mapping.common import MappingError
    with pytest.raises(MappingError, match=r"buffer out_mem: .*one write and one read port"):
        run(capsys, "map", "resnet", "--backend", "dp", "--size", "width=4", "--size",
            "height=4", "--size", "in_channels=4", "--size", "out_channels=4", "--size",
            "ic_unroll=2", "--size", "oc_unroll=2")


def test_bad_threshold(capsys):
    with pytest.raises(ValueError, match="--threshold"):
        run(capsys, "map", "gaussian", "--threshold", "-1")
