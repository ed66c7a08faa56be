"""Every application is scheduled with the selected policy and both schedules pass the
verifier (``schedule_program`` verifies); the optimized one must beat the baseline, and the
interpreter run in schedule order must match the sequential run. Heavy apps run at reduced
sizes here and at full size under ``make regress``."""
import numpy as np
import pytest

from apps import NAMES, get_app
from compiler import interp
from compiler.schedule.dnn import pipeline_loops
from compiler.schedule.report import schedule_program
from compiler.schedule.storage import expand_storage

SMALL = {"resnet": dict(width=8, height=8, in_channels=8, out_channels=8, ic_unroll=4,
                        oc_unroll=4),
         "srcnn": dict(width=10, height=10, c_in=8, c_mid=4, c_out=8, unroll=4),
         "gemm": dict(m=16, n=16, k=16, k_unroll=4, n_unroll=4)}
HEAVY = {"resnet", "srcnn", "gemm"}


def _check(name, sizes):
    res = schedule_program(get_app(name).build(**sizes))
    s = res.summary(name)
    assert s["cycles_optimized"] < s["cycles_sequential"]
    assert s["sram_words_optimized"] > 0
    assert res.verified.dependences > 0
    return res


@pytest.mark.parametrize("name", [n for n in NAMES if n not in HEAVY])
def test_app_schedules_verify(name):
    _check(name, {})


@pytest.mark.parametrize("name", sorted(HEAVY))
def test_heavy_app_schedules_verify_small(name):
    _check(name, SMALL[name])


@pytest.mark.regress
@pytest.mark.parametrize("name", sorted(HEAVY))
def test_heavy_app_schedules_verify_full(name):
    _check(name, {})


@pytest.mark.parametrize("name", NAMES)
def test_app_runs_in_schedule_order(name):
    """The interpreter executing every op instance of the scheduled (tree-height reduced)
    program at its scheduled cycle (with the storage copies the schedule needs) computes the
    same outputs as the sequential program as written."""
    sizes = SMALL.get(name, {} if name == "mobilenet" else dict(width=32, height=32))
    module = get_app(name)
    prog = module.build(**sizes)
    res = schedule_program(prog)
    inputs = module.make_inputs(0, **sizes)
    want = interp.run(prog, inputs)
    tiles = [lp.name for lp in pipeline_loops(prog)[0]]
    run = expand_storage(res.program, res.optimized.info["storage_copies"], tiles)
    got = interp.run(run, inputs, order=res.optimized.time_fn())
    assert set(got) == set(want)
    for k in want:
        np.testing.assert_array_equal(got[k], want[k])
