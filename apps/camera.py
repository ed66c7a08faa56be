"""camera: the camera pipeline of the reference flow (thesis Table 7.1 "demosaicking, image
correction, and tone scaling", paper Table III).

Algorithm, constants and schedule of StanfordAHA/Halide-to-Hardware,
apps/hardware_benchmarks/apps/camera_pipeline/camera_pipeline_generator.cpp (the CoreIR
schedule branch; FCam's pipeline as Halide's camera_pipe has it, adapted there for a line-
buffered schedule), on an 8-bit raw image with the reference's ``uint8`` arithmetic:

* the input is ``uint8``: the copy into the accelerator keeps the low 8 bits of each 16-bit input
  word (``hw_input = input & 255``; for 8-bit pixels a copy), so every later value is what the
  reference computes for any input word;

* **hot-pixel suppression**: ``denoised = clamp(in, min(n, s, w, e), max(n, s, w, e))`` with the
  four same-colour neighbours at distance 2;
* **demosaic**, edge-directed with green correction, on the Bayer phase of the reference
  (``g_gr(x, y) = raw(x, y)``, ``r_r = raw(x+1, y)``, ``b_b = raw(x, y+1)``, ``g_gb = raw(x+1,
  y+1)``, i.e. G at even x and even y, R at odd x and even y, B at even x and odd y, G at odd x
  and odd y): green at a red or blue site is the mean of the horizontal or of the vertical pair,
  whichever differs less; red and blue at green sites are the mean of their pair plus the green
  channel's second derivative (``g - avg(g_r or g_b pair)``); red at blue and blue at red sites
  pick the diagonal with the smaller difference and add the same correction. Means are
  ``avg(a, b) = (a + b + 1) >> 1``. As in the reference's HLS-friendly form, every candidate
  function is defined at every pixel of the raw grid (no 2x2 down- and up-sampling), so its
  neighbour offsets of +-1 read the full-resolution mosaic, and the interleave picks a candidate
  per pixel with ``select(x % 2 == 0, ...)`` and ``select(y % 2 == 0, ...)``. Everything is
  ``uint8``: a sum wraps modulo 256 before a mean's shift, and corrections wrap (the reference's
  arithmetic, bit for bit; on the 16-bit PEs a ``& 255`` before each mean's shift and on each
  red and blue result does it, :func:`avg`, :func:`u8`);
* **colour correction**: the reference's 3x4 matrix ``[[200, -44, 17, -3900], [-38, 159, -21,
  -2541], [-8, -73, 228, -2008]]`` in int32, ``/ 256`` rounding down (Halide's signed division),
  cast to int16. The 16-bit datapath computes it exactly: the positive part ``P`` and the
  negative part ``N`` of the int32 sum each fit an unsigned word (at most 58140 and 22663 for
  8-bit inputs), and ``floor((P - N) / 256) = ((P - N) mod 2^16 >> 8) - 256 * (P < N)``
  (:func:`ccm_kernel`), so no change of the algorithm is needed;
* **curve**: ``select(v < 0, 0, v >= 1024, 255, curve[clamp(v, 0, 1023)])`` with FCam's gamma +
  contrast curve at the generator's default parameters (gamma 1.0, contrast 1.0; the stored
  generator's GeneratorParam defaults, no override in its Makefile), a 1024-entry table scaled
  to 8 bits (:func:`curve_table`, float32 as Halide computes it) in a MEM tile in ROM mode.

The matrix and curve were made for 10-bit raw data, so on 8-bit input the corrected values stay
below about 220 and the output is dark (at most curve[219] = 54); that is the reference's
behaviour, kept.

Schedule, as the reference's: ``hw_input.stream_to_accelerator()``; ``denoised.linebuffer()``;
``demosaicked.linebuffer().unroll(c)``: three ops per pixel (one per colour), each computing its
colour's four candidates and selecting by the pixel's phase (the interleave's ``x % 2``,
``y % 2``: :class:`~compiler.ir.expr.LoopPhase`, made by schedule generators in hardware); the
colour correction and the curve inlined into ``hw_output.unroll(c)`` (three ops, each reading
the three demosaicked colours), the curve ``compute_at(hw_output, xo).unroll(x)``: a ROM per
colour. Output ``output[c, x, y]`` (the reference's ``output(c, x, y)``), 58x58.

Sizes and coordinates (Table 7.1): a 64x64 raw tile, 58x58x3 output. Halide's bounds inference
of the reference gives the input region ``[-3, 60]`` in x and y for the 58x58 output, so this
app's ``input[i, j]`` is the reference's ``input(i - 3, j - 3)`` (tests/apps/halide_pipelines.py
runs the reference on a buffer whose minimum is -3); ``denoised[i, j]`` is its ``denoised(i - 1,
j - 1)`` (60x60), and the demosaic of output pixel ``(x, y)`` reads the 3x3 neighbourhood
``denoised[x .. x+2, y .. y+2]``.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from compiler.ir import (Arg, Call, Kernel, LoopPhase, Lookup, Program, absd, maximum, minimum,
                         s16, select, u16)

from compiler.frontend.loopnest import add_op, nest

from ._common import check_sizes, test_image, to_dtype, window

SIZES = {"width": 64, "height": 64}
# Colour-correction matrix: row = output channel, columns = (r, g, b, offset); int32, then /256.
MATRIX = ((200, -44, 17, -3900), (-38, 159, -21, -2541), (-8, -73, 228, -2008))
CURVE_SIZE = 1024
GAMMA = 1.0
CONTRAST = 1.0
INPUT_MIN = -3          # the reference's input coordinate of input[0, 0]


def curve_table(gamma: float = GAMMA, contrast: float = CONTRAST) -> tuple[int, ...]:
    """FCam's tone curve as the reference computes it (float32): ``g = (x/1024)^(1/gamma)``,
    ``b = 2 - 2^(contrast/100)``, ``a = 2 - 2b``, ``val = g > 0.5 ? 1 - (a(1-g)^2 + b(1-g)) :
    a g^2 + b g``, ``uint8(clamp(256 val, 0, 255))``."""
    f32 = np.float32
    b = f32(2.0) - f32(np.power(f32(2.0), f32(contrast) / f32(100.0)))
    a = f32(2.0) - f32(2.0) * b
    xf = np.arange(CURVE_SIZE, dtype=np.float32) / f32(1024.0)
    g = xf if gamma == 1.0 else np.power(xf, f32(1.0) / f32(gamma)).astype(np.float32)
    one = f32(1.0)
    hi = one - (a * (one - g) * (one - g) + b * (one - g))
    lo = a * g * g + b * g
    val = np.where(g > f32(0.5), hi, lo).astype(np.float32)
    return tuple(int(v) for v in np.clip(val * f32(256.0), f32(0.0), f32(255.0)))


# --- the demosaic as kernel expressions -------------------------------------------------------

def u8(e):
    """The reference's uint8 wrap-around of a 16-bit word."""
    return e & 255


