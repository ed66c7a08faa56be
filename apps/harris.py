"""harris: Harris corner detector with non-maximum suppression (thesis Table 7.1, paper
Table III).

Algorithm, after the reference flow's app (StanfordAHA/Halide-to-Hardware,
apps/hardware_benchmarks/apps/harris/harris_generator.cpp: Sobel gradients clamped to +-255,
products scaled by 1/128, 3x3 box sums scaled by 1/64, ``k = 1/16`` as ``>> 4``, threshold 100,
3x3 non-maximum suppression), re-derived for 16-bit arithmetic (the reference used 32-bit
products, which a 16-bit PE does not have):

* ``grad_x, grad_y``: 3x3 Sobel (``[-1 0 1; -2 0 2; -1 0 1]`` and its transpose), clamped to
  ``[-255, 255]``;
* ``lxx = ((gx>>1)*(gx>>1)) >> 5``, ``lyy``, ``lxy`` likewise (``~ g*g/128``; the pre-shift keeps
  the product inside s16);
* ``lgxx, lgyy, lgxy``: 3x3 box sums (at most 9*512 = 4608);
* ``cim = det - (trace*trace >> 4)`` with ``det = a*b - c*c``, ``trace = a + b`` and
  ``a, b, c = lgxx>>6, lgyy>>6, lgxy>>6``;
* ``output = 255`` where ``cim`` is strictly greater than its 8 neighbours and ``>= 100``, else 0.

Sizes (Table 7.1): 64x64 input tile; gradients 62x62, box sums and ``cim`` 60x60, output 58x58
(the reference flow's 58x58 output).

Loop nests: ``hw_input`` copy, then one nest per Halide ``Func`` that the reference schedule
line-buffers (grad_x, grad_y, lxx, lyy, lxy, lgxx, lgyy, lgxy, cim, output); every 3x3 reduction
(box sums, gradients, the NMS window) is FULLY UNROLLED into one op with 6 or 9 loads.
"""
from __future__ import annotations

import numpy as np

from compiler.ir import Kernel, Program, maximum, minimum, s16, select, u16

from ._common import (add_op, check_sizes, image_inputs, image_program, nest, stencil_kernel,
                      to_dtype, weighted_sum, weighted_window, window, window_loads, wrap)

SIZES = {"width": 64, "height": 64}
SOBEL_X = ((-1, 0, 1), (-2, 0, 2), (-1, 0, 1))
SOBEL_Y = ((-1, -2, -1), (0, 0, 0), (1, 2, 1))
BOX = ((1, 1, 1), (1, 1, 1), (1, 1, 1))
GRAD_CLAMP = 255
PRODUCT_SHIFT = 5       # after the 1-bit pre-shift of each factor: g*g / 128
BOX_SHIFT = 6
K_SHIFT = 4             # k = 1/16
THRESHOLD = 100


def _nonzero_taps(weights):
    """(dx, dy, w) of the non-zero taps, row-major; the op loads only these."""
    return [(dx, dy, w) for dy, row in enumerate(weights) for dx, w in enumerate(row) if w]


def _gradient_kernel(name, weights):
    taps = [w for _, _, w in _nonzero_taps(weights)]
    return Kernel.from_fn(
        name, lambda *a: minimum(maximum(weighted_sum(a, taps), -GRAD_CLAMP), GRAD_CLAMP),
        *([s16] * len(taps)))


