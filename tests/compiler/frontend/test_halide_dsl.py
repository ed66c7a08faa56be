"""The Halide-style DSL (compiler/frontend/halide.py): lowering structure (thesis Fig. 4.1),
and the interpreter on the lowered Program against REAL Halide on random inputs."""
import numpy as np
import pytest

from compiler.frontend.halide import (Func, HalideError, Input, Pipeline, RDom, Var, absd,
                                      cast, lookup, max_, min_, select)
from compiler.frontend.halide.check import (crosscheck, from_hl_buffer, realize_halide,
                                            to_hl_buffer)
from compiler.interp import run
from compiler.ir import Loop, s16, u16

# These pipelines read their inputs directly on purpose (they test lowering, not the streams
# the hardware has); the HalideWarning this gives is tested in test_halide_warnings.py.
pytestmark = pytest.mark.filterwarnings("ignore::compiler.frontend.halide.HalideWarning")

hl = pytest.importorskip("halide")
RNG = np.random.default_rng(7)


def rand(shape, t=u16):
    if t.signed:
        return RNG.integers(-2 ** 15, 2 ** 15, shape).astype(np.int16)
    return RNG.integers(0, 2 ** 16, shape).astype(np.uint16)


def brighten_blur(size=64, channels=16):
    x, y, c = Var("x"), Var("y"), Var("c")
    inp = Input("input", u16, (size, size, channels))
    brighten, blur = Func("brighten"), Func("blur")
    brighten[x, y, c] = inp[x, y, c] * 2
    blur[x, y, c] = (brighten[x, y, c] + brighten[x + 1, y, c]
                     + brighten[x, y + 1, c] + brighten[x + 1, y + 1, c]) / 4
    brighten.compute_at(blur, c)
    return blur


def _tree(node):
    """(loop name, start, extent, children) / op name, for structural comparison."""
    return [(c.name, c.start, c.extent, _tree(c)) if isinstance(c, Loop) else c.name
            for c in node.children]


def test_brighten_blur_lowers_to_thesis_loop_nest():
    prog = Pipeline(brighten_blur()).lower("brighten_blur", (63, 63, 16))
    # thesis Fig. 4.1: t{ y_br{ x_br{Brighten} }, y_bl{ x_bl{Blur} } }
    assert _tree(prog) == [("blur_c", 0, 16, [
        ("brighten_y", 0, 64, [("brighten_x", 0, 64, ["brighten"])]),
        ("blur_y", 0, 63, [("blur_x", 0, 63, ["blur"])])])]
    br, bl = prog.op("brighten"), prog.op("blur")
    assert [str(a) for a in br.loads] == ["input[brighten_x, brighten_y, blur_c]"]
    assert str(br.store) == "brighten[brighten_x, brighten_y]"
    assert [str(a) for a in bl.loads] == [
        "brighten[blur_x, blur_y]", "brighten[blur_x + 1, blur_y]",
        "brighten[blur_x, blur_y + 1]", "brighten[blur_x + 1, blur_y + 1]"]
    assert str(bl.store) == "blur[blur_x, blur_y, blur_c]"
    assert prog.buffers["brighten"].shape == (64, 64)
    assert prog.buffers["input"].kind == "input" and prog.buffers["blur"].kind == "output"
    assert [n.op for n in bl.kernel.nodes() if hasattr(n, "op")] == ["add", "add", "add", "lshr"]


def test_brighten_blur_matches_handwritten_halide():
    inp = rand((10, 10, 3))
    blur = brighten_blur(10, 3)
    ours = run(Pipeline(blur).lower("bb", (9, 9, 3)), {"input": inp})["blur"]
    # the same algorithm written directly against halide, no translation involved
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    src = to_hl_buffer(inp)
    b, o = hl.Func("b"), hl.Func("o")
    b[x, y, c] = src[x, y, c] * hl.u16(2)
    o[x, y, c] = (b[x, y, c] + b[x + 1, y, c] + b[x, y + 1, c] + b[x + 1, y + 1, c]) / hl.u16(4)
    out = hl.Buffer(hl.UInt(16), [9, 9, 3])
    o.realize(out)
    theirs = from_hl_buffer(out)
    assert theirs[2, 5, 1] == out[2, 5, 1]            # index order: arr[x, y, c]
    ref = (inp.astype(np.int64) * 2) & 0xFFFF
    ref = ((ref[:-1, :-1] + ref[1:, :-1] + ref[:-1, 1:] + ref[1:, 1:]) & 0xFFFF) // 4
    assert np.array_equal(theirs, ref) and np.array_equal(ours, theirs)