def avg(a, b):
    """``(a + b + 1) >> 1`` in uint8: the sum wraps modulo 256 before the shift."""
    return u8(a + b + 1) >> 1


class _Mosaic:
    """The reference's demosaic written over ``raw(dx, dy)``, the denoised mosaic at offset
    ``(dx, dy)`` from the output pixel (reference coordinates), each candidate function a method
    of the offset ``(X, Y)`` it is evaluated at."""

    def __init__(self, raw: Callable[[int, int], object]):
        self.raw = raw

    def g_gr(self, X, Y): return self.raw(X, Y)
    def r_r(self, X, Y): return self.raw(X + 1, Y)
    def b_b(self, X, Y): return self.raw(X, Y + 1)
    def g_gb(self, X, Y): return self.raw(X + 1, Y + 1)

    def g_r(self, X, Y):
        gv, gvd = avg(self.g_gb(X, Y - 1), self.g_gb(X, Y)), absd(self.g_gb(X, Y - 1),
                                                                  self.g_gb(X, Y))
        gh, ghd = avg(self.g_gr(X + 1, Y), self.g_gr(X, Y)), absd(self.g_gr(X + 1, Y),
                                                                  self.g_gr(X, Y))
        return select(ghd < gvd, gh, gv)

    def g_b(self, X, Y):
        gv, gvd = avg(self.g_gr(X, Y + 1), self.g_gr(X, Y)), absd(self.g_gr(X, Y + 1),
                                                                  self.g_gr(X, Y))
        gh, ghd = avg(self.g_gb(X - 1, Y), self.g_gb(X, Y)), absd(self.g_gb(X - 1, Y),
                                                                  self.g_gb(X, Y))
        return select(ghd < gvd, gh, gv)

    def r_gr(self, X, Y):
        corr = self.g_gr(X, Y) - avg(self.g_r(X, Y), self.g_r(X - 1, Y))
        return corr + avg(self.r_r(X - 1, Y), self.r_r(X, Y))

    def b_gr(self, X, Y):
        corr = self.g_gr(X, Y) - avg(self.g_b(X, Y), self.g_b(X, Y - 1))
        return corr + avg(self.b_b(X, Y), self.b_b(X, Y - 1))

    def r_gb(self, X, Y):
        corr = self.g_gb(X, Y) - avg(self.g_r(X, Y), self.g_r(X, Y + 1))
        return corr + avg(self.r_r(X, Y), self.r_r(X, Y + 1))

    def b_gb(self, X, Y):
        corr = self.g_gb(X, Y) - avg(self.g_b(X, Y), self.g_b(X + 1, Y))
        return corr + avg(self.b_b(X, Y), self.b_b(X + 1, Y))

    def _diagonal(self, g_at, cross, same, X, Y, p, n):
        """Red at blue (``cross`` = g_r, ``same`` = r_r) or blue at red: the diagonal pair
        (``p``, ``n``: offsets of the positive and negative diagonal's second tap) with the
        smaller difference, plus green's second derivative."""
        def candidate(a, b):
            corr = g_at(X, Y) - avg(cross(*a), cross(*b))
            return corr + avg(same(*a), same(*b)), absd(same(*a), same(*b))
        vp, dp = candidate(*p)
        vn, dn = candidate(*n)
        return select(dp < dn, vp, vn)

    def r_b(self, X, Y):
        return self._diagonal(self.g_b, self.g_r, self.r_r, X, Y,
                              ((X, Y), (X - 1, Y + 1)), ((X - 1, Y), (X, Y + 1)))

    def b_r(self, X, Y):
        return self._diagonal(self.g_r, self.g_b, self.b_b, X, Y,
                              ((X, Y), (X + 1, Y - 1)), ((X + 1, Y), (X, Y - 1)))

    def colour(self, c: int, x_even, y_even):
        """``interleave_y(interleave_x(a, b), interleave_x(c, d))`` of colour ``c`` at (0, 0):
        ``y even ? (x even ? a(0, 0) : b(-1, 0)) : (x even ? c(0, -1) : d(-1, -1))``."""
        a, b, cc, d = ((self.r_gr, self.r_r, self.r_b, self.r_gb),
                       (self.g_gr, self.g_r, self.g_b, self.g_gb),
                       (self.b_gr, self.b_r, self.b_b, self.b_gb))[c]
        v = select(y_even, select(x_even, a(0, 0), b(-1, 0)),
                   select(x_even, cc(0, -1), d(-1, -1)))
        return v if c == 1 else u8(v)      # green is a raw or a mean value: already 8 bits


