"""resnet: one ResNet 3x3 convolution layer with ReLU (thesis Table 7.1: 28x28 image,
IC = OC = 16; paper Table III "layer using multi-channel convolution").

Algorithm: ``output[k, x, y] = max(0, bias[k] + sum_{c, kx, ky} input[c, S*x+kx, S*y+ky] *
weights[c, k, kx, ky])`` -- a valid ``ksize`` x ``ksize`` convolution with stride ``S``
(``stride``; default a 3x3 over a 30x30 input, 28x28 output), 16-bit signed arithmetic. Inputs
are 4-bit activations (0..15, quantised ReLU outputs) and weights in [-7, 7], so the worst-case
sum of the default layer (16*9*15*7 = 15120) stays inside s16 (larger layers wrap at 16 bits,
in the reference and on the array alike). ``ksize`` and ``stride`` give the other ResNet-18
layers (:data:`RESNET18_LAYERS`, :func:`resnet18_layer`; thesis §7.3.2, Figs. 7.8/7.9).

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

With ``carry=1`` the layer is one input-channel block of a larger layer (docs/tiling.md
"Channel blocks"): the accumulators start from the partial sums ``psum[k, x, y]`` of the
blocks before it (an input from the global buffer, in place of the bias: the bias is the first
block's ``psum``). ``relu=0`` drains the raw sums (the next block's ``psum``): the drain's
``max(a, 0)`` becomes ``max(a, -32768)``, the identity on 16-bit words, so the blocks before
the last and the last one differ only in that constant (one netlist, two constants).

The paper's measured resnet (Tables VI/VII: 44876 -> 15614 cycles, 14048 SRAM words) is one 8x8
channel block: ``in_channels=8, out_channels=8`` gives exactly 7200 + 576 + 6272 = 14048 words
(docs/apps.md). The defaults stay at Table 7.1's IC = OC = 16.
"""
from __future__ import annotations

import numpy as np

from compiler.ir import Kernel, Program, maximum, s16

from compiler.frontend.loopnest import (add_op, lane_stage, mac_kernel, nest, pass_kernel,
                                        relu_kernel)
from ._common import check_sizes, require, small_signed, small_unsigned, to_dtype, wrap

SIZES = {"width": 28, "height": 28, "in_channels": 16, "out_channels": 16, "ic_unroll": 8,
         "oc_unroll": 8, "io_lanes": 1, "ksize": 3, "stride": 1}
KSIZE = 3
ACT_MAX = 15
WEIGHT_MAX = 7


