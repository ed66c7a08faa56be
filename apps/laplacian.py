"""laplacian: Laplacian pyramid with three levels (thesis Table 7.1), decomposed and reconstructed
as the reference flow's generator does.

Algorithm and constants of StanfordAHA/Halide-to-Hardware,
apps/hardware_benchmarks/apps/laplacian_pyramid/laplacian_pyramid_generator.cpp (stored version
5224906e), all in the generator's ``uint16`` arithmetic (sums and differences wrap at 16 bits):

* the input is ``uint8`` with ``repeat_edge`` boundaries; the copy into the accelerator is
  ``hw_input = f0 = input & 255`` (for 8-bit pixels a copy);
* one blur, used four times: the 3x3 kernel ``[[3, 21, 3], [21, 158, 21], [3, 21, 3]]``,
  centred, ``/ 256``: ``blur(f)(x, y) = sum(K[dy][dx] * f(x-1+dx, y-1+dy)) >> 8``
  (the generator's ``blur_unnormalized(x-1, y-1) / 256``; :data:`KERNEL`);
* decomposition: ``l0 = blur(f0)``, ``h0 = f0 - l0``; ``f1(x, y) = l0(2x, 2y)`` (the blurred level
  sub-sampled), ``l1 = blur(f1)``, ``h1 = f1 - l1``; ``f2(x, y) = l1(2x, 2y)``;
* reconstruction: ``l1_up = blur(f2(x/2, y/2))`` (nearest up-sampling, Halide's flooring
  division, then the blur), ``f1_up = l1_up + h1``; ``l0_up = blur(f1_up(x/2, y/2))``,
  ``output = (l0_up + h0) & 255`` (the generator's ``cast<uint8_t>(f0_up)``).

Schedule: the generator's Clockwork branch (the one behind thesis Table 7.5's 89 PEs for this
app): every Func computed at the tile (``compute_at(hw_output, xo)``), i.e. its own buffer, and
each blur's 3x3 window fully unrolled (one op, 9 loads). Two kinds of Func are not buffers of
their own: ``l0 = blur_unnormalized / 256`` (likewise ``l1``, ``l1_up``, ``l0_up``) is the
blur op's final shift, and ``f1 = l0(2x, 2y)`` is the stride-2 read of ``l1``'s blur and of
``h1``. The buffers are ``hw_input``, ``l0``, ``h0``, ``l1``, ``h1``, ``f2``, ``f2_temp``,
``l1_up``, ``f1_up``, ``f1_temp``, ``l0_up`` and the output. ``f2_temp`` and ``f1_temp`` (the
up-sampling, ``f(x / 2, y / 2)``) are copies as in that schedule, which here also makes every
read one a memory controller generates: a ``floor(x / 2)`` read of whole pairs (a strip-mined
loop), then a plain window for the blur after it. (Its
CoreIR branch line-buffers the first blur only and inlines the rest into ``hw_output``,
recomputing every coarse level per output pixel.)

Sizes and coordinates: a ``width`` x ``height`` output tile (64x64, Table 7.1; multiples of 4).
Halide's bounds inference of the generator asks for ``f0`` on ``[-7, width + 3]`` (and likewise
in y): the host applies ``repeat_edge`` (:func:`host_input`) and streams that
``(width + 11) x (height + 11)`` region, so this app's ``input[i, j]`` is the reference's
``hw_input(i - 7, j - 7)``. Each buffer holds its Func over the interval bounds inference gives
it, shifted to start at 0: ``l0`` on ``[-6, width + 2]``, ``h0`` and ``l0_up`` on
``[0, width - 1]``, ``l1`` on ``[-2, width/2]``, ``h1``, ``l1_up`` and ``f1_up`` on
``[-1, width/2]``, ``f2`` on ``[-1, width/4]``, ``f2_temp`` on ``[-2, width/2 + 1]``
(:data:`BOUNDS`). ``f1_temp``'s blur reads ``[-1, width]``: its columns are computed on
``[-2, width + 1]`` (whole pairs from an even coordinate, one element unused at each end of a
row) and its rows on ``[-1, height]`` by a loop split by two (:func:`_f1_temp_stage`), so that
no row is computed after the last one the output needs (the array's last output write is the
schedule's last event, the cycle count ``ubc sim`` compares).
"""
from __future__ import annotations

import numpy as np

from compiler.ir import Kernel, Program, u16

