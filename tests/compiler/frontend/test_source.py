"""compiler/frontend/source.py: apps from a Python file (the apps/ protocol), Program JSON files, the
golden of an app file (its reference, else real Halide for a Halide-style file), and the
one-line errors of files that are not apps. The two worked files of examples/ go through
``make sim``'s main job and the netlist model here (what CI runs of them)."""
import json
from pathlib import Path

import numpy as np
import pytest

from compiler.cli import main
from compiler.ir import Arg, Call, Const, Kernel, u16
from compiler.pipeline import check_result, compile_app
from compiler.frontend.source import (AppError, GoldenMismatch, app_inputs as src_inputs,
                             establish_golden, load_app)
from sim import main as sim_main

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = sorted(str(p) for p in (ROOT / "examples").glob("*.py"))


SMALL = {"halide_box_blur": {"width": 12, "height": 10},
         "loopnest_edges": {"width": 12, "height": 10},
         "multilane_weights": {"width": 12, "height": 8, "lanes": 4, "k": 3}}


def test_examples_cover_both_dsls():
    texts = [Path(p).read_text() for p in EXAMPLES]
    assert {Path(p).stem for p in EXAMPLES} == set(SMALL)
    assert 0 < sum("compiler.frontend.halide import" in t for t in texts) < len(texts)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: Path(p).stem)
def test_example_passes_make_sim_and_the_netlist_model(path, capsys):
    stem = Path(path).stem
    sizes = [f"--size={k}={v}" for k, v in SMALL[stem].items()]
    assert sim_main.main(["--level", "pub", path, "--no-rtl"] + sizes) == 0
    out = capsys.readouterr().out
    assert f"{stem}: PASS" in out
    assert ("golden: interpreter == real Halide" in out
            or "golden: interpreter == the app's reference()" in out)
    result = compile_app(path, "cgra_16x32", SMALL[stem])
    check = check_result(result)
    assert check.ok, check.summary()
    assert result.inputs["input"].shape[:2] == (12, SMALL[stem]["height"])   # its own


