"""camera: an FCam-style camera pipeline (thesis Table 7.1 "demosaicking, image correction, and
tone scaling", paper Table III).

Stages, after the reference flow's app (StanfordAHA/Halide-to-Hardware,
apps/hardware_benchmarks/apps/camera_pipeline/camera_pipeline_generator.cpp, itself from FCam /
Halide's camera_pipe): hot-pixel suppression, demosaic, colour-correction matrix, and a combined
gamma + contrast (tone) curve applied as a lookup table. Re-derived for 16-bit arithmetic:

* ``denoised = clamp(c, min(n, s, w, e), max(n, s, w, e))`` with the same-colour neighbours at
  distance 2 of the RGGB Bayer mosaic (hot-pixel suppression);
* demosaic: BILINEAR (not the reference's edge-directed variant): at an R site green is the mean
  of the 4 orthogonal neighbours and blue of the 4 diagonal ones, symmetrically at B sites; at G
  sites the two missing colours are the mean of the horizontal resp. vertical pair. Means round:
  ``(a+b+1)>>1``, ``(a+b+c+d+2)>>2``. Bayer phase: input ``(even x, even y)`` is R, ``(odd, even)``
  and ``(even, odd)`` are G, ``(odd, odd)`` is B;
* colour correction: the reference's 3x4 matrix (``[[200,-44,17,-3900], [-38,159,-21,-2541],
  [-8,-73,228,-2008]] / 256`` for 10-bit data) rescaled to map 8-bit input to 10-bit output in
  Q4 so every product fits in s16: ``rgb10 = (M4 . rgb8 + off4) >> 4`` with ``M4 = M/4`` and
  ``off4 = off/16`` rounded (see ``CCM``);
* curve: ``clamp(rgb10, 0, 1023)`` indexes a 1024-entry table (a MEM in ROM mode) holding FCam's
  gamma (2.0) + contrast (50) S-curve scaled to 8 bits (:func:`curve_table`).

Sizes (Table 7.1): 64x64 raw tile; denoised 60x60; demosaicked and output 58x58x3 (the reference
flow's 58x58 output).

Loop nests: ``hw_input`` copy; ``denoise`` (5 loads); ``demosaic`` iterates over 2x2 Bayer
quads (29x29) with the quad unrolled into 12 ops, one per (site, colour), storing
``demosaicked[2*qx+dx, 2*qy+dy, c]`` -- how Halide lowers the ``x%2``/``y%2`` interleave once the
quad is unrolled, and what keeps every access affine; ``ccm_curve`` has the colour channel
unrolled into 3 ops (``hw_output.unroll(c)``), each reading the 3 demosaicked channels.
"""
from __future__ import annotations

import numpy as np

from compiler.ir import Kernel, Lookup, Program, maximum, minimum, s16, u16

from compiler.frontend.loopnest import add_op, image_program, nest, pass_kernel
from ._common import check_sizes, test_image, to_dtype, window, wrap

SIZES = {"width": 64, "height": 64}
# Q4 colour-correction matrix: row = output channel, columns = (r, g, b, offset).
CCM = ((50, -11, 4, -244), (-10, 40, -5, -159), (-2, -18, 57, -126))
CCM_SHIFT = 4
CURVE_SIZE = 1024
GAMMA = 2.0
CONTRAST = 50.0

# Neighbour offsets of the bilinear demosaic (dx, dy).
ORTH = ((0, -1), (-1, 0), (1, 0), (0, 1))
DIAG = ((-1, -1), (1, -1), (-1, 1), (1, 1))
HORZ = ((-1, 0), (1, 0))
VERT = ((0, -1), (0, 1))
CENTRE = ((0, 0),)
# For each site of a demosaic quad, in quad coordinates (dx, dy): the taps of (r, g, b).
# Quad (qx, qy) covers denoised pixels (2qx+1+dx, 2qy+1+dy): (0,0) is B, (1,0) G in a blue row,
# (0,1) G in a red row, (1,1) R.
SITES = {
    (0, 0): (DIAG, ORTH, CENTRE),
    (1, 0): (VERT, CENTRE, HORZ),
    (0, 1): (HORZ, CENTRE, VERT),
    (1, 1): (CENTRE, ORTH, DIAG),
}


def curve_table(gamma: float = GAMMA, contrast: float = CONTRAST) -> tuple[int, ...]:
    """FCam's tone curve: gamma, then a contrast S-curve, scaled to 8 bits, for 10-bit input."""
    b = 2.0 - 2.0 ** (contrast / 100.0)
    a = 2.0 - 2.0 * b
    table = []
    for i in range(CURVE_SIZE):
        g = (i / CURVE_SIZE) ** (1.0 / gamma)
        val = 1.0 - (a * (1 - g) ** 2 + b * (1 - g)) if g > 0.5 else a * g * g + b * g
        table.append(int(min(max(val * 256.0, 0.0), 255.0)))
    return tuple(table)


def _mean_kernel(name: str, n: int) -> Kernel:
    if n == 1:
        return pass_kernel(name)
    shift = {2: 1, 4: 2}[n]

    def body(*a):
        s = a[0]
        for v in a[1:]:
            s = s + v
        return (s + (n >> 1)) >> shift

    return Kernel.from_fn(name, body, *([u16] * n))


