"""Independent Halide (PyPI ``halide``) definitions of the stencil apps, used by test_apps.py to
cross-check each app's numpy ``reference()``: a third implementation, in Halide's own
semantics (16-bit wraparound, arithmetic shifts of signed types), written from the algorithm
descriptions in the app docstrings.

Index order: ``hl.Buffer(numpy)`` reverses the axes by default, so arrays go in transposed
(:func:`to_hl`) and come back transposed (:func:`from_hl`) to keep the project's ``arr[x, y]``.
"""
from __future__ import annotations

import halide as hl
import numpy as np

U16, S16 = hl.UInt(16), hl.Int(16)


_KEEP: list[np.ndarray] = []


def to_hl(a: np.ndarray) -> hl.Buffer:
    """A Halide view of ``a`` with the same index order. The view does not own its memory, so
    the transposed copy is kept alive for the life of the test session."""
    arr = np.ascontiguousarray(np.asarray(a).T)
    _KEEP.append(arr)
    return hl.Buffer(arr)


def from_hl(b: hl.Buffer) -> np.ndarray:
    return np.asarray(b).T.copy()


def realize(f: hl.Func, *shape: int) -> np.ndarray:
    return from_hl(f.realize(list(shape)))


def _input(a: np.ndarray, t=U16) -> tuple[hl.Func, hl.Var, hl.Var]:
    x, y = hl.Var("x"), hl.Var("y")
    buf = to_hl(a)
    f = hl.Func("in")
    f[x, y] = hl.cast(t, buf[x, y])
    return f, x, y