@pytest.mark.parametrize("command", ["schedule", "map", "compile"])
def test_ubc_commands_take_an_app_file(command, capsys):
    path = str(ROOT / "examples" / "halide_box_blur.py")
    assert main([command, path, "--size", "width=16", "--size", "height=8", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["app"] in (path, "halide_box_blur")


def test_halide_file_golden_is_cross_checked_with_real_halide():
    src = load_app(str(ROOT / "examples" / "halide_box_blur.py"), {"width": 10, "height": 8})
    assert src.program.halide is not None and not hasattr(src.module, "reference")
    inputs = src_inputs(src, 3)
    g = establish_golden(src, inputs)
    assert g.kind == "halide" and g.outputs["output"].shape == (8, 6)
    # negative control: a Program that no longer computes what the DSL says is caught
    op = src.program.op("output")
    op.kernel = Kernel("wrong", 1, Call("lshr", (Arg(0, u16), Const(2, u16))), (u16,))
    with pytest.raises(GoldenMismatch, match="golden \\(halide\\): interpreter and real "
                                             "Halide disagree on the app's inputs: output "
                                             "'output' at"):
        establish_golden(src, inputs)


def test_reference_golden_and_its_negative_control():
    src = load_app(str(ROOT / "examples" / "loopnest_edges.py"), {"width": 12, "height": 9})
    inputs = src_inputs(src)
    assert establish_golden(src, inputs).kind == "reference"
    src.module.THRESHOLD = 0            # the reference now disagrees with the Program
    with pytest.raises(GoldenMismatch, match="reference\\(\\) disagree on the app's inputs: "
                                             "output 'edges' at"):
        establish_golden(src, inputs)


BAD_FILES = {
    "syntax.py": ("def build(:\n", "syntax error at line 1"),
    "noinputs.py": ("def build():\n    return None\n", "defines no make_inputs()"),
    "notprog.py": ("def build():\n    return 3\ndef make_inputs(seed=0):\n    return {}\n",
                   "build() returned int, expected a Program"),
    "raises.py": ("def build():\n    return 1 // 0\ndef make_inputs(seed=0):\n    return {}\n",
                  "build() raised ZeroDivisionError"),
    "imports.py": ("import no_such_module_here\n", "importing it raised ModuleNotFoundError"),
    "halide_err.py": ("from compiler.frontend.halide import Func, Pipeline, Var\n"
                      "def build():\n    x = Var('x')\n    f = Func('f')\n    f[x] = x\n"
                      "    return Pipeline(f).lower('p', (4,))\n"
                      "def make_inputs(seed=0):\n    return {}\n",
                      "build() raised HalideError: func f: uses loop variable x as a value"),
    "undeclared.py": ("from compiler.ir import Kernel, Program, u16\n"
                      "def build():\n    p = Program('p')\n    p.add_output('o', (4,))\n"
                      "    op = p.add_loop('x', 0, 4).add_op('k')\n"
                      "    op.add_load('inptu', 'x')\n    op.add_store('o', 'x')\n"
                      "    op.add_function(Kernel.from_fn('k', lambda a: a + 1, u16))\n"
                      "    return p\n"
                      "def make_inputs(seed=0):\n    return {}\n",
                      "op k: loads undeclared buffer inptu (declare it with add_input, "
                      "add_output or add_buffer)"),
    "undeclared.json": ('{"program": "p", "buffers": [], "children": [{"op": "a", "loads": [], '
                        '"store": {"buffer": "o", "index": ["0"]}, "unit": null, "kernel": '
                        '{"name": "k", "n_args": 0, "arg_types": [], "nodes": '
                        '[{"const": 1, "type": "u16"}]}}]}',
                        "is not a valid Program JSON: op a: stores undeclared buffer o"),
    "notprogram.json": ('{"name": "x"}', "is not a Program JSON: expected an object"),
    "badkey.json": ('{"program": "p", "buffers": [], "children": [{"op": "a"}]}',
                    "is not a Program JSON: missing key 'loads'"),
    "notjson.json": ("{", "is not valid JSON"),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_bad_app_files_are_one_line_errors(name, tmp_path, capsys):
    text, msg = BAD_FILES[name]
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(AppError, match=msg.replace("(", "\\(").replace(")", "\\)")):
        load_app(str(path))
    assert main(["schedule", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ubc: error: ") and str(path) in err and err.count("\n") == 1


@pytest.mark.parametrize("body, msg", [
    ("return {}", "make_inputs gave no array for input 'input'"),
    ("return {'input': np.zeros((3, 3), np.uint16)}",
     "make_inputs gave input 'input' the shape [3, 3], the Program declares [12, 10]"),
    ("return [1]", "make_inputs returned list, expected a dict of arrays"),
    ("raise KeyError('oops')", "make_inputs raised KeyError: 'oops'")])
def test_bad_make_inputs_is_one_line(body, msg, tmp_path, capsys):
    text = (ROOT / "examples" / "loopnest_edges.py").read_text()
    start = text.index("def make_inputs")
    end = text.index("def reference")
    path = tmp_path / "bad_inputs.py"
    path.write_text(text[:start] + f"def make_inputs(seed=0, width=32, height=32):\n"
                    f"    {body}\n\n\n" + text[end:])
    assert sim_main.main(["--level", "pub", str(path), "--no-rtl", "--size", "width=12",
                          "--size", "height=10"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and msg in err and str(path) in err


def test_unknown_size_of_an_app_file(capsys):
    path = str(ROOT / "examples" / "loopnest_edges.py")
    assert main(["map", path, "--size", "widht=8"]) == 2
    assert "unknown size widht (SIZES has width, height)" in capsys.readouterr().err
    assert load_app(path, {"width": 8}).program.buffers["input"].shape == (8, 32)
