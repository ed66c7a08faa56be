"""One command-line convention for ``ubc``, ``ubgen`` and ``make`` (docs/cli.md): the app is a
positional ``APP``; without ``--arch`` everything that runs on the array takes the smallest
shipped array the app fits (and routes on) and says so; exit status 0 / 1 (a check failed) / 2
(bad input); a refused buffer is one line naming the app, the buffer, the cause and what to
change; every entry point is a subcommand and the make targets call them."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from compiler.cli import build_parser, main
from compiler.pipeline import FitError, compile_on_smallest, shipped_arrays
from compiler.sweep.point import evaluate_point

from ...apps.test_apps import SMALL

ROOT = Path(__file__).resolve().parents[3]
TRANSPOSED = ("import numpy as np\n"
              "from compiler.ir import Kernel, Program, u16\n"
              "def build(width=16, height=16):\n"
              "    p = Program('transposed')\n"
              "    p.add_input('input', (width, height), u16)\n"
              "    p.add_buffer('t', (width, height), u16)\n"
              "    p.add_output('output', (width, height), u16)\n"
              "    x = p.add_loop('x_t', 0, width); y = x.add_loop('y_t', 0, height)\n"
              "    op = y.add_op('t'); op.add_load('input', 'x_t', 'y_t')\n"
              "    op.add_store('t', 'x_t', 'y_t')\n"
              "    op.add_function(Kernel.from_fn('tk', lambda a: a + 1, u16))\n"
              "    yy = p.add_loop('y_o', 0, height); xx = yy.add_loop('x_o', 0, width)\n"
              "    op = xx.add_op('o'); op.add_load('t', 'x_o', 'y_o')\n"
              "    op.add_store('output', 'x_o', 'y_o')\n"
              "    op.add_function(Kernel.from_fn('ok', lambda a: a * 2, u16))\n"
              "    return p.validate()\n"
              "def make_inputs(seed=0, width=16, height=16):\n"
              "    return {'input': np.zeros((width, height), np.uint16)}\n")


def test_ubc_help_lists_every_subcommand():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert set(sub.choices) == {"schedule", "map", "compile", "netlist", "sweep", "pnr", "sim",
                                "regress", "evaluate", "fpga"}


def test_shipped_arrays_smallest_first():
    assert shipped_arrays() == ["cgra_2x2", "cgra_4x4", "cgra_8x8", "cgra_4x16", "cgra_16x32"]


def test_default_arch_is_the_smallest_that_fits_and_says_why():
    result, choice = compile_on_smallest("gaussian", SMALL["gaussian"])
    assert result.arch.name == choice.arch == "cgra_8x8"      # 13 PEs: 9 taps, MACs fused
    assert choice.passed_over == ["cgra_2x2: needs 13 PE tiles, has 2",
                                  "cgra_4x4: needs 13 PE tiles, has 12"]
    result, choice = compile_on_smallest("harris")
    assert choice.arch == "cgra_16x32"
    assert choice.passed_over[:2] == ["cgra_2x2: needs 78 PE tiles, has 2",
                                   "cgra_4x4: needs 78 PE tiles, has 12"]
    assert choice.describe("harris").startswith(
        "arch cgra_16x32: the smallest shipped array harris fits; passed over: cgra_2x2")


def test_routing_default_places_and_routes_too():
    result, choice = compile_on_smallest("gaussian", SMALL["gaussian"], until="pnr")
    assert choice.routes and result.pnr.check.ok
    assert "fits and routes on" in choice.describe("gaussian")


def test_an_app_that_fits_no_shipped_array_is_one_line(capsys):
    """Negative control of the default rule: srcnn needs more IO tiles than any array has."""
    with pytest.raises(FitError, match=r"^srcnn fits no shipped array \(cgra_2x2: needs "):
        compile_on_smallest("srcnn")
    assert main(["compile", "srcnn"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cgra_16x32: needs 43 IO tiles, has 32" in err


def test_ubc_compile_says_which_arch(capsys):
    assert main(["compile", "gaussian", "--size", "width=16", "--size", "height=12"]) == 0
    assert capsys.readouterr().out.startswith(
        "arch cgra_8x8: the smallest shipped array gaussian fits and routes on; passed over: "
        "cgra_2x2: needs 13 PE tiles, has 2; cgra_4x4: needs 13 PE tiles, has 12\n")
    assert main(["compile", "gaussian", "--size", "width=16", "--size", "height=12",
                 "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["arch"] == "cgra_8x8" and "smallest shipped array" in rep["arch_choice"]
    assert main(["compile", "gaussian", "--arch", "cgra_8x8", "--json"]) == 0
    assert "arch_choice" not in json.loads(capsys.readouterr().out)     # named: no choice


def test_unknown_arch_lists_the_shipped_ones(capsys):
    assert main(["schedule", "gaussian", "--arch", "cgra_9x9"]) == 2
    err = capsys.readouterr().err
    assert err == ("ubc: error: unknown arch 'cgra_9x9'; shipped archs: cgra_16x32, cgra_2x2, "
                   "cgra_4x16, cgra_4x4, cgra_8x8, cgra_dp_16x32, cgra_dp_4x8, cgra_dppe_16x32, "
                   "cgra_dppe_4x8, pub, pub_small (or the path of a .toml constraints file)\n")


def test_refused_buffer_names_app_buffer_cause_and_cure(tmp_path, capsys):
    path = tmp_path / "transposed.py"
    path.write_text(TRANSPOSED)
    assert main(["map", str(path)]) == 2              # the report, then the error line
    out, err = capsys.readouterr()
    assert "t                  not mapped: buffer t:" in out
    assert err.startswith(f"ubc: error: {path}: buffer t: ") and err.count("\n") == 1
    assert ("written along its dimension 1 innermost but read along dimension 0: reorder the "
            "producer's loops to the readers' order" in err)
    assert main(["compile", str(path), "--arch", "cgra_8x8"]) == 2
    assert "reorder the producer's loops" in capsys.readouterr().err


def test_a_failed_check_is_exit_1(tmp_path, capsys):
    """The netlist model's golden disagrees (an app whose reference is off by one): 1, not 2."""
    from ..frontend.test_golden import wrong_reference
    assert main(["netlist", str(wrong_reference(tmp_path)), "--arch", "cgra_8x8"]) == 1
    assert "golden (reference)" in capsys.readouterr().out


