"""``make evaluate`` (compiler/sweep/evaluate.py) at small sizes: every table and plot is
written, PEs say "pending" (generated), the published figures stand beside ours, and a failing
task (here the area synthesis) is reported in the document instead of stopping it."""
from __future__ import annotations

import json

from compiler.sweep import evaluate as ev
from compiler.sweep.cache import Cache

SMALL = {"gaussian": ("gaussian", dict(width=16, height=12, unroll=1)),
         "harris": ("harris", dict(width=20, height=16, unroll=1)),
         "upsample": ("upsample", dict(width=8, height=6)),
         "unsharp": ("unsharp", dict(width=14, height=12, unroll=1)),
         "camera": ("camera", dict(width=16, height=16)),
         "resnet": ("resnet", dict(width=4, height=4, in_channels=8, out_channels=8,
                                   ic_unroll=4, oc_unroll=4)),
         "resnet 8x8 block": ("resnet", dict(width=4, height=4, in_channels=8, out_channels=8,
                                             ic_unroll=4, oc_unroll=4)),
         "mobilenet": ("mobilenet", dict(width=6, height=5))}


def test_evaluation_document(monkeypatch, tmp_path):
    monkeypatch.setattr(ev, "TABLE_POINTS", SMALL)
    monkeypatch.setattr(ev, "SWEEPS", {"gaussian": (("unroll",), [1, 2])})
    monkeypatch.setattr(ev, "plan", _small_plan)
    monkeypatch.setattr(ev, "run_area", lambda: {"error": "yosys not run in this test"})
    monkeypatch.setattr(ev, "run_rtl", lambda run: {"error": "Verilator not run in this test"})
    out, img = tmp_path / "evaluation.md", tmp_path / "img"
    seconds = ev.evaluate(0, None, Cache(None), out, img, progress=False)
    text = out.read_text()
    assert seconds > 0 and f"{seconds:.0f} s wall time" in text
    for title in ("Paper Table IV", "Paper Table VI", "Paper Table VII", "Thesis Table 7.2",
                  "Thesis Table 7.3", "Thesis Table 7.4", "Thesis Table 7.5",
                  "Thesis Table 7.8", "The memory backends end to end",
                  "Thesis Figure 7.5", "Place and route of the Table IV points",
                  "Thesis Table 7.6", "Thesis Table 7.7", "Thesis Figure 7.4",
                  "Thesis Figures 7.6 and 7.7", "Thesis Figures 7.8 and 7.9"):
        assert f"## {title}" in text, title
    assert "| gaussian | 13 | 19 |" in text                  # the netlist's PEs, paper's 19
    assert "| 4102 |" in text and "| 11784 |" in text and "| 9807 |" in text
    pnr = text.split("## Place and route")[1].split("## ")[0]
    assert "| gaussian | 13 | 0 | 2 |" in pnr and "| pass |" in pnr     # placed, routed, checked
    assert "bench/area.py failed: yosys not run in this test" in text
    assert "Verilator not run in this test" in text
    # Table 7.3 from real mappings: upsample's one dual-port memory, one buffet
    t73 = text.split("## Thesis Table 7.3")[1].split("## ")[0]
    assert "| upsample | 1 | 1 | 1 | 1 | 2 | 2 |" in t73
    t75 = text.split("## Thesis Table 7.5")[1].split("## ")[0]
    assert "| upsample | " in t75 and "| 15 | 66 |" in t75
    assert (img / "fig7_5_gaussian.png").read_bytes()[:4] == b"\x89PNG"
    assert "](img/fig7_5_gaussian.png)" in text
    # thesis §7.3: sharing cuts gpyr's PEs (Table 7.6), every ablation bar has an occupancy
    t76 = text.split("## Thesis Table 7.6")[1].split("## ")[0]
    row = next(ln for ln in t76.splitlines() if ln.startswith("| gpyr |")).split(" | ")
    assert int(row[2]) < int(row[1]) and row[3:5] == ["16", "6"]
    t77 = text.split("## Thesis Table 7.7")[1].split("## ")[0]
    row = next(ln for ln in t77.splitlines() if ln.startswith("| gpyr |"))
    assert "MEM tiles per buffer: no sharing: " in row and "; sharing: " in row
    for name in ("fig7_6_gpyr", "fig7_8_resnet18", "fig7_9_resnet18"):
        assert (img / f"{name}.png").read_bytes()[:4] == b"\x89PNG", name
    fig78 = text.split("## Thesis Figures 7.8")[1].split("## ")[0]
    layer = next(ln for ln in fig78.splitlines() if ln.startswith("| conv5_1 ")).split(" | ")
    seq, db, lo = (float(v) for v in layer[1:4])
    assert 0 < seq < db <= lo <= 1
    # --render-only: the same document again from the recorded points, without a sweep
    assert ev.results_path(out) == tmp_path / "evaluation.results.json"
    out.write_text("stale")
    monkeypatch.setattr(ev, "run_tasks", _no_sweep)
    assert ev.main(["--render-only", "--out", str(out), "--img", str(img)]) == 0
    assert out.read_text() == text