def test_gaussian_3x3_inline_and_tiled():
    x, y = Var("x"), Var("y")
    xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")
    inp = Input("input", u16)
    w = [[1, 2, 1], [2, 4, 2], [1, 2, 1]]
    gauss = Func("gauss")
    acc = sum(inp[x + i, y + j] * w[j][i] for i in range(3) for j in range(3))
    gauss[x, y] = acc >> 4
    gauss.tile(x, y, xo, yo, xi, yi, 4, 4)
    prog = Pipeline(gauss).lower("gauss", (8, 8))
    assert [lp.name for lp in prog.loops()] == ["gauss_yo", "gauss_xo", "gauss_yi", "gauss_xi"]
    assert len(prog.op("gauss").loads) == 9 and prog.buffers["input"].shape == (10, 10)
    crosscheck(gauss, {"input": rand((10, 10))}, (8, 8))


def test_unsharp_two_stage_compute_at_with_halo():
    x, y = Var("x"), Var("y")
    inp = Input("input", s16)
    blur_x, blur_y, sharp = Func("blur_x"), Func("blur_y"), Func("sharp")
    blur_x[x, y] = (inp[x, y] + inp[x + 1, y] * 2 + inp[x + 2, y]) >> 2
    blur_y[x, y] = (blur_x[x, y] + blur_x[x, y + 1] * 2 + blur_x[x, y + 2]) >> 2
    diff = inp[x + 1, y + 1] - blur_y[x, y]
    mask = select(abs(diff) > cast(u16, 8), cast(u16, diff), cast(u16, 0))
    gain = lookup([0, 1, 2, 3, 3, 2, 1, 0], mask & 7, s16)
    sharp[x, y] = max_(min_(inp[x + 1, y + 1] + diff * gain, 3000), -3000) \
        + cast(s16, absd(diff, 5) >> 3)
    blur_x.compute_at(sharp, y)       # 3 rows of blur_x per output row (the halo)
    blur_y.compute_at(sharp, y).store_in("MEM")
    prog = Pipeline(sharp).lower("unsharp", (12, 6))
    assert _tree(prog) == [("sharp_y", 0, 6, [
        ("blur_x_y", 0, 3, [("blur_x_x", 0, 12, ["blur_x"])]),
        ("blur_y_x", 0, 12, ["blur_y"]),
        ("sharp_x", 0, 12, ["sharp"])])]
    assert str(prog.op("blur_x").loads[0]) == "input[blur_x_x, blur_x_y + sharp_y]"
    assert [str(a) for a in prog.op("blur_y").loads] == [
        "blur_x[blur_y_x, 0]", "blur_x[blur_y_x, 1]", "blur_x[blur_y_x, 2]"]
    assert prog.buffers["blur_x"].shape == (12, 3) and prog.buffers["blur_y"].shape == (12,)
    assert prog.buffers["blur_y"].level == "MEM"
    crosscheck(sharp, {"input": rand((14, 8), s16)}, (12, 6))


def test_unsigned_division_is_the_pe_divider_and_matches_halide():
    """``/`` of unsigned values by a value or by a constant that is not a power of two is the
    PE's UDIV (``x / 0 = 0``, Halide's convention); powers of two stay shifts."""
    x, y = Var("x"), Var("y")
    num, den = Input("num", u16), Input("den", u16)
    q = Func("q")
    q[x, y] = num[x, y] / den[x, y] + num[x, y] / 7 + num[x, y] / 4
    prog = Pipeline(q).lower("div", (8, 4))
    calls = [n.op for n in prog.op("q").kernel.nodes() if hasattr(n, "op")]
    assert calls.count("udiv") == 2 and "lshr" in calls
    dens = rand((8, 4))
    dens[0, :] = 0
    dens[1, :] = 1
    crosscheck(q, {"num": rand((8, 4)), "den": dens}, (8, 4))