def build(width: int = 64, height: int = 64) -> Program:
    check_sizes("harris", width=width - 6, height=height - 6)
    prog = image_program("harris", width, height)
    gw, gh = width - 2, height - 2      # gradients and products
    bw, bh = width - 4, height - 4      # box sums and cim
    ow, oh = width - 6, height - 6      # output after NMS
    for name in ("grad_x", "grad_y", "lxx", "lyy", "lxy"):
        prog.add_buffer(name, (gw, gh), s16)
    for name in ("lgxx", "lgyy", "lgxy", "cim"):
        prog.add_buffer(name, (bw, bh), s16)
    prog.add_output("output", (ow, oh), u16)

    for name, weights in (("grad_x", SOBEL_X), ("grad_y", SOBEL_Y)):
        loop, i = nest(prog, name, ("y", gh), ("x", gw))
        loads = [("hw_input", i["x"] + dx, i["y"] + dy) for dx, dy, _ in _nonzero_taps(weights)]
        add_op(loop, name, (name, i["x"], i["y"]), loads,
               _gradient_kernel(f"{name}_kernel", weights))

    square = Kernel.from_fn("square_kernel", lambda g: ((g >> 1) * (g >> 1)) >> PRODUCT_SHIFT, s16)
    product = Kernel.from_fn("product_kernel",
                             lambda a, b: ((a >> 1) * (b >> 1)) >> PRODUCT_SHIFT, s16, s16)
    for name, srcs in (("lxx", ("grad_x",)), ("lyy", ("grad_y",)), ("lxy", ("grad_x", "grad_y"))):
        loop, i = nest(prog, name, ("y", gh), ("x", gw))
        add_op(loop, name, (name, i["x"], i["y"]), [(s, i["x"], i["y"]) for s in srcs],
               square if len(srcs) == 1 else product)

    for name, src in (("lgxx", "lxx"), ("lgyy", "lyy"), ("lgxy", "lxy")):
        loop, i = nest(prog, name, ("y", bh), ("x", bw))
        add_op(loop, name, (name, i["x"], i["y"]), window_loads(src, i["x"], i["y"], 3, 3),
               stencil_kernel(f"{name}_kernel", BOX, 0, s16))

    def cim_fn(gxx, gyy, gxy):
        a, b, c = gxx >> BOX_SHIFT, gyy >> BOX_SHIFT, gxy >> BOX_SHIFT
        trace = a + b
        return (a * b - c * c) - ((trace * trace) >> K_SHIFT)

    loop, i = nest(prog, "cim", ("y", bh), ("x", bw))
    add_op(loop, "cim", ("cim", i["x"], i["y"]),
           [(s, i["x"], i["y"]) for s in ("lgxx", "lgyy", "lgxy")],
           Kernel.from_fn("cim_kernel", cim_fn, s16, s16, s16))

    def nms_fn(*w):
        centre = w[4]
        keep = centre >= THRESHOLD
        for k, other in enumerate(w):
            if k != 4:
                keep = keep & (centre > other)
        return select(keep, 255, 0)     # a u16 0/255 mask

    loop, i = nest(prog, "nms", ("y", oh), ("x", ow))
    add_op(loop, "nms", ("output", i["x"], i["y"]), window_loads("cim", i["x"], i["y"], 3, 3),
           Kernel.from_fn("nms_kernel", nms_fn, *([s16] * 9)))
    return prog.validate()


make_inputs = image_inputs


def reference(inputs: dict, width: int = 64, height: int = 64) -> dict[str, np.ndarray]:
    img = np.asarray(inputs["input"], dtype=np.int64)
    gw, gh, bw, bh, ow, oh = width - 2, height - 2, width - 4, height - 4, width - 6, height - 6
    gx = np.clip(wrap(weighted_window(img, SOBEL_X, gw, gh), s16), -GRAD_CLAMP, GRAD_CLAMP)
    gy = np.clip(wrap(weighted_window(img, SOBEL_Y, gw, gh), s16), -GRAD_CLAMP, GRAD_CLAMP)
    lxx = wrap((gx >> 1) * (gx >> 1), s16) >> PRODUCT_SHIFT
    lyy = wrap((gy >> 1) * (gy >> 1), s16) >> PRODUCT_SHIFT
    lxy = wrap((gx >> 1) * (gy >> 1), s16) >> PRODUCT_SHIFT
    a, b, c = (wrap(weighted_window(l, BOX, bw, bh), s16) >> BOX_SHIFT for l in (lxx, lyy, lxy))
    trace = wrap(a + b, s16)
    cim = wrap(a * b - c * c - (wrap(trace * trace, s16) >> K_SHIFT), s16)
    centre = window(cim, 1, 1, ow, oh)
    keep = centre >= THRESHOLD
    for dy in range(3):
        for dx in range(3):
            if (dx, dy) != (1, 1):
                keep &= centre > window(cim, dx, dy, ow, oh)
    return {"output": to_dtype(np.where(keep, 255, 0), u16)}
