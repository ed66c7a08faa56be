"""compiler.sweep.rtl_record: Table 7.4's RTL runs kept with their commit, read back only for
the plan entry they ran, an errored run shown by its reason, partial sets kept."""
from __future__ import annotations

import json

import pytest

from compiler.sweep import evaluate as ev
from compiler.sweep import rtl_record

BAD = ("e2e", "nosuchapp", "cgra_4x4", {})                  # sim.rtl_figures refuses it


def _measured(run, cycles):
    """A finished run's entry as the record keeps it (the result's keys of sim.rtl_figures)."""
    res = {"app": run[1], "arch": run[2], "cycles_measured": cycles, "cycles_predicted": cycles,
           "passed": True, "mems": 3, "pes": 7}
    return rtl_record.entry(run, res, "abc1234", False, "2026-11-27T11:00:00+00:00", 42.0)


def test_an_errored_run_renders_its_reason_not_a_number(tmp_path):
    plan = {"rtl dp upsample": BAD}
    e = rtl_record.run_one("rtl dp upsample", BAD, tmp_path / "runs", tmp_path)
    assert "unknown app 'nosuchapp'" in e["result"]["error"]
    assert e["kind"] == "e2e" and e["arch"] == "cgra_4x4" and e["wall_seconds"] > 0
    path = tmp_path / "record.json"
    rtl_record.update(path, plan, {"rtl dp upsample": e})
    rtl = rtl_record.load(path, plan)
    row = next(r for r in ev.table_backends(rtl) if r.startswith("| dp | upsample"))
    cells = row.split(" | ")
    assert cells[3:7] == ["—"] * 4 and "unknown app 'nosuchapp'" in row
    assert cells[8] == e["commit"]                        # 'measured at'
    assert ev._rtl_cycles(rtl["rtl dp upsample"]) == f"error ({e['commit']})"
    note = next(n for n in rtl_record.notes(path, plan) if n.startswith("* rtl dp upsample"))
    assert "error: unknown app 'nosuchapp'" in note and "cycles" not in note
    # collect reads the run directory back to the same entry
    assert rtl_record.collect(plan, tmp_path / "runs") == {"rtl dp upsample": e}


def test_a_run_of_another_plan_entry_is_not_used(tmp_path):
    run = ("e2e", "gaussian", "cgra_dp_16x32", {})
    path = tmp_path / "record.json"
    rtl_record.update(path, {"rtl dp gaussian": run}, {"rtl dp gaussian": _measured(run, 4100)})
    ok = rtl_record.load(path, {"rtl dp gaussian": run})
    assert ev._rtl_cycles(ok["rtl dp gaussian"]) == "4100 (abc1234)"
    assert ok["rtl dp gaussian"]["measured_at"] == "abc1234, 2026-11-27"
    other = ("e2e", "gaussian", "cgra_dp_16x32", {"width": 32})          # other sizes
    assert rtl_record.load(path, {"rtl dp gaussian": other}) == {}
    assert rtl_record.load(path, {"rtl dp-pe gaussian": run}) == {}     # other name
    row = next(r for r in ev.table_backends({}) if r.startswith("| dp | gaussian"))
    assert "not run" in row and "4100" not in row
    notes = rtl_record.notes(path, {"rtl dp gaussian": other})
    assert any(n.startswith("* rtl dp gaussian") and n.endswith("not run") for n in notes)


def test_collect_refuses_a_run_directory_of_another_command(tmp_path):
    runs = tmp_path / "runs"
    rtl_record.run_one("rtl dp upsample", BAD, runs, tmp_path)
    assert rtl_record.collect({"rtl dp upsample": BAD}, runs)
    assert rtl_record.collect({"rtl dp upsample": BAD[:2] + ("cgra_8x8", {})}, runs) == {}
    assert rtl_record.collect({"rtl dp upsample": BAD}, runs, commit="0000000") == {}


def test_rtl_only_keeps_the_runs_that_finished(monkeypatch, tmp_path):
    """An interrupted --rtl-only leaves the runs before the interruption in the record."""
    plan = {"rtl pub gaussian": ("e2e", "gaussian", "cgra_16x32", {}),
            "rtl pub harris": ("e2e", "harris", "cgra_16x32", {})}
    monkeypatch.setattr(ev, "rtl_plan", lambda: plan)

    def run_one(name, run, runs_dir):
        if name == "rtl pub harris":
            raise KeyboardInterrupt
        return _measured(run, 4102)
    monkeypatch.setattr(rtl_record, "run_one", run_one)
    out = tmp_path / "evaluation.md"
    with pytest.raises(KeyboardInterrupt):
        ev.rtl_only(out, tmp_path / "runs", progress=False)
    kept = json.loads(ev.rtl_record_path(out).read_text())["runs"]
    assert list(kept) == ["rtl pub gaussian"]
    assert kept["rtl pub gaussian"]["result"]["cycles_measured"] == 4102


