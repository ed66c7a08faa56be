"""Memory levels obeyed end to end (compiler/mapping/hierarchy.py, map_buffer.py): the
``store_in`` levels of a Halide-style program reach buffer mapping through the pipeline
driver, ``ubc map`` and ``make sim``; levels that cannot be honoured are one-line errors; an
output buffer read on the array (an accumulator) is mapped on chip and model-checked; the
schedule's live words and the mapping agree (``storage_mismatches``)."""
from pathlib import Path

import pytest

from compiler.frontend.halide import Func, Input, Pipeline, RDom, Var, cast
from compiler.ir import s16, u16
from compiler.ir.ubimpl import UBImpl
from compiler.mapping.common import MappingError
from compiler.mapping.hierarchy import storage_mismatches
from compiler.mapping.map_buffer import accumulates_on_chip, map_buffer
from compiler.mapping.pub_model import check_buffer
from compiler.pipeline import check_result, compile_app
from compiler.frontend.source import load_app
from ubgen.arch import load_arch

ARCH = "cgra_4x4"
ROOT = Path(__file__).resolve().parents[3]
# The convolutions here read their inputs and weights directly (the levels are the point, not
# the IO streams); the HalideWarning that gives is tested in
# tests/compiler/frontend/test_halide_warnings.py.
pytestmark = pytest.mark.filterwarnings("ignore::compiler.frontend.halide.HalideWarning")


def box(level: str | None = None):
    """examples/halide_box_blur.py at 12x8: hw_input (streamed) -> box = 3x3 sum (a consumed
    reduction, ``store_in("MEM")`` in the file) -> output = box >> 3; ``level`` replaces the
    box buffer's level."""
    program = load_app(str(ROOT / "examples" / "halide_box_blur.py"),
                       {"width": 12, "height": 8}).program
    program.buffers["box"].level = level
    return program


def conv_into_output(level: str | None = None):
    """conv[x, y, k] = 0; conv += w * in over a 3x3 window (unrolled) and 2 channels: the
    accumulator is the output buffer, read and written on the array."""
    x, y, k = Var("x"), Var("y"), Var("k")
    inp, wt = Input("input", s16), Input("weights", s16)
    r = RDom([(0, 3), (0, 3), (0, 2)], "r")
    conv = Func("conv")
    conv[x, y, k] = cast(s16, 0)
    conv[x, y, k] += wt[r.x, r.y, r.z, k] * inp[x + r.x, y + r.y, r.z]
    conv.update(0).unroll(r.x).unroll(r.y).reorder(x, y, r.z)
    if level:
        conv.store_in(level)
    return Pipeline(conv).lower("conv", (8, 4, 2))


def test_store_in_reaches_mapping_and_the_netlist():
    res = compile_app(box("MEM"), ARCH)
    assert res.impls["box"].level == "MEM" and res.impls["box"].mems == 1
    assert res.impls["hw_input"].level in ("MEM", "REG")     # the accelerator's copy
    assert check_result(res).ok
    # in registers the accumulator's zeros are written next to its first update
    # (compiler.schedule.init_place), so the registers hold it
    reg = compile_app(box("REG"), ARCH)
    assert reg.impls["box"].level == "REG" and reg.impls["box"].mems == 0
    assert reg.scheduled.optimized.info.get("init_placed") == ["box"]
    assert check_result(reg).ok
    # at width 64 the input's copy keeps two rows of 64 for the window: registers cannot
    prog = load_app(str(ROOT / "examples" / "halide_box_blur.py"),
                    {"width": 64, "height": 8}).program
    prog.buffers["hw_input"].level = "REG"
    with pytest.raises(MappingError, match="buffer hw_input: stored in registers but 1 memory"):
        compile_app(prog, ARCH)


def test_glb_level_is_obeyed_or_refused_in_one_line():
    res = compile_app(box("GLB"), ARCH, until="map")
    assert res.impls["box"].level == "GLB" and res.impls["box"].mems == 0
    with pytest.raises(ValueError, match="buffer box: a temporary buffer kept in the global"):
        compile_app(box("GLB"), ARCH)


