"""gaussian: 3x3 Gaussian blur (thesis Table 7.1, paper Table III, docs/design.md §7).

Algorithm, as the reference flow's app writes it (StanfordAHA/Halide-to-Hardware,
apps/hardware_benchmarks/apps/gaussian/gaussian_generator.cpp, the CoreIR schedule branch):
``output[x, y] = sum(W[dy][dx] * input[x+dx, y+dy]) / 256`` over a 3x3 ``RDom`` window, with the
weights of a sigma = 1.5 Gaussian, ``kernel_f(x) = exp(-x^2 / (2 sigma^2)) / (sqrt(2 pi) sigma)``,
as the outer product ``kernel_f(x-1) * kernel_f(y-1) * 256 / sum`` truncated to integers
(:func:`gaussian_weights`, float32 as Halide computes them): ``W = [24 30 24; 30 37 30; 24 30
24]`` (sum 253). The reference sums in int32; 8-bit pixels keep the sum below 253 * 255 = 64515,
so 16-bit unsigned words hold it exactly.

Sizes (Table 7.1): a 64x64 input tile, 62x62 output (valid window, no padding).

Loop nests (the lowering of the reference Halide schedule ``hw_input.stream_to_accelerator();
blur.update().unroll(win.x).unroll(win.y)``): ``hw_input`` copies the input stream into a CGRA
memory, then one nest over the output tile whose single op has the 3x3 reduction FULLY UNROLLED
(9 loads, one kernel) -- the stencil-pipeline case of the scheduler (paper Fig. 7).

``unroll = U`` (default 1; thesis §7.3.1, Fig. 7.5a): the output ``x`` loop unrolled by ``U``,
``U`` parallel blur ops per iteration (``blur_0 .. blur_{U-1}``, pixel ``x = U*xo + u``), the
input streamed ``U`` pixels per cycle through ``U`` lanes of the copy stage -- the reference
flow's unrolled schedule (Halide-to-Hardware ``apps/gaussian``, its unrolled Clockwork
schedule: ``hw_input.in().unroll(x, U, TailStrategy::RoundUp)``,
``blur_unnormalized.update().unroll(x, U, TailStrategy::RoundUp)``, ``hw_output.unroll(xi, U,
TailStrategy::RoundUp)``). With ``RoundUp`` every unrolled stage computes a width rounded up to a
multiple of ``U``: the output is ``round_up(width - 2, U)`` wide and the input
``round_up(that + 2, U)`` (``tile``); ``unroll = 1`` is the program above, unchanged.
"""
from __future__ import annotations

import math

import numpy as np

from compiler.ir import Program, u16

from compiler.frontend.loopnest import (image_program, round_up, stencil_kernel, unrolled_stage,
                                        window_loads)
from ._common import check_sizes, test_image, to_dtype, weighted_window, wrap

SIZES = {"width": 64, "height": 64, "unroll": 1}
SIGMA = 1.5
SHIFT = 8                  # blur_unnormalized / 256


def gaussian_weights(sigma: float = SIGMA, block: int = 3) -> tuple[tuple[int, ...], ...]:
    """The reference's weights ``kernel(x, y)`` (module docstring), rows ``y``, in float32."""
    f32 = np.float32
    scale = f32(math.sqrt(2 * math.pi)) * f32(sigma)

    def kernel_f(x: int) -> np.float32:
        return f32(np.exp(f32(-x * x) / f32(2 * sigma * sigma))) / scale

    total = None
    for i in range(block):
        for j in range(block):
            p = kernel_f(i - block // 2) * kernel_f(j - block // 2)
            total = p if total is None else p + total
    return tuple(tuple(int(kernel_f(x - block // 2) * kernel_f(y - block // 2) * f32(256.0)
                           / total) for x in range(block)) for y in range(block))


WEIGHTS = gaussian_weights()


def blur_stage(prog: Program, stage: str, src: str, dst: str, width: int, height: int,
               unroll: int = 1, weights=WEIGHTS, shift: int = SHIFT):
    """One 3x3 blur nest over a ``width`` x ``height`` output: ``dst = blur(src)``, its ``x``
    loop unrolled by ``unroll`` (one op per lane)."""
    return unrolled_stage(prog, stage, height, width, unroll,
                          lambda x, y: ((dst, x, y), window_loads(src, x, y, 3, 3)),
                          stencil_kernel(f"{stage}_kernel", weights, shift))


def blur_reference(a: np.ndarray, width: int, height: int, weights=WEIGHTS,
                   shift: int = SHIFT) -> np.ndarray:
    return wrap(weighted_window(a, weights, width, height), u16) >> shift


def tile(width: int, unroll: int) -> tuple[int, int]:
    """``(input width, output width)`` of the tile with the ``x`` loops unrolled by ``unroll``
    (``TailStrategy::RoundUp``); ``(width, width - 2)`` for ``unroll = 1``."""
    out = round_up(width - 2, unroll)
    return round_up(out + 2, unroll), out


def build(width: int = 64, height: int = 64, unroll: int = 1) -> Program:
    check_sizes("gaussian", width=width - 2, height=height - 2, unroll=unroll)
    iw, ow = tile(width, unroll)
    prog = image_program("gaussian", iw, height, unroll)
    prog.add_output("output", (ow, height - 2), u16)
    blur_stage(prog, "blur", "hw_input", "output", ow, height - 2, unroll)
    return prog.validate()


def make_inputs(seed: int = 0, width: int = 64, height: int = 64, unroll: int = 1) -> dict:
    return {"input": test_image(seed, tile(width, unroll)[0], height)}


def reference(inputs: dict, width: int = 64, height: int = 64,
              unroll: int = 1) -> dict[str, np.ndarray]:
    out = blur_reference(inputs["input"], tile(width, unroll)[1], height - 2)
    return {"output": to_dtype(out, u16)}