def build(width: int = 64, height: int = 64) -> Program:
    check_sizes("camera", width=width - 6, height=height - 6)
    if width % 2 or height % 2:
        raise ValueError(f"camera: width and height must be even (Bayer quads), got "
                         f"{width}x{height}")
    dw, dh = width - 4, height - 4
    ow, oh = width - 6, height - 6
    prog = image_program("camera", width, height)
    prog.add_buffer("denoised", (dw, dh), u16)
    prog.add_buffer("demosaicked", (ow, oh, 3), u16)
    prog.add_output("output", (ow, oh, 3), u16)

    loop, i = nest(prog, "denoise", ("y", dh), ("x", dw))
    x, y = i["x"], i["y"]
    taps = [(2, 2), (2, 0), (2, 4), (0, 2), (4, 2)]     # centre, north, south, west, east

    def denoise_fn(c, n, s, w, e):
        hi = maximum(maximum(n, s), maximum(w, e))
        lo = minimum(minimum(n, s), minimum(w, e))
        return minimum(maximum(c, lo), hi)

    add_op(loop, "denoise", ("denoised", x, y), [("hw_input", x + dx, y + dy) for dx, dy in taps],
           Kernel.from_fn("denoise_kernel", denoise_fn, *([u16] * 5)))

    loop, i = nest(prog, "demosaic", ("qy", oh // 2), ("qx", ow // 2))
    qx, qy = i["qx"], i["qy"]
    kernels = {n: _mean_kernel(f"mean{n}_kernel", n) for n in (1, 2, 4)}
    for (sx, sy), per_colour in SITES.items():
        for c, offsets in enumerate(per_colour):
            px, py = 2 * qx + sx, 2 * qy + sy
            add_op(loop, f"demosaic_{sx}{sy}_{'rgb'[c]}", ("demosaicked", px, py, c),
                   [("denoised", px + 1 + dx, py + 1 + dy) for dx, dy in offsets],
                   kernels[len(offsets)])

    table = curve_table()
    loop, i = nest(prog, "ccm_curve", ("y", oh), ("x", ow))
    for c, (mr, mg, mb, off) in enumerate(CCM):
        def ccm_fn(r, g, b, mr=mr, mg=mg, mb=mb, off=off):
            v = (r * mr + g * mg + b * mb + off) >> CCM_SHIFT
            return Lookup(table, minimum(maximum(v, 0), CURVE_SIZE - 1), u16)

        add_op(loop, f"ccm_curve_{'rgb'[c]}", ("output", i["x"], i["y"], c),
               [("demosaicked", i["x"], i["y"], k) for k in range(3)],
               Kernel.from_fn(f"ccm_curve_{'rgb'[c]}_kernel", ccm_fn, s16, s16, s16))
    return prog.validate()


def make_inputs(seed: int = 0, width: int = 64, height: int = 64) -> dict[str, np.ndarray]:
    raw = test_image(seed, width, height).astype(np.int64)
    rng = np.random.default_rng(seed + 1)
    hot = rng.random((width, height)) < 0.01           # a few hot pixels to suppress
    raw[hot] = 255
    return {"input": raw.astype(np.uint16)}


def _denoise(raw: np.ndarray, w: int, h: int) -> np.ndarray:
    c = window(raw, 2, 2, w, h)
    nbrs = np.stack([window(raw, dx, dy, w, h) for dx, dy in ((2, 0), (2, 4), (0, 2), (4, 2))])
    return np.clip(c, nbrs.min(0), nbrs.max(0))


def _demosaic(d: np.ndarray, w: int, h: int) -> np.ndarray:
    """Bilinear demosaic of the denoised mosaic ``d`` (RGGB phase) into ``(w, h, 3)``."""
    def mean(offsets):
        s = sum(window(d, 1 + dx, 1 + dy, w, h) for dx, dy in offsets)
        n = len(offsets)
        return wrap(s + n // 2, u16) // n         # the u16 sum wraps before the shift

    # Every pixel's colour phase: the output pixel (x, y) is denoised pixel (x+1, y+1).
    xs = (np.arange(w)[:, None] + 1) % 2
    ys = (np.arange(h)[None, :] + 1) % 2
    r_site, b_site = (xs == 0) & (ys == 0), (xs == 1) & (ys == 1)
    g_red_row = (xs == 1) & (ys == 0)
    centre = window(d, 1, 1, w, h)
    horz, vert = mean(HORZ), mean(VERT)
    orth, diag = mean(ORTH), mean(DIAG)
    r = np.where(r_site, centre, np.where(b_site, diag, np.where(g_red_row, horz, vert)))
    b = np.where(b_site, centre, np.where(r_site, diag, np.where(g_red_row, vert, horz)))
    g = np.where(r_site | b_site, orth, centre)
    return np.stack([r, g, b], axis=-1)


def reference(inputs: dict, width: int = 64, height: int = 64) -> dict[str, np.ndarray]:
    raw = np.asarray(inputs["input"], dtype=np.int64)
    dw, dh, ow, oh = width - 4, height - 4, width - 6, height - 6
    rgb = _demosaic(_denoise(raw, dw, dh), ow, oh)
    m = np.array(CCM, dtype=np.int64)
    lin = wrap(rgb @ m[:, :3].T + m[:, 3], s16) >> CCM_SHIFT
    table = np.array(curve_table(), dtype=np.int64)
    return {"output": to_dtype(table[np.clip(lin, 0, CURVE_SIZE - 1)], u16)}