def test_mem_level_without_anything_to_store_is_refused():
    x, y = Var("x"), Var("y")
    inp = Input("input", u16, (8, 4))
    f, g = Func("f"), Func("g")
    f[x, y] = inp[x, y] + 1
    g[x, y] = f[x, y] + f[x + 1, y]
    f.compute_root().store_in("MEM")
    with pytest.raises(MappingError, match="buffer f: store_in MEM cannot be honoured: every "
                                           "read is served by wires and shift registers"):
        compile_app(Pipeline(g).lower("small", (7, 4)), ARCH)
    f.store_in("REG")
    assert compile_app(Pipeline(g).lower("small", (7, 4)), ARCH).impls["f"].level == "REG"


def test_accumulator_in_the_output_is_mapped_and_model_checked():
    res = compile_app(conv_into_output(), ARCH)
    ub, impl = res.buffers["conv"], res.impls["conv"]
    assert accumulates_on_chip(ub) and impl.level == "MEM" and impl.mems == 1
    live = {b.name: b.live_words for b in res.scheduled.live_optimized}
    assert 0 < live["conv"] <= sum(p.sram_words for p in impl.pubs)
    arch = load_arch(ARCH)
    rep = check_buffer(ub, impl, arch.pub, 0, arch.mem)
    assert rep.ok and rep.checked > 0
    assert check_result(res).ok                       # the netlist model, against the golden
    with pytest.raises(MappingError, match="buffer conv: store_in GLB cannot be honoured"):
        map_buffer(ub, ARCH, level="GLB")


def test_storage_mismatches_and_negative_controls():
    res = compile_app(conv_into_output(), ARCH, until="map")
    live = {b.name: b.live_words for b in res.scheduled.live_optimized}
    kinds = {b.name: b.kind for b in res.program.buffers.values()}
    assert storage_mismatches(live, res.impls, kinds) == []
    # the old mapping of an accumulator in the output: served by the GLB, nothing on chip
    mem = res.impls["conv"]
    glb = dict(res.impls, conv=UBImpl("conv", "GLB", mem.inputs, mem.outputs))
    assert storage_mismatches(live, glb, kinds) == [
        f"buffer conv: holds {live['conv']} live words on the array but is mapped to the "
        f"global buffer"]
    assert storage_mismatches(live, glb, kinds, {"conv": "GLB"}) == []   # the user's choice
    mem_without_tiles = UBImpl("conv", "MEM", mem.inputs, mem.outputs)
    assert storage_mismatches({}, {"conv": mem_without_tiles}, kinds) == [
        "buffer conv: mapped to MEM but has no memory tile"]
    assert storage_mismatches({}, {"conv": UBImpl("conv", "REG", mem.inputs, mem.outputs,
                                                  pubs=mem.pubs)}, kinds) == [
        "buffer conv: mapped to registers but has 1 memory tiles"]


def test_conv_relu_conv_through_the_whole_compiler():
    """Two DNN layers, each an accumulator (the second one the output), windows and channels
    unrolled, the ReLU computed at the root: mapped, model-checked and bit- and cycle-exact in
    the netlist model against the golden."""
    from ..frontend.test_halide_dsl import conv_relu_conv
    conv1, relu, conv2, r1, r2 = conv_relu_conv(channels=2, stream=True)
    relu.compute_root()
    for f, r in ((conv1, r1), (conv2, r2)):
        f.update(0).unroll(r.x).unroll(r.y).unroll(r.z)
    res = compile_app(Pipeline(conv2).lower("dnn2", (8, 6, 2)), "cgra_16x32")
    assert {res.impls[b].level for b in ("conv1", "conv2")} <= {"MEM", "REG"}
    assert accumulates_on_chip(res.buffers["conv2"])
    check = check_result(res)
    assert check.ok, check.summary()
