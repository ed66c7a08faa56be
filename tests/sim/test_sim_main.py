"""``make sim`` (``python -m sim.main``), the README's main job: its command line, its one-line
errors that leave no JSON behind, and the PUB level without its Verilator step (the RTL
cross-check has its own test, tests/rtl/test_xcheck_rtl.py; the array level runs in
tests/rtl/test_e2e.py)."""
import pytest

from sim import main as sim_main


def test_pub_level_passes_and_reports(capsys):
    assert sim_main.main(["--level", "pub", "mobilenet", "--no-rtl"]) == 0
    out = capsys.readouterr().out
    assert "golden: interpreter == the app's reference(), bit-exact" in out
    assert "mobilenet: PASS  golden: reference;" in out
    assert "verified by isl" in out
    # mobilenet's weights are register files: they are model-checked and reported too
    assert "register-file words" in out and "mobilenet: PASS" in out


@pytest.mark.parametrize("level", ["pub", "array"])
def test_unknown_app_is_one_line_exit_2(capsys, level):
    assert sim_main.main(["--level", level, "nosuchapp", "--no-rtl"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("sim: error:") and "nosuchapp" in err and "\n" not in err


def test_app_too_large_for_the_arch_is_one_line_and_writes_nothing(capsys, tmp_path,
                                                                   monkeypatch):
    monkeypatch.setattr(sim_main, "BUILD_SIM", tmp_path)
    assert sim_main.main(["cascade", "--arch", "cgra_4x4"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("sim: error:") and "\n" not in err
    assert "PE tiles" in err and "cgra_4x4" in err
    assert list(tmp_path.iterdir()) == []


def test_bad_size_is_one_line_exit_2(capsys):
    assert sim_main.main(["gaussian", "--size", "width"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("sim: error:") and "NAME=INTEGER" in err and "\n" not in err


def test_help_names_both_levels(capsys):
    with pytest.raises(SystemExit) as exc:
        sim_main.main(["--help"])
    assert exc.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--level" in out and "the smallest shipped array APP fits and routes on" in out
    assert "build/sim/<app>-<arch>.json" in out
