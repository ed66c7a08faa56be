"""The loop-nest DSL (thesis §4.1; docs/apps.md "The loop-nest DSL"): the Program builder of
:mod:`compiler.ir.program` (``Program``, ``add_input``/``add_buffer``/``add_output``,
``add_loop``, ``add_op``, ``add_load``/``add_store``/``add_function``) and kernels
(:mod:`compiler.ir.expr`), plus the helpers the applications and users build loop nests with:
:func:`nest` opens a perfect loop nest, :func:`add_op` adds an op with its loads, store and
kernel, :func:`copy_stage` is the ``stream_to_accelerator`` input copy (GLB -> CGRA memory)
that the thesis' loop nests start with (Fig. 4.3 lines 9-13, Fig. 4.13 lines 3-6),
:func:`unrolled_stage` an unrolled stencil stage, :func:`stencil_kernel` a fully unrolled
weighted window sum, :func:`mac_kernel` / :func:`relu_kernel` the DNN kernels.

The Halide-style DSL (:mod:`compiler.frontend.halide`) lowers to the same Programs.

Index convention (Halide's): the first index of a buffer is the innermost dimension, so an
image is ``img[x, y]`` and numpy arrays use the same order.
"""
from __future__ import annotations

from typing import Sequence

from ..ir import (Call, Const, IntType, Kernel, Loop, Lookup, Op, Program, ProgramError, absd,
                  maximum, minimum, s16, select, u16)

__all__ = ["Program", "Loop", "Op", "Kernel", "Call", "Const", "Lookup", "ProgramError",
           "IntType", "u16", "s16", "absd", "maximum", "minimum", "select",
           "nest", "add_op", "pass_kernel", "const_kernel", "copy_stage", "lane_stage",
           "image_program", "round_up", "unrolled_stage", "weighted_sum", "stencil_kernel",
           "window_loads", "mac_kernel", "relu_kernel"]


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
