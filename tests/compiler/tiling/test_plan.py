"""Tiling (compiler.tiling): random image sizes and tile shapes, the tiles run one by one on the
golden interpreter and stitched, equal the whole program's output bit-exactly; a shape the
program's indices cannot tile is refused in one line (the negative controls)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler.frontend.source import app_inputs, load_app
from compiler.interp import run as interp
from compiler.tiling.plan import plan_tiles, run_tiles, stitch, tile_inputs
from compiler.tiling.region import TilingError

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)


def _check(app: str, sizes: dict, shape: tuple[int, ...], seed: int = 0):
    source = load_app(app, sizes)
    inputs = app_inputs(source, seed)
    whole = interp(source.program, inputs)
    plan = plan_tiles(source.program, shape)
    got = run_tiles(plan, inputs)
    assert set(got) == set(whole)
    for b in whole:
        assert got[b].shape == whole[b].shape
        assert np.array_equal(got[b], whole[b]), f"{app} {sizes} tile {shape}: {b} differs"
    return plan


@settings(max_examples=8, **SETTINGS)
@given(w=st.integers(8, 30), h=st.integers(8, 30), tw=st.integers(3, 30),
       th=st.integers(3, 30), seed=st.integers(0, 3))
def test_gaussian_tiles_stitch_to_the_golden(w, h, tw, th, seed):
    # the output is the input less the 3x3 window's border
    plan = _check("gaussian", {"width": w, "height": h}, (min(tw, w - 2), min(th, h - 2)), seed)
    # every output element is some tile's responsibility, and every tile has the same shape
    covered = np.zeros(plan.shapes[plan.outputs[0]], dtype=bool)
    for t in plan.tiles:
        (x0, x1), (y0, y1) = t.box
        assert (x1 - x0 + 1, y1 - y0 + 1) == plan.shape
        covered[x0:x1 + 1, y0:y1 + 1] = True
    assert covered.all()


@settings(max_examples=4, **SETTINGS)
@given(w=st.integers(10, 24), h=st.integers(10, 24), tw=st.integers(4, 24),
       th=st.integers(4, 24))
def test_cascade_tiles_stitch_to_the_golden(w, h, tw, th):
    """Two chained stencils: the tile's halo is the sum of both."""
    _check("cascade", {"width": w, "height": h}, (min(tw, w), min(th, h)))


def test_a_stitch_that_misplaces_one_tile_differs_from_the_golden():
    """Negative control of the comparison: the tiles computed right but one stitched at the
    wrong tile's box must not equal the whole output."""
    source = load_app("gaussian", {"width": 20, "height": 16})
    inputs = app_inputs(source, 0)
    whole = interp(source.program, inputs)
    plan = plan_tiles(source.program, (8, 8))
    assert plan.runs > 2
    out = {b: np.zeros_like(a) for b, a in whole.items()}
    for k, tile in enumerate(plan.tiles):
        wrong = plan.tiles[(k + 1) % plan.runs] if k == 0 else tile
        stitch(plan, tile, interp(plan.program, tile_inputs(plan, wrong, inputs)), out)
    assert any(not np.array_equal(out[b], whole[b]) for b in whole)


def test_a_shape_of_the_wrong_rank_is_refused_in_one_line():
    program = load_app("gaussian", {"width": 20, "height": 16}).program
    with pytest.raises(TilingError) as e:
        plan_tiles(program, (8,))
    assert "tile shape [8]" in str(e.value) and "\n" not in str(e.value)


def test_tile_program_is_smaller_than_the_whole():
    program = load_app("gaussian", {"width": 40, "height": 30}).program
    plan = plan_tiles(program, (16, 10))
    whole_in = next(b for b in program.buffers.values() if b.kind == "input")
    tile_in = next(b for b in plan.program.buffers.values() if b.kind == "input")
    assert all(t < w for t, w in zip(tile_in.shape, whole_in.shape))
    assert plan.runs == 3 * 3


@pytest.mark.regress
def test_gaussian_640x480_tiled_on_the_netlist_model():
    """The whole-image case of ``make sim APP=gaussian SIZE="width=640 height=480"`` at the
    netlist level: 80 runs of a 64 x 60 output tile (the tiler's choice without overlap) on
    cgra_8x8, the smallest shipped array ``make sim`` finds the tile on, each tile's inputs
    gathered from the whole image and run by the netlist model, the stitched output equal to
    the whole golden, every run in the predicted cycles (``make regress``; about 100 s).
    (cgra_4x4 held the tile while gaussian's weights were binomial; the reference generator's
    sigma = 1.5 weights need nine multiplies, 13 PE tiles against cgra_4x4's 12.)"""
    from compiler.backend.netlist_model import simulate_netlist
    from compiler.pipeline import compile_tiled
    source = load_app("gaussian", {"width": 640, "height": 480})
    inputs = app_inputs(source, 0)
    golden = interp(source.program, inputs)
    result = compile_tiled(source, "cgra_8x8", "netlist", shape=(64, 60))
    plan = result.tiling
    assert plan.runs == 80
    whole = {b: np.zeros(plan.shapes[b], dtype=np.int64) for b in plan.outputs}
    for tile in plan.tiles:
        run = simulate_netlist(result.netlist, result.arch, result.scheduled.program,
                               tile_inputs(plan, tile, inputs))
        assert not run.conflicts and not run.missing
        assert run.cycles == result.netlist.cycles_predicted
        stitch(plan, tile, run.outputs, whole)
    for b in plan.outputs:
        assert np.array_equal(whole[b], golden[b].astype(np.int64))
