"""Property test of the Halide-style DSL (compiler/frontend/halide.py) against REAL Halide
(PyPI ``halide``): every random pipeline of tests/compiler/frontend/halide_random.py (chains and
diamonds, pure and update definitions, windows, strides, schedules) either lowers to a Program
whose interpreted output equals Halide's bit for bit, or is refused with a one-line
``HalideError``. Any other exception fails. 50 pipelines per run; 1000 under ``make regress``.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings

from compiler.frontend.halide import HalideError, Pipeline
from compiler.frontend.halide.check import realize_halide
from compiler.interp import numpy_dtype, run

from .halide_random import Spec, build, pipelines

# These pipelines read their inputs directly on purpose (they test lowering, not the streams
# the hardware has); the HalideWarning this gives is tested in test_halide_warnings.py.
pytestmark = pytest.mark.filterwarnings("ignore::compiler.frontend.halide.HalideWarning")

pytest.importorskip("halide")


def check_pipeline(spec: Spec, seed: int = 0) -> str:
    """Lower ``spec`` and compare with Halide; returns "lowered" or "refused"."""
    out, sizes = build(spec)
    try:
        prog = Pipeline(out).lower("random", sizes)
    except HalideError as e:
        assert "\n" not in str(e) and str(e)
        return "refused"
    inp = prog.buffers["input"]
    rng = np.random.default_rng(seed)
    lo, hi = (-(1 << 15), 1 << 15) if inp.type.signed else (0, 1 << 16)
    inputs = {"input": rng.integers(lo, hi, inp.shape).astype(numpy_dtype(inp.type))}
    ours = run(prog, inputs)[out.name]
    theirs = realize_halide(out, inputs, sizes)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    assert np.array_equal(ours, theirs), f"{int((ours != theirs).sum())} mismatches"
    consumed = [fs for fs in spec.funcs[:-1] if fs.updates or fs.init is not None]
    return "lowered" + (", a reduction read by another function" if consumed else "")


SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                      HealthCheck.data_too_large])


@settings(max_examples=50, **SETTINGS)
@given(pipelines())
def test_random_pipelines_match_halide_or_refuse(spec):
    event(check_pipeline(spec))


@pytest.mark.regress
@settings(max_examples=1000, **SETTINGS)
@given(pipelines(max_funcs=5))
def test_random_pipelines_match_halide_or_refuse_1000(spec):
    event(check_pipeline(spec))