def demosaic_kernel(c: int, x_loop: str, y_loop: str) -> tuple[Kernel, list[tuple[int, int]]]:
    """The kernel of colour ``c``'s demosaic op and the denoised offsets ``(dx, dy)`` it loads
    (relative to the output pixel, reference coordinates), in argument order."""
    offsets: list[tuple[int, int]] = []
    args: dict[tuple[int, int], object] = {}

    def raw(dx: int, dy: int):
        if (dx, dy) not in args:
            args[(dx, dy)] = Arg(len(offsets), u16)
            offsets.append((dx, dy))
        return args[(dx, dy)]

    body = _Mosaic(raw).colour(c, LoopPhase(x_loop, 2, 0), LoopPhase(y_loop, 2, 0))
    kernel = Kernel(f"demosaic_{'rgb'[c]}_kernel", len(offsets), body, (u16,) * len(offsets))
    return kernel, offsets


# --- colour correction and curve -------------------------------------------------------------

def ccm_kernel(c: int, table: tuple[int, ...]) -> Kernel:
    """Channel ``c`` of the colour correction and the curve on (r, g, b) words of 8 bits:
    ``P`` and ``N`` the positive and negative parts of ``off + m . rgb`` (int32 in the
    reference), ``v = floor((P - N) / 256)`` exactly in 16 bits, then the curve."""
    m = MATRIX[c]

    def fn(r, g, b):
        pos, neg = None, None
        for coef, val in zip(m[:3], (r, g, b)):
            if coef > 0:
                pos = val * coef if pos is None else pos + val * coef
            else:
                neg = val * -coef if neg is None else neg + val * -coef
        if m[3] > 0:
            pos = pos + m[3]
        else:
            neg = neg + -m[3]
        diff = pos - neg                                         # (P - N) mod 2^16
        v = Call("pass", ((diff >> 8) - select(pos < neg, 256, 0),), s16)  # floor((P-N)/256)
        curved = Lookup(table, minimum(maximum(v, 0), CURVE_SIZE - 1), u16)
        return select(v < 0, 0, select(v >= CURVE_SIZE, 255, curved))

    return Kernel.from_fn(f"ccm_curve_{'rgb'[c]}_kernel", fn, u16, u16, u16)