def test_rtl_only_from_a_directory_without_runs_is_refused(tmp_path, capsys):
    out = tmp_path / "evaluation.md"
    (tmp_path / "empty").mkdir()
    assert ev.main(["--rtl-only", "--from", str(tmp_path / "empty"), "--out", str(out)]) == 2
    assert "holds no run of the plan" in capsys.readouterr().err
    assert not ev.rtl_record_path(out).exists()
    assert ev.main(["--from", str(tmp_path / "empty"), "--out", str(out)]) == 2
    assert "--from needs --rtl-only" in capsys.readouterr().err


def test_rtl_only_rerenders_table_7_4_and_leaves_the_rest(monkeypatch, tmp_path):
    run = ("e2e", "gaussian", "cgra_16x32", {})
    monkeypatch.setattr(ev, "rtl_plan", lambda: {"rtl pub gaussian": run})
    monkeypatch.setattr(rtl_record, "run_one", lambda name, r, d: _measured(r, 4102))
    out = tmp_path / "evaluation.md"
    doc = ["# Evaluation", "", ev.T74_HEADING, "", "old table", "",
           "## Thesis Table 7.5: PEs", "", "kept 7.5", "", ev.BACKENDS_HEADING, "", "old",
           "", "## Thesis Table 7.8: MEMs", "", "kept 7.8", ""]
    out.write_text("\n".join(doc))
    assert ev.main(["--rtl-only", "--out", str(out), "--quiet"]) == 0
    text = out.read_text()
    assert "old table" not in text and "\nold\n" not in text
    assert "kept 7.5" in text and "kept 7.8" in text and text.startswith("# Evaluation\n")
    t74 = text.split(ev.T74_HEADING)[1].split("\n## ")[0]
    assert "| gaussian | 4102 (abc1234) | — | — |" in t74
    assert "* rtl pub gaussian: `python -m sim.rtl_figures e2e gaussian --arch cgra_16x32` " \
           "at abc1234, 2026-11-27, 42 s wall: 4102 cycles measured, 4102 predicted, " \
           "passed (bit-exact)\n" in t74
    row = next(ln for ln in text.splitlines() if ln.startswith("| pub | gaussian"))
    assert "| 4102 | 4102 | yes | abc1234 |" in row
    out.write_text("# Evaluation without the section\n")                 # negative control
    assert ev.main(["--rtl-only", "--out", str(out), "--quiet"]) == 2


def test_a_buffet_run_reads_block_level_with_its_commit():
    run = ("buffet", "gaussian", None, {})
    res = {"app": "gaussian", "buffets": 2, "passed": True, "cycles": 4099}
    e = rtl_record.entry(run, res, "abc1234", True, "2026-11-27T11:00:00+00:00", 34.0)
    assert rtl_record.outcome(res) == "2 buffets, 4099 cycles (slowest), every buffet passed"
    assert rtl_record.measured_at(e) == "abc1234 + uncommitted changes, 2026-11-27"
    assert ev._block_level(dict(res, measured_commit=rtl_record.commit_label(e))) == \
        "4099 (block level, abc1234+)"
    assert ev._block_level(dict(res, passed=False)) == "4099 (failed) (block level)"


def test_the_commit_is_dirty_for_code_changes_not_for_the_record(tmp_path):
    import subprocess
    def git(*a):
        subprocess.run(["git", *a], cwd=tmp_path, check=True, capture_output=True)
    git("init", "-q")
    (tmp_path / "docs" / "data").mkdir(parents=True)
    for f in ("code.py", *rtl_record.OUTPUTS):
        (tmp_path / f).write_text("v1\n")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    commit, dirty = rtl_record.git_commit(tmp_path)
    assert len(commit) >= 7 and not dirty
    for f in rtl_record.OUTPUTS:
        (tmp_path / f).write_text("v2\n")
    assert rtl_record.git_commit(tmp_path) == (commit, False)
    (tmp_path / "code.py").write_text("v2\n")                       # negative control
    assert rtl_record.git_commit(tmp_path) == (commit, True)
