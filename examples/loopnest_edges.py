"""A user's own app in the loop-nest DSL (compiler.ir, thesis §4.1; docs/apps.md, "Write your
own app"): an edge detector in two stages.

    hw_input(x, y) = input(x, y)                                   (copy into a CGRA memory)
    grad(x, y)     = |in(x+2, y+1) - in(x, y+1)| + |in(x+1, y+2) - in(x+1, y)|
    edges(x, y)    = grad(x+1, y) > THRESHOLD and it is the largest of its 1x3 row
                     neighbourhood grad(x..x+2, y) ? 255 : 0

Each stage is one loop nest over its output tile with one op whose window reads are loads of
the op (the window fully unrolled): a stencil pipeline the scheduler fuses at one pixel per
cycle, with line buffers for ``hw_input`` and ``grad``. Every value a stage computes is read by
the next one (no dead rows or columns).

Run it: ``make sim APP=examples/loopnest_edges.py`` or ``ubc schedule|map|compile|netlist
examples/loopnest_edges.py [--size width=32 --size height=16]``. ``reference()`` is an
independent numpy golden that the interpreter is checked against.
"""
import numpy as np

from compiler.ir import Call, Const, Kernel, Program, absd, select, u16

SIZES = {"width": 32, "height": 32}
THRESHOLD = 40


def build(width: int = 32, height: int = 32) -> Program:
    if width < 5 or height < 5:
        raise ValueError(f"the tile must be at least 5x5, got {width}x{height}")
    gw, gh = width - 2, height - 2                  # grad's tile
    prog = Program("loopnest_edges")
    prog.add_input("input", (width, height), u16)
    prog.add_buffer("hw_input", (width, height), u16)
    prog.add_buffer("grad", (gw, gh), u16)
    prog.add_output("edges", (gw - 2, gh), u16)

    y = prog.add_loop("y_copy", 0, height)
    x = y.add_loop("x_copy", 0, width)
    op = x.add_op("hw_input")
    op.add_load("input", x.var, y.var)
    op.add_store("hw_input", x.var, y.var)
    op.add_function(Kernel.from_fn("copy", lambda a: Call("pass", (a,)), u16))

    y = prog.add_loop("y_grad", 0, gh)
    x = y.add_loop("x_grad", 0, gw)
    op = x.add_op("grad")
    for dx, dy in ((2, 1), (0, 1), (1, 2), (1, 0)):
        op.add_load("hw_input", x.var + dx, y.var + dy)
    op.add_store("grad", x.var, y.var)
    op.add_function(Kernel.from_fn(
        "grad", lambda e, w, s, n: absd(e, w) + absd(s, n), u16, u16, u16, u16))

    y = prog.add_loop("y_edges", 0, gh)
    x = y.add_loop("x_edges", 0, gw - 2)
    op = x.add_op("edges")
    for dx in range(3):
        op.add_load("grad", x.var + dx, y.var)

    def edge(left, centre, right):
        strong = Call("ugt", (centre, Const(THRESHOLD, u16)))
        peak = Call("and", (Call("uge", (centre, left)), Call("uge", (centre, right))))
        return select(Call("and", (strong, peak)), Const(255, u16), Const(0, u16))

    op.add_store("edges", x.var, y.var)
    op.add_function(Kernel.from_fn("edge", edge, u16, u16, u16))
    return prog.validate()


def make_inputs(seed: int = 0, width: int = 32, height: int = 32) -> dict:
    """8-bit pixels: a bright square on a noisy background (edges to find)."""
    rng = np.random.default_rng(seed)
    img = rng.integers(0, 32, (width, height))
    img[width // 4:3 * width // 4, height // 4:3 * height // 4] += 160
    return {"input": img.astype(np.uint16)}


def reference(inputs: dict, width: int = 32, height: int = 32) -> dict:
    a = inputs["input"].astype(np.int64)
    grad = (np.abs(a[2:, 1:-1] - a[:-2, 1:-1]) + np.abs(a[1:-1, 2:] - a[1:-1, :-2]))
    left, centre, right = grad[:-2], grad[1:-1], grad[2:]
    keep = (centre > THRESHOLD) & (centre >= left) & (centre >= right)
    return {"edges": np.where(keep, 255, 0).astype(np.uint16)}