def test_sweep_point_without_arch_takes_the_smallest_fitting_array():
    r = evaluate_point("gaussian", {"unroll": 2})
    assert r["status"] == "ok" and r["arch"] == "cgra_8x8"
    assert r["arch_choice"].startswith("arch cgra_8x8: the smallest shipped array the point "
                                       "fits; passed over: cgra_2x2: out of ")
    named = evaluate_point("gaussian", {"unroll": 2, "arch": "cgra_16x32"})
    assert named["arch"] == "cgra_16x32" and "arch_choice" not in named


@pytest.mark.parametrize("target, command", [
    ("sim APP=gaussian", ".venv/bin/ubc sim gaussian"),
    ("sim APP=gaussian ARCH=cgra_8x8 SIZE=width=16", ".venv/bin/ubc sim gaussian --arch cgra_8x8 "
                                                     "--size width=16"),
    ("evaluate", ".venv/bin/ubc evaluate"),
    ("verilog", ".venv/bin/ubgen verilog"),
    ("fpga", ".venv/bin/ubgen fpga")])
def test_make_targets_call_the_subcommands(target, command):
    # --no-print-directory: under `make test` this make is a sub-make, which would print
    # "make[1]: Entering directory ..." before the command
    out = subprocess.run(["make", "-n", "--no-print-directory", "-o", ".venv/.installed"]
                         + target.split(), cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    assert " ".join(out.split()).startswith(command), out
