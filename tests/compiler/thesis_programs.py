"""Loop nests of the thesis' worked examples, built with the loop-nest DSL (thesis §4.1)."""
from __future__ import annotations

from compiler.ir import Call, Const, Kernel, Program, maximum, s16, u16


def add_all(*a):
    acc = a[0]
    for v in a[1:]:
        acc = acc + v
    return acc


def brighten_blur(tiles: int = 16, n: int = 64) -> Program:
    """Fig. 4.1b."""
    prog = Program("br_bl")
    prog.add_input("input", (n, n, tiles))
    prog.add_buffer("brighten", (n, n))
    prog.add_output("blur", (n - 1, n - 1, tiles))
    t = prog.add_loop("t", 0, tiles)
    x = t.add_loop("y_br", 0, n).add_loop("x_br", 0, n)
    op = x.add_op("Brighten")
    op.add_function(Kernel.from_fn("brighten_kernel", lambda a: a * 2, u16))
    op.add_load("input", "x_br", "y_br", "t")
    op.add_store("brighten", "x_br", "y_br")
    x = t.add_loop("y_bl", 0, n - 1).add_loop("x_bl", 0, n - 1)
    op = x.add_op("Blur")
    op.add_function(Kernel.from_fn("blur_kernel", lambda a, b, c, d: add_all(a, b, c, d) >> 2,
                                   u16, u16, u16, u16))
    for idx in (("x_bl", "y_bl"), ("x_bl+1", "y_bl"), ("x_bl", "y_bl+1"), ("x_bl+1", "y_bl+1")):
        op.add_load("brighten", *idx)
    op.add_store("blur", "x_bl", "y_bl", "t")
    return prog.validate()


def copy_kernel(name="pass_kernel", t=u16):
    return Kernel.from_fn(name, lambda a: Call("pass", (a,)), t)


def alignment_pair(transposed: bool, n: int = 8) -> Program:
    """Fig. 4.19a (consumer reads buf[x+1, y+1] row-major) and 4.19b (column-major consumer:
    its outer loop walks the producer's inner dimension)."""
    prog = Program("align_b" if transposed else "align_a")
    prog.add_input("in", (n, n))
    prog.add_buffer("buf", (n, n))
    prog.add_output("out", (n - 1, n - 1))
    x = prog.add_loop("y_p", 0, n).add_loop("x_p", 0, n)
    op = x.add_op("prod")
    op.add_load("in", "x_p", "y_p")
    op.add_store("buf", "x_p", "y_p")
    op.add_function(copy_kernel())
    x = prog.add_loop("y_c", 0, n - 1).add_loop("x_c", 0, n - 1)
    op = x.add_op("cons")
    if transposed:
        op.add_load("buf", "y_c+1", "x_c+1")
        op.add_store("out", "y_c", "x_c")
    else:
        op.add_load("buf", "x_c+1", "y_c+1")
        op.add_store("out", "x_c", "y_c")
    op.add_function(copy_kernel())
    return prog.validate()


def conv_layer(tiles: int = 4, out: int = 28, cin: int = 4, cout: int = 2, k: int = 3) -> Program:
    """Fig. 4.3: multi-channel 3x3 convolution with a coarse-grained tile loop t: init output,
    load input, load weights, two convolutions (one per output channel, input channels
    unrolled), drain output."""
    p = Program("conv_fig4_3")
    inp = out + k - 1
    p.add_input("init_bias_glb", (cout, out, out, tiles), s16)
    p.add_input("input_glb", (cin, inp, inp, tiles), s16)
    p.add_input("weight_glb", (cin, cout, k, k, tiles), s16)
    p.add_output("output_glb", (cout, out, out, tiles), s16)
    p.add_buffer("output_mem", (cout, out, out), s16)
    p.add_buffer("input_mem", (cin, inp, inp), s16)
    p.add_buffer("weight_mem", (cin, cout, k, k), s16)
    t = p.add_loop("t", 0, tiles)
    cp = copy_kernel("pass", s16)
    kk = t.add_loop("y_i", 0, out).add_loop("x_i", 0, out).add_loop("k_i", 0, cout)
    op = kk.add_op("InitO")
    op.add_load("init_bias_glb", "k_i", "x_i", "y_i", "t")
    op.add_store("output_mem", "k_i", "x_i", "y_i")
    op.add_function(cp)
    c = t.add_loop("y_l", 0, inp).add_loop("x_l", 0, inp).add_loop("c_l", 0, cin)
    op = c.add_op("LoadI")
    op.add_load("input_glb", "c_l", "x_l", "y_l", "t")
    op.add_store("input_mem", "c_l", "x_l", "y_l")
    op.add_function(cp)
    c = (t.add_loop("ky_w", 0, k).add_loop("kx_w", 0, k).add_loop("k_w", 0, cout)
         .add_loop("c_w", 0, cin))
    op = c.add_op("LoadW")
    op.add_load("weight_glb", "c_w", "k_w", "kx_w", "ky_w", "t")
    op.add_store("weight_mem", "c_w", "k_w", "kx_w", "ky_w")
    op.add_function(cp)
    x = t.add_loop("ky", 0, k).add_loop("kx", 0, k).add_loop("y", 0, out).add_loop("x", 0, out)

    def conv(*a):
        acc = a[-1]
        for i in range(cin):
            acc = acc + a[i] * a[cin + i]
        return acc

    kernel = Kernel.from_fn("conv", conv, *([s16] * (2 * cin + 1)))
    for o in range(cout):
        op = x.add_op(f"Conv{o}")
        for i in range(cin):
            op.add_load("input_mem", i, "x+kx", "y+ky")
        for i in range(cin):
            op.add_load("weight_mem", i, o, "kx", "ky")
        op.add_load("output_mem", o, "x", "y")
        op.add_store("output_mem", o, "x", "y")
        op.add_function(kernel, f"conv{o}")
    kk = t.add_loop("y_d", 0, out).add_loop("x_d", 0, out).add_loop("k_d", 0, cout)
    op = kk.add_op("DrainO")
    op.add_load("output_mem", "k_d", "x_d", "y_d")
    op.add_store("output_glb", "k_d", "x_d", "y_d", "t")
    op.add_function(cp)
    return p.validate()


