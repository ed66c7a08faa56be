"""The reference interpreter (compiler/interp.py): PE semantics against ``pe_reference``, the
vectorized engine against the scalar one on random programs (with and without an ``order``),
numpy references for whole programs, and the one-line errors."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from compiler.interp import InterpError, eval_kernel, run, run_all, vectorized
from compiler.ir import Arg, Call, Const, Kernel, Lookup, Program, s16, u16, u1
from ubgen.pe import PEOp, pe_reference

WORDS = st.one_of(st.integers(0, 0xFFFF),
                  st.sampled_from([0, 1, 2, 15, 16, 17, 0x7FFF, 0x8000, 0x8001, 0xFFFF]))

# IR op -> PE op (absdiff depends on the operand type; see the interp docstring)
PE_OF = {"add": "ADD", "sub": "SUB", "mul": "MUL", "udiv": "UDIV", "shl": "SHL", "lshr": "LSHR", "ashr": "ASHR",
         "and": "AND", "or": "OR", "xor": "XOR", "smin": "SMIN", "smax": "SMAX", "umin": "UMIN",
         "umax": "UMAX", "abs": "ABS", "eq": "EQ", "ne": "NE", "slt": "SLT", "sle": "SLE",
         "sgt": "SGT", "sge": "SGE", "ult": "ULT", "ule": "ULE", "ugt": "UGT", "uge": "UGE",
         "mac": "MAC", "pass": "PASS"}


def _op(parent, name, loads, store, fn, *types):
    """Add ``store = fn(*loads)``; ``loads``/``store`` are ``(buffer, *index)`` tuples."""
    op = parent.add_op(name)
    for buf, *idx in loads:
        op.add_load(buf, *idx)
    op.add_store(store[0], *store[1:])
    op.add_function(Kernel.from_fn(f"k_{name}", fn, *types))
    return op


def _kernel_of(op: str, t=u16) -> Kernel:
    if op in ("abs", "pass"):
        return Kernel.from_fn(op, lambda a: Call(op, (a,)), t)
    if op == "mac":
        return Kernel.from_fn(op, lambda a, b, c: Call(op, (a, b, c)), t, t, t)
    return Kernel.from_fn(op, lambda a, b: Call(op, (a, b)), t, t)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(WORDS, WORDS, WORDS), min_size=1, max_size=20))
def test_ops_agree_with_pe_reference(vals):
    a, b, c = (np.array(v, dtype=np.int64) for v in zip(*vals))
    for op, pe in PE_OF.items():
        k = _kernel_of(op)
        got = eval_kernel(k, [a, b, c][:k.n_args], len(a))
        want = [pe_reference(PEOp[pe], x, y, z)[0] for x, y, z in vals]
        assert list(got) == want, op
    for t, pe in ((s16, "ABSDIFF"), (u16, "UABSDIFF")):
        got = eval_kernel(Kernel.from_fn("d", lambda x, y: Call("absdiff", (x, y)), t, t),
                          [a, b], len(a))
        assert list(got & 0xFFFF) == [pe_reference(PEOp[pe], x, y, 0)[0] for x, y, _ in vals]
    sel = Kernel.from_fn("s", lambda p, x, y: Call("select", (p, x, y)), u1, u16, u16)
    got = eval_kernel(sel, [c & 1, a, b], len(a))
    assert list(got) == [pe_reference(PEOp.SEL, x, y, 0, (z & 1, 0, 0))[0] for x, y, z in vals]


def test_types_and_lookup():
    # s16 results are returned as int16 values; conversion between types on store
    prog = Program("types")
    prog.add_input("a", (4,), s16)
    prog.add_output("o", (4,), u16)
    prog.add_output("lut", (4,), u16)
    x = prog.add_loop("x", 0, 4)
    _op(x, "neg", [("a", "x")], ("o", "x"), lambda v: Const(0, s16) - v, s16)
    _op(x, "lk", [("a", "x")], ("lut", "x"), lambda v: Lookup((7, 8, 9, 10), v & 3), u16)
    out = run(prog, {"a": np.array([1, -1, -32768, 5], np.int16)})
    assert out["o"].dtype == np.uint16
    assert list(out["o"]) == [65535, 1, 32768, 65531]
    assert list(out["lut"]) == [8, 10, 7, 8]


def _brighten_blur(T=3, N=9) -> Program:
    prog = Program("brighten_blur")
    prog.add_input("input", (N, N, T))
    prog.add_output("blur", (N - 1, N - 1, T))
    prog.add_buffer("brighten")          # a temp, its shape inferred
    t = prog.add_loop("t", 0, T)
    y = t.add_loop("y_br", 0, N)
    x = y.add_loop("x_br", 0, N)
    _op(x, "brighten", [("input", "x_br", "y_br", "t")], ("brighten", "x_br", "y_br"),
        lambda a: a * 2, u16)
    y = t.add_loop("y_bl", 0, N - 1)
    x = y.add_loop("x_bl", 0, N - 1)
    _op(x, "blur", [("brighten", f"x_bl+{dx}", f"y_bl+{dy}") for dx, dy in
                    ((0, 0), (1, 0), (0, 1), (1, 1))], ("blur", "x_bl", "y_bl", "t"),
        lambda a, b, c, d: (a + b + c + d) >> 2, u16, u16, u16, u16)
    return prog


def test_brighten_blur_against_numpy_and_reordered_schedule():
    rng = np.random.default_rng(1)
    inp = rng.integers(0, 1 << 16, (9, 9, 3)).astype(np.uint16)
    b = inp.astype(np.int64) * 2 & 0xFFFF
    ref = (b[:-1, :-1] + b[1:, :-1] + b[:-1, 1:] + b[1:, 1:] & 0xFFFF) >> 2
    prog = _brighten_blur()
    assert np.array_equal(run(prog, {"input": inp})["blur"], ref)
    # a pipelined (Clockwork-like) order: blur one row+1 pixel behind brighten, same t phase
    def order(op, env):
        if op == "brighten":
            return env["t"] * 1000 + env["y_br"] * 9 + env["x_br"]
        return env["t"] * 1000 + (env["y_bl"] + 1) * 9 + env["x_bl"] + 1
    assert np.array_equal(run(prog, {"input": inp}, order)["blur"], ref)
    # an order that runs blur of tile t before its brighten reads stale/unwritten values
    bad = lambda op, env: env["t"] * 1000 + (0 if op == "blur" else 500)
    with pytest.raises(InterpError, match="blur: reads brighten"):
        run(prog, {"input": inp}, bad)


def _conv(X=6, K=3, C=2, R=3) -> Program:
    prog = Program("conv")
    prog.add_input("in", (X + R - 1, X + R - 1, C), s16)
    prog.add_input("w", (R, R, C, K), s16)
    prog.add_output("out", (X, X, K), s16)
    k = prog.add_loop("k", 0, K)
    y = k.add_loop("y", 0, X)
    x = y.add_loop("x", 0, X)
    _op(x, "init", [], ("out", "x", "y", "k"), lambda: Const(0, s16))
    rx = x.add_loop("c", 0, C).add_loop("ry", 0, R).add_loop("rx", 0, R)
    _op(rx, "mac", [("out", "x", "y", "k"), ("w", "rx", "ry", "c", "k"),
                    ("in", "x+rx", "y+ry", "c")], ("out", "x", "y", "k"),
        lambda a, w, i: Call("mac", (w, i, a)), s16, s16, s16)
    return prog


def test_conv_reduction_against_numpy():
    X, K, C, R = 6, 3, 2, 3
    rng = np.random.default_rng(2)
    inp = rng.integers(-2 ** 15, 2 ** 15, (X + R - 1, X + R - 1, C)).astype(np.int16)
    w = rng.integers(-2 ** 15, 2 ** 15, (R, R, C, K)).astype(np.int16)
    ref = np.zeros((X, X, K), np.int64)
    for ry in range(R):
        for rx in range(R):
            ref += np.einsum("xyc,ck->xyk", inp[rx:rx + X, ry:ry + X].astype(np.int64),
                             w[rx, ry].astype(np.int64))
    ref = ref.astype(np.int16)  # two's-complement wrap
    prog = _conv(X, K, C, R)
    for scalar in (False, True):
        out = run(prog, {"in": inp, "w": w}, scalar=scalar)["out"]
        assert out.dtype == np.int16 and np.array_equal(out, ref)
    # reduction loops outermost (output-stationary order reversed): same result
    order = lambda op, env: (0 if op == "init" else
                             1 + ((env["c"] * R + env["ry"]) * R + env["rx"]))
    assert np.array_equal(run(prog, {"in": inp, "w": w}, order)["out"], ref)


def test_errors_are_one_line():
    prog = _brighten_blur()
    inp = np.zeros((9, 9, 3), np.uint16)
    cases = [({}, "missing input 'input'"),
             ({"input": inp, "x": inp}, "unknown input 'x'"),
             ({"input": inp[:, :, :2]}, r"input 'input' has shape \(9, 9, 2\), expected"),
             ({"input": inp.astype(float)}, "expected integers")]
    for ins, msg in cases:
        with pytest.raises(InterpError, match=msg) as e:
            run(prog, ins)
        assert "\n" not in str(e.value)
    # out of bounds: blur reads brighten one past what brighten writes
    p2 = _brighten_blur()
    p2.buffers["input"].shape = (8, 9, 3)
    with pytest.raises(InterpError, match=r"brighten: reads input\[8, 0, 0\] at \{t=0, "
                                          r"y_br=0, x_br=8\}, outside its shape \[8, 9, 3\]"):
        run(p2, {"input": np.zeros((8, 9, 3), np.uint16)})
    for scalar in (False, True):
        prog = Program("unwritten")
        prog.add_input("a", (4,))
        prog.add_output("o", (4,))
        prog.add_buffer("t")
        x = prog.add_loop("x", 0, 4)
        _op(x, "p", [("a", "x")], ("t", "x"), lambda v: v, u16)
        _op(x, "q", [("t", "x+1")], ("o", "x"), lambda v: v, u16)
        with pytest.raises(InterpError, match=r"op q: reads t\[1\] at \{x=0\}"):
            run(prog, {"a": np.zeros(4, np.uint16)}, scalar=scalar)


# --- fast engine == scalar engine on random programs -------------------------------------------

BIN = ["add", "sub", "mul", "shl", "lshr", "ashr", "and", "or", "xor", "smin", "smax", "umin",
       "umax", "absdiff", "eq", "slt", "ugt"]


@st.composite
def kernels(draw, n_args: int, name: str):
    def build(depth):
        choice = draw(st.integers(0, 6 if depth < 3 else 1))
        if choice == 0 and n_args:
            return Arg(draw(st.integers(0, n_args - 1)), u16)
        if choice <= 1:
            return Const(draw(WORDS), u16)
        if choice == 2:
            return Call("select", (Call("ult", (build(depth + 1), build(depth + 1))),
                                   build(depth + 1), build(depth + 1)))
        if choice == 3:
            return Call(draw(st.sampled_from(["mac"])), (build(depth + 1), build(depth + 1),
                                                         build(depth + 1)))
        if choice == 4:
            return Lookup(tuple(draw(st.lists(WORDS, min_size=4, max_size=4))),
                          Call("and", (build(depth + 1), Const(3))))
        op = draw(st.sampled_from(BIN))
        return Call(op, (build(depth + 1), build(depth + 1)))
    body = build(0)
    if body.type != u16:
        body = Call("select", (body, Const(1), Const(2)))
    return Kernel(name, n_args, body, (u16,) * n_args)


@st.composite
def programs(draw):
    """Random affine loop nests over an input ``in[6, 6]``: pure stages, reductions (an init
    op and an update op reading its own store), in-place shifted updates (carried
    dependences), optional shared outer loop; buffers ``b0..`` have inferred shapes."""
    prog = Program("rand")
    prog.add_input("in", (6, 6))
    bufs = ["in"]
    outer = prog.add_loop("o", 0, draw(st.integers(1, 2))) if draw(st.booleans()) else prog
    n_stage = draw(st.integers(1, 3))
    uid = iter(range(1000))

    def affine(vars_, lo, hi):
        v = draw(st.sampled_from(vars_)) if vars_ else None
        c = draw(st.integers(lo, hi))
        return f"{v}+{c}" if v else str(c)

    for s in range(n_stage):
        kind = draw(st.sampled_from(["pure", "reduce", "shift"]))
        buf = f"b{s}"
        prog.add_buffer(buf)
        ext = [draw(st.integers(1, 4)) for _ in range(2)]
        i = next(uid)
        ly = outer.add_loop(f"y{i}", 0, ext[1])
        lx = ly.add_loop(f"x{i}", 0, ext[0])
        xs, ys = f"x{i}", f"y{i}"
        src = draw(st.sampled_from(bufs))

        def add(parent, name, store_idx, loads):
            op = parent.add_op(name)
            for b, ix in loads:
                op.add_load(b, *ix)
            op.add_store(buf, *store_idx)
            op.add_function(draw(kernels(len(loads), f"k_{name}")))

        if kind == "pure" or kind == "shift":
            loads = [(src, (affine([xs], 0, 2), affine([ys], 0, 2)))
                     for _ in range(draw(st.integers(1, 3)))]
            add(lx, f"op{i}", (xs, ys), loads)
            if kind == "shift":   # b[x, y] = f(b[x-1, y], ...) for x >= 1: a carried chain
                lx2 = ly.add_loop(f"x{i}s", 1, max(ext[0] - 1, 1))
                add(lx2, f"op{i}s", (f"x{i}s", ys),
                    [(buf, (f"x{i}s-1", ys)), (src, (f"x{i}s", ys))])
        else:
            add(lx, f"init{i}", (xs, ys), [])
            lr = lx.add_loop(f"r{i}", 0, draw(st.integers(1, 3)))
            add(lr, f"red{i}", (xs, ys), [(buf, (xs, ys)), (src, (f"{xs}+r{i}", ys))])
        bufs.append(buf)
    return prog


@st.composite
def orders(draw, prog):
    coeffs = {op.name: (draw(st.integers(-3, 3)),
                        {lp.name: draw(st.integers(-2, 3)) for lp in op.loops})
              for op in prog.ops()}
    return lambda name, env: coeffs[name][0] + sum(c * env[v] for v, c in coeffs[name][1].items())


def _both(prog, ins, order=None):
    res = []
    for scalar in (False, True):
        try:
            res.append(run_all(prog, ins, order, scalar=scalar))
        except InterpError as e:
            res.append(type(e))
    return res


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_fast_engine_equals_scalar_engine(data):
    prog = data.draw(programs())
    ins = {"in": np.array(data.draw(st.lists(WORDS, min_size=36, max_size=36)),
                          np.uint16).reshape(6, 6)}
    order = data.draw(st.one_of(st.none(), orders(prog)))
    fast, slow = _both(prog, ins, order)
    if isinstance(fast, dict) and isinstance(slow, dict):
        assert fast.keys() == slow.keys()
        for k in fast:
            assert np.array_equal(fast[k], slow[k]), k
    else:
        assert fast == slow


def test_root_ops_and_per_instance_order_fallback():
    prog = Program("root")
    prog.add_input("a", (3,))
    prog.add_output("o", (3,))
    prog.add_buffer("t")
    _op(prog, "seed", [("a", 0)], ("t", 0), lambda v: v + 1, u16)   # outside any loop
    x = prog.add_loop("x", 1, 3)    # t[x] = t[x-1] + a[x-1]: a carried chain
    _op(x, "scan", [("t", "x-1"), ("a", "x-1")], ("t", "x"), lambda p, v: p + v, u16, u16)
    y = prog.add_loop("y", 0, 3)
    _op(y, "out", [("t", "y+1")], ("o", "y"), lambda v: v, u16)
    a = np.array([5, 7, 11], np.uint16)
    want = [6 + 5, 6 + 5 + 7, 6 + 5 + 7 + 11]
    # an order that only works on one instance at a time (int() of the loop values)
    def order(name, env):
        if name == "out":
            return 100 + int(env["y"])
        return 0 if name == "seed" else int(env["x"])
    for scalar in (False, True):
        assert list(run(prog, {"a": a}, scalar=scalar)["o"]) == want
        assert list(run(prog, {"a": a}, order, scalar=scalar)["o"]) == want
    # reversing the scan reads t before it is written
    with pytest.raises(InterpError, match=r"op scan: reads t\[2\] at \{x=3\} before it is"):
        run(prog, {"a": a}, lambda n, e: -e["x"] if n == "scan" else (-10 if n == "seed"
                                                                       else 100))


def test_input_without_declared_shape_takes_the_arrays():
    prog = Program("free")
    prog.add_buffer("a", None, u16, "input")
    prog.add_output("o", (2,))
    _op(prog.add_loop("x", 0, 2), "c", [("a", "x+1")], ("o", "x"), lambda v: v, u16)
    for scalar in (False, True):
        assert list(run(prog, {"a": np.array([1, 2, 3], np.uint16)}, scalar=scalar)["o"]) == [2, 3]
        with pytest.raises(InterpError, match=r"reads a\[2\] at \{x=1\}, outside its shape \[2\]"):
            run(prog, {"a": np.array([1, 2], np.uint16)}, scalar=scalar)
    assert prog.buffers["a"].shape is None       # the program is not modified


def test_vectorized_orders_are_called_once_per_op_and_checked():
    """An order marked vectorized is called once per op with the loop box as arrays; an
    unmarked one once per instance; a vectorized order that gives non-integer times is an
    error, never a silent fallback."""
    prog = _brighten_blur()
    ins = {n: np.zeros(b.shape, np.uint16) for n, b in prog.buffers.items()
           if b.kind == "input"}
    ops = list(prog.ops())
    instances = sum(int(np.prod([lp.extent for lp in op.loops])) for op in ops)
    calls = []

    def plain(op, env):
        calls.append(op)
        return 0
    b = run(prog, ins, plain)
    assert len(calls) == instances > len(ops)
    calls.clear()
    a = run(prog, ins, vectorized(lambda op, env: (calls.append(op), 0)[1]))
    assert len(calls) == len(ops) and all(np.array_equal(a[k], b[k]) for k in a)
    with pytest.raises(InterpError, match="vectorized order gave float64 times"):
        run(prog, ins, vectorized(lambda op, env: 0.5))