def _no_sweep(*args, **kwargs):
    raise AssertionError("--render-only ran a sweep")


def test_render_only_without_a_recorded_run_is_refused(tmp_path, capsys):
    out = tmp_path / "evaluation.md"
    assert ev.main(["--render-only", "--out", str(out), "--img", str(tmp_path)]) == 2
    assert "no recorded run at" in capsys.readouterr().err and not out.exists()


def _small_plan():
    tasks = {}
    for v in (1, 2):
        tasks[f"fig7.5 gaussian {v}"] = ev.Task("gaussian", dict(width=16, height=12, unroll=v))
    for label, (app, params) in SMALL.items():
        tasks[f"table {label}"] = ev.Task(app, dict(params), ev.PNR_STAGES)
    tasks.update(ev.backend_plan(None))
    tasks.update(ev.plan_ch7({"gpyr": dict(width=16, height=16, levels=2)},
                             {"conv5_1": dict(SMALL["resnet"][1], ksize=3, stride=2)}))
    return tasks


def test_backends_table_tells_not_run_from_failed():
    """A run missing from the cache reads 'not run'; a failed or refused one says so."""
    rtl = {"buffet gaussian": {"app": "gaussian", "buffets": 2, "passed": False, "cycles": 9},
           "buffet harris": {"error": "map: buffer x: refused"},
           "buffet upsample": {"app": "upsample", "buffets": 1, "passed": True, "cycles": 7}}
    rows = {r.split(" | ")[1]: r for r in ev.table_backends(rtl) if r.startswith("| rv")}
    assert "block level: not run" in rows["resnet 8x8 block"]
    assert "block level: failed" in rows["gaussian"]
    assert "block level: map: buffer x: refused" in rows["harris"]
    assert "block level: every buffet passed" in rows["upsample"]


def test_fpga_only_rerenders_the_fpga_tables(tmp_path):
    """``ubc evaluate --fpga-only``: the FPGA sections of the evaluation document and the marked
    tables of docs/fpga.md come again from the records, the rest stays; a document without the
    markers is refused."""
    import json
    import pytest
    data = tmp_path / "data"
    data.mkdir()
    rec = {"luts": 661, "ffs": 715, "wrapper_ffs": 96, "brams": 2, "dsps": 0, "fmax_mhz": 120.04,
           "cycles_measured": 4103, "pixels": 3844, "ns_per_pixel": 8.89, "minutes": 0.8}
    (data / "fpga_apps.json").write_text(json.dumps({"gaussian": rec, "gemm": {
        "error": "stopped after 900 s", "minutes": 15.0}}))
    (data / "fig7_11.json").write_text(json.dumps({
        "thesis_clock_mhz": 900, "cpu": "x86", "reps": 3, "autoscheduler": "Mullapudi2016",
        "rows": [{"app": "gaussian", "pixels": 3844, "cycles_predicted": 4103,
                  "cgra_ns": 1.19, "fpga_ns": 8.89, "cpu_ns": 5.0}]}))
    out, doc = tmp_path / "evaluation.md", tmp_path / "fpga.md"
    out.write_text("# Evaluation\n\nkept\n\n## The applications' FPGA designs (stale)\n\nSTALE\n")
    doc.write_text("intro\n<!-- FPGA-APP-TABLE -->\nSTALE\n<!-- /FPGA-APP-TABLE -->\nmiddle\n"
                   "<!-- FIG-7-11-TABLE -->\n<!-- /FIG-7-11-TABLE -->\nend\n")
    ev.render_fpga_only(out, doc, data)
    text, md = out.read_text(), doc.read_text()
    assert text.startswith("# Evaluation\n\nkept\n\n## The applications' FPGA designs (thesis")
    assert "stale" not in text and "STALE" not in text
    assert text.count("## The applications' FPGA designs") == 1
    assert "| gaussian | 661 | 715 (96) | 2 | 0 | 120.0 | 4103 | 3844 | 8.89 | 0.8 |" in text
    assert "| gemm | stopped after 900 s |" in text and "## Thesis Figure 7.11" in text
    assert "STALE" not in md and md.startswith("intro\n") and md.endswith("end\n")
    assert "| gaussian | 661 |" in md and "| gaussian | 3844 | 4103 predicted | 1.19 | 8.89 |" in md
    doc.write_text("no markers\n")
    with pytest.raises(ValueError, match="FPGA-APP-TABLE"):
        ev.render_fpga_only(out, doc, data)


