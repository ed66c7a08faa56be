"""The application set (apps/, thesis Table 7.1): every app builds a valid Program, its numpy
``reference()`` agrees with the reference interpreter (compiler.interp) bit-exactly, and for the
stencil apps with an independent Halide pipeline (tests/apps/halide_pipelines.py)."""
from __future__ import annotations

import numpy as np
import pytest

import apps
from apps import APPS, get_app
from apps._common import test_image as natural_image
from compiler.interp import run
from compiler.ir import Program, ProgramError
from compiler.ir.program import kernel_to_dict

from . import halide_pipelines as H

STENCIL = ("gaussian", "harris", "upsample", "unsharp", "camera", "gpyr", "laplacian",
           "brighten_blur", "cascade")
# Apps whose schedule keeps a reduction loop (an op reads the element it writes): DNN policy.
ACCUMULATING = ("resnet", "gemm", "srcnn")

# Sizes small enough for the interpreter tests to stay fast but large enough to keep every
# structural feature of the default (halo, several unroll blocks, several pyramid levels).
SMALL = {
    "gaussian": dict(width=16, height=12),
    "harris": dict(width=40, height=32),
    "upsample": dict(width=8, height=6),
    "unsharp": dict(width=14, height=12),
    "camera": dict(width=20, height=16),
    "gpyr": dict(width=32, height=16),
    "laplacian": dict(width=16, height=12),
    "resnet": dict(width=6, height=5, in_channels=4, out_channels=4, ic_unroll=2, oc_unroll=2),
    "mobilenet": dict(width=6, height=5),
    "gemm": dict(m=6, n=8, k=8, k_unroll=4, n_unroll=4),
    "srcnn": dict(width=7, height=6, c_in=8, c_mid=4, c_out=8, unroll=4),
    "brighten_blur": dict(width=8, height=7, tiles=3),
    "cascade": dict(width=12, height=10),
}


def test_registry_lists_every_app_of_table_7_1():
    assert set(APPS) == set(SMALL) and set(STENCIL) | {"resnet", "mobilenet", "gemm",
                                                         "srcnn"} == set(APPS)
    assert get_app("gaussian") is apps.gaussian


def test_unknown_app_is_a_one_line_key_error_listing_the_apps():
    with pytest.raises(KeyError) as exc:
        get_app("gausian")
    msg = str(exc.value)
    assert "\n" not in msg and "gausian" in msg and "gaussian" in msg and "srcnn" in msg


@pytest.mark.parametrize("name", sorted(APPS))
def test_module_contract(name):
    mod = get_app(name)
    assert mod.__doc__ and ("Table 7.1" in mod.__doc__ or "Fig. 4.1" in mod.__doc__)
    prog = mod.build()
    assert isinstance(prog, Program) and prog.ops()
    prog.validate()
    # the default build is the SIZES build, and the Program survives a JSON round trip
    assert str(mod.build(**mod.SIZES)) == str(prog)
    assert str(Program.from_dict(prog.to_dict())) == str(prog)
    inputs = mod.make_inputs()
    for buf in prog.buffers.values():
        if buf.kind == "input":
            assert inputs[buf.name].shape == buf.shape, buf.name
    ref = mod.reference(inputs)
    assert set(ref) == {b.name for b in prog.buffers.values() if b.kind == "output"}
    for out, arr in ref.items():
        assert arr.shape == prog.buffers[out].shape, out


@pytest.mark.parametrize("name", sorted(APPS))
def test_make_inputs_is_deterministic_and_in_range(name):
    mod = get_app(name)
    a, b, c = mod.make_inputs(0), mod.make_inputs(0), mod.make_inputs(1)
    for key in a:
        assert np.array_equal(a[key], b[key])
    assert any(not np.array_equal(a[k], c[k]) for k in a)
    for key, arr in a.items():
        assert arr.dtype in (np.uint16, np.int16)
        if name in STENCIL:
            assert 0 <= arr.min() and arr.max() <= 255          # 8-bit pixels
        else:
            assert np.abs(arr.astype(np.int64)).max() <= 64     # small DNN values


@pytest.mark.parametrize("name", sorted(APPS))
def test_reduction_structure(name):
    """Stencil apps have every reduction fully unrolled into one op (no op reads the element it
    writes: the stencil policy of paper Fig. 7); resnet/gemm/srcnn keep reduction loops."""
    prog = get_app(name).build(**SMALL[name])
    accumulates = any(str(ld) == str(op.store) for op in prog.ops() for ld in op.loads)
    assert accumulates == (name in ACCUMULATING)


@pytest.mark.parametrize("name", sorted(APPS))
def test_interpreter_matches_reference(name):
    mod = get_app(name)
    sizes = SMALL[name]
    prog = mod.build(**sizes)
    for seed in (0, 7):
        inputs = mod.make_inputs(seed, **sizes)
        got = run(prog, inputs)
        want = mod.reference(inputs, **sizes)
        assert set(got) == set(want)
        for out in want:
            assert got[out].dtype == want[out].dtype, out
            assert np.array_equal(got[out], want[out]), f"{name}.{out} seed {seed}"


@pytest.mark.parametrize("name", sorted(APPS))
def test_interpreter_matches_reference_full_size(name):
    """The Table 7.1 sizes (a few seconds in all with the vectorized interpreter)."""
    mod = get_app(name)
    inputs = mod.make_inputs(3)
    got, want = run(mod.build(), inputs), mod.reference(inputs)
    for out in want:
        assert np.array_equal(got[out], want[out]), out


def _random_image(seed, shape):
    return np.random.default_rng(seed).integers(0, 256, size=shape).astype(np.uint16)


@pytest.mark.parametrize("name", STENCIL)
def test_reference_matches_halide(name):
    """For camera and unsharp the Halide pipeline is the reference generator as written
    (Halide-to-Hardware, docs/apps.md): the app equals the reference flow's algorithm."""
    mod = get_app(name)
    shape = {"brighten_blur": (64, 64, 16), "unsharp": (64, 64, 3)}.get(name, (64, 64))
    extremes = [np.full(shape, v, dtype=np.uint16) for v in (0, 200, 255)]
    host = getattr(mod, "host_input", None)          # the host's part of the generator
    natural = natural_image(5, *shape) if host else mod.make_inputs(5)["input"]
    for img in [_random_image(11, shape), natural] + extremes:
        want = getattr(H, name)(img)
        got = mod.reference({"input": host(img) if host else img})
        assert set(got) == set(want)
        for out in want:
            assert got[out].dtype == want[out].dtype, out
            assert np.array_equal(got[out], want[out]), f"{name}.{out}"


def test_outputs_are_not_trivial():
    """The default inputs exercise the interesting paths (corners found, hot pixels clamped,
    ReLUs both active and inactive), so the bit-exact comparisons above mean something."""
    corners = apps.harris.reference(apps.harris.make_inputs())["output"]
    assert 0 < np.count_nonzero(corners) < corners.size // 20
    cam = apps.camera.reference(apps.camera.make_inputs())["output"]
    assert len(np.unique(cam)) > 30
    for name in ("resnet", "mobilenet", "srcnn"):
        out = get_app(name).reference(get_app(name).make_inputs())["output"]
        assert 0.1 < np.mean(out > 0) < 0.9, name


def test_camera_and_unsharp_keep_the_reference_wraparound():
    """The reference computes camera's demosaic in uint8 and unsharp's blur in uint16, both
    with wrap-around (docs/apps.md); the apps keep it. On a flat raw image of 200 the means of
    two neighbours wrap ((200 + 200 + 1) mod 256 >> 1 = 72), which a 16-bit mean (200) would
    not; the Halide transcription of the generators agrees (test_reference_matches_halide)."""
    flat = np.full((20, 16), 200, dtype=np.uint16)
    den = apps.camera._denoise(flat.astype(np.int64), 16, 12)
    rgb = apps.camera._demosaic(den, 14, 10)
    assert set(np.unique(rgb)) == {72, 200}
    assert np.array_equal(np.unique(H.camera(flat)["output"]),
                          np.unique(apps.camera.reference({"input": flat}, 20, 16)["output"]))
    rgb = np.full((14, 12, 3), 255, dtype=np.uint16)     # blur sum 875 * 255 wraps in 16 bits
    assert np.array_equal(apps.unsharp.reference({"input": rgb}, 14, 12)["output"],
                          H.unsharp(rgb)["output"])


def test_laplacian_input_is_the_edge_repeated_region_the_reference_reads():
    """The app's input is the generator's ``hw_input`` over Halide's inferred region, its edges
    repeated by the host (``host_input``); test_reference_matches_halide checks the values. As a
    negative control, zero padding in place of repeat_edge differs from the generator."""
    mod = apps.laplacian
    img = _random_image(4, (16, 12))
    padded = mod.host_input(img)
    assert padded.shape == (27, 23) == mod.build(16, 12).buffers["input"].shape
    assert padded[0, 0] == img[0, 0] and padded[-1, 5] == img[-1, 0]
    want = H.laplacian(img)["output"]
    assert np.array_equal(mod.reference({"input": padded}, 16, 12)["output"], want)
    zeros = np.pad(img, ((7, 4), (7, 4)))
    assert not np.array_equal(mod.reference({"input": zeros}, 16, 12)["output"], want)


def test_cascade_keeps_the_generators_unnormalised_sums_and_uint8_cast():
    """cascade_generator.cpp feeds the first convolution's sums to the second unscaled and keeps
    the low 8 bits of the second's (docs/apps.md). On a flat image of v every output is
    (256 v) mod 256 = 0, so the flat images of test_reference_matches_halide check only that;
    a random image checks the values. As a negative control, the normalised blurs ``>> 4`` this
    app used to compute differ from the generator."""
    img = _random_image(6, (12, 10))
    want = H.cascade(img)["output"]
    assert want.shape == (8, 6) and len(np.unique(want)) > 20
    assert np.array_equal(apps.cascade.reference({"input": img}, 12, 10)["output"], want)
    k = apps.cascade.KERNEL
    blur1 = apps._common.weighted_window(img, k, 10, 8) >> 4
    normalised = apps._common.weighted_window(blur1, k, 8, 6) >> 4
    assert not np.array_equal(normalised, want)