def build(width: int = 64, height: int = 64) -> Program:
    check_sizes("camera", width=width - 6, height=height - 6)
    if width % 2 or height % 2:
        raise ValueError(f"camera: width and height must be even (Bayer quads), got "
                         f"{width}x{height}")
    dw, dh = width - 4, height - 4
    ow, oh = width - 6, height - 6
    prog = Program("camera")
    prog.add_input("input", (width, height), u16)
    prog.add_buffer("hw_input", (width, height), u16)
    loop, i = nest(prog, "hw_input", ("y", height), ("x", width))
    add_op(loop, "hw_input", ("hw_input", i["x"], i["y"]), [("input", i["x"], i["y"])],
           Kernel.from_fn("hw_input_u8", u8, u16))
    prog.add_buffer("denoised", (dw, dh), u16)
    prog.add_buffer("demosaicked", (ow, oh, 3), u16)
    prog.add_output("output", (3, ow, oh), u16)

    loop, i = nest(prog, "denoise", ("y", dh), ("x", dw))
    x, y = i["x"], i["y"]
    taps = [(2, 2), (0, 2), (4, 2), (2, 0), (2, 4)]     # centre, west, east, north, south

    def denoise_fn(c, w, e, n, s):
        hi = maximum(maximum(w, e), maximum(n, s))
        lo = minimum(minimum(w, e), minimum(n, s))
        return minimum(maximum(c, lo), hi)

    add_op(loop, "denoise", ("denoised", x, y), [("hw_input", x + dx, y + dy) for dx, dy in taps],
           Kernel.from_fn("denoise_kernel", denoise_fn, *([u16] * 5)))

    loop, i = nest(prog, "demosaic", ("y", oh), ("x", ow))
    x, y = i["x"], i["y"]
    for c in range(3):
        kernel, offsets = demosaic_kernel(c, loop.name, loop.parent.name)
        add_op(loop, f"demosaic_{'rgb'[c]}", ("demosaicked", x, y, c),
               [("denoised", x + 1 + dx, y + 1 + dy) for dx, dy in offsets], kernel)

    table = curve_table()
    loop, i = nest(prog, "hw_output", ("y", oh), ("x", ow))
    for c in range(3):
        add_op(loop, f"hw_output_{'rgb'[c]}", ("output", c, i["x"], i["y"]),
               [("demosaicked", i["x"], i["y"], k) for k in range(3)], ccm_kernel(c, table))
    return prog.validate()


def make_inputs(seed: int = 0, width: int = 64, height: int = 64) -> dict[str, np.ndarray]:
    raw = test_image(seed, width, height).astype(np.int64)
    rng = np.random.default_rng(seed + 1)
    hot = rng.random((width, height)) < 0.01           # a few hot pixels to suppress
    raw[hot] = 255
    return {"input": raw.astype(np.uint16)}


# --- independent numpy golden ------------------------------------------------------------------

def _denoise(raw: np.ndarray, w: int, h: int) -> np.ndarray:
    c = window(raw, 2, 2, w, h)
    nbrs = np.stack([window(raw, dx, dy, w, h) for dx, dy in ((2, 0), (2, 4), (0, 2), (4, 2))])
    return np.clip(c, nbrs.min(0), nbrs.max(0))


