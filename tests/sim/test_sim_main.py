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


def test_make_sim_falls_back_to_channel_blocks_when_no_output_tile_fits(monkeypatch):
    """``sim.main._compile``: a layer that declares channel blocks is compiled as runs of them
    when the whole program and its output tiles do not fit (here made to refuse); an app
    without the declaration keeps the one-line refusal."""
    import pytest
    import compiler.pipeline as pipeline
    from compiler.tiling.region import TilingError
    from sim.main import _compile

    real = pipeline.compile_fitting

    def refuse(app, *a, **k):            # the whole app refuses; a block Program compiles
        if isinstance(app, str):
            raise TilingError(f"{app}: no tile shape fits cgra_8x8")
        return real(app, *a, **k)
    monkeypatch.setattr(pipeline, "compile_fitting", refuse)
    said: list[str] = []
    sizes = dict(width=6, height=6, in_channels=8, out_channels=4, ic_unroll=2, oc_unroll=2)
    result, _s = _compile("resnet", "cgra_8x8", sizes, 0, said.append)
    assert (result.blocks.runs, result.blocks.block, result.runs) == (2, 4, 2)
    assert said[0] == "resnet: no tile shape fits cgra_8x8: trying channel blocks"
    assert said[-1] == "channel blocks: 2 runs of 4 in_channels; 1750 cycles per run, 3500 in all"
    with pytest.raises(TilingError, match="^gaussian: no tile shape fits cgra_8x8$"):
        _compile("gaussian", "cgra_8x8", {}, 0, said.append)
