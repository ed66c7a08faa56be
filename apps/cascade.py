"""cascade: two cascaded 3x3 binomial convolutions (the reference flow's ``cascade`` benchmark).

Algorithm, as the reference flow's generator writes it (StanfordAHA/Halide-to-Hardware,
apps/hardware_benchmarks/apps/cascade/cascade_generator.cpp), all in its ``uint16`` arithmetic:

* ``hw_input = u16(input)`` (the input is ``uint8``; for 8-bit pixels a copy);
* ``conv1(x, y) = sum(K[dy][dx] * hw_input(x+dx, y+dy))`` and
  ``conv2(x, y) = sum(K[dy][dx] * conv1(x+dx, y+dy))`` over a 3x3 ``RDom``, with the binomial
  kernel ``K = [1 2 1; 2 4 2; 1 2 1]`` (:data:`KERNEL`) and no normalisation: the first
  convolution's sums (at most 16 * 255 = 4080) feed the second unscaled, whose sums (at most
  16 * 4080 = 65280) fit the 16 bits (the generator's ``u16`` would wrap them above);
* ``output = u8(conv2)``: the generator's ``cast<uint8_t>``, the low 8 bits of each sum
  (``& 255``, :data:`OUTPUT_MASK`), kept here in a 16-bit word.

Schedule: the generator's CoreIR branch (and, with the same buffers, its Clockwork branch):
``hw_input.stream_to_accelerator()``, ``conv1`` and ``conv2`` stored at the tile and computed
per output pixel (line-buffered), each reduction fully unrolled (``unroll(r.x).unroll(r.y)``).
The loop nests: the ``hw_input`` copy, then ``conv1`` into the ``conv1`` buffer, then one op
computing ``conv2`` and its cast into ``output`` (``conv2`` is read only at the pixel
``hw_output`` computes, so it is that op's sum, not a buffer of its own); each convolution one
op of 9 loads -- a two-stage stencil pipeline whose intermediate the scheduler fuses into a
line buffer.

Sizes: the generator's 64x64 input tile (thesis Table 7.1's stencil tile), ``conv1`` on 62x62, a 60x60 output (valid windows,
no padding: its ``outImgSize = inImgSize - 4``).
"""
from __future__ import annotations

import numpy as np

from compiler.ir import Kernel, Program, u16

from compiler.frontend.loopnest import (image_program, stencil_kernel, unrolled_stage,
                                        weighted_sum, window_loads)
from ._common import check_sizes, image_inputs, to_dtype, weighted_window, wrap

SIZES = {"width": 64, "height": 64}
KERNEL = ((1, 2, 1), (2, 4, 2), (1, 2, 1))
OUTPUT_MASK = 255              # cast<uint8_t>(conv2)


def _conv_stage(prog: Program, stage: str, src: str, dst: str, width: int, height: int,
                kernel: Kernel) -> None:
    """``dst[x, y] = kernel(src's 3x3 window at (x, y))`` over a ``width`` x ``height`` tile."""
    unrolled_stage(prog, stage, height, width, 1,
                   lambda x, y: ((dst, x, y), window_loads(src, x, y, 3, 3)), kernel)


def _output_kernel() -> Kernel:
    """``u8(sum(K[dy][dx] * conv1 tap))``: the second convolution and the generator's cast."""
    flat = [w for row in KERNEL for w in row]
    return Kernel.from_fn("conv2_kernel", lambda *a: weighted_sum(a, flat) & OUTPUT_MASK,
                          *([u16] * len(flat)))


def build(width: int = 64, height: int = 64) -> Program:
    check_sizes("cascade", width=width - 4, height=height - 4)
    prog = image_program("cascade", width, height)
    prog.add_buffer("conv1", (width - 2, height - 2), u16)
    prog.add_output("output", (width - 4, height - 4), u16)
    _conv_stage(prog, "conv1", "hw_input", "conv1", width - 2, height - 2,
                stencil_kernel("conv1_kernel", KERNEL))
    _conv_stage(prog, "conv2", "conv1", "output", width - 4, height - 4, _output_kernel())
    return prog.validate()


make_inputs = image_inputs


def reference(inputs: dict, width: int = 64, height: int = 64) -> dict[str, np.ndarray]:
    conv1 = wrap(weighted_window(inputs["input"], KERNEL, width - 2, height - 2), u16)
    conv2 = wrap(weighted_window(conv1, KERNEL, width - 4, height - 4), u16)
    return {"output": to_dtype(conv2 & OUTPUT_MASK, u16)}
