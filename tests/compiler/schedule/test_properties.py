"""Property tests: random stencil pipelines and random affine loop nests are scheduled, the
schedule passes the isl verifier, the interpreter run in schedule order equals the sequential
run, and the live capacity matches a plain-Python model (docs/design.md §6 level 1)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import interp
from compiler.ir import Call, Const, Kernel, Program, maximum, u16
from compiler.schedule.liveness import buffer_liveness
from compiler.poly.deps import raw_dependences
from compiler.poly.extract import extract
from compiler.ir.hw import HwParams
from compiler.schedule.dnn import pipeline_loops
from compiler.schedule.select import schedule
from compiler.schedule.storage import expand_storage, storage_copies
from compiler.schedule.sequential import schedule_sequential
from compiler.schedule.verify import verify

from ..reference_models import live_words

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
# Examples per property: CI draws 100 (a different derandomized sequence from the regress
# variants'), `make regress` 1000.
CI_EXAMPLES, REGRESS_EXAMPLES = 100, 1000


def _sum_kernel(name: str, n: int, bias: int) -> Kernel:
    if n == 0:
        return Kernel(name, 0, Const(bias, u16), ())

    def body(*a):
        acc = a[0]
        for v in a[1:]:
            acc = acc + v
        return acc + bias
    return Kernel.from_fn(name, body, *([u16] * n))


def _max_kernel(name: str, n: int) -> Kernel:
    def body(*a):
        acc = a[0]
        for v in a[1:]:
            acc = maximum(acc, v)
        return acc
    return Kernel.from_fn(name, body, *([u16] * n))


def check(prog: Program, params: HwParams | None = None) -> str:
    """Schedule, verify, compare interpreter runs and liveness; returns the policy."""
    params = params or HwParams()
    poly = extract(prog, params)
    deps = raw_dependences(poly)
    sched = schedule(prog, poly, params, deps)
    verify(poly, sched, params, deps)
    seq = schedule_sequential(prog, poly)
    verify(poly, seq, params, deps, check_width=False)
    rng = np.random.default_rng(len(str(prog)))
    inputs = {b.name: rng.integers(0, 256, size=b.shape).astype(np.uint16)
              for b in prog.buffers.values() if b.kind == "input"}
    want = interp.run(prog, inputs)
    # double buffering made explicit: buffers overwritten by the next tile while still being
    # read get k copies indexed by tile % k (what buffer mapping implements)
    tiles = pipeline_loops(prog)[0]
    tile_names = [lp.name for lp in tiles]
    copies = storage_copies(prog, sched, seq, tile_names)
    run_prog = expand_storage(prog, copies, tile_names)
    got = interp.run(run_prog, inputs, order=sched.time_fn())
    for name in want:
        np.testing.assert_array_equal(got[name], want[name])
    live = {b.name: b.live_words for b in buffer_liveness(prog, sched, seq)}
    assert live == live_words(prog, sched)
    return sched.policy


# --- random stencil pipelines ------------------------------------------------------------

@st.composite
def stencil_pipelines(draw):
    w, h = draw(st.integers(4, 9)), draw(st.integers(4, 9))
    tiles = draw(st.integers(0, 2))          # 0: no tile loop
    stages = draw(st.integers(1, 3))
    share = draw(st.booleans())
    prog = Program("rand_stencil")
    prog.add_input("input", (w, h, max(1, tiles)) if tiles else (w, h))
    root = prog.add_loop("t", 0, tiles) if tiles else prog
    src = "input"
    cw, ch = w, h
    for s in range(stages):
        kind = draw(st.sampled_from(["window", "window", "down", "up"]))
        if kind == "window":
            ww, wh = draw(st.integers(1, min(3, cw))), draw(st.integers(1, min(3, ch)))
            ow, oh = cw - ww + 1, ch - wh + 1
            taps = [(f"x{s} + {dx}", f"y{s} + {dy}") for dy in range(wh) for dx in range(ww)]
        elif kind == "down" and cw >= 2 and ch >= 2:
            ow, oh = cw // 2, ch // 2
            taps = [(f"2*x{s} + {dx}", f"2*y{s}") for dx in range(2)]
        else:
            ow, oh = 2 * cw, ch
            taps = [(f"x{s} // 2", f"y{s}")]
        dst = f"b{s}" if s < stages - 1 else "output"
        if dst == "output":
            prog.add_output(dst, (ow, oh, max(1, tiles)) if tiles else (ow, oh))
        else:
            prog.add_buffer(dst, (ow, oh))
        x = root.add_loop(f"y{s}", 0, oh).add_loop(f"x{s}", 0, ow)
        op = x.add_op(f"stage{s}")
        for tx, ty in taps:
            if src == "input" and tiles:
                op.add_load(src, tx, ty, "t")
            else:
                op.add_load(src, tx, ty)
        if dst == "output" and tiles:
            op.add_store(dst, f"x{s}", f"y{s}", "t")
        else:
            op.add_store(dst, f"x{s}", f"y{s}")
        if draw(st.booleans()):
            kernel = _max_kernel(f"max{len(taps)}", len(taps))
        else:
            kernel = _sum_kernel(f"sum{len(taps)}", len(taps), draw(st.integers(0, 3)))
        op.add_function(kernel, "shared" if share and len(taps) == 2 else None)
        src, cw, ch = dst, ow, oh
    return prog.validate()


@settings(max_examples=CI_EXAMPLES, **SETTINGS)
@given(stencil_pipelines())
def test_random_stencil_pipelines(prog):
    check(prog)


@pytest.mark.regress
@settings(max_examples=REGRESS_EXAMPLES, **SETTINGS)
@given(stencil_pipelines())
def test_random_stencil_pipelines_regress(prog):
    check(prog)


# --- random affine loop nests ------------------------------------------------------------

@st.composite
def affine_nests(draw):
    n = draw(st.integers(2, 5))
    m = draw(st.integers(2, 5))
    tiles = draw(st.integers(0, 2))
    prog = Program("rand_affine")
    prog.add_input("input", (n, m))
    root = prog.add_loop("t", 0, tiles) if tiles else prog
    # producer: walks the n x m box in a random loop order, writes buf[i, j]
    order = draw(st.permutations(["i", "j"]))
    ext = {"i": n, "j": m}
    prog.add_buffer("buf", (n, m))
    node = root
    for v in order:
        node = node.add_loop(f"{v}_p", 0, ext[v])
    op = node.add_op("produce")
    op.add_load("input", "i_p", "j_p")
    op.add_store("buf", "i_p", "j_p")
    op.add_function(_sum_kernel("inc", 1, draw(st.integers(0, 5))))
    # consumer: random loop order, random offsets / transposition, optional reduction
    red = draw(st.integers(1, 3)) if draw(st.booleans()) else 0
    di = draw(st.integers(0, 1)) if n > 1 else 0
    dj = draw(st.integers(0, 1)) if m > 1 else 0
    ci, cj = n - di, m - dj
    if red:
        ci = max(1, n - red + 1 - di) if n - red + 1 - di >= 1 else 0
        if ci == 0:
            red, ci = 0, n - di
    prog.add_output("out", (ci, cj, max(1, tiles)))
    corder = draw(st.permutations(["a", "b"]))
    cext = {"a": ci, "b": cj}
    node = root
    for v in corder:
        node = node.add_loop(f"{v}_c", 0, cext[v])
    store = ("out", "a_c", "b_c", "t" if tiles else 0)
    if red:
        prog.add_buffer("acc", (ci, cj))
        init = node.add_op("init")
        init.add_store("acc", "a_c", "b_c")
        init.add_function(_sum_kernel("zero", 0, 0))
        r = node.add_loop("r", 0, red)
        op = r.add_op("accumulate")
        op.add_load("acc", "a_c", "b_c")
        op.add_load("buf", f"a_c + r + {di}", f"b_c + {dj}")
        op.add_store("acc", "a_c", "b_c")
        op.add_function(Kernel.from_fn("mac", lambda a, b: a + b * 3, u16, u16))
        op = node.add_op("emit")
        op.add_load("acc", "a_c", "b_c")
        op.add_store(*store)
        op.add_function(Kernel.from_fn("emit", lambda a: Call("pass", (a,)), u16))
    else:
        op = node.add_op("consume")
        op.add_load("buf", f"a_c + {di}", f"b_c + {dj}")
        op.add_load("buf", f"a_c", f"b_c")
        op.add_store(*store)
        op.add_function(_sum_kernel("add2", 2, 1))
    return prog.validate()


@settings(max_examples=CI_EXAMPLES, **SETTINGS)
@given(affine_nests())
def test_random_affine_nests(prog):
    check(prog)


@pytest.mark.regress
@settings(max_examples=REGRESS_EXAMPLES, **SETTINGS)
@given(affine_nests())
def test_random_affine_nests_regress(prog):
    check(prog)
