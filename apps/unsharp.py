"""unsharp: unsharp-mask sharpening of an RGB image (thesis Table 7.1, paper Table III).

The reference flow's app, algorithm and constants as its generator writes them
(StanfordAHA/Halide-to-Hardware, apps/hardware_benchmarks/apps/unsharp/unsharp_generator.cpp,
the CoreIR schedule branch):

* the input is ``uint8``: the copy into the accelerator keeps the low 8 bits of each 16-bit input
  word (``hw_input = input & 255``; for 8-bit pixels a copy);
* ``gray = (77*r + 150*g + 29*b) >> 8`` on 16-bit words (Halide ``cast<uint8_t>``: at most 255);
* ``blur_unnormalized = sum(kernel[dx] * gray[x+dx, y+dy])`` over a 5x5 window, in 16 bits with
  wrap-around (Halide's ``uint16`` update; the sum of the weights times 255 exceeds 16 bits, so
  bright regions wrap exactly as in the reference). The weights are the reference's
  ``kernel(win.x)``: ``kernel_f(x) = exp(-x^2 / (2 sigma^2)) / (sqrt(2 pi) sigma)``, sigma = 1.5,
  normalised to 8 bits by ``kernel_f(x) * 255 / sum(kernel_f(-2..2))`` and truncated, *indexed
  by the window's x from 0* (``kernel(0..4)``, not centred): ``(74, 59, 30, 10, 2)``
  (:func:`gaussian_weights`, computed in float32 as Halide does); every row of the window uses
  the same weights (the reference weights by ``win.x`` only);
* ``blur = blur_unnormalized / 256``; ``sharpen = clamp(2*gray - blur, 0, 255)`` in unsigned
  16 bits (a negative difference wraps to a large word and clamps to 255, as Halide's
  ``uint16`` does); ``sharpen`` and ``ratio`` read ``gray(x, y)``, the window's corner, as the
  reference does (its blur is not centred on the pixel it sharpens);
* ``ratio = clamp(sharpen * 32 / max(gray, 1), 0, 255)``: an unsigned division by a pixel
  value, the PE's ``UDIV`` (docs/pe.md has what the divider costs);
* ``output = clamp(ratio * gray / 32, 0, 255)``.

Schedule, as the reference's: ``blur_unnormalized.linebuffer()`` with its 5x5 window fully
unrolled (one op, 25 loads), ``ratio.linebuffer()``, ``sharpen`` and ``blur`` inlined into
``ratio``, the weights constants (``kernel.compute_at(hw_output, xo).unroll(x)``), output tile
60x60. One deliberate difference: the stored generator accelerates from ``gray``
(``hw_output.accelerate({gray}, ...)``, ``gray.stream_to_accelerator()``), i.e. its host computes
the grayscale image; here the RGB image is streamed in (three channel lanes, ``hw_input[x, y,
c]``, the reference's commented-out ``hw_input.unroll(c)``) and ``gray`` is the accelerator's
first stage: the whole algorithm on the array, and the buffers the paper counts for unsharp
(Table VII's 23584 sequential words are 3 x 64 x 64 RGB + 64 x 64 gray + 60 x 60 blur + 60 x 60
ratio).

Sizes (Table 7.1): a 64x64x3 input tile, 64x64 gray, 60x60 blur, ratio and output.

``unroll = U`` (default 1; thesis §7.3.1, Fig. 7.5c): every stage's ``x`` loop unrolled by
``U`` (``U`` parallel ops per stage, the input streamed ``U`` pixels per channel per cycle), as
the reference flow's unrolled stencil schedules do (``f.unroll(x, U, TailStrategy::RoundUp)``);
with ``RoundUp`` the output is ``round_up(width - 4, U)`` wide and gray and the input
``round_up(that + 4, U)`` (``tile``). ``unroll = 1`` is the program above.
"""
from __future__ import annotations

import math

import numpy as np

from compiler.ir import Kernel, Program, maximum, minimum, u16

from compiler.frontend.loopnest import round_up, unrolled_stage

from ._common import check_sizes, test_image, to_dtype, weighted_window, wrap

SIZES = {"width": 64, "height": 64, "unroll": 1}
BLOCK = 5
SIGMA = 1.5
GRAY = (77, 150, 29)


