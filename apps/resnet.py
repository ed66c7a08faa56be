"""resnet: one ResNet 3x3 convolution layer with ReLU (thesis Table 7.1: 28x28 image,
IC = OC = 16; paper Table III "layer using multi-channel convolution").

Algorithm: ``output[k, x, y] = max(0, bias[k] + sum_{c, kx, ky} input[c, x+kx, y+ky] *
weights[c, k, kx, ky])`` -- a valid 3x3 convolution over a 30x30 input (28x28 output), 16-bit
signed arithmetic. Inputs are 4-bit activations (0..15, quantised ReLU outputs) and weights in
[-7, 7], so the worst-case sum (16*9*15*7 = 15120) stays inside s16.

Loop nest (the structure of thesis Fig. 4.3, scaled to this layer): an outer tile loop ``ko``
over blocks of ``oc_unroll`` output channels (Fig. 4.3's coarse-grained pipeline loop ``t``)
containing five stages --
  1. ``init``: ``out_mem[k, x, y] = bias[ko*ocu + k]`` (Fig. 4.3 lines 3-7);
  2. ``load_input``: input GLB -> CGRA memory ``in_mem`` (lines 9-13);
  3. ``load_weight``: the block's weights -> ``w_mem`` (lines 15-20);
  4. ``conv``: ``for ci, ky, kx, y, x`` with ``oc_unroll`` ops, one per output channel of the
     block, each a multiply-accumulate of ``ic_unroll`` input channels
     (``acc + sum_i in_mem[ci*icu + i, x+kx, y+ky] * w_mem[ci*icu + i, k, kx, ky]``);
  5. ``drain``: ReLU and ``out_mem`` -> output GLB (lines 32-36).

The Halide-style schedule choices, each from the reference flow's ResNet layer generator
(Halide-to-Hardware ``apps/hardware_benchmarks/apps/resnet_layer_gen``, its Clockwork schedule;
read for the schedule only) or the thesis:

* ``conv.update().unroll(w, k_oc).unroll(r.z, k_ic)`` ("channel weight stationary"): the
  input-channel reduction is unrolled by ``ic_unroll`` inside each op and the output channels by
  ``oc_unroll`` into parallel ops (Fig. 4.3 unrolls both ``c`` and ``k``); the defaults 8x8 are
  the factors thesis §7.3 names for resnet (Fig. 7.5) and Table 7.3's 80 memories (8 input
  lanes + 8 x 8 weight banks + 8 output lanes).
* ``conv.update().reorder(w, r.z, x, y, r.x, r.y)``: the 3x3 window (``ky, kx``) and the
  remaining input-channel blocks (``ci``) stay sequential loops OUTSIDE the pixel loops, as in
  Fig. 4.3 ("the 3x3 kernel dimension is calculated sequentially"), so the accumulation is a
  non-unrolled reduction and the scheduler takes the DNN (coarse-grained pipeline) path.
* With ``io_lanes`` (default 1, the reference flow's choice) the streams between the global
  buffer and the array move one word per channel lane per cycle: ``hw_input.in().unroll(z)``
  streams the ``ic_unroll`` input channels in parallel (one ``load_input_<c>`` op per lane),
  ``conv.unroll(w, k_oc)`` initializes the ``oc_unroll`` accumulators in parallel (one
  ``init_<k>`` per lane) and the drain is unrolled the same way (one ``drain_<k>`` per lane;
  the reference flow's ``hw_output`` walks ``w`` outside the pixels, which leaves one output
  word per cycle -- here the output lanes mirror the input lanes). The global buffer has one
  bank per section of the array's top edge (16 banks, thesis §7.1) and the array an IO tile per
  column, so 8 input and 8 output lanes are IO streams the hardware has. ``io_lanes=0`` keeps one
  word per cycle for each of the three streams (channel innermost), the ablation.

The paper's measured resnet (Tables VI/VII: 44876 -> 15614 cycles, 14048 SRAM words) is one 8x8
channel block: ``in_channels=8, out_channels=8`` gives exactly 7200 + 576 + 6272 = 14048 words
(docs/apps.md). The defaults stay at Table 7.1's IC = OC = 16.
"""
from __future__ import annotations

import numpy as np

from compiler.ir import Program, s16

from compiler.frontend.loopnest import (add_op, lane_stage, mac_kernel, nest, pass_kernel,
                                        relu_kernel)
from ._common import check_sizes, require, small_signed, small_unsigned, to_dtype, wrap

SIZES = {"width": 28, "height": 28, "in_channels": 16, "out_channels": 16, "ic_unroll": 8,
         "oc_unroll": 8, "io_lanes": 1}
KSIZE = 3
ACT_MAX = 15
WEIGHT_MAX = 7


