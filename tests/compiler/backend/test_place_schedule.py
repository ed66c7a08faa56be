"""The annealing schedule of placement (compiler/backend/place.py ``AnnealSchedule``, docs/pnr.md
"Placement"): VPR's adaptive schedule as named fields, no bare annealing constant left in
place.py (with a negative control on planted sources), and the effort knob through
``place_and_route(effort=)`` and ``ubc pnr --effort``."""
from __future__ import annotations

import ast
import dataclasses
import json
import math
from pathlib import Path

import pytest

from compiler.backend import place as place_mod
from compiler.backend.place import DEFAULT_SCHEDULE, AnnealSchedule
from compiler.backend.pnr import place_and_route
from compiler.cli import main
from compiler.pipeline import compile_app

from ...apps.test_apps import SMALL

PLACE = Path(place_mod.__file__)
# the cost function's named weights (module docstring of place.py), not part of the schedule
COST_CONSTANTS = {"NET_WEIGHT", "CHAIN_WEIGHT", "TIMING_WEIGHT", "COMB_HOPS"}


def bare_constants(source: str) -> list[str]:
    """``line: value`` of every float literal, and every integer literal above 2, outside the
    ``AnnealSchedule`` class and the cost function's named module constants."""
    tree = ast.parse(source)
    allowed: set[int] = set()
    for node in tree.body:
        inside = (isinstance(node, ast.ClassDef) and node.name == "AnnealSchedule") or (
            isinstance(node, ast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name) and node.targets[0].id in COST_CONSTANTS)
        if inside:
            allowed.update(id(n) for n in ast.walk(node))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and id(node) not in allowed \
                and type(node.value) in (int, float) \
                and (isinstance(node.value, float) or node.value > 2):
            out.append(f"{node.lineno}: {node.value!r}")
    return out


def test_place_has_no_bare_annealing_constant():
    assert bare_constants(PLACE.read_text()) == []


def test_negative_control_planted_constants_are_found():
    ok = ("CHAIN_WEIGHT = 4.0\n"
          "class AnnealSchedule:\n    alpha_floor: float = 0.8\n    min_moves: int = 50\n"
          "def cool(t, s):\n    return t * s.alpha_floor / 2\n")
    assert bare_constants(ok) == []
    # the same numbers outside the schedule: in a function, or a new module constant
    assert bare_constants(ok + "def cool2(t):\n    return t * 0.8\n") == ["8: 0.8"]
    assert bare_constants(ok + "def moves(n):\n    return max(50, n)\n") == ["8: 50"]
    assert bare_constants(ok + "ALPHA = 0.95\n") == ["7: 0.95"]
    # and planted into the real place.py
    src = PLACE.read_text().replace("temp *= s.alpha(rate)", "temp *= 0.95")
    assert src != PLACE.read_text() and len(bare_constants(src)) == 1


def test_schedule_is_vpr_adaptive_schedule():
    s = AnnealSchedule()
    assert s == DEFAULT_SCHEDULE and s.effort == 0.5
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.effort = 1.0
    # every field has a one-line meaning in the source
    lines = PLACE.read_text().splitlines()
    for f in dataclasses.fields(AnnealSchedule):
        k = next(k for k, ln in enumerate(lines) if ln.strip().startswith(f"{f.name}:"))
        assert "#" in lines[k] or lines[k - 1].strip().startswith("#"), f.name
    # the cooling factor by acceptance rate (strictly above each bound)
    assert [s.alpha(r) for r in (0.99, 0.96, 0.9, 0.8, 0.5, 0.15, 0.0)] == \
        [0.5, 0.9, 0.9, 0.95, 0.95, 0.8, 0.8]
    # the range limiter keeps the window at the target rate, shrinks below it, clamps
    assert s.range_limit(10.0, 0.44, 32.0) == pytest.approx(10.0)
    assert s.range_limit(10.0, 0.0, 32.0) == pytest.approx(5.6)
    assert s.range_limit(1.0, 0.0, 32.0) == 1.0 and s.range_limit(30.0, 1.0, 32.0) == 32.0
    # exit when T < 0.005 * cost / nets
    assert s.frozen(0.0049, 100.0, 100) and not s.frozen(0.0051, 100.0, 100)
    assert s.initial_temperature([1.0, 3.0]) == 4.0
    assert s.initial_temperature([]) == 2.0 and s.initial_temperature([0.0]) == 2e-3
    assert s.moves_per_temperature(1) == 50
    assert s.moves_per_temperature(100) == int(0.5 * 8 * 100 ** 1.2)
    assert AnnealSchedule(effort=1.0).moves_per_temperature(100) == int(8 * 100 ** 1.2)


@pytest.mark.parametrize("effort", [0, -1.0, math.nan, math.inf])
def test_bad_effort_is_refused(effort):
    with pytest.raises(ValueError, match="placement effort must be a positive number"):
        AnnealSchedule(effort=effort)


def test_effort_through_place_and_route():
    result = compile_app("gaussian", "cgra_8x8", SMALL["gaussian"])
    default = place_and_route(result.netlist, result.arch)
    same = place_and_route(result.netlist, result.arch, effort=DEFAULT_SCHEDULE.effort)
    assert same.bitstream.sha256() == default.bitstream.sha256()
    more = place_and_route(result.netlist, result.arch, effort=2.0)
    assert more.check.ok, more.check.summary()
    assert more.summary()["effort"] == 2.0 and default.summary()["effort"] == 0.5
    # four times the moves per temperature: another annealing run, another placement
    assert more.placement.sites != default.placement.sites


def test_cli_effort(tmp_path, capsys):
    args = ["pnr", "gaussian", "--arch", "cgra_8x8", "--size", "width=16", "--size",
            "height=12"]
    assert main(args + ["--effort", "1", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["effort"] == 1.0 and s["check"] == "pass"
    plot = tmp_path / "g.png"
    assert main(args + ["--effort", "0", "--plot", str(plot)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ubc: error: placement effort must be a positive number") \
        and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []
