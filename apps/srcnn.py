"""srcnn: the three-layer super-resolution CNN of thesis Table 7.1 / §7.3 (SR-CNN, Dong et al.):
a 30x30 input with 64 channels, a 1x1 convolution 64 -> 8, a 3x3 convolution 8 -> 8 and a 1x1
convolution 8 -> 64, each followed by a ReLU (thesis §7.3: "three convolutional layers followed
by non-linear ReLu layers").

Algorithm (16-bit signed fixed point): ``l1 = b1 + conv1x1(input, w1)``,
``a1 = clamp(l1 >> 4, 0, 15)``; ``l2 = b2 + conv3x3(a1, w2)``, ``a2 = clamp(l2 >> 4, 0, 15)``;
``output = max(0, b3 + conv1x1(a2, w3))``. The hidden activations are requantised to 4 bits
(ReLU, shift, saturate) so every layer's sum stays in s16 for 4-bit inputs and weights in
[-7, 7] (layer 1: 64*15*7 = 6720, layer 2: 72*15*7 = 7560).

Sizes (Table 7.1): input 64x30x30, ``a1`` 8x30x30, ``a2`` 8x28x28, output 64x28x28.

Loop nests (thesis Fig. 4.3 style, one group per layer): input and weights are copied into CGRA
memories; each layer has an ``init`` (accumulator = bias), a ``conv`` nest whose ``unroll``
(default 8) output channels are parallel ops, each the same ``mac8`` kernel
``acc + sum_{i<8} act[i] * w[i]`` over 8 unrolled input channels, and an activation nest.
Non-unrolled reduction loops: layer 1 iterates its 64 input channels in 8 blocks (``co``),
layer 2 its 3x3 window (``ky, kx``), outside the pixel loops; layer 3 needs one block per group of
8 output channels (``ko``) and takes its bias as the accumulator input.
``share=True`` is the compute-sharing variant of thesis Table 7.6/7.7: the k-th conv op of every
layer names the unit ``conv_k`` (``Op.add_function(kernel, unit=...)``), so the three layers run
sequentially on one set of ``unroll`` MAC units. ``bias_mem`` (default: as ``share``) copies the
biases of the two accumulator initialisations into CGRA memories (``load_b1``, ``load_b2``, one
stream each) instead of streaming each lane's bias from the global buffer at every pixel (two
times ``unroll`` IO tiles; thesis Table 7.1's sizes need 43 IO tiles that way, the 16x32 array
has 32).

Channel lanes (``io_lanes``, default 1; the choice resnet takes from the reference flow's ResNet
layer generator, apps/resnet.py): every per-channel stage that is not a convolution -- the input
stream, the ``init`` of each accumulator, the activations and the drain -- is unrolled over the
``unroll`` channel lanes of the convolutions (one op per lane, ``x`` innermost), so each lane's
memory is written and read pixel by pixel like the convolutions walk it, one word per lane per
cycle (thesis §4.3.2: isomorphic lanes bank cyclically). ``io_lanes=0`` keeps the channel
innermost in those stages, one word per cycle (the ablation: a channel-innermost write against a
pixel-innermost read is a transpose, one SRAM fetch per read).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from compiler.ir import Kernel, Program, maximum, minimum, s16

from compiler.frontend.loopnest import (add_op, lane_stage, mac_kernel, nest, pass_kernel,
                                        relu_kernel)
from ._common import check_sizes, require, small_signed, small_unsigned, to_dtype, wrap
from .resnet import conv_reference

SIZES = {"width": 30, "height": 30, "c_in": 64, "c_mid": 8, "c_out": 64, "unroll": 8,
         "share": False, "io_lanes": 1, "bias_mem": None}
ACT_MAX = 15
WEIGHT_MAX = 7
BIAS_MAX = 32
ACT_SHIFT = 4


def _act_kernel() -> Kernel:
    return Kernel.from_fn("act_kernel",
                          lambda a: minimum(maximum(a, 0) >> ACT_SHIFT, ACT_MAX), s16)


def build(width: int = 30, height: int = 30, c_in: int = 64, c_mid: int = 8, c_out: int = 64,
          unroll: int = 8, share: bool = False,
          io_lanes: int = 1, bias_mem: int | None = None) -> Program:
    check_sizes("srcnn", width=width - 2, height=height - 2, c_in=c_in, c_mid=c_mid,
                c_out=c_out, unroll=unroll)
    require("srcnn", c_mid == unroll and c_in % unroll == 0 and c_out % unroll == 0,
            f"c_mid={c_mid} must equal unroll={unroll}, and c_in={c_in}, c_out={c_out} must be "
            f"multiples of it")
    on_chip = bool(share) if bias_mem is None else bool(bias_mem)
    net = _SRCNN(Program("srcnn"), width, height, c_in, c_mid, c_out, unroll, share, io_lanes,
                 on_chip)
    net.declare_buffers()
    net.load_inputs()
    net.layer1()
    net.layer2()
    net.layer3()
    return net.prog.validate()


@dataclass
class _SRCNN:
    """The loop nests of :func:`build`, one method per stage of the module docstring."""
    prog: Program
    width: int
    height: int
    c_in: int
    c_mid: int
    c_out: int
    u: int                       # the unroll factor: parallel output channels per conv
    share: bool
    io_lanes: int
    bias_mem: bool = False       # the accumulators' biases copied into CGRA memories

    def __post_init__(self):
        self.ow, self.oh = self.width - 2, self.height - 2
        self.mac = mac_kernel(f"mac{self.u}_kernel", self.u)
        self.act = _act_kernel()

    def declare_buffers(self) -> None:
        prog, c_in, c_mid, c_out = self.prog, self.c_in, self.c_mid, self.c_out
        width, height, ow, oh = self.width, self.height, self.ow, self.oh
        prog.add_input("input", (c_in, width, height), s16)
        prog.add_input("w1", (c_in, c_mid), s16)
        prog.add_input("b1", (c_mid,), s16)
        prog.add_input("w2", (c_mid, c_mid, 3, 3), s16)
        prog.add_input("b2", (c_mid,), s16)
        prog.add_input("w3", (c_mid, c_out), s16)
        prog.add_input("b3", (c_out,), s16)
        for name, shape in (("in_mem", (c_in, width, height)), ("w1_mem", (c_in, c_mid)),
                            ("w2_mem", (c_mid, c_mid, 3, 3)), ("w3_mem", (c_mid, c_out)),
                            ("l1", (c_mid, width, height)), ("a1", (c_mid, width, height)),
                            ("l2", (c_mid, ow, oh)), ("a2", (c_mid, ow, oh)),
                            ("l3", (c_out, ow, oh))):
            prog.add_buffer(name, shape, s16)
        if self.bias_mem:
            for name in ("b1_mem", "b2_mem"):
                prog.add_buffer(name, (c_mid,), s16)
        prog.add_output("output", (c_out, ow, oh), s16)

    def load_inputs(self) -> None:
        """The input image and the weights copied into CGRA memories."""
        c_in, c_mid, c_out = self.c_in, self.c_mid, self.c_out
        if self.io_lanes:
            # one input stream per channel lane (the reference flow's hw_input.in().unroll(z))
            lane_stage(self.prog, "load_input", "input", "in_mem", c_in, self.u, self.width,
                       self.height, pass_kernel("load_input_pass", s16))
        else:
            self.copy("load_input", "input", "in_mem",
                      (("y", self.height), ("x", self.width), ("c", c_in)), ("c", "x", "y"))
        self.copy("load_w1", "w1", "w1_mem", (("k", c_mid), ("c", c_in)), ("c", "k"))
        self.copy("load_w2", "w2", "w2_mem", (("ky", 3), ("kx", 3), ("k", c_mid), ("c", c_mid)),
                  ("c", "k", "kx", "ky"))
        self.copy("load_w3", "w3", "w3_mem", (("k", c_out), ("c", c_mid)), ("c", "k"))
        if self.bias_mem:
            for b in ("b1", "b2"):
                self.copy(f"load_{b}", b, f"{b}_mem", (("k", c_mid),), ("k",))

    def copy(self, stage, src, dst, dims, index) -> None:
        loop, i = nest(self.prog, stage, *dims)
        idx = [i[d] for d in index]
        add_op(loop, stage, (dst, *idx), [(src, *idx)], pass_kernel(f"{stage}_pass", s16))

    def unit(self, k: int) -> str | None:
        """The shared MAC unit of the k-th conv op of every layer (``share``)."""
        return f"conv_{k}" if self.share else None

    def init(self, stage, dst, bias, w, h) -> None:
        """Accumulator ``dst`` = its channel's bias, per lane or channel-innermost; the bias
        from its CGRA memory copy with ``bias_mem``."""
        bias = f"{bias}_mem" if self.bias_mem else bias
        if self.io_lanes:
            loop, i = nest(self.prog, stage, ("y", h), ("x", w))
            for k in range(self.c_mid):
                add_op(loop, f"{stage}_{k}", (dst, k, i["x"], i["y"]), [(bias, k)],
                       pass_kernel(f"{stage}_pass", s16))
            return
        loop, i = nest(self.prog, stage, ("y", h), ("x", w), ("k", self.c_mid))
        add_op(loop, stage, (dst, i["k"], i["x"], i["y"]), [(bias, i["k"])],
               pass_kernel(f"{stage}_pass", s16))

    def activate(self, stage, src, dst, channels, w, h, kernel) -> None:
        """``dst = kernel(src)`` per channel, per lane or channel-innermost."""
        if self.io_lanes:
            lane_stage(self.prog, stage, src, dst, channels, self.u, w, h, kernel)
            return
        loop, i = nest(self.prog, stage, ("y", h), ("x", w), ("k", channels))
        add_op(loop, stage, (dst, i["k"], i["x"], i["y"]), [(src, i["k"], i["x"], i["y"])],
               kernel)

    def layer1(self) -> None:
        """1x1 conv c_in -> c_mid, the input channels in blocks of ``u``."""
        u, width, height = self.u, self.width, self.height
        self.init("init1", "l1", "b1", width, height)
        loop, i = nest(self.prog, "conv1", ("co", self.c_in // u), ("y", height), ("x", width))
        for k in range(self.c_mid):
            cs = [i["co"] * u + c for c in range(u)]
            loads = [("in_mem", c, i["x"], i["y"]) for c in cs]
            loads += [("w1_mem", c, k) for c in cs] + [("l1", k, i["x"], i["y"])]
            add_op(loop, f"conv1_{k}", ("l1", k, i["x"], i["y"]), loads, self.mac, self.unit(k))
        self.activate("act1", "l1", "a1", self.c_mid, width, height, self.act)

    def layer2(self) -> None:
        """3x3 conv c_mid -> c_mid, the window sequential."""
        c_mid, ow, oh = self.c_mid, self.ow, self.oh
        self.init("init2", "l2", "b2", ow, oh)
        loop, i = nest(self.prog, "conv2", ("ky", 3), ("kx", 3), ("y", oh), ("x", ow))
        for k in range(c_mid):
            loads = [("a1", c, i["x"] + i["kx"], i["y"] + i["ky"]) for c in range(c_mid)]
            loads += [("w2_mem", c, k, i["kx"], i["ky"]) for c in range(c_mid)]
            loads.append(("l2", k, i["x"], i["y"]))
            add_op(loop, f"conv2_{k}", ("l2", k, i["x"], i["y"]), loads, self.mac, self.unit(k))
        self.activate("act2", "l2", "a2", c_mid, ow, oh, self.act)

    def layer3(self) -> None:
        """1x1 conv c_mid -> c_out, the output channels in blocks of ``u``, the bias as the
        accumulator input; then the ReLU drain to the output."""
        u, c_mid, ow, oh = self.u, self.c_mid, self.ow, self.oh
        loop, i = nest(self.prog, "conv3", ("ko", self.c_out // u), ("y", oh), ("x", ow))
        for k in range(u):
            ch = i["ko"] * u + k
            loads = [("a2", c, i["x"], i["y"]) for c in range(c_mid)]
            loads += [("w3_mem", c, ch) for c in range(c_mid)] + [("b3", ch)]
            add_op(loop, f"conv3_{k}", ("l3", ch, i["x"], i["y"]), loads, self.mac,
                   self.unit(k))
        self.activate("drain", "l3", "output", self.c_out, ow, oh, relu_kernel("relu_kernel"))


def make_inputs(seed: int = 0, width: int = 30, height: int = 30, c_in: int = 64,
                c_mid: int = 8, c_out: int = 64, unroll: int = 8, share: bool = False,
                io_lanes: int = 1, bias_mem: int | None = None):
    return {"input": small_unsigned(seed, (c_in, width, height), ACT_MAX),
            "w1": small_signed(seed + 1, (c_in, c_mid), WEIGHT_MAX),
            "b1": small_signed(seed + 2, (c_mid,), BIAS_MAX),
            "w2": small_signed(seed + 3, (c_mid, c_mid, 3, 3), WEIGHT_MAX),
            "b2": small_signed(seed + 4, (c_mid,), BIAS_MAX),
            "w3": small_signed(seed + 5, (c_mid, c_out), WEIGHT_MAX),
            "b3": small_signed(seed + 6, (c_out,), BIAS_MAX)}


def reference(inputs: dict, width: int = 30, height: int = 30, c_in: int = 64, c_mid: int = 8,
              c_out: int = 64, unroll: int = 8, share: bool = False,
              io_lanes: int = 1, bias_mem: int | None = None):
    ow, oh = width - 2, height - 2

    def quantise(acc):
        return np.minimum(np.maximum(wrap(acc, s16), 0) >> ACT_SHIFT, ACT_MAX)

    w1 = np.asarray(inputs["w1"])[:, :, None, None]
    a1 = quantise(conv_reference(inputs["input"], w1, inputs["b1"], width, height))
    a2 = quantise(conv_reference(a1, inputs["w2"], inputs["b2"], ow, oh))
    w3 = np.asarray(inputs["w3"])[:, :, None, None]
    out = conv_reference(a2, w3, inputs["b3"], ow, oh)
    return {"output": to_dtype(np.maximum(wrap(out, s16), 0), s16)}
