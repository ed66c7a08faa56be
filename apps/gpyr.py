"""gpyr: Gaussian pyramid (thesis Table 7.1 "Gaussian pyramid with four levels of down
sampling"; thesis §4.3.3, Fig. 4.13 shows the 3-level instance of the same loop nest).

Algorithm (Fig. 4.13): each level is the 2x2 average of the level below,
``p[k+1][x, y] = (p[k][2x, 2y] + p[k][2x+1, 2y] + p[k][2x, 2y+1] + p[k][2x+1, 2y+1]) >> 2``
(the figure's ``/4``; pixels are non-negative so the shift is the division), 16-bit unsigned.
Fig. 4.13 has two typos this module does not copy: level 1 iterates over the downsampled
extent (32x32 for a 64x64 input, not 64x64), and level 2 reads only ``p1``.

Sizes: a 64x64 input (Table 7.1) and ``levels = 4`` down-sampling kernels (Table 7.1 "four
levels of down sampling"; consistent with Table 7.6's 16 PEs without sharing if each 2x2 kernel
takes 4), giving 32x32, 16x16, 8x8 and 4x4 levels. As in
Fig. 4.13 the intermediate levels live in CGRA memories and the last level is the output.

Loop nests: the ``hw_input`` copy (Fig. 4.13 lines 3-6), then one nest per level with the 2x2
window fully unrolled (4 loads with stride-2 indices). ``share=True`` is the compute-sharing
variant of thesis §4.3.3 / Fig. 4.15 / Table 7.6: every level's op names the same compute unit
``pyramid`` (``Op.add_function(kernel, unit="pyramid")``), so one 2x2-average unit serves all
levels in turn.
"""
from __future__ import annotations

import numpy as np

from compiler.ir import Program, u16

from compiler.frontend.loopnest import add_op, image_program, nest, stencil_kernel, window_loads
from ._common import check_sizes, image_inputs, require, to_dtype, wrap

SIZES = {"width": 64, "height": 64, "levels": 4, "share": False}
SHARED_UNIT = "pyramid"


def down_kernel():
    return stencil_kernel("down2x2_kernel", [[1, 1], [1, 1]], 2)


def down_stage(prog: Program, stage: str, src: str, dst: str, width: int, height: int,
               kernel, unit: str | None = None):
    """``dst[x, y] = avg2x2(src[2x.., 2y..])`` over a ``width`` x ``height`` output."""
    loop, i = nest(prog, stage, ("y", height), ("x", width))
    return add_op(loop, stage, (dst, i["x"], i["y"]),
                  window_loads(src, i["x"], i["y"], 2, 2, sx=2, sy=2), kernel, unit)


def down_reference(a: np.ndarray) -> np.ndarray:
    """One 2x2 averaging step: the four-pixel sum wraps at 16 bits (u16) before the shift."""
    a = np.asarray(a, dtype=np.int64)
    return wrap(a[0::2, 0::2] + a[1::2, 0::2] + a[0::2, 1::2] + a[1::2, 1::2], u16) >> 2


def check_pyramid(app: str, width: int, height: int, levels: int) -> None:
    check_sizes(app, width=width, height=height, levels=levels)
    div = 1 << levels
    require(app, width % div == 0 and height % div == 0,
            f"width and height must be multiples of 2**levels = {div}, got {width}x{height}")


def build(width: int = 64, height: int = 64, levels: int = 4, share: bool = False) -> Program:
    check_pyramid("gpyr", width, height, levels)
    prog = image_program("gpyr", width, height)
    kernel = down_kernel()
    src = "hw_input"
    for k in range(1, levels + 1):
        w, h = width >> k, height >> k
        dst = "output" if k == levels else f"p{k}"
        if k == levels:
            prog.add_output(dst, (w, h), u16)
        else:
            prog.add_buffer(dst, (w, h), u16)
        down_stage(prog, f"p{k}", src, dst, w, h, kernel, SHARED_UNIT if share else None)
        src = dst
    return prog.validate()


make_inputs = image_inputs


def reference(inputs: dict, width: int = 64, height: int = 64, levels: int = 4,
              share: bool = False) -> dict[str, np.ndarray]:
    level = inputs["input"]
    for _ in range(levels):
        level = down_reference(level)
    return {"output": to_dtype(level, u16)}
