"""Building blocks shared by the application modules (thesis §4.1 loop-nest DSL, docs/design.md §3.1).

Two halves that never call each other:

* Program construction: :func:`nest` opens a perfect loop nest, :func:`add_op` adds an op with
  its loads, store and kernel, :func:`copy_stage` is the ``stream_to_accelerator`` input copy
  (GLB -> CGRA memory) that the thesis' loop nests start with (Fig. 4.3 lines 9-13, Fig. 4.13
  lines 3-6), and :func:`stencil_kernel` builds a fully unrolled weighted window sum.
* Plain-numpy golden helpers (:func:`wrap`, :func:`window`, :func:`weighted_window`,
  :func:`test_image`) used by every app's ``reference()``. They work on int64 arrays and wrap to
  16 bits where the CGRA would, so they share no code with the Program or the interpreter.

Index convention (Halide's, as in :mod:`compiler.ir.program`): the first index of a buffer is the
innermost dimension, so an image is ``img[x, y]`` and numpy arrays use the same order.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from compiler.ir import Call, Const, IntType, Kernel, Loop, Op, Program, maximum, s16, u16

# --------------------------------------------------------------------------------------------
# Program construction


def nest(parent: Program | Loop, stage: str, *dims: tuple[str, int]) -> tuple[Loop, dict]:
    """Open a perfect loop nest ``for d0: for d1: ...`` (outermost first) under ``parent``.

    Each loop is named ``<dim>_<stage>`` so names stay unique across stages; returns the
    innermost loop and ``{dim: Index}`` for writing index expressions."""
    node, idx = parent, {}
    for dim, extent in dims:
        node = node.add_loop(f"{dim}_{stage}", 0, extent)
        idx[dim] = node.var
    return node, idx


def add_op(loop: Loop, name: str, store: tuple, loads: Sequence[tuple], kernel: Kernel,
           unit: str | None = None) -> Op:
    """Add ``store = kernel(*loads)``; ``store``/``loads`` are ``(buffer, *index)`` tuples."""
    op = loop.add_op(name)
    for buf, *index in loads:
        op.add_load(buf, *index)
    op.add_store(store[0], *store[1:])
    op.add_function(kernel, unit)
    return op


def pass_kernel(name: str, t: IntType = u16) -> Kernel:
    """The identity kernel of a copy op (PE ``pass``)."""
    return Kernel.from_fn(name, lambda a: Call("pass", (a,)), t)


def const_kernel(name: str, value: int, t: IntType = s16) -> Kernel:
    """A kernel without loads that produces a constant (an accumulator's initial value)."""
    return Kernel(name, 0, Const(value, t), ())


def copy_stage(prog: Program, stage: str, src: str, dst: str, extents: Sequence[int],
               t: IntType = u16) -> Op:
    """``dst[x, y, ...] = src[x, y, ...]`` over ``extents`` (innermost first, like shapes).

    This is the ``hw_input`` stage of the reference flow: the input stream from the global
    buffer written into a CGRA memory (``stream_to_accelerator``)."""
    names = ["x", "y", "z", "w"][:len(extents)]
    loop, idx = nest(prog, stage, *reversed(list(zip(names, extents))))
    index = [idx[n] for n in names]
    return add_op(loop, stage, (dst, *index), [(src, *index)], pass_kernel(f"{stage}_pass", t))


def lane_stage(parent: Program | Loop, stage: str, src: str, dst: str, channels: int,
               lanes: int, width: int, height: int, kernel: Kernel) -> list[Op]:
    """``dst[c, x, y] = kernel(src[c, x, y])`` with the channels unrolled into ``lanes``
    parallel ops ``<stage>_<l>`` (channel ``co * lanes + l``) and the pixels walked ``x``
    innermost: the DNN apps' channel-lane streams (the reference flow's
    ``hw_input.in().unroll(z)``, apps/resnet.py), one word per lane per cycle."""
    loop, i = nest(parent, stage, ("co", channels // lanes), ("y", height), ("x", width))
    ops = []
    for lane in range(lanes):
        ch = i["co"] * lanes + lane
        ops.append(add_op(loop, f"{stage}_{lane}", (dst, ch, i["x"], i["y"]),
                          [(src, ch, i["x"], i["y"])], kernel))
    return ops


def image_program(name: str, width: int, height: int, unroll: int = 1) -> Program:
    """A stencil app's start: the 8-bit image ``input`` and its ``hw_input`` copy stage; with
    ``unroll > 1`` the copy streams ``unroll`` pixels per cycle through as many lanes
    (:func:`unrolled_stage`; ``width`` must then be a multiple of ``unroll``)."""
    prog = Program(name)
    prog.add_input("input", (width, height), u16)
    prog.add_buffer("hw_input", (width, height), u16)
    if unroll == 1:
        copy_stage(prog, "hw_input", "input", "hw_input", (width, height))
    else:
        unrolled_stage(prog, "hw_input", height, width, unroll,
                       lambda x, y: (("hw_input", x, y), [("input", x, y)]),
                       pass_kernel("hw_input_pass"))
    return prog


def round_up(n: int, unroll: int) -> int:
    """``n`` rounded up to a multiple of ``unroll`` (Halide's ``TailStrategy::RoundUp``)."""
    return -(-n // unroll) * unroll


def unrolled_stage(parent: Program | Loop, stage: str, height: int, width: int, unroll: int,
                   body, kernel: Kernel) -> list[Op]:
    """A stencil stage over a ``width`` x ``height`` tile with its ``x`` loop unrolled by
    ``unroll`` (Halide ``f.unroll(x, unroll)``; thesis §7.3.1: the unrolled iterations run in
    parallel, each on its own compute unit): ``for y, xo`` with one op ``<stage>_<u>`` per lane
    ``u`` computing pixel ``x = unroll * xo + u``. ``body(x, y) -> (store, loads)`` gives the
    accesses of the pixel at ``x, y``. ``unroll = 1`` is the plain nest ``for y, x`` with one op
    named ``stage``. ``width`` must be a multiple of ``unroll``."""
    if width % unroll:
        raise ValueError(f"{stage}: width {width} is not a multiple of the unroll {unroll}")
    if unroll == 1:
        loop, i = nest(parent, stage, ("y", height), ("x", width))
        lanes = [("", i["x"])]
    else:
        loop, i = nest(parent, stage, ("y", height), ("xo", width // unroll))
        lanes = [(f"_{u}", i["xo"] * unroll + u) for u in range(unroll)]
    ops = []
    for suffix, x in lanes:
        store, loads = body(x, i["y"])
        ops.append(add_op(loop, stage + suffix, store, loads, kernel))
    return ops


def weighted_sum(args: Sequence, weights: Sequence[int]):
    """``sum(w * a)`` over the non-zero weights; a weight of 1 needs no multiply, -1 a subtract."""
    acc = None
    for a, w in zip(args, weights):
        if w == 0:
            continue
        if acc is None:
            acc = a if w == 1 else a * w
        elif w == 1:
            acc = acc + a
        elif w == -1:
            acc = acc - a
        else:
            acc = acc + a * w
    return acc


def stencil_kernel(name: str, weights: Sequence[Sequence[int]], shift: int = 0,
                   t: IntType = u16) -> Kernel:
    """A fully unrolled 2-D window: ``sum(weights[dy][dx] * arg) >> shift``.

    Arguments are the window's taps in row-major order (dy outer, dx inner), one per load."""
    flat = [w for row in weights for w in row]

    def body(*a):
        s = weighted_sum(a, flat)
        return s >> shift if shift else s

    return Kernel.from_fn(name, body, *([t] * len(flat)))


def window_loads(buf: str, x, y, width: int, height: int, ox: int = 0, oy: int = 0,
                 sx: int = 1, sy: int = 1) -> list[tuple]:
    """Loads of ``buf[sx*x + ox + dx, sy*y + oy + dy]`` for the window, dy outer, dx inner."""
    return [(buf, x * sx + ox + dx, y * sy + oy + dy)
            for dy in range(height) for dx in range(width)]


def check_sizes(app: str, **sizes: int) -> None:
    """Reject sizes the app cannot be built with (one-line :class:`ValueError`)."""
    for name, value in sizes.items():
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{app}: size {name}={value!r} must be a positive integer")


def require(app: str, cond: bool, message: str) -> None:
    if not cond:
        raise ValueError(f"{app}: {message}")


# --------------------------------------------------------------------------------------------
# Plain-numpy golden helpers


def wrap(a, t: IntType = u16) -> np.ndarray:
    """Two's-complement wraparound of an integer array to ``t`` (as int64)."""
    a = np.asarray(a, dtype=np.int64) & ((1 << t.bits) - 1)
    if t.signed:
        a = np.where(a >= 1 << (t.bits - 1), a - (1 << t.bits), a)
    return a


def window(a: np.ndarray, dx: int, dy: int, width: int, height: int) -> np.ndarray:
    """``a[x + dx, y + dy]`` for ``0 <= x < width, 0 <= y < height`` (extra axes kept)."""
    return a[dx:dx + width, dy:dy + height]


def weighted_window(a: np.ndarray, weights: Sequence[Sequence[int]], width: int,
                    height: int) -> np.ndarray:
    """``sum(weights[dy][dx] * a[x + dx, y + dy])`` as int64 (no wrap)."""
    a = np.asarray(a, dtype=np.int64)
    out = np.zeros((width, height) + a.shape[2:], dtype=np.int64)
    for dy, row in enumerate(weights):
        for dx, w in enumerate(row):
            out += w * window(a, dx, dy, width, height)
    return out


def to_dtype(a: np.ndarray, t: IntType) -> np.ndarray:
    """Store an int64 array of in-range values with the numpy dtype of ``t``."""
    dtype = {(16, False): np.uint16, (16, True): np.int16}[(t.bits, t.signed)]
    return wrap(a, t).astype(dtype)


def test_image(seed: int, width: int, height: int, *extra: int, bits: int = 8) -> np.ndarray:
    """A deterministic natural-looking test image with values in ``[0, 2**bits)``.

    Smooth gradient + a few flat rectangles (edges and corners for harris) + noise, the
    kind of content the stencil apps are meant for; not uniform noise."""
    rng = np.random.default_rng(seed)
    top = (1 << bits) - 1
    shape = (width, height) + tuple(extra)
    xs = np.linspace(0.0, 1.0, width)[:, None]
    ys = np.linspace(0.0, 1.0, height)[None, :]
    base = 0.25 * top * (xs + ys)
    base = np.broadcast_to(base.reshape(base.shape + (1,) * len(extra)), shape).copy()
    for _ in range(max(2, (width * height) // 400)):
        x0, y0 = rng.integers(0, width), rng.integers(0, height)
        w, h = rng.integers(2, max(3, width // 4)), rng.integers(2, max(3, height // 4))
        base[x0:x0 + w, y0:y0 + h] = rng.uniform(0, top)
    noise = rng.normal(0.0, 0.03 * top, size=shape)
    return np.clip(np.rint(base + noise), 0, top).astype(np.uint16)


def image_inputs(seed: int = 0, width: int = 64, height: int = 64, **_sizes) -> dict:
    """``make_inputs`` of the single-image stencil apps: ``{"input": test_image(...)}``.

    Sizes that do not shape the input (levels, factor, share) are accepted and ignored."""
    return {"input": test_image(seed, width, height)}


def small_signed(seed: int, shape: Sequence[int], limit: int) -> np.ndarray:
    """Deterministic small signed integers in ``[-limit, limit]`` (DNN weights) as int16."""
    rng = np.random.default_rng(seed)
    return rng.integers(-limit, limit + 1, size=tuple(shape)).astype(np.int16)


def small_unsigned(seed: int, shape: Sequence[int], limit: int) -> np.ndarray:
    """Deterministic small activations in ``[0, limit]`` (quantized ReLU outputs) as int16."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, limit + 1, size=tuple(shape)).astype(np.int16)



def mac_kernel(name: str, n: int, t: IntType = s16) -> Kernel:
    """``acc + sum(a[i] * w[i] for i < n)``; arguments ``a[0..n), w[0..n), acc`` in that order.

    The unrolled multiply-accumulate of the DNN apps: ``n`` is the unrolled reduction factor."""
    def body(*args):
        acc = args[2 * n]
        for a, w in zip(args[:n], args[n:2 * n]):
            acc = acc + a * w
        return acc

    return Kernel.from_fn(name, body, *([t] * (2 * n + 1)))


def relu_kernel(name: str, t: IntType = s16) -> Kernel:
    """``max(a, 0)``."""
    return Kernel.from_fn(name, lambda a: maximum(a, 0), t)