from compiler.frontend.loopnest import add_op, nest, stencil_kernel, unrolled_stage
from ._common import check_sizes, require, test_image, to_dtype, wrap

SIZES = {"width": 64, "height": 64}
KERNEL = ((3, 21, 3), (21, 158, 21), (3, 21, 3))
PAD_LO, PAD_HI = 7, 4          # f0 is needed on [-7, width + 3]

# Each buffer's interval along an axis of tile size n: ``[lo, n // scale + hi]``, Halide's bounds
# inference for a ``[0, n - 1]`` output (f1_temp's columns start one element early, at an even
# coordinate, so that its ``floor(x / 2)`` reads are whole pairs; its rows: _f1_temp_stage).
BOUNDS = {"hw_input": (-7, 1, 3), "l0": (-6, 1, 2), "h0": (0, 1, -1), "l1": (-2, 2, 0),
          "h1": (-1, 2, 0), "f2": (-1, 4, 0), "f2_temp": (-2, 2, 1), "l1_up": (-1, 2, 0),
          "f1_up": (-1, 2, 0), "f1_temp": (-2, 1, 1), "l0_up": (0, 1, -1)}


def _extent(name: str, size: int) -> int:
    """Number of elements of buffer ``name`` along an axis of tile size ``size``."""
    lo, scale, hi = BOUNDS[name]
    return size // scale + hi - lo + 1


def _blur_stage(prog: Program, dst: str, src: str, width: int, height: int,
                offset: tuple[int, int] = (0, 0), stride: int = 1) -> None:
    """``dst[i, j] = sum(K[dy][dx] * src[s (i + dx) + ox, s (j + dy) + oy]) >> 8``
    (``s = stride``: 2 reads a level sub-sampled, the reference's ``f1(x, y) = l0(2x, 2y)``)."""
    w, h = _extent(dst, width), _extent(dst, height)
    prog.add_buffer(dst, (w, h), u16)
    loop, i = nest(prog, dst, ("y", h), ("x", w))
    ox, oy = offset
    loads = [(src, stride * (i["x"] + dx) + ox, stride * (i["y"] + dy) + oy)
             for dy in range(3) for dx in range(3)]
    add_op(loop, dst, (dst, i["x"], i["y"]), loads, stencil_kernel(f"{dst}_blur", KERNEL, 8))


