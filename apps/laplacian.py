"""laplacian: Laplacian pyramid with three levels (thesis Table 7.1).

Algorithm: a Gaussian pyramid ``g0 = input``, ``g[k+1] = down(g[k])`` with the 2x2-average
``down`` of :mod:`apps.gpyr` (thesis Fig. 4.13), and the band-pass levels
``lap[k][x, y] = g[k][x, y] - g[k+1][floor(x/2), floor(y/2)]`` (``g[k+1]`` up-sampled by
nearest-neighbour repetition, as in :mod:`apps.upsample`), plus the residual top level
``lap[levels-1] = g[levels-1]``. Band-pass levels are signed (s16). With nearest-neighbour
up-sampling the pyramid reconstructs the input exactly: ``g[k] = lap[k] + up(g[k+1])``.
This is the classic Burt-Adelson construction (the reference flow has a ``laplacian_pyramid``
benchmark, StanfordAHA/Halide-to-Hardware, apps/hardware_benchmarks/apps/laplacian_pyramid),
here with the 2x2 kernels the thesis uses for its pyramid.

Sizes: 64x64 input (Table 7.1), ``levels = 3`` (Table 7.1): outputs ``lap0`` 64x64, ``lap1``
32x32 and ``lap2`` 16x16.

Loop nests: ``hw_input`` copy; one 2x2-window nest per Gaussian level (4 loads, unrolled); one
nest per band-pass level (2 loads, the coarse one with a ``floor(x/2)`` index); a copy of the
residual level into its output.
"""
from __future__ import annotations

import numpy as np

from compiler.ir import Kernel, Program, s16, u16

from compiler.frontend.loopnest import add_op, copy_stage, nest
from ._common import image_inputs, to_dtype, wrap
from .gpyr import check_pyramid, down_kernel, down_reference, down_stage

SIZES = {"width": 64, "height": 64, "levels": 3}


def build(width: int = 64, height: int = 64, levels: int = 3) -> Program:
    check_pyramid("laplacian", width, height, levels - 1)
    prog = Program("laplacian")
    prog.add_input("input", (width, height), u16)
    prog.add_buffer("g0", (width, height), u16)
    copy_stage(prog, "hw_input", "input", "g0", (width, height))
    kernel = down_kernel()
    for k in range(1, levels):
        prog.add_buffer(f"g{k}", (width >> k, height >> k), u16)
        down_stage(prog, f"g{k}", f"g{k - 1}", f"g{k}", width >> k, height >> k, kernel)
    diff = Kernel.from_fn("bandpass_kernel", lambda fine, coarse: fine - coarse, s16, s16)
    for k in range(levels - 1):
        w, h = width >> k, height >> k
        prog.add_output(f"lap{k}", (w, h), s16)
        loop, i = nest(prog, f"lap{k}", ("y", h), ("x", w))
        add_op(loop, f"lap{k}", (f"lap{k}", i["x"], i["y"]),
               [(f"g{k}", i["x"], i["y"]), (f"g{k + 1}", i["x"] // 2, i["y"] // 2)], diff)
    top = levels - 1
    prog.add_output(f"lap{top}", (width >> top, height >> top), u16)
    copy_stage(prog, f"lap{top}", f"g{top}", f"lap{top}", (width >> top, height >> top))
    return prog.validate()


make_inputs = image_inputs


def reference(inputs: dict, width: int = 64, height: int = 64, levels: int = 3):
    g = [np.asarray(inputs["input"], dtype=np.int64)]
    for _ in range(levels - 1):
        g.append(down_reference(g[-1]))
    out = {}
    for k in range(levels - 1):
        up = np.repeat(np.repeat(g[k + 1], 2, 0), 2, 1)
        out[f"lap{k}"] = to_dtype(wrap(g[k] - up, s16), s16)
    out[f"lap{levels - 1}"] = to_dtype(g[-1], u16)
    return out