def test_energy_sections_render_the_table_and_say_when_unmeasured():
    from compiler.sweep.evaluate import energy_sections
    text = "\n".join(energy_sections(None))
    assert text.count("Not measured") == 1             # no table, so no app section either
    def design(label, pj, total):
        return {"label": label, "pj_per_access": pj, "sram_pct": 50.0,
                "by_scale": {s: {"total_pj": total * f} for s, f in
                             (("0.5", 0.5), ("1.0", 1.0), ("1.5", 1.5))}}
    t = {"designs": {"pub": design("4 Wide SP SRAM +AGG +TB +AGs (PUB)", 2.0, 100.0),
                     "dp": design("DP SRAM + AG", 4.0, 400.0)},
         "ratio_pub_over_dp": {"0.5": 0.4, "1.0": 0.5, "1.5": 0.6}}
    text = "\n".join(energy_sections({"table_7_2": t}))
    assert "PUB / DP+AG = 0.50" in text and "whole line buffer" in text
    assert "pixel twice): PUB / DP+AG 0.25 (x0.5: 0.25" in text
    assert "| DP SRAM + AG | 4.00 |" in text
    assert text.count("energy not measured") == 2              # buffet, DP + PEs
    # with DP SRAM + PEs measured: its row, its ratio to DP+AG beside the thesis's (4.8 / 3.6)
    t["designs"]["dppe"] = design("DP SRAM + PEs", 6.0, 600.0)
    t["ratio_over_dp"] = {"pub": t["ratio_pub_over_dp"], "dp": {"0.5": 1, "1.0": 1, "1.5": 1},
                          "dppe": {"0.5": 1.4, "1.0": 1.5, "1.5": 1.6}}
    t["measured"] = {"date": "2026-11-27 17:00 UTC", "commit": "abc1234", "wall_seconds": 9,
                     "cpu_seconds": 5, "load_average": [3.5, 2.0, 1.0]}
    text = "\n".join(energy_sections({"table_7_2": t}))
    assert "| DP SRAM + PEs | 6.00 | 50 | 4.80 | 70 | / DP+AG 1.50 (thesis 1.33)" in text
    assert "PUB / DP+AG 0.40 / 0.60; DP+PEs / DP+AG 1.40 / 1.60." in text
    assert "at commit abc1234" in text and "load average 3.5" in text
    assert text.count("energy not measured") == 1               # the buffet


def test_table_v_comment_compares_harris_with_the_paper():
    r = {"pes": 156, "mems": 10, "cycles": 2080}
    assert ev._table_v(r, (194, 10, 2154), False) == "PEs -20%; MEMs same; cycles -3.4%"
    assert ev._table_v(r, (194, 10, 2154), True).endswith(ev.REASONS[("7.5", "harris")])
    # the reason is only given where the PEs differ
    assert ev.REASONS[("7.5", "harris")] not in ev._table_v(r, (156, 10, 2080), True)


def test_render_only_of_a_record_from_another_plan_is_refused(tmp_path, capsys):
    """A recorded run that lacks points of the current plan is a one-line error, not a
    traceback, and the document is left alone."""
    out = tmp_path / "evaluation.md"
    out.write_text("kept")
    ev.results_path(out).write_text(json.dumps({"res": {"table gaussian": {}}, "area": {},
                                                "seconds": 1.0, "where": "one process"}))
    assert ev.main(["--render-only", "--out", str(out), "--img", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "lacks" in err and "of the current plan's points" in err and len(err.splitlines()) == 1
    assert out.read_text() == "kept"
