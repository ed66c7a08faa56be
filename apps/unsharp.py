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
"""
from __future__ import annotations

import numpy as np

from compiler.ir import Kernel, Program, maximum, minimum, s16, u16

from ._common import (add_op, check_sizes, image_inputs, image_program, nest, stencil_kernel,
                      to_dtype, weighted_window, wrap)

SIZES = {"width": 64, "height": 64}
TAPS = (1, 4, 6, 4, 1)
SHIFT = 8


def build(width: int = 64, height: int = 64) -> Program:
    check_sizes("unsharp", width=width - 4, height=height - 4)
    ow, oh = width - 4, height - 4
    prog = image_program("unsharp", width, height)
    prog.add_buffer("blur_y", (width, oh), u16)
    prog.add_buffer("blur_x", (ow, oh), u16)
    prog.add_output("output", (ow, oh), u16)

    loop, i = nest(prog, "blur_y", ("y", oh), ("x", width))
    add_op(loop, "blur_y", ("blur_y", i["x"], i["y"]),
           [("hw_input", i["x"], i["y"] + d) for d in range(5)],
           stencil_kernel("blur_y_kernel", [[t] for t in TAPS]))
    loop, i = nest(prog, "blur_x", ("y", oh), ("x", ow))
    add_op(loop, "blur_x", ("blur_x", i["x"], i["y"]),
           [("blur_y", i["x"] + d, i["y"]) for d in range(5)],
           stencil_kernel("blur_x_kernel", [TAPS], SHIFT))

    loop, i = nest(prog, "sharpen", ("y", oh), ("x", ow))
    add_op(loop, "sharpen", ("output", i["x"], i["y"]),
           [("hw_input", i["x"] + 2, i["y"] + 2), ("blur_x", i["x"], i["y"])],
           Kernel.from_fn("sharpen_kernel",
                          lambda v, b: minimum(maximum(v * 2 - b, 0), 255), s16, s16))
    return prog.validate()


make_inputs = image_inputs


def reference(inputs: dict, width: int = 64, height: int = 64) -> dict[str, np.ndarray]:
    img = np.asarray(inputs["input"], dtype=np.int64)
    ow, oh = width - 4, height - 4
    blur_y = wrap(weighted_window(img, [[t] for t in TAPS], width, oh), u16)
    blur = wrap(weighted_window(blur_y, [TAPS], ow, oh), u16) >> SHIFT
    sharp = np.clip(2 * img[2:2 + ow, 2:2 + oh] - blur, 0, 255)
    return {"output": to_dtype(sharp, u16)}
