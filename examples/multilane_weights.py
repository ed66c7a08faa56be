"""A multi-lane app whose lanes start at different cycles (Halide-style DSL; docs/apps.md,
"Write your own app"; docs/scheduling.md, "Inputs as late as possible"): ``lanes`` image
channels, each convolved with its own ``k`` x ``k`` kernel,

    conv(x, y, c) = sum_{i, j} w(i, j, c) * in(x + i, y + j, c)

The input channels stream in parallel, one lane per channel (``hw_input`` unrolled over
``c``), and so do the convolutions (``conv`` unrolled over ``c``). The weights come through one
stream, channel after channel, so lane ``c`` cannot start before its ``k * k`` weights have
arrived: ``k * k`` cycles after lane ``c - 1``. Started as early as possible, every input lane
would buffer the values that arrive before its convolution starts, on top of the ``k - 1``
rows (plus ``k`` pixels) its window needs; the scheduler delays each input lane to its
convolution's start instead (``ubc map examples/multilane_weights.py`` against ``--no-delay``).

Run it: ``make sim APP=examples/multilane_weights.py``. The golden is the interpreter
cross-checked with real Halide (no ``reference()``).
"""
import numpy as np

from compiler.frontend.halide import Func, Input, Pipeline, Var
from compiler.ir import u16

SIZES = {"width": 32, "height": 12, "lanes": 8, "k": 5}


def build(width: int = 32, height: int = 12, lanes: int = 8, k: int = 5):
    x, y, c = Var("x"), Var("y"), Var("c")
    inp = Input("input", u16, (width, height, lanes))
    w = Input("weights", u16, (k, k, lanes))
    hw_input, hw_weights, conv = Func("hw_input"), Func("hw_weights"), Func("conv")
    hw_input[x, y, c] = inp[x, y, c]
    hw_weights[x, y, c] = w[x, y, c]
    conv[x, y, c] = sum(hw_weights[i, j, c] * hw_input[x + i, y + j, c]
                        for j in range(k) for i in range(k))
    hw_input.stream_to_accelerator().reorder(c, x, y).unroll(c)     # a lane per channel
    hw_weights.stream_to_accelerator()                              # one stream, c outermost
    conv.reorder(c, x, y).unroll(c)
    return Pipeline(conv).lower("multilane_weights", (width - k + 1, height - k + 1, lanes))


def make_inputs(seed: int = 0, width: int = 32, height: int = 12, lanes: int = 8,
                k: int = 5) -> dict:
    rng = np.random.default_rng(seed)
    return {"input": rng.integers(0, 256, (width, height, lanes)).astype(np.uint16),
            "weights": rng.integers(0, 4, (k, k, lanes)).astype(np.uint16)}
