"""pair_avg: the mean of each pixel and its right neighbour, ``(in[x] + in[x+1]) >> 1`` on a
row of 16 pixels: small enough for cgra_2x2 (2 PE, 2 MEM, 2 IO tiles)."""
import numpy as np

from compiler.frontend.loopnest import add_op, nest
from compiler.ir import Kernel, Program, u16

SIZES = {"width": 16}


def build(width: int = 16) -> Program:
    prog = Program("pair_avg")
    prog.add_input("input", (width,), u16)
    prog.add_buffer("hw_input", (width,), u16)
    prog.add_output("output", (width - 1,), u16)
    loop, i = nest(prog, "hw_input", ("x", width))
    add_op(loop, "hw_input", ("hw_input", i["x"]), [("input", i["x"])],
           Kernel.from_fn("copy", lambda a: a, u16))
    loop, i = nest(prog, "avg", ("x", width - 1))
    add_op(loop, "avg", ("output", i["x"]), [("hw_input", i["x"]), ("hw_input", i["x"] + 1)],
           Kernel.from_fn("avg", lambda a, b: (a + b) >> 1, u16, u16))
    return prog.validate()


def make_inputs(seed: int = 0, width: int = 16) -> dict:
    rng = np.random.default_rng(seed)
    return {"input": rng.integers(0, 256, (width,)).astype(np.uint16)}


def reference(inputs: dict, width: int = 16) -> dict:
    a = np.asarray(inputs["input"], dtype=np.int64)
    return {"output": ((a[:-1] + a[1:]) >> 1).astype(np.uint16)}
