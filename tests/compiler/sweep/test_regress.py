"""``make regress``'s table (``compiler.sweep.regress``) from point results, and its place
between the markers of docs/simulation.md."""
from __future__ import annotations

import pytest

from compiler.sweep.regress import BEGIN, END, table, write_doc

PASSED = {"app": "gaussian", "arch": "cgra_4x4", "status": "ok", "pes": 11, "mems": 1,
          "ios": 2, "cycles_predicted": 4103, "cycles_measured": 4103, "sim_passed": True,
          "seconds": {"schedule": 1.0, "sim": 20.4}, "session_cycles": 7300,
          "run_cycles": 4180, "run_cycles_per_s": 5100, "error": None,
          "arch_choice": "arch cgra_4x4: the smallest shipped array the point fits"}
FAILED = dict(PASSED, app="cascade", arch="cgra_4x16", status="error", sim_passed=False,
              cycles_measured=4110, error="sim: cycles measured 4110 != predicted 4109",
              arch_choice="arch cgra_4x16: ...; passed over: cgra_4x4: out of PE tiles")
NOFIT = {"app": "srcnn", "status": "does-not-fit", "error": None, "seconds": {},
         "arch_choice": "fits no shipped array: cgra_4x4: out of PE tiles; "
                        "cgra_16x32: out of MEM tiles"}


def test_table_rows_and_summary():
    text = table([FAILED, NOFIT, PASSED], 600.0, "2 workers", (3.0, 4.5))
    lines = text.splitlines()
    assert lines[2].startswith("| gaussian | cgra_4x4 | 11 | 1 | 2 | 4103 | 4103 | yes | 21 |")
    assert "7,300 / 4,180 = 1.75" in lines[2] and "| 5100 |" in lines[2]
    row = next(l for l in lines if l.startswith("| cascade"))
    assert "| no |" in row and "cycles measured 4110" in row and "passed over cgra_4x4" in row
    row = next(l for l in lines if l.startswith("| srcnn"))
    assert row.endswith("| fits no shipped array: cgra_4x4: out of PE tiles; "
                        "cgra_16x32: out of MEM tiles |")
    assert ("3 applications, 1 passed end to end, 1 fit no shipped array, 1 failed (cascade); "
            "wall time 10.0 min; load average before/after 3.0/4.5") in text


def test_write_doc_replaces_between_markers(tmp_path):
    doc = tmp_path / "sim.md"
    doc.write_text(f"# x\n\nbefore\n{BEGIN}\nold table\n{END}\nafter\n")
    write_doc("new table\n", doc)
    assert doc.read_text() == f"# x\n\nbefore\n{BEGIN}\nnew table\n{END}\nafter\n"
    doc.write_text("no markers\n")
    with pytest.raises(ValueError, match="markers"):
        write_doc("t\n", doc)


def test_the_shipped_doc_has_the_markers(tmp_path):
    """``make regress --doc`` writes into docs/simulation.md: its markers are there (a copy is
    written, the doc itself is left alone)."""
    from compiler.sweep.regress import DOC
    copy = tmp_path / "simulation.md"
    copy.write_text(DOC.read_text())
    write_doc("the table\n", copy)
    assert f"{BEGIN}\nthe table\n{END}" in copy.read_text()


def _fake_arrays(monkeypatch, fits: set[str]) -> None:
    """``evaluate`` over three shipped arrays, of which only ``fits`` hold the point."""
    import compiler.pipeline
    import compiler.sweep.point as point
    monkeypatch.setattr(compiler.pipeline, "shipped_arrays", lambda: ["a2", "a4", "a8"])
    monkeypatch.setattr(point, "_evaluate_on", lambda app, params, stages, name: {
        "arch": name, "status": "ok" if name in fits else "does-not-fit",
        "out_of": [] if name in fits else [f"tiles of {name}"]})


def test_the_arch_choice_names_the_array_or_that_none_fits(monkeypatch):
    from compiler.sweep.point import evaluate_point as evaluate
    _fake_arrays(monkeypatch, {"a4", "a8"})
    assert evaluate("x", {}, ("map",))["arch_choice"] == (
        "arch a4: the smallest shipped array the point fits; passed over: a2: out of tiles of a2")
    _fake_arrays(monkeypatch, set())          # negative control: nothing fits
    r = evaluate("x", {}, ("map",))
    assert r["status"] == "does-not-fit"
    assert r["arch_choice"] == ("fits no shipped array: a2: out of tiles of a2; "
                                "a4: out of tiles of a4; a8: out of tiles of a8")
