"""The Halide-style DSL warns when an input is read at several places without a
``stream_to_accelerator()`` copy (compiler/frontend/halide.py, ``HalideWarning``): every such
read becomes an IO stream of its own. The warning is one line naming the input, its readers
and what to add; ``ubc`` and ``make sim`` print it once on stderr
(``compiler.frontend.source.warnings_once``). Each with its negative control."""
from __future__ import annotations

import warnings

import pytest

from compiler.cli import main
from compiler.frontend.halide import Func, HalideWarning, Input, Pipeline, Var
from compiler.ir import ProgramWarning, u16
from compiler.frontend.source import warnings_once
from sim import main as sim_main

APP = '''
import numpy as np
from compiler.frontend.halide import Func, Input, Pipeline, Var
from compiler.ir import u16

SIZES = {"width": 10, "height": 6}


def build(width=10, height=6):
    x, y = Var("x"), Var("y")
    inp = Input("input", u16, (width, height))
    out = Func("output")
    src = inp
    if STREAM:
        src = Func("hw_input")
        src[x, y] = inp[x, y]
        src.stream_to_accelerator()
    out[x, y] = (src[x, y] + src[x + 1, y] + src[x, y + 1]) >> 2
    return Pipeline(out).lower("blur3", (width - 1, height - 1))


def make_inputs(seed=0, width=10, height=6):
    rng = np.random.default_rng(seed)
    return {"input": rng.integers(0, 256, (width, height)).astype(np.uint16)}
'''

MESSAGE = ("input input: read at 3 places by output without stream_to_accelerator(), so each "
           "read is its own IO stream; add hw_input[x, y] = input[x, y]; "
           "hw_input.stream_to_accelerator() and read hw_input instead")


def _app(stream: bool):
    """The ``build`` of :data:`APP` (compiled as the file ``blur3.py``)."""
    ns: dict = {}
    exec(compile(f"STREAM = {stream}\n" + APP, "blur3.py", "exec"), ns)
    return ns["build"]


def _halide_warnings(lower) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        lower()
    return [w for w in seen if issubclass(w.category, HalideWarning)]


def test_window_read_without_stream_warns_once_in_one_line():
    seen = _halide_warnings(_app(False))
    assert [str(w.message) for w in seen] == [MESSAGE]
    assert seen[0].filename == "blur3.py"            # attributed to the caller of lower()
    assert issubclass(HalideWarning, ProgramWarning)


def test_no_warning_with_stream_to_accelerator():
    """Negative control: the same window read through a streamed copy does not warn, and the
    lowered programs differ exactly by that copy."""
    assert _halide_warnings(_app(True)) == []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HalideWarning)
        ops = {s: [op.name for op in _app(s)().ops()] for s in (False, True)}
    assert ops == {False: ["output"], True: ["hw_input", "output"]}


def test_single_reads_do_not_warn_and_several_readers_are_named():
    x = Var("x")
    inp = Input("input", u16, (8,))
    f = Func("f")
    f[x] = inp[x] * 2                      # one read: one stream either way
    assert _halide_warnings(lambda: Pipeline(f).lower("p", (8,))) == []
    g, h = Func("g"), Func("h")
    g[x] = inp[x] + 1
    h[x] = g[x] + inp[x + 1]
    g.compute_root()
    seen = _halide_warnings(lambda: Pipeline(h).lower("p", (7,)))
    assert len(seen) == 1 and str(seen[0].message).startswith(
        "input input: read at 2 places by g, h without stream_to_accelerator()")


@pytest.mark.parametrize("stream", [False, True])
def test_ubc_prints_the_warning_once_on_stderr(stream, tmp_path, capsys):
    path = tmp_path / "blur3.py"
    path.write_text(f"STREAM = {stream}\n" + APP)
    assert main(["compile", str(path)]) == 0
    err = capsys.readouterr().err
    assert err == ("" if stream else f"ubc: warning: {MESSAGE}\n")


def test_make_sim_prints_the_warning_once(tmp_path, capsys):
    """``make sim`` is ``ubc sim``; ``python -m sim.main`` says ``sim: warning``."""
    path = tmp_path / "blur3.py"
    path.write_text("STREAM = False\n" + APP)
    assert main(["sim", str(path), "--level", "pub", "--no-rtl"]) == 0
    captured = capsys.readouterr()
    assert captured.err == f"ubc: warning: {MESSAGE}\n" and "blur3: PASS" in captured.out
    assert sim_main.main([str(path), "--level", "pub", "--no-rtl"]) == 0
    assert capsys.readouterr().err == f"sim: warning: {MESSAGE}\n"


def test_warnings_once_prints_each_program_warning_once():
    """The same message twice is one line, a second message another; a warning that is not a
    ProgramWarning goes to the usual handler (here pytest's)."""
    import contextlib
    import io
    err = io.StringIO()
    with pytest.warns(UserWarning, match="not ours"):
        with contextlib.redirect_stderr(err), warnings_once("ubc"):
            for text in ("first\nsecond line", "first\nsecond line", "other"):
                warnings.warn(text, HalideWarning)
            warnings.warn("not ours", UserWarning)
    assert err.getvalue() == "ubc: warning: first\nubc: warning: other\n"
