"""A user's own app in the Halide-style DSL (compiler.frontend.halide; docs/apps.md, "Write
your own app"): a 3x3 box sum written as a reduction over an ``RDom``, consumed by a second
function that scales it, the Halide-to-Hardware pattern

    sum(x, y) = 0;  sum(x, y) += in(x + r.x, y + r.y);  out(x, y) = sum(x, y) >> 3

Schedule: the input is streamed to the accelerator (``stream_to_accelerator``: its op copies
the GLB stream into the buffer its consumers read on the array); the reduction is computed at
the root (Halide's default for a function with an update), its window unrolled (the update is
one op with 9 taps: a stencil at one pixel per cycle) and its buffer placed in a memory tile
(``store_in("MEM")``, a level buffer mapping obeys).

Run it: ``make sim APP=examples/halide_box_blur.py`` or ``ubc schedule|map|compile|netlist
examples/halide_box_blur.py [--size width=32]``. There is no ``reference()``: the golden is
the interpreter, cross-checked with real Halide (PyPI ``halide``) on the same inputs.
"""
import numpy as np

from compiler.frontend.halide import Func, Input, Pipeline, RDom, Var, cast
from compiler.ir import u16

SIZES = {"width": 32, "height": 32}


def build(width: int = 32, height: int = 32):
    x, y = Var("x"), Var("y")
    inp = Input("input", u16, (width, height))
    hw_input, box, out = Func("hw_input"), Func("box"), Func("output")
    hw_input[x, y] = inp[x, y]
    r = RDom([(0, 3), (0, 3)], "r")
    box[x, y] = cast(u16, 0)
    box[x, y] += hw_input[x + r.x, y + r.y]
    out[x, y] = box[x, y] >> 3
    hw_input.stream_to_accelerator()
    box.update(0).unroll(r.x).unroll(r.y)
    box.store_in("MEM")
    return Pipeline(out).lower("halide_box_blur", (width - 2, height - 2))


def make_inputs(seed: int = 0, width: int = 32, height: int = 32) -> dict:
    rng = np.random.default_rng(seed)
    return {"input": rng.integers(0, 256, (width, height)).astype(np.uint16)}
