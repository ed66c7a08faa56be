"""compiler.sweep.share_rtl: the shared apps' RTL run records and their table."""
import json

from compiler.sweep import share_rtl

RUN = {"app": "srcnn", "arch": "cgra_16x32", "level": "array", "sizes": {"share": 1},
       "pes": 144, "mems": 104, "cycles_predicted": 22492, "cycles_measured": 22492,
       "match": True, "error": 0, "passed": True, "verilator_build_seconds": 1531.2,
       "sim_seconds": 900.0, "model_sha256": "889152b6ea471e9b" + "0" * 48}


def _write(d, name, rec):
    (d / name).write_text(json.dumps(rec))


def test_collect_keeps_only_shared_array_runs(tmp_path):
    _write(tmp_path, "srcnn-cgra_16x32-share1.json", RUN)
    _write(tmp_path, "gpyr-pub-share1.json", dict(RUN, app="gpyr", level="pub"))
    _write(tmp_path, "gaussian-cgra_4x4-share1.json", dict(RUN, app="gaussian"))
    runs = share_rtl.collect({"gpyr", "srcnn"}, tmp_path, tmp_path / "none.json")
    assert list(runs) == ["srcnn cgra_16x32"]
    rows = [ln for ln in share_rtl.table(runs) if ln.startswith("| srcnn")]
    assert rows == ["| srcnn | cgra_16x32 | 144 | 104 | 22492 | 22492 | yes | pass | 1531.2 | "
                    "900.0 | 889152b6ea471e9b |"]


def test_a_failed_run_reads_fail(tmp_path):
    """Negative control: a record whose run failed (cycles off by one) is never shown as a
    pass."""
    _write(tmp_path, "srcnn-cgra_16x32-share1.json",
           dict(RUN, cycles_measured=22493, passed=False))
    runs = share_rtl.collect({"srcnn"}, tmp_path, tmp_path / "none.json")
    row = next(ln for ln in share_rtl.table(runs) if ln.startswith("| srcnn"))
    assert "| 22492 | 22493 | yes | FAIL |" in row


def test_main_without_records_fails(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(share_rtl, "DATA", tmp_path / "share_rtl.json")
    assert share_rtl.main(["--sim-dir", str(tmp_path)]) == 1
    assert capsys.readouterr().err.count("\n") == 1
    assert not (tmp_path / "share_rtl.json").exists()
