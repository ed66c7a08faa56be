"""cascade: two cascaded 3x3 Gaussian blurs (the reference flow's ``cascade`` benchmark,
StanfordAHA/Halide-to-Hardware, apps/hardware_benchmarks/apps/cascade/cascade_generator.cpp:
two back-to-back 3x3 convolutions, each line-buffered).

Algorithm: ``blur1 = G(input)``, ``output = G(blur1)`` with ``G`` the 3x3 binomial blur
``[1 2 1; 2 4 2; 1 2 1] >> 4`` (the reference's kernel; the reference itself does not normalise
the first blur and keeps the low 8 bits of the second, docs/apps.md), 16-bit unsigned
arithmetic.

Sizes: a 64x64 input tile (Table 7.1 stencil size), 62x62 intermediate, 60x60 output.

Loop nests: ``hw_input`` copy, then two nests over their output tiles, each a single op with the
3x3 window fully unrolled (9 loads) -- a two-stage stencil pipeline whose intermediate buffer
the scheduler fuses into a line buffer.
"""
from __future__ import annotations

import numpy as np

from compiler.ir import Program, u16

from compiler.frontend.loopnest import image_program
from ._common import check_sizes, image_inputs, to_dtype
from .gaussian import blur_reference, blur_stage

SIZES = {"width": 64, "height": 64}
BINOMIAL = ((1, 2, 1), (2, 4, 2), (1, 2, 1))
SHIFT = 4


def build(width: int = 64, height: int = 64) -> Program:
    check_sizes("cascade", width=width - 4, height=height - 4)
    prog = image_program("cascade", width, height)
    prog.add_buffer("blur1", (width - 2, height - 2), u16)
    prog.add_output("output", (width - 4, height - 4), u16)
    blur_stage(prog, "blur1", "hw_input", "blur1", width - 2, height - 2, 1, BINOMIAL, SHIFT)
    blur_stage(prog, "blur2", "blur1", "output", width - 4, height - 4, 1, BINOMIAL, SHIFT)
    return prog.validate()


make_inputs = image_inputs


def reference(inputs: dict, width: int = 64, height: int = 64) -> dict[str, np.ndarray]:
    blur1 = blur_reference(inputs["input"], width - 2, height - 2, BINOMIAL, SHIFT)
    return {"output": to_dtype(blur_reference(blur1, width - 4, height - 4, BINOMIAL, SHIFT),
                               u16)}