@pytest.mark.parametrize("name, sizes, units", [
    ("gpyr", dict(share=True), 1),
    ("srcnn", dict(SMALL["srcnn"], share=True), 4),
])
def test_compute_sharing_variant(name, sizes, units):
    """``share=True`` (thesis §4.3.3, Table 7.6): the shared ops name common units whose ops all
    carry the same kernel; the computed outputs do not change."""
    mod = get_app(name)
    shared, plain = mod.build(**sizes), mod.build(**dict(sizes, share=False))
    groups: dict[str, list] = {}
    for op in shared.ops():
        if op.unit is not None:
            groups.setdefault(op.unit, []).append(op)
    assert len(groups) == units and all(len(g) >= 3 for g in groups.values())
    for ops in groups.values():
        assert len({str(kernel_to_dict(op.kernel)) for op in ops}) == 1
    assert all(op.unit is None for op in plain.ops())
    inputs = mod.make_inputs(**sizes)
    a, b = run(shared, inputs), run(plain, inputs)
    assert all(np.array_equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("name", ["resnet", "srcnn"])
def test_io_lanes_variant(name):
    """``io_lanes`` (the reference flow's parallel channel streams, apps/resnet.py): one op per
    channel lane for the input stream, the inits, activations and the drain; ``io_lanes=0``
    keeps one channel-innermost op each. Same outputs either way."""
    mod = get_app(name)
    sizes = SMALL[name]
    lanes, single = mod.build(**sizes), mod.build(**dict(sizes, io_lanes=0))
    assert mod.SIZES["io_lanes"] == 1
    assert len(lanes.ops()) > len(single.ops())
    assert any(op.name == "load_input_0" for op in lanes.ops())
    assert any(op.name == "load_input" for op in single.ops())
    inputs = mod.make_inputs(**sizes)
    a, b = run(lanes, inputs), run(single, inputs)
    assert set(a) == set(b) and all(np.array_equal(a[k], b[k]) for k in a)
    want = mod.reference(inputs, **sizes)
    assert all(np.array_equal(a[k], want[k]) for k in want)


UNROLLED = ("gaussian", "harris", "unsharp")


@pytest.mark.parametrize("name", UNROLLED)
@pytest.mark.parametrize("unroll", [1, 2, 3, 4])
def test_unrolled_stencil(name, unroll):
    """``unroll=U`` (thesis §7.3.1, Fig. 7.5): every stage's ``x`` loop unrolled by ``U`` into
    ``U`` parallel ops (``<stage>_<u>``, pixel ``U*xo + u``), the copy stage included, widths
    rounded up to a multiple of ``U`` (Halide's RoundUp); the interpreter matches the numpy
    golden at the rounded sizes. ``unroll=1`` is exactly the default program."""
    mod = get_app(name)
    sizes = dict(SMALL[name], unroll=unroll)
    prog = mod.build(**sizes)
    plain = mod.build(**SMALL[name])
    assert mod.SIZES["unroll"] == 1
    stages = {op.name for op in plain.ops()}
    if unroll == 1:
        assert str(prog) == str(plain)
    else:
        assert len(prog.ops()) == unroll * len(plain.ops())
        for op in prog.ops():
            stage, lane = op.name.rsplit("_", 1)
            assert int(lane) < unroll and op.loops[-1].name.startswith("xo_")
        assert {op.name.rsplit("_", 1)[0] for op in prog.ops()} == stages
    for buf in prog.buffers.values():
        if buf.kind != "output" and buf.name != "input":
            assert buf.shape[0] % unroll == 0, buf.name
    for seed in (0, 7):
        inputs = mod.make_inputs(seed, **sizes)
        want = mod.reference(inputs, **sizes)
        got = run(prog, inputs)
        for out in want:
            assert got[out].shape == prog.buffers[out].shape
            assert np.array_equal(got[out], want[out]), f"{name} unroll {unroll} seed {seed}"
    # RoundUp only adds columns: the pixels of the plain program are unchanged
    inputs = mod.make_inputs(0, **SMALL[name])
    base = mod.reference(inputs, **SMALL[name])["output"]
    extra = prog.buffers["input"].shape[0] - inputs["input"].shape[0]
    pad = ((0, extra),) + ((0, 0),) * (inputs["input"].ndim - 1)
    wide = run(prog, {"input": np.pad(inputs["input"], pad)})
    assert np.array_equal(wide["output"][:base.shape[0]], base)


@pytest.mark.parametrize("name, sizes, needle", [
    ("gaussian", dict(unroll=0), "unroll=0"),
    ("harris", dict(unroll=-2), "unroll=-2"),
    ("gaussian", dict(width=2), "width=0"),
    ("gpyr", dict(width=40), "multiples of 2**levels"),
    ("resnet", dict(ic_unroll=3), "multiples of the unroll"),
    ("gemm", dict(k_unroll=5), "multiples"),
    ("camera", dict(width=63, height=63), "even"),
    ("laplacian", dict(width=30), "multiples of 4"),
    ("srcnn", dict(c_mid=4), "must equal unroll"),
])
def test_bad_sizes_are_one_line_errors(name, sizes, needle):
    with pytest.raises((ValueError, ProgramError)) as exc:
        get_app(name).build(**sizes)
    msg = str(exc.value)
    assert needle in msg and "\n" not in msg and msg.startswith(name)


def test_docs_work_count_table_is_current():
    from pathlib import Path

    from apps._stats import program_stats
    text = (Path(__file__).resolve().parents[2] / "docs" / "apps.md").read_text()
    for name, mod in APPS.items():
        s = program_stats(mod.build())
        row = (f"| {name} | {s.ops} | {s.pe_ops_per_output:.1f} | {s.loads_per_output:.1f} | "
               f"{s.buffer_words} |")
        assert row in text, row