def build(width: int = 28, height: int = 28, in_channels: int = 16, out_channels: int = 16,
          ic_unroll: int = 8, oc_unroll: int = 8, io_lanes: int = 1) -> Program:
    check_sizes("resnet", width=width, height=height, in_channels=in_channels,
                out_channels=out_channels, ic_unroll=ic_unroll, oc_unroll=oc_unroll)
    require("resnet", in_channels % ic_unroll == 0 and out_channels % oc_unroll == 0,
            f"channels ({in_channels}, {out_channels}) must be multiples of the unroll factors "
            f"({ic_unroll}, {oc_unroll})")
    ic, oc, icu, ocu = in_channels, out_channels, ic_unroll, oc_unroll
    iw, ih = width + KSIZE - 1, height + KSIZE - 1
    prog = Program("resnet")
    prog.add_input("input", (ic, iw, ih), s16)
    prog.add_input("weights", (ic, oc, KSIZE, KSIZE), s16)
    prog.add_input("bias", (oc,), s16)
    prog.add_buffer("in_mem", (ic, iw, ih), s16)
    prog.add_buffer("w_mem", (ic, ocu, KSIZE, KSIZE), s16)
    prog.add_buffer("out_mem", (ocu, width, height), s16)
    prog.add_output("output", (oc, width, height), s16)

    ko = prog.add_loop("ko", 0, oc // ocu)
    kg = ko.var * ocu                                   # first output channel of the block
    if io_lanes:
        # conv.unroll(w, k_oc): one init op per output-channel lane
        loop, i = nest(ko, "init", ("y", height), ("x", width))
        for k in range(ocu):
            add_op(loop, f"init_{k}", ("out_mem", k, i["x"], i["y"]), [("bias", kg + k)],
                   pass_kernel("init_pass", s16))
        # hw_input.in().unroll(z): one input stream per input-channel lane
        lane_stage(ko, "load_input", "input", "in_mem", ic, icu, iw, ih,
                   pass_kernel("load_input_pass", s16))
    else:
        loop, i = nest(ko, "init", ("y", height), ("x", width), ("k", ocu))
        add_op(loop, "init", ("out_mem", i["k"], i["x"], i["y"]), [("bias", kg + i["k"])],
               pass_kernel("init_pass", s16))
        loop, i = nest(ko, "load_input", ("y", ih), ("x", iw), ("c", ic))
        add_op(loop, "load_input", ("in_mem", i["c"], i["x"], i["y"]),
               [("input", i["c"], i["x"], i["y"])], pass_kernel("load_input_pass", s16))
    loop, i = nest(ko, "load_weight", ("ky", KSIZE), ("kx", KSIZE), ("k", ocu), ("c", ic))
    add_op(loop, "load_weight", ("w_mem", i["c"], i["k"], i["kx"], i["ky"]),
           [("weights", i["c"], kg + i["k"], i["kx"], i["ky"])],
           pass_kernel("load_weight_pass", s16))

    loop, i = nest(ko, "conv", ("ci", ic // icu), ("ky", KSIZE), ("kx", KSIZE),
                   ("y", height), ("x", width))
    mac = mac_kernel(f"mac{icu}_kernel", icu)
    c0 = i["ci"] * icu
    for k in range(ocu):
        loads = [("in_mem", c0 + c, i["x"] + i["kx"], i["y"] + i["ky"]) for c in range(icu)]
        loads += [("w_mem", c0 + c, k, i["kx"], i["ky"]) for c in range(icu)]
        loads.append(("out_mem", k, i["x"], i["y"]))
        add_op(loop, f"conv_{k}", ("out_mem", k, i["x"], i["y"]), loads, mac)

    if io_lanes:
        # the output lanes mirror the input lanes: one drain op per output channel
        loop, i = nest(ko, "drain", ("y", height), ("x", width))
        for k in range(ocu):
            add_op(loop, f"drain_{k}", ("output", kg + k, i["x"], i["y"]),
                   [("out_mem", k, i["x"], i["y"])], relu_kernel("relu_kernel"))
    else:
        loop, i = nest(ko, "drain", ("y", height), ("x", width), ("k", ocu))
        add_op(loop, "drain", ("output", kg + i["k"], i["x"], i["y"]),
               [("out_mem", i["k"], i["x"], i["y"])], relu_kernel("relu_kernel"))
    return prog.validate()


def make_inputs(seed: int = 0, width: int = 28, height: int = 28, in_channels: int = 16,
                out_channels: int = 16, ic_unroll: int = 8, oc_unroll: int = 8,
                io_lanes: int = 1):
    iw, ih = width + KSIZE - 1, height + KSIZE - 1
    return {"input": small_unsigned(seed, (in_channels, iw, ih), ACT_MAX),
            "weights": small_signed(seed + 1, (in_channels, out_channels, KSIZE, KSIZE),
                                    WEIGHT_MAX),
            "bias": small_signed(seed + 2, (out_channels,), 64)}


def conv_reference(act: np.ndarray, weights: np.ndarray, bias: np.ndarray, width: int,
                   height: int) -> np.ndarray:
    """``bias[k] + sum input[c, x+kx, y+ky] * w[c, k, kx, ky]`` as int64, shape (OC, W, H)."""
    act = np.asarray(act, dtype=np.int64)
    w = np.asarray(weights, dtype=np.int64)
    out = np.broadcast_to(np.asarray(bias, dtype=np.int64)[:, None, None],
                          (w.shape[1], width, height)).copy()
    for kx in range(w.shape[2]):
        for ky in range(w.shape[3]):
            out += np.einsum("cxy,ck->kxy", act[:, kx:kx + width, ky:ky + height], w[:, :, kx, ky])
    return out


def reference(inputs: dict, width: int = 28, height: int = 28, in_channels: int = 16,
              out_channels: int = 16, ic_unroll: int = 8, oc_unroll: int = 8,
              io_lanes: int = 1):
    acc = wrap(conv_reference(inputs["input"], inputs["weights"], inputs["bias"], width, height),
               s16)
    return {"output": to_dtype(np.maximum(acc, 0), s16)}
