"""unsharp: unsharp mask sharpening (thesis Table 7.1, paper Table III).

Algorithm: blur the image with a separable 5x5 binomial Gaussian (``[1 4 6 4 1]`` vertically,
then horizontally, normalised by ``>> 8``) and add the detail back:
``output = clamp(input + (input - blur), 0, 255) = clamp(2*input - blur, 0, 255)``.
This is the sharpening core of the reference flow's app (StanfordAHA/Halide-to-Hardware,
apps/hardware_benchmarks/apps/unsharp/unsharp_generator.cpp: 5-tap Gaussian blur, ``sharpen =
2*gray - blur`` clamped to 8 bits); its grayscale conversion and ``ratio`` division are left out
because the PE has no divider. 16-bit unsigned arithmetic for the blur (at most 16*255 after the
vertical pass, 65280 after the horizontal one), signed for the sharpening.

Sizes (Table 7.1): 64x64 input tile, vertical blur 64x60, output 60x60 (the reference flow's
60x60 output).

Loop nests: ``hw_input`` copy, ``blur_y`` (5 loads, unrolled), ``blur_x`` (5 loads, unrolled),
``sharpen`` (reads the input pixel and the blur) -- a four-stage stencil pipeline.

``unroll = U`` (default 1; thesis §7.3.1, Fig. 7.5c): every stage's ``x`` loop unrolled by
``U`` -- ``U`` parallel ops per stage and iteration, the input streamed ``U`` pixels per cycle
through ``U`` lanes of the copy stage -- as the reference flow's unrolled stencil schedules do
(its gaussian: ``f.unroll(x, U, TailStrategy::RoundUp)`` on every stage and on
``hw_input.in()``). With ``RoundUp`` each stage computes the width its consumers need rounded
up to a multiple of ``U`` (``tile``): the output is ``round_up(width - 4, U)`` wide, the
vertical blur and the input ``round_up(that + 4, U)``. ``unroll = 1`` is the program above,
unchanged.
"""
from __future__ import annotations

import numpy as np

from compiler.ir import Kernel, Program, maximum, minimum, s16, u16

from compiler.frontend.loopnest import image_program, round_up, stencil_kernel, unrolled_stage
from ._common import check_sizes, test_image, to_dtype, weighted_window, wrap

SIZES = {"width": 64, "height": 64, "unroll": 1}
TAPS = (1, 4, 6, 4, 1)
SHIFT = 8


def tile(width: int, unroll: int) -> tuple[int, int]:
    """``(input width, output width)`` with the ``x`` loops unrolled by ``unroll``
    (``TailStrategy::RoundUp``); the vertical blur is as wide as the input. ``(width,
    width - 4)`` for ``unroll = 1``."""
    out = round_up(width - 4, unroll)
    return round_up(out + 4, unroll), out      # blur_x reads blur_y[x .. x+4]


def build(width: int = 64, height: int = 64, unroll: int = 1) -> Program:
    check_sizes("unsharp", width=width - 4, height=height - 4, unroll=unroll)
    (iw, ow), oh = tile(width, unroll), height - 4
    prog = image_program("unsharp", iw, height, unroll)
    prog.add_buffer("blur_y", (iw, oh), u16)
    prog.add_buffer("blur_x", (ow, oh), u16)
    prog.add_output("output", (ow, oh), u16)

    unrolled_stage(prog, "blur_y", oh, iw, unroll, lambda x, y: (
        ("blur_y", x, y), [("hw_input", x, y + d) for d in range(5)]),
        stencil_kernel("blur_y_kernel", [[t] for t in TAPS]))
    unrolled_stage(prog, "blur_x", oh, ow, unroll, lambda x, y: (
        ("blur_x", x, y), [("blur_y", x + d, y) for d in range(5)]),
        stencil_kernel("blur_x_kernel", [TAPS], SHIFT))
    unrolled_stage(prog, "sharpen", oh, ow, unroll, lambda x, y: (
        ("output", x, y), [("hw_input", x + 2, y + 2), ("blur_x", x, y)]),
        Kernel.from_fn("sharpen_kernel",
                       lambda v, b: minimum(maximum(v * 2 - b, 0), 255), s16, s16))
    return prog.validate()


def make_inputs(seed: int = 0, width: int = 64, height: int = 64, unroll: int = 1) -> dict:
    return {"input": test_image(seed, tile(width, unroll)[0], height)}


def reference(inputs: dict, width: int = 64, height: int = 64,
              unroll: int = 1) -> dict[str, np.ndarray]:
    img = np.asarray(inputs["input"], dtype=np.int64)
    (iw, ow), oh = tile(width, unroll), height - 4
    blur_y = wrap(weighted_window(img, [[t] for t in TAPS], iw, oh), u16)
    blur = wrap(weighted_window(blur_y, [TAPS], ow, oh), u16) >> SHIFT
    # the sharpening kernel reads both operands as s16 and computes 2*v - b in s16
    v, b = wrap(img[2:2 + ow, 2:2 + oh], s16), wrap(blur, s16)
    sharp = np.clip(wrap(2 * v - b, s16), 0, 255)
    return {"output": to_dtype(sharp, u16)}
