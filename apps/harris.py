"""harris: Harris corner detector with non-maximum suppression (thesis Table 7.1, paper
Table III).

Algorithm, as the reference flow's app writes it (StanfordAHA/Halide-to-Hardware,
apps/hardware_benchmarks/apps/harris/harris_generator.cpp, the CoreIR schedule branch: Sobel
gradients clamped to +-255, int32 products ``>> 7``, 3x3 box sums ``>> 6``, ``k = 1/16`` as
``>> 4``, threshold 100, 3x3 non-maximum suppression), exactly, on 16-bit words:

* ``grad_x, grad_y``: 3x3 Sobel (``[-1 0 1; -2 0 2; -1 0 1]`` and its transpose), clamped to
  ``[-255, 255]``;
* ``lxx = (gx*gx) >> 7``, ``lyy = (gy*gy) >> 7``, ``lxy = (gx*gy) >> 7`` as the reference's int32
  products: ``gx*gx <= 65025`` fits an unsigned word (a 16-bit multiply and a logical shift);
  the signed ``gx*gy`` needs 17 bits, so with ``gx = 2h + b`` (``h = gx >> 1``, ``b = gx & 1``)
  ``floor(gx*gy / 128) = (h*gy + b*(gy >> 1)) >> 6``, whose sum fits s16 (``product_kernel``);
* ``lgxx, lgyy, lgxy``: 3x3 box sums (at most 9*512 = 4608);
* ``cim = det - (trace*trace >> 4)`` with ``det = a*b - c*c``, ``trace = a + b`` and
  ``a, b, c = lgxx>>6, lgyy>>6, lgxy>>6``;
* ``output = 255`` where ``cim`` is strictly greater than its 8 neighbours and ``>= 100``, else 0.

The reference reads int8 pixels (``padded16 = int16(input)``, the accelerator's input) and
writes ``int8(255)``, i.e. the byte 0xFF; this app reads 8-bit pixels 0..255 as 16-bit words and
writes 255. The Sobel gradients are differences, so an input shifted by -128 into int8 gives the
same corners (tests/apps/halide_pipelines.py runs the generator that way).

Sizes (Table 7.1): 64x64 input tile; gradients 62x62, box sums and ``cim`` 60x60, output 58x58
(the reference flow's 58x58 output).

Loop nests: ``hw_input`` copy, then one nest per Halide ``Func`` that the reference schedule
line-buffers (grad_x, grad_y, lxx, lyy, lxy, lgxx, lgyy, lgxy, cim, output); every 3x3 reduction
(box sums, gradients, the NMS window) is FULLY UNROLLED into one op with 6 or 9 loads.

``unroll = U`` (default 1; thesis §7.3.1, Fig. 7.5b; paper Table V sch4 "unroll by 2"): every
stage's ``x`` loop unrolled by ``U`` -- ``U`` parallel ops per stage and iteration
(``grad_x_0 .. grad_x_{U-1}``, ...), the input streamed ``U`` pixels per cycle through ``U``
lanes of the copy stage -- as the reference flow's unrolled stencil schedules do (its gaussian:
``f.unroll(x, U, TailStrategy::RoundUp)`` on every stage and on ``hw_input.in()``). With
``RoundUp`` each stage computes the width its consumers need rounded up to a multiple of ``U``
(``tile``): the output is ``round_up(width - 6, U)`` wide and the input correspondingly wider.
``unroll = 1`` is the program above, unchanged.
"""
from __future__ import annotations

import numpy as np

from compiler.ir import Call, Kernel, Program, maximum, minimum, s16, select, u16

from compiler.frontend.loopnest import (image_program, round_up, stencil_kernel, unrolled_stage,
                                        weighted_sum, window_loads)
from ._common import check_sizes, test_image, to_dtype, weighted_window, window, wrap

SIZES = {"width": 64, "height": 64, "unroll": 1}
SOBEL_X = ((-1, 0, 1), (-2, 0, 2), (-1, 0, 1))
SOBEL_Y = ((-1, -2, -1), (0, 0, 0), (1, 2, 1))
BOX = ((1, 1, 1), (1, 1, 1), (1, 1, 1))
GRAD_CLAMP = 255
PRODUCT_SHIFT = 7       # the reference's int32 products >> 7
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


def _square(g):
    """``(g*g) >> 7`` for ``|g| <= 255``: the square fits an unsigned word."""
    return Call("pass", (g * g,), u16) >> PRODUCT_SHIFT


def _product(a, b):
    """``floor(a*b / 128)`` for ``|a|, |b| <= 255`` (module docstring)."""
    return ((a >> 1) * b + (a & 1) * (b >> 1)) >> (PRODUCT_SHIFT - 1)