def _demosaic(den: np.ndarray, w: int, h: int) -> np.ndarray:
    """The reference's demosaic over whole arrays. ``den[i, j]`` is the reference's
    ``denoised(i - 1, j - 1)``. Every candidate is an array over the reference coordinates
    ``[-2, w + 1) x [-2, h + 1)`` (index ``[x + 2, y + 2]``), uint8 values (``& 255``);
    ``at(a, dx, dy)`` is ``a(x + dx, y + dy)`` for the ``w x h`` output pixels."""
    B, nx, ny = 2, w + 3, h + 3
    g_gr, r_r, b_b, g_gb = (_shifted(den, dx, dy, B, nx, ny)
                            for dx, dy in ((0, 0), (1, 0), (0, 1), (1, 1)))

    def mean(a, b):
        return ((a + b + 1) & 255) >> 1

    def at(a, dx, dy):
        return a[B + dx:B + dx + w, B + dy:B + dy + h]

    def green(h1, h0, v1, v0):         # green at R or B: the pair that differs less
        return np.where(np.abs(h1 - h0) < np.abs(v1 - v0), mean(h1, h0), mean(v1, v0))

    def box(a, dx, dy):                # a(x + dx, y + dy) on the box without its border
        return a[1 + dx:nx - 1 + dx, 1 + dy:ny - 1 + dy]

    g_r, g_b = np.zeros_like(g_gr), np.zeros_like(g_gr)
    g_r[1:-1, 1:-1] = green(box(g_gr, 1, 0), box(g_gr, 0, 0), box(g_gb, 0, -1), box(g_gb, 0, 0))
    g_b[1:-1, 1:-1] = green(box(g_gb, -1, 0), box(g_gb, 0, 0), box(g_gr, 0, 1), box(g_gr, 0, 0))

    def corrected(g, cross, same, X, Y, a, b):
        """``g(X, Y) - mean(cross(a), cross(b)) + mean(same(a), same(b))``, uint8."""
        return (at(g, X, Y) - mean(at(cross, *a), at(cross, *b))
                + mean(at(same, *a), at(same, *b))) & 255

    def diagonal(g, cross, same, X, Y, p, n):
        dp = np.abs(at(same, *p[0]) - at(same, *p[1]))
        dn = np.abs(at(same, *n[0]) - at(same, *n[1]))
        return np.where(dp < dn, corrected(g, cross, same, X, Y, *p),
                        corrected(g, cross, same, X, Y, *n))

    x_even = (np.arange(w) % 2 == 0)[:, None]
    y_even = (np.arange(h) % 2 == 0)[None, :]

    def interleave(a, b, c, d):
        return np.where(y_even, np.where(x_even, a, b), np.where(x_even, c, d))

    red = interleave(corrected(g_gr, g_r, r_r, 0, 0, (0, 0), (-1, 0)), at(r_r, -1, 0),
                     diagonal(g_b, g_r, r_r, 0, -1, ((0, -1), (-1, 0)), ((-1, -1), (0, 0))),
                     corrected(g_gb, g_r, r_r, -1, -1, (-1, -1), (-1, 0)))
    green_ = interleave(at(g_gr, 0, 0), at(g_r, -1, 0), at(g_b, 0, -1), at(g_gb, -1, -1))
    blue = interleave(corrected(g_gr, g_b, b_b, 0, 0, (0, 0), (0, -1)),
                      diagonal(g_r, g_b, b_b, -1, 0, ((-1, 0), (0, -1)), ((0, 0), (-1, -1))),
                      at(b_b, 0, -1), corrected(g_gb, g_b, b_b, -1, -1, (-1, -1), (0, -1)))
    return np.stack([red, green_, blue], axis=-1)


def _shifted(den: np.ndarray, dx: int, dy: int, border: int, nx: int, ny: int) -> np.ndarray:
    """``denoised(x + dx, y + dy)`` for ``x`` in ``[-border, nx - border)`` (same in y) from
    ``den`` (``den[i, j]`` = ``denoised(i - 1, j - 1)``), 0 outside ``den``."""
    out = np.zeros((nx, ny), dtype=np.int64)
    xs = np.arange(nx) - border + dx + 1
    ys = np.arange(ny) - border + dy + 1
    okx = (xs >= 0) & (xs < den.shape[0])
    oky = (ys >= 0) & (ys < den.shape[1])
    out[np.ix_(okx, oky)] = den[np.ix_(xs[okx], ys[oky])]
    return out


def reference(inputs: dict, width: int = 64, height: int = 64) -> dict[str, np.ndarray]:
    raw = np.asarray(inputs["input"], dtype=np.int64) & 255          # uint8 input
    dw, dh, ow, oh = width - 4, height - 4, width - 6, height - 6
    rgb = _demosaic(_denoise(raw, dw, dh), ow, oh)
    m = np.array(MATRIX, dtype=np.int64)
    corrected = (rgb @ m[:, :3].T + m[:, 3]) // 256          # int32 sum, floor division
    table = np.array(curve_table(), dtype=np.int64)
    curved = np.where(corrected < 0, 0, np.where(corrected >= CURVE_SIZE, 255,
                                                   table[np.clip(corrected, 0, CURVE_SIZE - 1)]))
    return {"output": to_dtype(np.moveaxis(curved, -1, 0), u16)}
