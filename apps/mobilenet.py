"""mobilenet: one MobileNet separable convolution layer (thesis Table 7.1: 28x28 image, 4
depthwise channels and 3 pointwise channels; paper Table III "layer using separable,
multi-channel convolution").

Algorithm: depthwise 3x3 convolution per channel followed by ReLU,
``dw[c, x, y] = max(0, sum_{kx, ky} input[c, x+kx, y+ky] * w_dw[c, kx, ky])``, then a pointwise
1x1 convolution followed by ReLU, ``output[k, x, y] = max(0, sum_c dw[c, x, y] * w_pw[c, k])``.
16-bit signed arithmetic; 4-bit activations (0..15) and weights in [-7, 7] keep every sum in
s16 (depthwise <= 945, pointwise <= 4*945*7 = 26460).

Sizes (Table 7.1): 30x30x4 input, 28x28x4 depthwise result, 28x28x3 output.

Loop nests: ``load_input`` (the 4 input channels unrolled: one copy op per channel per pixel),
``load_w_dw`` / ``load_w_pw`` (weights GLB -> CGRA memory, thesis Fig. 4.3 lines 15-20), then
``dw`` with the channels unrolled into 4 ops, each with the 3x3 window FULLY UNROLLED (9
activation + 9 weight loads), and ``pw`` with the 3 output channels unrolled into ops, each
reducing the 4 channels inside the op. What is unrolled and why: everything in the pixel loop --
the paper reports mobilenet at 1026 cycles (Table VI), i.e. one 30x30 input stream plus pipeline
latency, which only a fully unrolled layer reaches; its reductions are therefore unrolled and
it is scheduled as a stencil pipeline, unlike :mod:`apps.resnet`.
"""
from __future__ import annotations

import numpy as np

from compiler.ir import Kernel, Program, maximum, s16

from compiler.frontend.loopnest import add_op, nest, pass_kernel, weighted_sum
from ._common import check_sizes, small_signed, small_unsigned, to_dtype, wrap

SIZES = {"width": 28, "height": 28, "channels": 4, "out_channels": 3}
KSIZE = 3
ACT_MAX = 15
WEIGHT_MAX = 7


def dot_relu_kernel(name: str, n: int) -> Kernel:
    """``max(0, sum(a[i] * w[i]))`` with arguments ``a[0..n), w[0..n)``."""
    def body(*args):
        terms = [a * w for a, w in zip(args[:n], args[n:])]
        return maximum(weighted_sum(terms, [1] * n), 0)

    return Kernel.from_fn(name, body, *([s16] * (2 * n)))


def build(width: int = 28, height: int = 28, channels: int = 4, out_channels: int = 3):
    check_sizes("mobilenet", width=width, height=height, channels=channels,
                out_channels=out_channels)
    c_n, k_n = channels, out_channels
    iw, ih = width + KSIZE - 1, height + KSIZE - 1
    prog = Program("mobilenet")
    prog.add_input("input", (c_n, iw, ih), s16)
    prog.add_input("w_dw", (c_n, KSIZE, KSIZE), s16)
    prog.add_input("w_pw", (c_n, k_n), s16)
    prog.add_buffer("in_mem", (c_n, iw, ih), s16)
    prog.add_buffer("w_dw_mem", (c_n, KSIZE, KSIZE), s16)
    prog.add_buffer("w_pw_mem", (c_n, k_n), s16)
    prog.add_buffer("dw", (c_n, width, height), s16)
    prog.add_output("output", (k_n, width, height), s16)

    loop, i = nest(prog, "load_input", ("y", ih), ("x", iw))
    for c in range(c_n):
        add_op(loop, f"load_input_{c}", ("in_mem", c, i["x"], i["y"]),
               [("input", c, i["x"], i["y"])], pass_kernel(f"load_input_{c}_pass", s16))
    loop, i = nest(prog, "load_w_dw", ("ky", KSIZE), ("kx", KSIZE), ("c", c_n))
    add_op(loop, "load_w_dw", ("w_dw_mem", i["c"], i["kx"], i["ky"]),
           [("w_dw", i["c"], i["kx"], i["ky"])], pass_kernel("load_w_dw_pass", s16))
    loop, i = nest(prog, "load_w_pw", ("k", k_n), ("c", c_n))
    add_op(loop, "load_w_pw", ("w_pw_mem", i["c"], i["k"]), [("w_pw", i["c"], i["k"])],
           pass_kernel("load_w_pw_pass", s16))

    taps = [(kx, ky) for ky in range(KSIZE) for kx in range(KSIZE)]
    dw = dot_relu_kernel("dw_kernel", len(taps))
    loop, i = nest(prog, "dw", ("y", height), ("x", width))
    for c in range(c_n):
        loads = [("in_mem", c, i["x"] + kx, i["y"] + ky) for kx, ky in taps]
        loads += [("w_dw_mem", c, kx, ky) for kx, ky in taps]
        add_op(loop, f"dw_{c}", ("dw", c, i["x"], i["y"]), loads, dw)

    pw = dot_relu_kernel("pw_kernel", c_n)
    loop, i = nest(prog, "pw", ("y", height), ("x", width))
    for k in range(k_n):
        loads = [("dw", c, i["x"], i["y"]) for c in range(c_n)]
        loads += [("w_pw_mem", c, k) for c in range(c_n)]
        add_op(loop, f"pw_{k}", ("output", k, i["x"], i["y"]), loads, pw)
    return prog.validate()


def make_inputs(seed: int = 0, width: int = 28, height: int = 28, channels: int = 4,
                out_channels: int = 3):
    iw, ih = width + KSIZE - 1, height + KSIZE - 1
    return {"input": small_unsigned(seed, (channels, iw, ih), ACT_MAX),
            "w_dw": small_signed(seed + 1, (channels, KSIZE, KSIZE), WEIGHT_MAX),
            "w_pw": small_signed(seed + 2, (channels, out_channels), WEIGHT_MAX)}


def reference(inputs: dict, width: int = 28, height: int = 28, channels: int = 4,
              out_channels: int = 3):
    act = np.asarray(inputs["input"], dtype=np.int64)
    w_dw = np.asarray(inputs["w_dw"], dtype=np.int64)
    dw = sum(act[:, kx:kx + width, ky:ky + height] * w_dw[:, kx, ky][:, None, None]
             for kx in range(KSIZE) for ky in range(KSIZE))
    dw = np.maximum(wrap(dw, s16), 0)
    pw = np.einsum("cxy,ck->kxy", dw, np.asarray(inputs["w_pw"], dtype=np.int64))
    return {"output": to_dtype(np.maximum(wrap(pw, s16), 0), s16)}
