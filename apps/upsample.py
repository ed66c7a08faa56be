"""upsample: nearest-neighbour up-sampling by 2 (thesis Table 7.1 "up sampling by repeating
pixels", paper Table III; in Halide ``output(x, y) = input(x/2, y/2)``).

Algorithm: ``output[x, y] = input[floor(x/2), floor(y/2)]``; no arithmetic.

Sizes (Table 7.1): 64x64 input tile, 128x128 output (so the output stream, 16384 pixels, is
the lower bound of a 1 pixel/cycle schedule).

Loop nests: ``hw_input`` copy, then one nest over the 128x128 output whose single load uses the
quasi-affine index ``floor(x/2)`` (each input pixel is read four times).
"""
from __future__ import annotations

import numpy as np

from compiler.ir import Program, u16

from compiler.frontend.loopnest import add_op, image_program, nest, pass_kernel
from ._common import check_sizes, image_inputs, to_dtype

SIZES = {"width": 64, "height": 64, "factor": 2}


def build(width: int = 64, height: int = 64, factor: int = 2) -> Program:
    check_sizes("upsample", width=width, height=height, factor=factor)
    prog = image_program("upsample", width, height)
    prog.add_output("output", (width * factor, height * factor), u16)
    loop, i = nest(prog, "upsample", ("y", height * factor), ("x", width * factor))
    add_op(loop, "upsample", ("output", i["x"], i["y"]),
           [("hw_input", i["x"] // factor, i["y"] // factor)], pass_kernel("upsample_pass"))
    return prog.validate()


make_inputs = image_inputs


def reference(inputs: dict, width: int = 64, height: int = 64, factor: int = 2):
    img = np.asarray(inputs["input"], dtype=np.int64)
    return {"output": to_dtype(np.repeat(np.repeat(img, factor, 0), factor, 1), u16)}