def _f1_temp_stage(prog: Program, width: int, height: int) -> None:
    """``f1_temp(x, y) = f1_up(x / 2, y / 2)`` on ``x`` in ``[-2, width + 1]`` and ``y`` in
    ``[-1, height]``. Columns: whole pairs from an even coordinate, ``f1_up[floor(i / 2)]``
    (strip-mined by the controller). Rows: ``y = 2 yo + yr - 1`` with the loop split by two, whose
    row ``floor(y / 2)`` is ``yo + yr - 1`` (index ``yo + yr``): affine, so the tile's last row is
    the last one ``l0_up`` reads and no row is computed that nothing reads."""
    w, h = _extent("f1_temp", width), height + 2
    prog.add_buffer("f1_temp", (w, h), u16)
    loop, i = nest(prog, "f1_temp", ("yo", h // 2), ("yr", 2), ("x", w))
    add_op(loop, "f1_temp", ("f1_temp", i["x"], 2 * i["yo"] + i["yr"]),
           [("f1_up", i["x"] // 2, i["yo"] + i["yr"])], Kernel.from_fn("f1_temp_copy",
                                                                      lambda a: a, u16))


def _pointwise(prog: Program, dst: str, width: int, height: int, loads, fn, output=False):
    """``dst[i, j] = fn(*loads(i, j))`` over ``dst``'s interval (or the output tile)."""
    shape = (width, height) if output else (_extent(dst, width), _extent(dst, height))
    (prog.add_output if output else prog.add_buffer)(dst, shape, u16)
    kernel = Kernel.from_fn(f"{dst}_kernel", fn, *([u16] * len(loads(0, 0))))
    unrolled_stage(prog, dst, shape[1], shape[0], 1,
                   lambda x, y: ((dst, x, y), loads(x, y)), kernel)


def build(width: int = 64, height: int = 64) -> Program:
    check_sizes("laplacian", width=width, height=height)
    require("laplacian", width % 4 == 0 and height % 4 == 0,
            f"width and height must be multiples of 4 (two down-samplings), got {width}x{height}")
    prog = Program("laplacian")
    iw, ih = width + PAD_LO + PAD_HI, height + PAD_LO + PAD_HI
    prog.add_input("input", (iw, ih), u16)
    _pointwise(prog, "hw_input", width, height, lambda x, y: [("input", x, y)], lambda a: a & 255)
    # decomposition (buffer index = coordinate - interval start, BOUNDS)
    _blur_stage(prog, "l0", "hw_input", width, height)
    _pointwise(prog, "h0", width, height,
               lambda x, y: [("hw_input", x + 7, y + 7), ("l0", x + 6, y + 6)], lambda f, l: f - l)
    _blur_stage(prog, "l1", "l0", width, height, stride=2)          # f1 = l0(2x, 2y)
    _pointwise(prog, "h1", width, height,
               lambda x, y: [("l0", 2 * x + 4, 2 * y + 4), ("l1", x + 1, y + 1)],
               lambda f, l: f - l)
    # reconstruction: f2(x) = l1(2x), f2_temp(x) = f2(x / 2); f1_temp(x) = f1_up(x / 2)
    _pointwise(prog, "f2", width, height, lambda x, y: [("l1", 2 * x, 2 * y)], lambda a: a)
    _pointwise(prog, "f2_temp", width, height, lambda x, y: [("f2", x // 2, y // 2)], lambda a: a)
    _blur_stage(prog, "l1_up", "f2_temp", width, height)
    _pointwise(prog, "f1_up", width, height, lambda x, y: [("l1_up", x, y), ("h1", x, y)],
               lambda u, h: u + h)
    _f1_temp_stage(prog, width, height)
    _blur_stage(prog, "l0_up", "f1_temp", width, height, (1, 0))
    _pointwise(prog, "output", width, height, lambda x, y: [("l0_up", x, y), ("h0", x, y)],
               lambda u, h: (u + h) & 255, output=True)
    return prog.validate()


def host_input(image: np.ndarray) -> np.ndarray:
    """The host's side of the generator: ``repeat_edge`` of a ``width`` x ``height`` image out
    to the region the accelerator reads, ``[-7, width + 3]`` x ``[-7, height + 3]``."""
    return np.pad(np.asarray(image), ((PAD_LO, PAD_HI), (PAD_LO, PAD_HI)), mode="edge")


def make_inputs(seed: int = 0, width: int = 64, height: int = 64) -> dict:
    return {"input": host_input(test_image(seed, width, height))}


def reference(inputs: dict, width: int = 64, height: int = 64) -> dict[str, np.ndarray]:
    """The generator's Funcs in its own coordinates: each Func a function of coordinate arrays,
    the blurred ones evaluated once over the interval their readers need."""
    raw = np.asarray(inputs["input"], dtype=np.int64) & 255

    def grid(arr, lo):
        return lambda xs, ys: arr[np.ix_(xs - lo, ys - lo)]

    def blur(f, lo, hi_x, hi_y):
        xs, ys = np.arange(lo, hi_x + 1), np.arange(lo, hi_y + 1)
        acc = sum(KERNEL[dy][dx] * f(xs - 1 + dx, ys - 1 + dy)
                  for dy in range(3) for dx in range(3))
        return grid(wrap(acc, u16) >> 8, lo)

    f0 = grid(raw, -PAD_LO)
    w2, h2 = width // 2, height // 2
    l0 = blur(f0, -6, width + 2, height + 2)

    def f1(xs, ys):
        return l0(2 * xs, 2 * ys)

    l1 = blur(f1, -2, w2, h2)

    def f2_temp(xs, ys):
        return l1(2 * (xs // 2), 2 * (ys // 2))        # f2(x / 2), f2(x) = l1(2x)

    l1_up = blur(f2_temp, -1, w2, h2)
    xs, ys = np.arange(-1, w2 + 1), np.arange(-1, h2 + 1)
    f1_up = grid(wrap(l1_up(xs, ys) + f1(xs, ys) - l1(xs, ys), u16), -1)   # l1_up + h1
    l0_up = blur(lambda xs, ys: f1_up(xs // 2, ys // 2), 0, width - 1, height - 1)
    xs, ys = np.arange(width), np.arange(height)
    out = l0_up(xs, ys) + f0(xs, ys) - l0(xs, ys)                          # l0_up + h0
    return {"output": to_dtype(out & 255, u16)}