def gaussian(img: np.ndarray) -> dict:
    """The reference generator (Halide-to-Hardware apps/gaussian, gaussian_generator.cpp) as it
    is written: uint8 input cast to int16, the float32 sigma = 1.5 weights, an int32 sum."""
    x, y = hl.Var("x"), hl.Var("y")
    inp = to_hl(img.astype(np.uint8))
    block, sigma = 3, 1.5
    kernel_f = hl.Func("kernel_f")
    kernel_f[x] = (hl.exp(-x * x / hl.f32(2 * sigma * sigma))
                   / hl.f32(np.float32(np.sqrt(2 * np.pi)) * np.float32(sigma)))
    total = None
    for i in range(block):
        for j in range(block):
            p = kernel_f[i - block // 2] * kernel_f[j - block // 2]
            total = p if total is None else p + total
    kernel = hl.Func("kernel")
    kernel[x, y] = hl.cast(U16, kernel_f[x - block // 2] * kernel_f[y - block // 2] * 256.0
                           / total)
    hw_input = hl.Func("hw_input")
    hw_input[x, y] = hl.cast(S16, inp[x, y])
    win = hl.RDom([(0, block), (0, block)])
    blur_unnormalized = hl.Func("blur_unnormalized")
    blur_unnormalized[x, y] = 0
    blur_unnormalized[x, y] += hl.cast(U16, kernel[win.x, win.y] * hw_input[x + win.x,
                                                                             y + win.y])
    out = hl.Func("hw_output")
    out[x, y] = hl.cast(hl.UInt(8), blur_unnormalized[x, y] / 256)
    w, h = img.shape
    return {"output": realize(out, w - 2, h - 2).astype(np.uint16)}


def cascade(img: np.ndarray) -> dict:
    """The reference generator (Halide-to-Hardware apps/cascade, cascade_generator.cpp) as it
    is written: a uint8 input cast to uint16, the int32 binomial ``kernel`` Func cast to uint16
    in each term, two unnormalised 3x3 convolutions as pure definitions and RDom updates, the
    output ``cast<uint8_t>(conv2)`` over ``w - 4`` x ``h - 4``."""
    x, y = hl.Var("x"), hl.Var("y")
    inp = to_hl(img.astype(np.uint8))
    kernel = hl.Func("kernel")
    kernel[x, y] = 0
    for (i, j), v in {(0, 0): 1, (0, 1): 2, (0, 2): 1, (1, 0): 2, (1, 1): 4, (1, 2): 2,
                      (2, 0): 1, (2, 1): 2, (2, 2): 1}.items():
        kernel[i, j] = v
    r = hl.RDom([(0, 3), (0, 3)])
    hw_input_copy, hw_input = hl.Func("hw_input_copy"), hl.Func("hw_input")
    hw_input_copy[x, y] = hl.cast(U16, inp[x, y])
    hw_input[x, y] = hw_input_copy[x, y]
    conv1, conv2 = hl.Func("conv1"), hl.Func("conv2")
    conv1[x, y] = hl.cast(U16, 0)
    conv2[x, y] = hl.cast(U16, 0)
    conv1[x, y] += hl.cast(U16, kernel[r.x, r.y]) * hw_input[x + r.x, y + r.y]
    conv2[x, y] += hl.cast(U16, kernel[r.x, r.y]) * conv1[x + r.x, y + r.y]
    hw_output = hl.Func("hw_output")
    hw_output[x, y] = hl.cast(hl.UInt(8), conv2[x, y])
    w, h = img.shape
    return {"output": realize(hw_output, w - 4, h - 4).astype(np.uint16)}


def harris(img: np.ndarray) -> dict:
    """The reference generator (Halide-to-Hardware apps/harris, harris_generator.cpp) as it is
    written: int8 input (the 8-bit image shifted by -128: Sobel gradients are differences),
    int16 gradients clamped to +-255, int32 products, box sums and ``cim``, output
    ``int8(255)``; returned as bytes (0xFF = 255)."""
    out = harris_funcs(to_hl((img.astype(np.int16) - 128).astype(np.int8)))["hw_output"]
    w, h = img.shape
    return {"output": realize(out, w - 6, h - 6).astype(np.uint8).astype(np.uint16)}


def harris_funcs(inp) -> dict[str, hl.Func]:
    """harris_generator.cpp's Funcs on the int8 input ``inp`` (a Buffer or an ImageParam), by
    the generator's names; the box sums keep their pure and update definitions, so that its
    CoreIR schedule (``update(0).unroll``) can be applied (bench/app_ops.py)."""
    x, y = hl.Var("x"), hl.Var("y")
    padded16 = hl.Func("padded16")
    padded16[x, y] = hl.cast(S16, inp[x + 3, y + 3])
    p = padded16
    gx_u = hl.cast(S16, -p[x - 1, y - 1] + p[x + 1, y - 1] - 2 * p[x - 1, y] + 2 * p[x + 1, y]
                   - p[x - 1, y + 1] + p[x + 1, y + 1])
    gy_u = hl.cast(S16, p[x - 1, y + 1] - p[x - 1, y - 1] + 2 * p[x, y + 1] - 2 * p[x, y - 1]
                   + p[x + 1, y + 1] - p[x + 1, y - 1])
    f = {"padded16": padded16, "grad_x": hl.Func("grad_x"), "grad_y": hl.Func("grad_y")}
    f["grad_x"][x, y] = hl.clamp(gx_u, -255, 255)
    f["grad_y"][x, y] = hl.clamp(gy_u, -255, 255)
    gx, gy, i32 = f["grad_x"], f["grad_y"], hl.Int(32)
    for name, a, b in (("lxx", gx, gx), ("lyy", gy, gy), ("lxy", gx, gy)):
        f[name] = hl.Func(name)
        f[name][x, y] = (hl.cast(i32, a[x, y]) * hl.cast(i32, b[x, y])) >> 7
    box = hl.RDom([(-1, 3), (-1, 3)])
    sums = []
    for name, src in (("lgxx", "lxx"), ("lgyy", "lyy"), ("lgxy", "lxy")):
        f[name] = g = hl.Func(name)
        g[x, y] = 0
        g[x, y] += f[src][x + box.x, y + box.y]
        sums.append(g[x, y] >> 6)
    a, b, c = sums
    f["cim"] = cim = hl.Func("cim")
    cim[x, y] = (a * b - c * c) - (((a + b) * (a + b)) >> 4)
    is_max = cim[x, y] >= 100
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            if (dx, dy) != (0, 0):
                is_max = is_max & (cim[x, y] > cim[x + dx, y + dy])
    f["hw_output"] = out = hl.Func("hw_output")
    out[x, y] = hl.cast(hl.Int(8), hl.select(is_max, 255, 0))
    return f


def unsharp(img: np.ndarray) -> dict:
    """The reference generator (Halide-to-Hardware apps/unsharp, unsharp_generator.cpp) as it
    is written: uint8 RGB input, the float32 Gaussian weights, uint16 arithmetic."""
    out = unsharp_funcs(to_hl(img.astype(np.uint8)))["hw_output"]
    w, h, _ = img.shape
    return {"output": realize(out, w - 4, h - 4).astype(np.uint16)}


def unsharp_funcs(inp) -> dict[str, hl.Func]:
    """The Funcs of the unsharp generator on ``inp`` (a uint8 ``[x, y, c]`` buffer or
    ImageParam), by name (bench/app_ops.py schedules and lowers them)."""
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    block, sigma = 5, 1.5
    kernel_f = hl.Func("kernel_f")
    kernel_f[x] = (hl.exp(-x * x / hl.f32(2 * sigma * sigma))
                   / hl.f32(np.float32(np.sqrt(2 * np.pi)) * np.float32(sigma)))
    total = kernel_f[-(block // 2)]
    for i in range(1, block):
        total = kernel_f[i - block // 2] + total
    kernel = hl.Func("kernel")
    kernel[x] = hl.cast(U16, kernel_f[x] * 255 / total)
    hw_input = hl.Func("hw_input")
    hw_input[x, y, c] = hl.cast(U16, inp[x, y, c])
    gray = hl.Func("gray")
    gray[x, y] = hl.cast(hl.UInt(8), (77 * hl.cast(U16, hw_input[x, y, 0])
                                      + 150 * hl.cast(U16, hw_input[x, y, 1])
                                      + 29 * hl.cast(U16, hw_input[x, y, 2])) >> 8)
    win = hl.RDom([(0, block), (0, block)])
    blur_unnormalized, blur = hl.Func("blur_unnormalized"), hl.Func("blur")
    blur_unnormalized[x, y] = hl.u16(0)
    blur_unnormalized[x, y] += hl.cast(U16, kernel[win.x] * gray[x + win.x, y + win.y])
    blur[x, y] = blur_unnormalized[x, y] / 256
    sharpen, ratio, out = hl.Func("sharpen"), hl.Func("ratio"), hl.Func("hw_output")
    sharpen[x, y] = hl.cast(hl.UInt(8), hl.clamp(2 * hl.cast(U16, gray[x, y]) - blur[x, y],
                                                 0, 255))
    ratio[x, y] = hl.cast(hl.UInt(8), hl.clamp(hl.cast(U16, sharpen[x, y]) * 32
                                               / hl.max(gray[x, y], 1), 0, 255))
    out[x, y] = hl.cast(hl.UInt(8), hl.clamp(hl.cast(U16, ratio[x, y]) * gray[x, y] / 32,
                                             0, 255))
    return {"kernel": kernel, "hw_input": hw_input, "gray": gray,
            "blur_unnormalized": blur_unnormalized, "ratio": ratio, "hw_output": out}


def upsample(img: np.ndarray, factor: int = 2) -> dict:
    f, x, y = _input(img)
    out = hl.Func("out")
    out[x, y] = f[x / factor, y / factor]      # Halide's integer division floors
    w, h = img.shape
    return {"output": realize(out, w * factor, h * factor)}


def _down(f: hl.Func, x, y, name: str) -> hl.Func:
    g = hl.Func(name)
    g[x, y] = (f[2 * x, 2 * y] + f[2 * x + 1, 2 * y] + f[2 * x, 2 * y + 1]
               + f[2 * x + 1, 2 * y + 1]) >> 2
    return g


def gpyr(img: np.ndarray, levels: int = 4) -> dict:
    f, x, y = _input(img)
    for k in range(levels):
        f = _down(f, x, y, f"p{k + 1}")
    w, h = img.shape
    return {"output": realize(f, w >> levels, h >> levels)}


def laplacian(img: np.ndarray) -> dict:
    """The reference generator (Halide-to-Hardware apps/laplacian_pyramid,
    laplacian_pyramid_generator.cpp) as it is written: a uint8 ``w`` x ``h`` image with
    ``repeat_edge``, the 3x3 kernel in uint16, four blurs ``/ 256``, two down-samplings of the
    blurred level, two blurred nearest up-samplings, the band-pass levels added back, the
    output cast to uint8 over the ``w`` x ``h`` tile."""
    x, y = hl.Var("x"), hl.Var("y")
    casted = hl.BoundaryConditions.repeat_edge(to_hl(img.astype(np.uint8)))
    hw_input = hl.Func("hw_input")
    hw_input[x, y] = hl.cast(U16, casted[x, y])
    kernel = hl.Func("kernel")
    kernel[x, y] = hl.cast(U16, 0)
    for (i, j), v in {(0, 0): 3, (1, 0): 21, (2, 0): 3, (0, 1): 21, (1, 1): 158, (2, 1): 21,
                      (0, 2): 3, (1, 2): 21, (2, 2): 3}.items():
        kernel[i, j] = hl.cast(U16, v)
    win = hl.RDom([(0, 3), (0, 3)])

    def blur(f: hl.Func, name: str) -> hl.Func:
        unnormalized, out = hl.Func(name + "_unnormalized"), hl.Func(name)
        unnormalized[x, y] = hl.cast(U16, 0)
        unnormalized[x, y] += kernel[win.x, win.y] * f[x + win.x, y + win.y]
        out[x, y] = unnormalized[x - 1, y - 1] / 256
        return out

    def func(name: str, expr_of) -> hl.Func:
        f = hl.Func(name)
        f[x, y] = expr_of()
        return f

    f0 = hw_input
    l0 = blur(f0, "l0")
    h0 = func("h0", lambda: f0[x, y] - l0[x, y])
    f1 = func("f1", lambda: l0[x * 2, y * 2])
    l1 = blur(f1, "l1")
    h1 = func("h1", lambda: f1[x, y] - l1[x, y])
    f2 = func("f2", lambda: l1[x * 2, y * 2])
    l1_up = blur(func("f2_temp", lambda: f2[x / 2, y / 2]), "l1_up")
    f1_up = func("f1_up", lambda: l1_up[x, y] + h1[x, y])
    l0_up = blur(func("f1_temp", lambda: f1_up[x / 2, y / 2]), "l0_up")
    f0_up = func("f0_up", lambda: l0_up[x, y] + h0[x, y])
    output = func("output", lambda: hl.cast(hl.UInt(8), f0_up[x, y]))
    w, h = img.shape
    return {"output": realize(output, w, h).astype(np.uint16)}


def brighten_blur(img: np.ndarray) -> dict:
    x, y, t = hl.Var("x"), hl.Var("y"), hl.Var("t")
    buf = to_hl(img)
    br = hl.Func("br")
    br[x, y, t] = hl.cast(U16, buf[x, y, t]) * 2
    out = hl.Func("blur")
    out[x, y, t] = (br[x, y, t] + br[x + 1, y, t] + br[x, y + 1, t] + br[x + 1, y + 1, t]) >> 2
    w, h, n = img.shape
    return {"blur": realize(out, w - 1, h - 1, n)}


def camera(raw: np.ndarray) -> dict:
    """The reference generator (Halide-to-Hardware apps/camera_pipeline,
    camera_pipeline_generator.cpp) as it is written: uint8 raw input and demosaic, the int32
    colour matrix ``/ 256`` cast to int16, the float32 curve at the default gamma and contrast
    (1.0, 1.0). The input buffer's minimum is (-3, -3), the region Halide's bounds inference
    asks for a 58x58 output."""
    buf = to_hl(raw.astype(np.uint8))
    buf.set_min([-3, -3])
    w, h = raw.shape
    return {"output": realize(camera_funcs(buf)["hw_output"], 3, w - 6, h - 6).astype(np.uint16)}


def camera_funcs(buf) -> dict[str, hl.Func]:
    """The Funcs of the camera generator on ``buf`` (a uint8 ``[x, y]`` buffer or ImageParam),
    by name (bench/app_ops.py schedules and lowers them)."""
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    hw_input = hl.Func("hw_input")
    hw_input[x, y] = buf[x, y]

    def avg(a, b):
        return (a + b + 1) >> 1

    def interleave_x(a, b):
        out = hl.Func()
        out[x, y] = hl.select((x % 2) == 0, a[x, y], b[x - 1, y])
        return out

    def interleave_y(a, b):
        out = hl.Func()
        out[x, y] = hl.select((y % 2) == 0, a[x, y], b[x, y - 1])
        return out

    f = hw_input
    hi = hl.max(hl.max(f[x - 2, y], f[x + 2, y]), hl.max(f[x, y - 2], f[x, y + 2]))
    lo = hl.min(hl.min(f[x - 2, y], f[x + 2, y]), hl.min(f[x, y - 2], f[x, y + 2]))
    denoised = hl.Func("denoised")
    denoised[x, y] = hl.clamp(f[x, y], lo, hi)

    raw_ = denoised
    r_r, g_gr, g_gb, b_b = hl.Func("r_r"), hl.Func("g_gr"), hl.Func("g_gb"), hl.Func("b_b")
    g_gr[x, y] = raw_[x, y]
    r_r[x, y] = raw_[x + 1, y]
    b_b[x, y] = raw_[x, y + 1]
    g_gb[x, y] = raw_[x + 1, y + 1]
    b_r, g_r, b_gr, r_gr = hl.Func("b_r"), hl.Func("g_r"), hl.Func("b_gr"), hl.Func("r_gr")
    b_gb, r_gb, r_b, g_b = hl.Func("b_gb"), hl.Func("r_gb"), hl.Func("r_b"), hl.Func("g_b")
    gv_r, gvd_r = avg(g_gb[x, y - 1], g_gb[x, y]), hl.absd(g_gb[x, y - 1], g_gb[x, y])
    gh_r, ghd_r = avg(g_gr[x + 1, y], g_gr[x, y]), hl.absd(g_gr[x + 1, y], g_gr[x, y])
    g_r[x, y] = hl.select(ghd_r < gvd_r, gh_r, gv_r)
    gv_b, gvd_b = avg(g_gr[x, y + 1], g_gr[x, y]), hl.absd(g_gr[x, y + 1], g_gr[x, y])
    gh_b, ghd_b = avg(g_gb[x - 1, y], g_gb[x, y]), hl.absd(g_gb[x - 1, y], g_gb[x, y])
    g_b[x, y] = hl.select(ghd_b < gvd_b, gh_b, gv_b)
    correction = g_gr[x, y] - avg(g_r[x, y], g_r[x - 1, y])
    r_gr[x, y] = correction + avg(r_r[x - 1, y], r_r[x, y])
    correction = g_gr[x, y] - avg(g_b[x, y], g_b[x, y - 1])
    b_gr[x, y] = correction + avg(b_b[x, y], b_b[x, y - 1])
    correction = g_gb[x, y] - avg(g_r[x, y], g_r[x, y + 1])
    r_gb[x, y] = correction + avg(r_r[x, y], r_r[x, y + 1])
    correction = g_gb[x, y] - avg(g_b[x, y], g_b[x + 1, y])
    b_gb[x, y] = correction + avg(b_b[x, y], b_b[x + 1, y])
    correction = g_b[x, y] - avg(g_r[x, y], g_r[x - 1, y + 1])
    rp_b = correction + avg(r_r[x, y], r_r[x - 1, y + 1])
    rpd_b = hl.absd(r_r[x, y], r_r[x - 1, y + 1])
    correction = g_b[x, y] - avg(g_r[x - 1, y], g_r[x, y + 1])
    rn_b = correction + avg(r_r[x - 1, y], r_r[x, y + 1])
    rnd_b = hl.absd(r_r[x - 1, y], r_r[x, y + 1])
    r_b[x, y] = hl.select(rpd_b < rnd_b, rp_b, rn_b)
    correction = g_r[x, y] - avg(g_b[x, y], g_b[x + 1, y - 1])
    bp_r = correction + avg(b_b[x, y], b_b[x + 1, y - 1])
    bpd_r = hl.absd(b_b[x, y], b_b[x + 1, y - 1])
    correction = g_r[x, y] - avg(g_b[x + 1, y], g_b[x, y - 1])
    bn_r = correction + avg(b_b[x + 1, y], b_b[x, y - 1])
    bnd_r = hl.absd(b_b[x + 1, y], b_b[x, y - 1])
    b_r[x, y] = hl.select(bpd_r < bnd_r, bp_r, bn_r)
    r = interleave_y(interleave_x(r_gr, r_r), interleave_x(r_b, r_gb))
    g = interleave_y(interleave_x(g_gr, g_r), interleave_x(g_b, g_gb))
    b = interleave_y(interleave_x(b_gr, b_r), interleave_x(b_b, b_gb))
    demosaicked = hl.Func("demosaicked")
    demosaicked[x, y, c] = hl.select(c == 0, r[x, y], c == 1, g[x, y], b[x, y])

    matrix = [[200, -44, 17, -3900], [-38, 159, -21, -2541], [-8, -73, 228, -2008]]
    ir, ig, ib = (hl.cast(hl.Int(32), demosaicked[x, y, k]) for k in range(3))
    rows = [hl.cast(S16, (m[3] + m[0] * ir + m[1] * ig + m[2] * ib) / 256) for m in matrix]
    corrected = hl.Func("corrected")
    corrected[x, y, c] = hl.select(c == 0, rows[0], c == 1, rows[1], rows[2])

    gamma, contrast = 1.0, 1.0
    curve = hl.Func("curve")
    xf = x / hl.f32(1024.0)
    gv = hl.pow(xf, hl.f32(1.0 / gamma))
    bb = hl.f32(float(np.float32(2.0) - np.float32(np.power(np.float32(2.0),
                                                            np.float32(contrast / 100.0)))))
    aa = hl.f32(2.0) - hl.f32(2.0) * bb
    val = hl.select(gv > 0.5, 1.0 - (aa * (1.0 - gv) * (1.0 - gv) + bb * (1.0 - gv)),
                    aa * gv * gv + bb * gv)
    curve[x] = hl.cast(hl.UInt(8), hl.clamp(val * 256.0, 0.0, 255.0))
    in_val = hl.clamp(corrected[x, y, c], 0, 1023)
    curved = hl.Func("curved")
    curved[c, x, y] = hl.select(corrected[x, y, c] < 0, 0, corrected[x, y, c] >= 1024, 255,
                                curve[in_val])
    return {"hw_input": hw_input, "denoised": denoised, "demosaicked": demosaicked,
            "curve": curve, "hw_output": curved}