def test_downsample_and_upsample():
    x, y = Var("x"), Var("y")
    xo, xi = Var("xo"), Var("xi")
    inp = Input("input", u16)
    down, up = Func("down"), Func("up")
    down[x, y] = (inp[2 * x, 2 * y] + inp[2 * x + 1, 2 * y] + inp[2 * x, 2 * y + 1]
                  + inp[2 * x + 1, 2 * y + 1]) >> 2
    crosscheck(down, {"input": rand((16, 12))}, (8, 6))
    up[x, y] = down[x // 2, y // 2] + down[(x + 1) // 2, y // 2]
    up.split(x, xo, xi, 4)
    down.compute_at(up, xo)
    prog = Pipeline(up).lower("up", (16, 12))
    d = prog.op("down")
    assert [(lp.name, lp.extent) for lp in d.loops] == [
        ("up_y", 12), ("up_xo", 4), ("down_x", 3)]   # y//2 extent 1 -> loop dropped
    crosscheck(up, {"input": rand((18, 12))}, (16, 12))  # (x+1)//2 <= 8: halo


@pytest.mark.parametrize("unroll", [False, True])
def test_conv_reduction_with_rdom(unroll):
    x, y, k = Var("x"), Var("y"), Var("k")
    inp, wt = Input("input", s16), Input("weights", s16)
    r = RDom([(0, 3), (0, 3), (0, 2)], "r")
    conv = Func("conv")
    conv[x, y, k] = cast(s16, 0)
    conv[x, y, k] = conv[x, y, k] + wt[r.x, r.y, r.z, k] * inp[x + r.x, y + r.y, r.z]
    if unroll:
        conv.update(0).unroll(r.x).unroll(r.y)
    prog = Pipeline(conv).lower("conv", (6, 5, 3))
    ops = prog.ops()
    assert [op.name for op in ops] == ["conv", "conv_u0"]
    upd = ops[1]
    names = [lp.name for lp in upd.loops]
    if unroll:   # one op with the 9 taps folded in: 1 + 9 + 9 loads
        assert names == ["conv_u0_k", "conv_u0_y", "conv_u0_x", "conv_u0_r_z"]
        assert len(upd.loads) == 19
    else:
        assert names == ["conv_u0_k", "conv_u0_y", "conv_u0_x", "conv_u0_r_z",
                         "conv_u0_r_y", "conv_u0_r_x"]
        assert len(upd.loads) == 3
    crosscheck(conv, {"input": rand((8, 7, 2), s16), "weights": rand((3, 3, 2, 3), s16)},
               (6, 5, 3))


def test_unroll_pure_dimension_replicates_ops_and_hints():
    x, y, xo, xi = Var("x"), Var("y"), Var("xo"), Var("xi")
    inp = Input("input", u16, (8, 4))
    hw_in, f, g = Func("hw_input"), Func("f"), Func("g")
    hw_in[x, y] = inp[x, y]
    hw_in.stream_to_accelerator()
    f[x, y] = hw_in[x, y] + 1
    g[x, y] = f[x, y] * 3
    f.compute_at(g, xo).unit("alu0")
    g.split(x, xo, xi, 2).unroll(xi).share(f).hw_accelerate(xi, xo)
    prog = Pipeline(g).lower("unrolled", (8, 4))
    assert [op.name for op in prog.ops()] == ["hw_input", "f", "g_0", "g_1"]
    assert [str(a) for a in prog.op("g_1").loads] == ["f[1]"]
    assert {op.unit for op in prog.ops()[1:]} == {"alu0"}
    assert prog.buffers["hw_input"].level is None     # the accelerator's copy of the stream
    crosscheck(g, {"input": rand((8, 4))}, (8, 4))


def test_dsl_errors_are_one_line():
    x, y = Var("x"), Var("y")
    inp = Input("input", u16)
    cases = []
    f = Func("nonaffine")
    f[x, y] = inp[x * y, y]
    cases.append((f, (4, 4), "func nonaffine: non-affine index"))
    f = Func("datadep")
    f[x, y] = inp[inp[x, y], y]
    cases.append((f, (4, 4), "func datadep: non-affine index"))
    f = Func("div3")
    f[x, y] = Input("sin", s16)[x, y] / 3
    cases.append((f, (4, 4), "func div3: division of signed values"))
    f = Func("mod3")
    f[x, y] = inp[x, y] % 3
    cases.append((f, (4, 4), "func mod3: division by the constant 3"))
    f = Func("mixed")
    f[x, y] = inp[x, y] + Input("s", s16)[x, y]
    cases.append((f, (4, 4), "func mixed: operands of '\\+' have types u16 and s16"))
    f = Func("asval")
    f[x, y] = inp[x, y] + x
    cases.append((f, (4, 4), "func asval: uses loop variable x as a value"))
    g, h = Func("g"), Func("h")
    g[x, y] = inp[x, y]
    h[x, y] = g[x, y]
    h.split(x, Var("xo"), Var("xi"), 3)
    cases.append((h, (4, 4), "func h: split of x \\(extent 4\\) by 3"))
    small = Input("small", u16, (4, 4))
    f = Func("oob")
    f[x, y] = small[x + 1, y]
    cases.append((f, (4, 4), "input small: accesses need shape at least \\[5, 4\\]"))
    r = RDom([(0, 3)], "r")
    acc, user = Func("acc"), Func("user")
    acc[x, y] = inp[x, y]
    acc[r.x, y] = acc[r.x, y] + 1          # writes columns 0..2; the consumer needs 0..1
    user[x, y] = acc[x, y]
    cases.append((user, (2, 2), "func acc: acc_u0 writes dimension 0 outside the region"))
    g, h = Func("g"), Func("h")
    g[x, y] = inp[x, y]
    h[x, y] = g[x, y] + g[x + 1, y]
    g.compute_at(Func("nowhere"), x)
    cases.append((h, (4, 4), "func g: compute_at\\(nowhere, x\\): nowhere is not in the"))
    a, b, c = Func("a"), Func("b"), Func("c")
    a[x, y] = inp[x, y]
    b[x, y] = a[x, y] * 2                  # b is inlined into c
    c[x, y] = b[x, y] + 1
    a.compute_at(b, x)
    cases.append((c, (4, 4), "func a: compute_at\\(b, x\\): b is inlined"))
    for func, sizes, msg in cases:
        with pytest.raises(HalideError, match=msg) as e:
            Pipeline(func).lower("bad", sizes)
        assert "\n" not in str(e.value)


def test_update_pure_variable_keeps_its_position():
    x, y = Var("x"), Var("y")
    f = Func("f")
    f[x, y] = cast(u16, 0)
    with pytest.raises(HalideError, match="func f: update has pure variable y at position 0"):
        f[y, x] = f[y, x] + 1


def test_store_at_outside_compute_at():
    x, y = Var("x"), Var("y")
    inp = Input("input", u16)
    p, out = Func("p"), Func("out")
    p[x, y] = inp[x, y] * 3
    out[x, y] = p[x, y] + p[x + 1, y]
    p.compute_at(out, x).store_at(out, y)   # a line buffer per row, filled 2 pixels at a time
    prog = Pipeline(out).lower("store_at", (6, 4))
    assert _tree(prog) == [("out_y", 0, 4, [("out_x", 0, 6, [("p_x", 0, 2, ["p"]), "out"])])]
    assert prog.buffers["p"].shape == (7,)
    assert str(prog.op("p").store) == "p[out_x + p_x]"
    assert [str(a) for a in prog.op("out").loads] == ["p[out_x]", "p[out_x + 1]"]
    crosscheck(out, {"input": rand((7, 4))}, (6, 4))


def test_shared_subexpressions_become_one_dag_node():
    x = Var("x")
    inp = Input("input", s16)
    f = Func("f")
    d = inp[x] - inp[x + 1]
    f[x] = d * d + d
    prog = Pipeline(f).lower("dag", (4,))
    nodes = prog.op("f").kernel.nodes()
    assert [n.op for n in nodes if hasattr(n, "op")] == ["sub", "mul", "add"]
    crosscheck(f, {"input": rand((5,), s16)}, (4,))


def _reduction_then_shift(schedule: str, shift: int = 2):
    """The Halide-to-Hardware pattern: ``f = 0; f += in(window); out = f >> 2`` with the
    reduction consumed by another function, under ``schedule``."""
    x, y, xo, xi = Var("x"), Var("y"), Var("xo"), Var("xi")
    inp = Input("input", u16)
    r = RDom([(0, 3), (0, 3)], "r")
    f, out = Func("f"), Func("out")
    f[x, y] = cast(u16, 0)
    f[x, y] += inp[x + r.x, y + r.y]
    out[x, y] = f[x, y] >> shift
    if schedule == "root":
        f.compute_root()
    elif schedule == "compute_at":
        out.split(x, xo, xi, 4)
        f.compute_at(out, xo)
    elif schedule == "store_at":
        f.compute_at(out, x).store_at(out, y)
    elif schedule == "unrolled":
        f.compute_at(out, y)
        f.update(0).unroll(r.x).unroll(r.y)
    return out


@pytest.mark.parametrize("schedule", ["default", "root", "compute_at", "store_at", "unrolled"])
def test_reduction_consumed_by_another_function(schedule):
    out = _reduction_then_shift(schedule)
    prog = Pipeline(out).lower("red", (8, 6))
    names = [op.name for op in prog.ops()]
    assert names == ["f", "f_u0", "out"]
    upd = prog.op("f_u0")
    assert [str(a) for a in upd.loads][0] == str(upd.store)      # read-modify-write
    if schedule in ("default", "root"):
        assert prog.buffers["f"].shape == (8, 6)
        assert len(upd.loops) == 4                                # y, x, r.y, r.x
    elif schedule == "compute_at":
        assert prog.buffers["f"].shape == (4,)                    # one xo block of a row
        assert [lp.name for lp in upd.loops] == ["out_y", "out_xo", "f_u0_x", "f_u0_r_y",
                                                 "f_u0_r_x"]
    elif schedule == "store_at":
        assert prog.buffers["f"].shape == (8,)                    # a line buffer of a row
        assert str(upd.store) == "f[out_x]"
    else:
        assert len(upd.loads) == 10                               # 9 taps folded, 1 op
    inputs = {"input": rand((10, 8))}
    crosscheck(out, inputs, (8, 6))
    # negative control: the same schedule with another shift differs from Halide's result
    wrong = run(Pipeline(_reduction_then_shift(schedule, 3)).lower("w", (8, 6)), inputs)
    assert not np.array_equal(wrong["out"], realize_halide(out, inputs, (8, 6)))


def conv_relu_conv(channels: int = 3, stream: bool = False):
    """conv -> ReLU -> conv, each conv a reduction over a 3x3 window and 2 (then
    ``channels``) channels, consumed by the next layer. Returns the Funcs and RDoms."""
    x, y, k = Var("x"), Var("y"), Var("k")
    inp, w1, w2 = Input("input", s16), Input("w1", s16), Input("w2", s16)
    r1 = RDom([(0, 3), (0, 3), (0, 2)], "r1")
    r2 = RDom([(0, 3), (0, 3), (0, channels)], "r2")
    hw, conv1, relu, conv2 = Func("hw_input"), Func("conv1"), Func("relu"), Func("conv2")
    hw[x, y, k] = inp[x, y, k]
    if stream:
        hw.stream_to_accelerator()
    conv1[x, y, k] = cast(s16, 0)
    conv1[x, y, k] += w1[r1.x, r1.y, r1.z, k] * hw[x + r1.x, y + r1.y, r1.z]
    relu[x, y, k] = max_(conv1[x, y, k] >> 4, cast(s16, 0))
    conv2[x, y, k] = cast(s16, 0)
    conv2[x, y, k] += w2[r2.x, r2.y, r2.z, k] * relu[x + r2.x, y + r2.y, r2.z]
    return conv1, relu, conv2, r1, r2


def test_multi_stage_dnn_layers_conv_relu_conv():
    """conv -> ReLU -> conv: compute_root, then the first conv and its ReLU per output row of
    the second conv, with the channel reduction unrolled."""
    conv1, relu, conv2, r1, _r2 = conv_relu_conv()
    y = Var("y")
    inputs = {"input": rand((10, 9, 2), s16) >> 4, "w1": rand((3, 3, 2, 3), s16) >> 10,
              "w2": rand((3, 3, 3, 2), s16) >> 10}
    for sched in ("root", "at"):
        if sched == "root":
            conv1.compute_root()
            relu.compute_root()
        else:
            conv1.compute_at(conv2, y)
            relu.compute_at(conv2, y)
            conv1.update(0).unroll(r1.z)
        prog = Pipeline(conv2).lower("dnn", (6, 5, 2))
        names = [op.name for op in prog.ops()]
        if sched == "root":
            assert names == ["conv1", "conv1_u0", "relu", "conv2", "conv2_u0"]
        else:   # the first layer inside the second one's update loops (its consumer)
            assert names == ["conv2", "conv1", "conv1_u0", "relu", "conv2_u0"]
            assert prog.buffers["conv1"].shape == (8, 3, 3)      # 3 rows of 8 x 3 channels
            assert [lp.name for lp in prog.op("conv1_u0").loops][:2] == ["conv2_u0_k",
                                                                   "conv2_u0_y"]
        crosscheck(conv2, inputs, (6, 5, 2))