def build(width: int = 28, height: int = 28, in_channels: int = 16, out_channels: int = 16,
          ic_unroll: int = 8, oc_unroll: int = 8, io_lanes: int = 1, ksize: int = KSIZE,
          stride: int = 1, carry: int = 0, relu: int = 1) -> Program:
    check_sizes("resnet", width=width, height=height, in_channels=in_channels,
                out_channels=out_channels, ic_unroll=ic_unroll, oc_unroll=oc_unroll,
                ksize=ksize, stride=stride)
    require("resnet", carry in (0, 1) and relu in (0, 1),
            f"carry and relu must be 0 or 1, got {carry!r} and {relu!r}")
    require("resnet", in_channels % ic_unroll == 0 and out_channels % oc_unroll == 0,
            f"channels ({in_channels}, {out_channels}) must be multiples of the unroll factors "
            f"({ic_unroll}, {oc_unroll})")
    ic, oc, icu, ocu, K, S = in_channels, out_channels, ic_unroll, oc_unroll, ksize, stride
    iw, ih = in_size(width, K, S), in_size(height, K, S)
    prog = Program("resnet")
    prog.add_input("input", (ic, iw, ih), s16)
    prog.add_input("weights", (ic, oc, K, K), s16)
    if carry:
        prog.add_input("psum", (oc, width, height), s16)
    else:
        prog.add_input("bias", (oc,), s16)
    prog.add_buffer("in_mem", (ic, iw, ih), s16)
    prog.add_buffer("w_mem", (ic, ocu, K, K), s16)
    prog.add_buffer("out_mem", (ocu, width, height), s16)
    prog.add_output("output", (oc, width, height), s16)
    drain = relu_kernel("relu_kernel") if relu else floor_kernel("relu_kernel", S16_MIN)

    ko = prog.add_loop("ko", 0, oc // ocu)
    kg = ko.var * ocu                                   # first output channel of the block
    if io_lanes:
        # conv.unroll(w, k_oc): one init op per output-channel lane
        loop, i = nest(ko, "init", ("y", height), ("x", width))
        for k in range(ocu):
            add_op(loop, f"init_{k}", ("out_mem", k, i["x"], i["y"]),
                   [_initial(carry, kg + k, i)], pass_kernel("init_pass", s16))
        # hw_input.in().unroll(z): one input stream per input-channel lane
        lane_stage(ko, "load_input", "input", "in_mem", ic, icu, iw, ih,
                   pass_kernel("load_input_pass", s16))
    else:
        loop, i = nest(ko, "init", ("y", height), ("x", width), ("k", ocu))
        add_op(loop, "init", ("out_mem", i["k"], i["x"], i["y"]),
               [_initial(carry, kg + i["k"], i)], pass_kernel("init_pass", s16))
        loop, i = nest(ko, "load_input", ("y", ih), ("x", iw), ("c", ic))
        add_op(loop, "load_input", ("in_mem", i["c"], i["x"], i["y"]),
               [("input", i["c"], i["x"], i["y"])], pass_kernel("load_input_pass", s16))
    loop, i = nest(ko, "load_weight", ("ky", K), ("kx", K), ("k", ocu), ("c", ic))
    add_op(loop, "load_weight", ("w_mem", i["c"], i["k"], i["kx"], i["ky"]),
           [("weights", i["c"], kg + i["k"], i["kx"], i["ky"])],
           pass_kernel("load_weight_pass", s16))

    loop, i = nest(ko, "conv", ("ci", ic // icu), ("ky", K), ("kx", K),
                   ("y", height), ("x", width))
    mac = mac_kernel(f"mac{icu}_kernel", icu)
    c0 = i["ci"] * icu
    for k in range(ocu):
        loads = [("in_mem", c0 + c, S * i["x"] + i["kx"], S * i["y"] + i["ky"])
                 for c in range(icu)]
        loads += [("w_mem", c0 + c, k, i["kx"], i["ky"]) for c in range(icu)]
        loads.append(("out_mem", k, i["x"], i["y"]))
        add_op(loop, f"conv_{k}", ("out_mem", k, i["x"], i["y"]), loads, mac)

    if io_lanes:
        # the output lanes mirror the input lanes: one drain op per output channel
        loop, i = nest(ko, "drain", ("y", height), ("x", width))
        for k in range(ocu):
            add_op(loop, f"drain_{k}", ("output", kg + k, i["x"], i["y"]),
                   [("out_mem", k, i["x"], i["y"])], drain)
    else:
        loop, i = nest(ko, "drain", ("y", height), ("x", width), ("k", ocu))
        add_op(loop, "drain", ("output", kg + i["k"], i["x"], i["y"]),
               [("out_mem", i["k"], i["x"], i["y"])], drain)
    return prog.validate()


S16_MIN = -(1 << 15)


def floor_kernel(name: str, floor: int):
    """``max(a, floor)``: ReLU at ``floor = 0``, the identity at the smallest s16."""
    return Kernel.from_fn(name, lambda a: maximum(a, floor), s16)


def _initial(carry: int, k, i: dict) -> tuple:
    """The accumulator's initial value: the bias of output channel ``k``, or with ``carry``
    the partial sum of the blocks before (``psum[k, x, y]``)."""
    return ("psum", k, i["x"], i["y"]) if carry else ("bias", k)


# The eight distinct convolution layers of ResNet-18 (He, Zhang, Ren and Sun, "Deep Residual
# Learning for Image Recognition", CVPR 2016, Table 1, the 18-layer column; thesis §7.3.2 maps
# "all eight ResNet convolutional layers", each blocked 8 input x 8 output channels): name ->
# (output width = height, input channels, output channels, kernel size, stride). conv2_x ..
# conv5_x are a stage's 3x3 layers after its first one; conv3_1 .. conv5_1 halve the image.
RESNET18_LAYERS = {
    "conv1": (112, 3, 64, 7, 2),
    "conv2_x": (56, 64, 64, 3, 1),
    "conv3_1": (28, 64, 128, 3, 2),
    "conv3_x": (28, 128, 128, 3, 1),
    "conv4_1": (14, 128, 256, 3, 2),
    "conv4_x": (14, 256, 256, 3, 1),
    "conv5_1": (7, 256, 512, 3, 2),
    "conv5_x": (7, 512, 512, 3, 1),
}
BLOCK = 8            # channels per block (thesis §7.3.2: 8 input x 8 output channels)


def resnet18_layer(name: str, blocks: int = 2) -> dict:
    """The sizes of ResNet-18 layer ``name`` (:data:`RESNET18_LAYERS`) for :func:`build`: its
    image size, kernel and stride, blocked 8 x 8 (``ic_unroll = oc_unroll = 8``), with
    ``blocks`` blocks of 8 channels each way (fewer when the layer has fewer channels; conv1's 3
    input channels are one block, zero-padded to 8). The full layers repeat the same tile up to
    64 x 64 times: their cycles overflow the controllers' 20-bit counters, and one tile's
    pipeline already shows the schedule's occupancy."""
    out, ic, oc, k, stride = RESNET18_LAYERS[name]
    return {"width": out, "height": out, "ksize": k, "stride": stride,
            "in_channels": BLOCK * max(1, min(blocks, ic // BLOCK)),
            "out_channels": BLOCK * max(1, min(blocks, oc // BLOCK)),
            "ic_unroll": BLOCK, "oc_unroll": BLOCK}


def in_size(out: int, ksize: int = KSIZE, stride: int = 1) -> int:
    """The input extent a valid ``ksize`` convolution with ``stride`` reads for ``out`` outputs
    (a padded layer's input with its padding)."""
    return (out - 1) * stride + ksize


def make_inputs(seed: int = 0, width: int = 28, height: int = 28, in_channels: int = 16,
                out_channels: int = 16, ic_unroll: int = 8, oc_unroll: int = 8,
                io_lanes: int = 1, ksize: int = KSIZE, stride: int = 1, carry: int = 0,
                relu: int = 1):
    iw, ih = in_size(width, ksize, stride), in_size(height, ksize, stride)
    out = {"input": small_unsigned(seed, (in_channels, iw, ih), ACT_MAX),
           "weights": small_signed(seed + 1, (in_channels, out_channels, ksize, ksize),
                                   WEIGHT_MAX)}
    if carry:       # the partial sums of earlier blocks: both signs, as a block sees them
        out["psum"] = small_signed(seed + 2, (out_channels, width, height), 2048)
    else:
        out["bias"] = small_signed(seed + 2, (out_channels,), 64)
    return out


def initial_carry(inputs: dict, width: int = 28, height: int = 28, **_sizes) -> dict:
    """The first channel block's ``psum`` of a whole layer's ``inputs``: every output
    element's accumulator starts at its channel's bias (docs/tiling.md "Channel blocks")."""
    bias = np.asarray(inputs["bias"])
    return {"psum": np.broadcast_to(bias[:, None, None], (bias.shape[0], width, height)).copy()}


# The input-channel reduction as runs of channel blocks (compiler.tiling.blocks): the size
# that is the reduction's extent, its unroll (a block is a multiple of it), the inputs cut
# along it (buffer -> dimension), the size that makes a block Program, the size that is 1 for
# the last block only, and the carried buffers (input, output of the blocks before the last).
CHANNEL_BLOCKS = {"size": "in_channels", "unroll": "ic_unroll",
                  "sliced": {"input": 0, "weights": 0}, "flag": "carry", "last": "relu",
                  "carry_in": "psum", "carry_out": "output", "output": "output"}


def conv_reference(act: np.ndarray, weights: np.ndarray, bias: np.ndarray, width: int,
                   height: int, stride: int = 1) -> np.ndarray:
    """``bias[k] + sum input[c, S*x+kx, S*y+ky] * w[c, k, kx, ky]`` as int64, shape
    (OC, W, H)."""
    act = np.asarray(act, dtype=np.int64)
    w = np.asarray(weights, dtype=np.int64)
    out = np.broadcast_to(np.asarray(bias, dtype=np.int64)[:, None, None],
                          (w.shape[1], width, height)).copy()
    for kx in range(w.shape[2]):
        for ky in range(w.shape[3]):
            win = act[:, kx:kx + stride * width:stride, ky:ky + stride * height:stride]
            out += np.einsum("cxy,ck->kxy", win, w[:, :, kx, ky])
    return out


def reference(inputs: dict, width: int = 28, height: int = 28, in_channels: int = 16,
              out_channels: int = 16, ic_unroll: int = 8, oc_unroll: int = 8,
              io_lanes: int = 1, ksize: int = KSIZE, stride: int = 1, carry: int = 0,
              relu: int = 1):
    w = np.asarray(inputs["weights"])
    zero = np.zeros(w.shape[1], dtype=np.int64)
    acc = conv_reference(inputs["input"], w, zero if carry else inputs["bias"], width, height,
                         stride)
    if carry:
        acc = acc + np.asarray(inputs["psum"], dtype=np.int64)
    acc = wrap(acc, s16)
    return {"output": to_dtype(np.maximum(acc, 0) if relu else acc, s16)}
