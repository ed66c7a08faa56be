"""brighten_blur: the running example of the thesis (Fig. 4.1; the reference flow's
``brighten_and_blur`` benchmark, StanfordAHA/Halide-to-Hardware,
apps/hardware_benchmarks/apps/brighten_and_blur).

Algorithm (Fig. 4.1a): for each of ``tiles`` input tiles, ``brighten = input * 2`` and
``blur[x, y] = (brighten[x, y] + brighten[x+1, y] + brighten[x, y+1] + brighten[x+1, y+1]) / 4``,
the average computed as ``>> 2``. 16-bit unsigned.

Sizes (Fig. 4.1): 16 tiles of 64x64 (input 64x64x16), blur 63x63 per tile (output 63x63x16).

Loop nests: exactly Fig. 4.1b: an outer tile loop ``t`` containing the brighten nest (1 load)
and the blur nest (the 2x2 window fully unrolled: 4 loads); ``brighten`` is a 2-D buffer that
every tile overwrites.
"""
from __future__ import annotations

import numpy as np

from compiler.ir import Kernel, Program, u16

from compiler.frontend.loopnest import add_op, nest, stencil_kernel
from ._common import check_sizes, test_image, to_dtype, wrap

SIZES = {"width": 64, "height": 64, "tiles": 16}


def build(width: int = 64, height: int = 64, tiles: int = 16) -> Program:
    check_sizes("brighten_blur", width=width - 1, height=height - 1, tiles=tiles)
    prog = Program("brighten_blur")
    prog.add_input("input", (width, height, tiles), u16)
    prog.add_buffer("brighten", (width, height), u16)
    prog.add_output("blur", (width - 1, height - 1, tiles), u16)
    t = prog.add_loop("t", 0, tiles)
    loop, i = nest(t, "br", ("y", height), ("x", width))
    add_op(loop, "brighten", ("brighten", i["x"], i["y"]), [("input", i["x"], i["y"], t.var)],
           Kernel.from_fn("brighten_kernel", lambda a: a * 2, u16))
    loop, i = nest(t, "bl", ("y", height - 1), ("x", width - 1))
    add_op(loop, "blur", ("blur", i["x"], i["y"], t.var),
           [("brighten", i["x"] + dx, i["y"] + dy) for dx, dy in ((0, 0), (1, 0), (0, 1), (1, 1))],
           stencil_kernel("blur_kernel", [[1, 1, 1, 1]], 2))
    return prog.validate()


def make_inputs(seed: int = 0, width: int = 64, height: int = 64, tiles: int = 16):
    return {"input": test_image(seed, width, height, tiles)}


def reference(inputs: dict, width: int = 64, height: int = 64, tiles: int = 16):
    br = wrap(np.asarray(inputs["input"], dtype=np.int64) * 2, u16)
    s = br[:-1, :-1] + br[1:, :-1] + br[:-1, 1:] + br[1:, 1:]
    return {"blur": to_dtype(wrap(s, u16) >> 2, u16)}