def tile(width: int, unroll: int) -> dict[str, int]:
    """The width each stage computes with its ``x`` loop unrolled by ``unroll``
    (``TailStrategy::RoundUp``): ``out`` (NMS), ``box`` (box sums and ``cim``), ``grad``
    (gradients and products) and ``input``; ``width - 6, width - 4, width - 2, width`` for
    ``unroll = 1``."""
    out = round_up(width - 6, unroll)
    box = round_up(out + 2, unroll)         # NMS reads cim[x .. x+2]
    grad = round_up(box + 2, unroll)        # box sums read lxx[x .. x+2]
    return {"out": out, "box": box, "grad": grad, "input": round_up(grad + 2, unroll)}


def build(width: int = 64, height: int = 64, unroll: int = 1) -> Program:
    check_sizes("harris", width=width - 6, height=height - 6, unroll=unroll)
    t, u = tile(width, unroll), unroll
    prog = image_program("harris", t["input"], height, u)
    gw, gh = t["grad"], height - 2      # gradients and products
    bw, bh = t["box"], height - 4       # box sums and cim
    ow, oh = t["out"], height - 6       # output after NMS
    for name in ("grad_x", "grad_y", "lxx", "lyy", "lxy"):
        prog.add_buffer(name, (gw, gh), s16)
    for name in ("lgxx", "lgyy", "lgxy", "cim"):
        prog.add_buffer(name, (bw, bh), s16)
    prog.add_output("output", (ow, oh), u16)

    for name, weights in (("grad_x", SOBEL_X), ("grad_y", SOBEL_Y)):
        unrolled_stage(prog, name, gh, gw, u, lambda x, y, name=name, weights=weights: (
            (name, x, y), [("hw_input", x + dx, y + dy) for dx, dy, _ in _nonzero_taps(weights)]),
            _gradient_kernel(f"{name}_kernel", weights))

    square = Kernel.from_fn("square_kernel", _square, s16)
    product = Kernel.from_fn("product_kernel", _product, s16, s16)
    for name, srcs in (("lxx", ("grad_x",)), ("lyy", ("grad_y",)), ("lxy", ("grad_x", "grad_y"))):
        unrolled_stage(prog, name, gh, gw, u, lambda x, y, name=name, srcs=srcs: (
            (name, x, y), [(s, x, y) for s in srcs]), square if len(srcs) == 1 else product)

    for name, src in (("lgxx", "lxx"), ("lgyy", "lyy"), ("lgxy", "lxy")):
        unrolled_stage(prog, name, bh, bw, u, lambda x, y, name=name, src=src: (
            (name, x, y), window_loads(src, x, y, 3, 3)),
            stencil_kernel(f"{name}_kernel", BOX, 0, s16))

    def cim_fn(gxx, gyy, gxy):
        a, b, c = gxx >> BOX_SHIFT, gyy >> BOX_SHIFT, gxy >> BOX_SHIFT
        trace = a + b
        return (a * b - c * c) - ((trace * trace) >> K_SHIFT)

    unrolled_stage(prog, "cim", bh, bw, u, lambda x, y: (
        ("cim", x, y), [(s, x, y) for s in ("lgxx", "lgyy", "lgxy")]),
        Kernel.from_fn("cim_kernel", cim_fn, s16, s16, s16))

    def nms_fn(*w):
        centre = w[4]
        keep = centre >= THRESHOLD
        for k, other in enumerate(w):
            if k != 4:
                keep = keep & (centre > other)
        return select(keep, 255, 0)     # a u16 0/255 mask

    unrolled_stage(prog, "nms", oh, ow, u, lambda x, y: (
        ("output", x, y), window_loads("cim", x, y, 3, 3)),
        Kernel.from_fn("nms_kernel", nms_fn, *([s16] * 9)))
    return prog.validate()


def make_inputs(seed: int = 0, width: int = 64, height: int = 64, unroll: int = 1) -> dict:
    return {"input": test_image(seed, tile(width, unroll)["input"], height)}


def reference(inputs: dict, width: int = 64, height: int = 64,
              unroll: int = 1) -> dict[str, np.ndarray]:
    img = np.asarray(inputs["input"], dtype=np.int64)
    t = tile(width, unroll)
    gw, gh, bw, bh, ow, oh = t["grad"], height - 2, t["box"], height - 4, t["out"], height - 6
    gx = np.clip(wrap(weighted_window(img, SOBEL_X, gw, gh), s16), -GRAD_CLAMP, GRAD_CLAMP)
    gy = np.clip(wrap(weighted_window(img, SOBEL_Y, gw, gh), s16), -GRAD_CLAMP, GRAD_CLAMP)
    lxx, lyy, lxy = ((p >> PRODUCT_SHIFT) for p in (gx * gx, gy * gy, gx * gy))   # int32
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
