"""The golden every PASS verdict compares with (``compiler.frontend.source.establish_golden``): the
interpreter checked bit for bit against the app's ``reference()``, or real Halide for a
Halide-style program without one, on the app's inputs and on all-zero and all-maximum inputs;
the interpreter alone only when neither exists. A disagreement fails ``make sim`` at both
levels before anything is simulated. Also: the inputs ``make_inputs`` gives are checked against
their buffers' types, and ``make sim`` keeps one record per app, arch and size."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from apps import NAMES
from compiler.pipeline import compile_app
from compiler.frontend.source import (AppError, GoldenMismatch, app_inputs, establish_golden,
                             extreme_inputs, load_app)
from sim import main as sim_main

from ...apps.test_apps import SMALL

ROOT = Path(__file__).resolve().parents[3]
BOX5 = ROOT / "tests" / "data" / "apps" / "box5.py"


def wrong_reference(tmp_path: Path) -> Path:
    """box5 with a reference that adds one to every pixel: the program and its reference
    disagree everywhere (the case a new user found passing ``make sim``)."""
    text = BOX5.read_text()
    bad = text.replace('return {"output": ((s & 0xFFFF) >> 5).astype(np.uint16)}',
                       'return {"output": (((s & 0xFFFF) >> 5) + 1).astype(np.uint16)}')
    assert bad != text
    path = tmp_path / "box_wrongref.py"
    path.write_text(bad)
    return path


def test_a_correct_reference_is_the_golden():
    src = load_app(str(BOX5))
    g = establish_golden(src, app_inputs(src))
    assert g.kind == "reference" and g.checked == ("the app's inputs", "all-zeros", "all-max")
    assert g.outputs["output"].shape == (20, 20)
    assert "golden: reference" in g.describe()


def test_a_wrong_reference_names_the_output_and_the_first_differing_word(tmp_path):
    src = load_app(str(wrong_reference(tmp_path)))
    with pytest.raises(GoldenMismatch) as exc:
        establish_golden(src, app_inputs(src))
    msg = str(exc.value)
    m = re.search(r"output 'output' at \[0, 0\]: interpreter (\d+), reference (\d+) "
                  r"\(400 of 400 words differ\)", msg)
    assert m and int(m[2]) == int(m[1]) + 1, msg
    assert exc.value.kind == "reference" and "\n" not in msg


def test_wrong_reference_fails_the_pub_level(tmp_path, capsys):
    path = wrong_reference(tmp_path)
    assert sim_main.main(["--level", "pub", str(path), "--no-rtl"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "sim: FAIL: golden (reference)" in err
    assert "output 'output' at [0, 0]" in err


def test_wrong_reference_fails_the_array_level_before_any_simulation(tmp_path, capsys,
                                                                     monkeypatch):
    """Exit 1, the JSON written with ``passed: false``, the golden used and the first
    differing word, and nothing compiled past the frontend or simulated."""
    import sim.array_run as array_run

    def never(*a, **k):
        raise AssertionError("the simulation must not start when the golden is wrong")
    monkeypatch.setattr(array_run, "model_for", never)
    monkeypatch.setattr(array_run, "run_bundle", never)
    monkeypatch.setattr(sim_main, "BUILD_SIM", tmp_path / "out")
    path = wrong_reference(tmp_path)
    assert sim_main.main([str(path), "--size", "width=24", "--size", "height=24"]) == 1
    out = capsys.readouterr().out
    assert "box_wrongref on auto: FAIL  golden (reference)" in out      # no arch was chosen
    assert sim_main.main([str(path), "--arch", "cgra_8x8"]) == 1
    assert "box_wrongref on cgra_8x8: FAIL  golden (reference)" in capsys.readouterr().out
    rec = json.loads((tmp_path / "out" / "box_wrongref-cgra_8x8.json").read_text())
    assert rec["passed"] is False and rec["golden"] == "reference"
    assert rec["path"] == str(path) and rec["sizes"] == {"width": 24, "height": 24}
    assert "output 'output' at [0, 0]" in rec["failures"][0]
    assert "cycles_measured" not in rec


def test_halide_style_app_without_reference_is_checked_against_real_halide():
    src = load_app(str(ROOT / "examples" / "halide_box_blur.py"), {"width": 10, "height": 8})
    assert src.program.halide is not None and not hasattr(src.module, "reference")
    g = establish_golden(src, app_inputs(src, 3))
    assert g.kind == "halide" and g.outputs["output"].shape == (8, 6)
    assert "all-max" in g.checked


def test_program_json_without_reference_uses_the_interpreter(tmp_path):
    from apps import get_app
    path = tmp_path / "blur.json"
    path.write_text(json.dumps(get_app("brighten_blur").build(**SMALL["brighten_blur"])
                               .to_dict()))
    src = load_app(str(path))
    g = establish_golden(src, app_inputs(src))
    assert g.kind == "interpreter" and g.checked == ()


@pytest.mark.parametrize("name", NAMES)
def test_every_app_agrees_with_its_reference_on_extreme_inputs(name):
    """All zeros and all maximum values of each input's type: where a reference that forgets
    the 16-bit wrap-around of the hardware, or a kernel that overflows, would show."""
    src = load_app(name, SMALL[name])
    g = establish_golden(src, app_inputs(src))
    assert g.kind == "reference" and g.checked[1:] == ("all-zeros", "all-max")


def test_extreme_inputs_catch_a_reference_that_does_not_wrap(monkeypatch):
    """Negative control: gpyr's reference with its 2x2 sum not wrapped at 16 bits (how it was
    written before the extreme inputs found it) agrees with the interpreter on the app's 8-bit
    inputs and disagrees on all-max inputs."""
    import apps.gpyr as gpyr

    def unwrapped(a):
        a = np.asarray(a, dtype=np.int64)
        return (a[0::2, 0::2] + a[1::2, 0::2] + a[0::2, 1::2] + a[1::2, 1::2]) >> 2
    monkeypatch.setattr(gpyr, "down_reference", unwrapped)
    src = load_app("gpyr", SMALL["gpyr"])
    assert establish_golden(src, app_inputs(src), extremes=False).kind == "reference"
    with pytest.raises(GoldenMismatch, match=r"disagree on all-max inputs: output 'output' at "
                                             r"\[0, 0\]: interpreter 16383, reference 65535"):
        establish_golden(src, app_inputs(src))


def test_extreme_inputs_fill_each_buffer_with_its_type_extremes():
    src = load_app("resnet", SMALL["resnet"])
    high = extreme_inputs(src, "max")
    assert set(high) == {"input", "weights", "bias"}
    assert all(int(a.min()) == int(a.max()) == 32767 for a in high.values())   # s16
    assert all(int(a.max()) == 0 for a in extreme_inputs(src, "zeros").values())
    with pytest.raises(ValueError, match="zeros or max"):
        extreme_inputs(src, "min")


def test_inputs_outside_their_type_are_one_line_errors(tmp_path, capsys):
    """``make_inputs`` giving int64 values up to ~214,000 for a u16 input (as a new user did)
    is refused, naming the input, its type and the first bad value."""
    text = BOX5.read_text().replace(
        'rng.integers(0, 256, (width, height)).astype(np.uint16)',
        'np.arange(width * height, dtype=np.int64).reshape(width, height) * 372')
    path = tmp_path / "box_big.py"
    path.write_text(text)
    src = load_app(str(path))
    with pytest.raises(AppError) as exc:
        app_inputs(src)
    msg = str(exc.value)
    assert msg == (f"{path}: make_inputs gave input 'input' (u16, 0..65535) the value 65844 "
                   f"at [7, 9] ({576 - 177} values out of range)")
    assert sim_main.main([str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the value 65844" in err


def test_float_inputs_are_refused(tmp_path):
    path = tmp_path / "box_float.py"
    path.write_text(BOX5.read_text().replace(".astype(np.uint16)}", ".astype(np.float32)}"))
    with pytest.raises(AppError, match="values of type float32, expected integers of its type"):
        app_inputs(load_app(str(path)))


def test_records_of_different_sizes_do_not_overwrite_each_other(tmp_path):
    src = load_app(str(BOX5), {"width": 20, "height": 16})
    default = load_app(str(BOX5))
    given_default = load_app(str(BOX5), {"width": 24})
    out = tmp_path
    a = sim_main.record_path(out, "box5", "cgra_8x8", src)
    b = sim_main.record_path(out, "box5", "cgra_8x8", default)
    c = sim_main.record_path(out, "box5", "cgra_8x8", given_default)
    assert a.name == "box5-cgra_8x8-width20-height16.json"
    assert b.name == c.name == "box5-cgra_8x8.json"


def test_the_driver_hands_the_golden_to_the_bundle():
    """``compile_app(..., until="bundle")``: the bundle's expected words are the golden's,
    established once; ``make_bundle`` computes none of its own."""
    r = compile_app(str(BOX5), "cgra_8x8", {"width": 12, "height": 10}, until="bundle")
    assert r.golden.kind == "reference"
    expected = sorted(v for _w, v in r.bundle["glb_outputs"])
    assert expected == sorted(int(v) for v in r.golden.outputs["output"].ravel())
