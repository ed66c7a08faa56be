"""gaussian: 3x3 Gaussian blur (thesis Table 7.1, paper Table III, DESIGN §7).

Algorithm: ``output[x, y] = sum(W[dy][dx] * input[x+dx, y+dy]) >> 4`` with the binomial weights
``W = [1 2 1; 2 4 2; 1 2 1]`` (sum 16), i.e. the 3x3 Gaussian approximation of the reference
flow's app (StanfordAHA/Halide-to-Hardware, apps/hardware_benchmarks/apps/gaussian/
gaussian_generator.cpp: a 3x3 ``RDom`` window, fixed-point weights normalised by a shift instead
of a division). 16-bit unsigned arithmetic, 8-bit pixels: the weighted sum is at most 4080.

Sizes (Table 7.1): a 64x64 input tile, 62x62 output (valid window, no padding).

Loop nests (the lowering of the reference Halide schedule ``hw_input.stream_to_accelerator();
blur.update().unroll(win.x).unroll(win.y)``): ``hw_input`` copies the input stream into a CGRA
memory, then one nest over the output tile whose single op has the 3x3 reduction FULLY UNROLLED
(9 loads, one kernel) -- the stencil-pipeline case of the scheduler (paper Fig. 7).
"""
from __future__ import annotations

import numpy as np

from compiler.ir import Program, u16

from ._common import (add_op, check_sizes, image_inputs, image_program, nest, stencil_kernel,
                      to_dtype, weighted_window, window_loads, wrap)

SIZES = {"width": 64, "height": 64}
WEIGHTS = ((1, 2, 1), (2, 4, 2), (1, 2, 1))
SHIFT = 4


def blur_stage(prog: Program, stage: str, src: str, dst: str, width: int, height: int):
    """One 3x3 Gaussian nest over a ``width`` x ``height`` output: ``dst = blur(src)``."""
    loop, i = nest(prog, stage, ("y", height), ("x", width))
    return add_op(loop, stage, (dst, i["x"], i["y"]),
                  window_loads(src, i["x"], i["y"], 3, 3),
                  stencil_kernel(f"{stage}_kernel", WEIGHTS, SHIFT))


def blur_reference(a: np.ndarray, width: int, height: int) -> np.ndarray:
    return wrap(weighted_window(a, WEIGHTS, width, height), u16) >> SHIFT


def build(width: int = 64, height: int = 64) -> Program:
    check_sizes("gaussian", width=width - 2, height=height - 2)
    prog = image_program("gaussian", width, height)
    prog.add_output("output", (width - 2, height - 2), u16)
    blur_stage(prog, "blur", "hw_input", "output", width - 2, height - 2)
    return prog.validate()


make_inputs = image_inputs


def reference(inputs: dict, width: int = 64, height: int = 64) -> dict[str, np.ndarray]:
    out = blur_reference(inputs["input"], width - 2, height - 2)
    return {"output": to_dtype(out, u16)}