def conv1d(n: int = 32, taps: int = 5) -> Program:
    """Fig. 4.16a: out[x] = 0; for dx: out[x] += filter[dx] * mem[x+dx]; DRAM.store(out, x)."""
    p = Program("conv1d")
    p.add_input("mem", (n + taps - 1,), s16)
    p.add_input("filter", (taps,), s16)
    p.add_buffer("out", (n,), s16)
    p.add_output("dram", (n,), s16)
    x = p.add_loop("x", 0, n)
    op = x.add_op("init")
    op.add_store("out", "x")
    op.add_function(Kernel("zero", 0, Const(0, s16), ()))
    dx = x.add_loop("dx", 0, taps)
    op = dx.add_op("mac")
    op.add_load("filter", "dx")
    op.add_load("mem", "x+dx")
    op.add_load("out", "x")
    op.add_store("out", "x")
    op.add_function(Kernel.from_fn("mac", lambda f, m, o: o + f * m, s16, s16, s16))
    op = x.add_op("store")
    op.add_load("out", "x")
    op.add_store("dram", "x")
    op.add_function(copy_kernel("pass", s16))
    return p.validate()


def pyramid_1d(n: int = 64, levels: int = 3, shared: bool = True) -> Program:
    """Fig. 4.20: a copy stage then ``levels`` stride-two max-pooling kernels along a 1-D
    sequence, all pooling ops on one shared compute unit."""
    p = Program("pool1d")
    p.add_input("in", (n,))
    p.add_buffer("l0", (n,))
    x = p.add_loop("x_l0", 0, n)
    op = x.add_op("load")
    op.add_load("in", "x_l0")
    op.add_store("l0", "x_l0")
    op.add_function(copy_kernel())
    pool = Kernel.from_fn("pool", lambda a, b: maximum(a, b), u16, u16)
    size = n
    for lv in range(1, levels + 1):
        size //= 2
        name = f"l{lv}"
        if lv == levels:
            p.add_output(name, (size,))
        else:
            p.add_buffer(name, (size,))
        v = f"x_{name}"
        x = p.add_loop(v, 0, size)
        op = x.add_op(f"pool{lv}")
        op.add_load(f"l{lv - 1}", f"2*{v}")
        op.add_load(f"l{lv - 1}", f"2*{v}+1")
        op.add_store(name, v)
        op.add_function(pool, "pool" if shared else None)
    return p.validate()


def copy_chain(name: str, sizes: list[int], extents: list[int], unit: str | None = None,
               buffers: list[str] | None = None) -> Program:
    """A 1-D chain ``b0 -> b1 -> ...`` of copy ops: op k runs ``x_k`` over ``extents[k]`` and
    copies ``b_k[x_k]`` to ``b_{k+1}[x_k]``; ``sizes`` are the buffer lengths (the first an
    input, the last an output). Ops share ``unit`` if given."""
    names = buffers or [f"b{k}" for k in range(len(sizes))]
    prog = Program(name)
    for k, (b, n) in enumerate(zip(names, sizes)):
        kind = "input" if k == 0 else "output" if k == len(sizes) - 1 else "temp"
        prog.add_buffer(b, (n,), u16, kind)
    for k, ext in enumerate(extents):
        op = prog.add_loop(f"x{k}", 0, ext).add_op(f"op{k}")
        op.add_load(names[k], f"x{k}")
        op.add_store(names[k + 1], f"x{k}")
        op.add_function(copy_kernel(), unit)
    return prog.validate()
