"""A small app file that uses what camera and unsharp added to the hardware, small enough for the
CI's end-to-end run on cgra_8x8 (tests/rtl/test_e2e.py): a Bayer-phase select (``x % 2``,
``y % 2``: compiler.ir.LoopPhase, schedule generators in hardware) and a division by a pixel
value (the PE's UDIV), in the loop-nest DSL with an independent numpy ``reference()``.

``hw_input = input & 255``; at each pixel the neighbour pair is the horizontal one on even
columns and the vertical one on odd columns, and the ratio of the centre to the pair's sum is
``min(32 * centre / max(pair, 1), 255)`` on even rows, the pair's mean on odd rows.
"""
import numpy as np

from compiler.frontend.loopnest import add_op, nest
from compiler.ir import Kernel, LoopPhase, Program, maximum, minimum, select, u16

SIZES = {"width": 12, "height": 8}


def build(width: int = 12, height: int = 8) -> Program:
    prog = Program("bayer_ratio")
    prog.add_input("input", (width, height), u16)
    prog.add_buffer("hw_input", (width, height), u16)
    prog.add_output("output", (width - 2, height - 2), u16)
    loop, i = nest(prog, "hw_input", ("y", height), ("x", width))
    add_op(loop, "hw_input", ("hw_input", i["x"], i["y"]), [("input", i["x"], i["y"])],
           Kernel.from_fn("u8", lambda a: a & 255, u16))
    loop, i = nest(prog, "ratio", ("y", height - 2), ("x", width - 2))
    x, y = i["x"], i["y"]

    def ratio(c, w, e, n, s):
        pair = select(LoopPhase(loop.name, 2, 0), w + e, n + s)
        return select(LoopPhase(loop.parent.name, 2, 0),
                      minimum((c * 32) // maximum(pair, 1), 255), pair >> 1)

    add_op(loop, "ratio", ("output", x, y),
           [("hw_input", x + dx, y + dy) for dx, dy in ((1, 1), (0, 1), (2, 1), (1, 0), (1, 2))],
           Kernel.from_fn("ratio_kernel", ratio, *([u16] * 5)))
    return prog.validate()


def make_inputs(seed: int = 0, width: int = 12, height: int = 8) -> dict:
    rng = np.random.default_rng(seed)
    img = rng.integers(0, 256, (width, height))
    img[rng.random((width, height)) < 0.2] = 0        # zero pairs divide by max(0, 1)
    return {"input": img.astype(np.uint16)}


def reference(inputs: dict, width: int = 12, height: int = 8) -> dict:
    a = np.asarray(inputs["input"], dtype=np.int64) & 255
    w, h = width - 2, height - 2
    c = a[1:1 + w, 1:1 + h]
    horizontal = a[0:w, 1:1 + h] + a[2:2 + w, 1:1 + h]
    vertical = a[1:1 + w, 0:h] + a[1:1 + w, 2:2 + h]
    pair = np.where((np.arange(w) % 2 == 0)[:, None], horizontal, vertical)
    even_row = (np.arange(h) % 2 == 0)[None, :]
    out = np.where(even_row, np.minimum(c * 32 // np.maximum(pair, 1), 255), pair >> 1)
    return {"output": out.astype(np.uint16)}
