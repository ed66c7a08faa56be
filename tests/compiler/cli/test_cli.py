"""``ubc schedule``: JSON report, dumps, plot, and one-line errors with a non-zero exit."""
import json
import os
import subprocess
import sys
from pathlib import Path


from compiler.cli import main

from ..poly.test_extract import _one_stage, cyclic_program, never_written_program
from ..thesis_programs import brighten_blur

ROOT = Path(__file__).resolve().parents[3]


def _program_file(tmp_path, prog, name="prog.json"):
    path = tmp_path / name
    path.write_text(prog.to_json())
    return str(path)


def test_json_report_and_dump_and_plot(tmp_path, capsys):
    app = _program_file(tmp_path, brighten_blur(tiles=2, n=16))
    dump, plot = tmp_path / "dump", tmp_path / "sched.png"
    assert main(["schedule", app, "--json", "--dump", str(dump), "--plot", str(plot)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"app", "cycles_sequential", "cycles_optimized", "sram_words_sequential",
                        "sram_words_optimized", "buffers", "compile_seconds"}
    assert out["cycles_optimized"] < out["cycles_sequential"]
    assert {b["name"] for b in out["buffers"]} == {"brighten", "blur"}
    assert {p.name for p in dump.iterdir()} >= {"program.json", "poly.isl", "schedule.json",
                                                "schedule.isl", "buffers.isl", "buffers.json"}
    assert "unified buffer brighten" in (dump / "buffers.isl").read_text()
    assert plot.read_bytes()[:4] == b"\x89PNG"


def test_app_by_name(capsys):
    assert main(["schedule", "gaussian", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["app"] == "gaussian" and out["cycles_optimized"] <= 4096 + 64


def test_no_reorder_keeps_a_reduction_in_its_written_order(capsys):
    """``--no-reorder`` (``ubc schedule`` and ``ubc map``): the matrix-vector product of
    tests/data/apps/matvec.py at three cycles per MAC with its accumulator in registers,
    instead of one per MAC (docs/scheduling.md, "Non-unrolled reductions")."""
    app = str(ROOT / "tests" / "data" / "apps" / "matvec.py")
    cycles = {}
    for flag in ([], ["--no-reorder"]):
        assert main(["schedule", app, "--arch", "cgra_8x8", "--json"] + flag) == 0
        cycles[bool(flag)] = json.loads(capsys.readouterr().out)["cycles_optimized"]
    assert cycles[False] < 1.1 * 32 * 32 + 64 < 2.5 * 32 * 32 < cycles[True]
    assert main(["map", app, "--arch", "cgra_8x8", "--json", "--no-reorder"]) == 0
    rep = json.loads(capsys.readouterr().out)
    acc = next(b for b in rep["buffers"] if b["name"] == "acc")
    assert acc["level"] == "REG" and acc["mems"] == 0 and acc["register_file_words"] == 32


def _error(tmp_path, capsys, args) -> str:
    dump, plot = tmp_path / "never_dump", tmp_path / "never.png"
    assert main(args + ["--dump", str(dump), "--plot", str(plot)]) == 2
    err = capsys.readouterr().err
    assert not dump.exists() and not plot.exists()
    assert err.startswith("ubc: error: ") and err.count("\n") == 1 and "Traceback" not in err
    return err


def test_error_non_affine_index(tmp_path, capsys):
    data = json.loads(_one_stage(("x", "y")).to_json())
    data["children"][0]["children"][0]["children"][0]["loads"][0]["index"] = ["x*y", "y"]
    path = tmp_path / "p.json"
    path.write_text(json.dumps(data))
    assert "non-affine index" in _error(tmp_path, capsys, ["schedule", str(path)])


def test_error_out_of_bounds(tmp_path, capsys):
    app = _program_file(tmp_path, _one_stage(("x+1", "y")))
    assert "reads out of bounds" in _error(tmp_path, capsys, ["schedule", app])


def test_error_value_never_written(tmp_path, capsys):
    app = _program_file(tmp_path, never_written_program())
    assert "reads a value never written" in _error(tmp_path, capsys, ["schedule", app])


def test_error_cyclic_dependence(tmp_path, capsys):
    app = _program_file(tmp_path, cyclic_program())
    assert "cyclic dependence" in _error(tmp_path, capsys, ["schedule", app])


def test_error_cycle_counter_width(tmp_path, capsys):
    arch = tmp_path / "narrow.toml"
    arch.write_text("[controller]\ncycle_width = 12\n")
    app = _program_file(tmp_path, brighten_blur(tiles=1, n=64))
    err = _error(tmp_path, capsys, ["schedule", app, "--arch", str(arch)])
    assert "beyond the 12-bit cycle counter" in err


def test_error_malformed_constraints(tmp_path, capsys):
    arch = tmp_path / "bad.toml"
    arch.write_text("[pub\nfetch_width = 4\n")
    app = _program_file(tmp_path, brighten_blur(tiles=1, n=8))
    assert "malformed TOML" in _error(tmp_path, capsys, ["schedule", app, "--arch", str(arch)])


def test_error_bad_schedule_key(tmp_path, capsys):
    arch = tmp_path / "bad.toml"
    arch.write_text("[schedule]\npe_latency = -1\n")
    app = _program_file(tmp_path, brighten_blur(tiles=1, n=8))
    assert "pe_latency must be non-negative" in _error(
        tmp_path, capsys, ["schedule", app, "--arch", str(arch)])


def test_error_missing_output_directory(tmp_path, capsys):
    app = _program_file(tmp_path, brighten_blur(tiles=1, n=8))
    assert main(["schedule", app, "--plot", str(tmp_path / "no" / "x.png")]) == 2
    assert "directory" in capsys.readouterr().err and not (tmp_path / "no").exists()


def test_error_unknown_app(tmp_path, capsys):
    assert "unknown app 'nope'" in _error(tmp_path, capsys, ["schedule", "nope"])


def test_console_entry_help_and_exit_code(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-m", "compiler", "schedule", "--help"], cwd=ROOT,
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0 and "--dump DIR" in r.stdout and "--plot FILE" in r.stdout
    r = subprocess.run([sys.executable, "-m", "compiler", "--help"], cwd=ROOT,
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0 and "schedule" in r.stdout
    app = _program_file(tmp_path, _one_stage(("x+1", "y")))
    r = subprocess.run([sys.executable, "-m", "compiler", "schedule", app], cwd=ROOT,
                       capture_output=True, text=True, env=env)
    assert r.returncode == 2 and r.stderr.startswith("ubc: error: op copy:")
    assert "Traceback" not in r.stderr
