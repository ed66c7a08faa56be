"""``make sim`` (``python -m sim.main``), the README's main job, without its Verilator step (the
RTL cross-check has its own test, tests/rtl/test_xcheck_rtl.py)."""
from sim import main as sim_main


def test_main_job_passes_and_reports(capsys):
    assert sim_main.main(["--app", "mobilenet", "--no-rtl"]) == 0
    out = capsys.readouterr().out
    assert "golden: interpreter == numpy reference (bit-exact)" in out
    assert "verified by isl" in out
    # mobilenet's weights are register files: they are model-checked and reported too
    assert "register-file words" in out and "mobilenet: PASS" in out


def test_unknown_app_is_one_line_exit_2(capsys):
    assert sim_main.main(["--app", "nosuchapp", "--no-rtl"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("sim: error:") and "nosuchapp" in err and "\n" not in err