def gaussian_weights(sigma: float = SIGMA, block: int = BLOCK) -> tuple[int, ...]:
    """The reference's 8-bit weights ``kernel(0..block-1)`` (module docstring), in float32."""
    f32 = np.float32
    scale = f32(math.sqrt(2 * math.pi)) * f32(sigma)

    def kernel_f(x: int) -> np.float32:
        return f32(np.exp(f32(-x * x) / f32(2 * sigma * sigma))) / scale

    total = kernel_f(-(block // 2))
    for i in range(1, block):
        total = kernel_f(i - block // 2) + total
    return tuple(int(kernel_f(x) * f32(255) / total) for x in range(block))


WEIGHTS = gaussian_weights()


def tile(width: int, unroll: int) -> tuple[int, int]:
    """``(input width, output width)`` with the ``x`` loops unrolled by ``unroll``
    (``TailStrategy::RoundUp``); gray is as wide as the input. ``(width, width - 4)`` for
    ``unroll = 1``."""
    out = round_up(width - (BLOCK - 1), unroll)
    return round_up(out + BLOCK - 1, unroll), out


def _gray(r, g, b):
    return (r * GRAY[0] + g * GRAY[1] + b * GRAY[2]) >> 8


def _blur(*taps):
    """``sum(kernel[dx] * tap)`` over the 5x5 window (taps dy outer, dx inner)."""
    acc = None
    for k, tap in enumerate(taps):
        term = tap * WEIGHTS[k % BLOCK]
        acc = term if acc is None else acc + term
    return acc


def _ratio(blur_unnormalized, gray):
    sharpen = minimum(maximum(gray * 2 - (blur_unnormalized >> 8), 0), 255)
    return minimum(maximum((sharpen * 32) // maximum(gray, 1), 0), 255)


def _output(ratio, gray):
    return minimum(maximum((ratio * gray) >> 5, 0), 255)


def build(width: int = 64, height: int = 64, unroll: int = 1) -> Program:
    check_sizes("unsharp", width=width - 4, height=height - 4, unroll=unroll)
    (iw, ow), oh = tile(width, unroll), height - 4
    prog = Program("unsharp")
    prog.add_input("input", (iw, height, 3), u16)
    prog.add_buffer("hw_input", (iw, height, 3), u16)
    for c in range(3):
        unrolled_stage(prog, f"hw_input_{c}", height, iw, unroll, lambda x, y, c=c: (
            ("hw_input", x, y, c), [("input", x, y, c)]), Kernel.from_fn(
                f"hw_input_{c}_u8", lambda a: a & 255, u16))
    prog.add_buffer("gray", (iw, height), u16)
    prog.add_buffer("blur_unnormalized", (ow, oh), u16)
    prog.add_buffer("ratio", (ow, oh), u16)
    prog.add_output("output", (ow, oh), u16)
    unrolled_stage(prog, "gray", height, iw, unroll, lambda x, y: (
        ("gray", x, y), [("hw_input", x, y, c) for c in range(3)]),
        Kernel.from_fn("gray_kernel", _gray, u16, u16, u16))
    unrolled_stage(prog, "blur_unnormalized", oh, ow, unroll, lambda x, y: (
        ("blur_unnormalized", x, y),
        [("gray", x + dx, y + dy) for dy in range(BLOCK) for dx in range(BLOCK)]),
        Kernel.from_fn("blur_kernel", _blur, *([u16] * BLOCK * BLOCK)))
    unrolled_stage(prog, "ratio", oh, ow, unroll, lambda x, y: (
        ("ratio", x, y), [("blur_unnormalized", x, y), ("gray", x, y)]),
        Kernel.from_fn("ratio_kernel", _ratio, u16, u16))
    unrolled_stage(prog, "hw_output", oh, ow, unroll, lambda x, y: (
        ("output", x, y), [("ratio", x, y), ("gray", x, y)]),
        Kernel.from_fn("output_kernel", _output, u16, u16))
    return prog.validate()


def make_inputs(seed: int = 0, width: int = 64, height: int = 64, unroll: int = 1) -> dict:
    return {"input": test_image(seed, tile(width, unroll)[0], height, 3)}


def reference(inputs: dict, width: int = 64, height: int = 64,
              unroll: int = 1) -> dict[str, np.ndarray]:
    rgb = np.asarray(inputs["input"], dtype=np.int64) & 255          # uint8 input
    (iw, ow), oh = tile(width, unroll), height - 4
    gray = (GRAY[0] * rgb[..., 0] + GRAY[1] * rgb[..., 1] + GRAY[2] * rgb[..., 2]) >> 8
    rows = [list(WEIGHTS)] * BLOCK
    blur_unnormalized = wrap(weighted_window(gray, rows, ow, oh), u16)
    g = gray[:ow, :oh]
    sharpen = np.minimum(wrap(2 * g - (blur_unnormalized >> 8), u16), 255)
    ratio = np.minimum(sharpen * 32 // np.maximum(g, 1), 255)
    return {"output": to_dtype(np.minimum((ratio * g) >> 5, 255), u16)}
