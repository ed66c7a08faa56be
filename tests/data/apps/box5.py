"""A user's app file in the Halide-style DSL, as a new user writes one: a 5x5 box sum written
as a reduction over an ``RDom``, computed at the output's tile loop, scaled by ``>> 5``, with
an independent numpy ``reference()``. The tests of the golden (tests/compiler/frontend/test_golden.py)
also run a copy whose reference is off by one, which every PASS path must refuse.
``box_pipeline(width, height, unrolled=False)`` keeps the reduction a loop (one addition per
instance; tests/compiler/schedule/test_drain_place.py)."""
import numpy as np

from compiler.frontend.halide import Func, Input, Pipeline, RDom, Var, cast
from compiler.ir import u16

SIZES = {"width": 24, "height": 24}


def build(width: int = 24, height: int = 24):
    return box_pipeline(width, height)


def box_pipeline(width: int, height: int, unrolled: bool = True):
    x, y, xo, yo, xi, yi = (Var(n) for n in ("x", "y", "xo", "yo", "xi", "yi"))
    inp = Input("input", u16, (width, height))
    hw_input, box, out = Func("hw_input"), Func("box"), Func("output")
    hw_input[x, y] = inp[x, y]
    r = RDom([(0, 5), (0, 5)], "r")
    box[x, y] = cast(u16, 0)
    box[x, y] += hw_input[x + r.x, y + r.y]
    out[x, y] = box[x, y] >> 5
    out.tile(x, y, xo, yo, xi, yi, width - 4, height - 4)
    box.compute_at(out, xo)
    if unrolled:
        box.update(0).unroll(r.x).unroll(r.y)
    hw_input.stream_to_accelerator()
    return Pipeline(out).lower("box5", (width - 4, height - 4))


def make_inputs(seed: int = 0, width: int = 24, height: int = 24) -> dict:
    rng = np.random.default_rng(seed)
    return {"input": rng.integers(0, 256, (width, height)).astype(np.uint16)}


def reference(inputs: dict, width: int = 24, height: int = 24) -> dict:
    a = np.asarray(inputs["input"], dtype=np.int64)
    w, h = width - 4, height - 4
    s = sum(a[dx:dx + w, dy:dy + h] for dy in range(5) for dx in range(5))
    return {"output": ((s & 0xFFFF) >> 5).astype(np.uint16)}
