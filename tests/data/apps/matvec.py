"""A user's app file in the Halide-style DSL, as a new user writes one: a matrix-vector product
``y(i) = sum_j w(j, i) * v(j)`` written as a reduction over an ``RDom`` that is *not* unrolled
(one multiply-accumulate per instance into the accumulator ``acc``), in Halide's default loop
order (the reduction innermost), with an independent numpy ``reference()``. ``n`` is the
reduction's length, ``m`` the outputs'; 32 x 32 by default: 1024 multiply-accumulates."""
import numpy as np

from compiler.frontend.halide import Func, Input, Pipeline, RDom, Var, cast
from compiler.ir import u16

SIZES = {"n": 32, "m": 32}


def build(n: int = 32, m: int = 32):
    i, j = Var("i"), Var("j")
    w_in = Input("weights", u16, (n, m))
    v_in = Input("vector", u16, (n,))
    w, v, acc, out = Func("w"), Func("v"), Func("acc"), Func("output")
    w[j, i] = w_in[j, i]
    v[j] = v_in[j]
    r = RDom([(0, n)], "r")
    acc[i] = cast(u16, 0)
    acc[i] += w[r.x, i] * v[r.x]
    out[i] = acc[i]
    w.stream_to_accelerator()
    v.stream_to_accelerator()
    return Pipeline(out).lower("matvec", (m,))


def make_inputs(seed: int = 0, n: int = 32, m: int = 32) -> dict:
    rng = np.random.default_rng(seed)
    return {"weights": rng.integers(0, 1 << 16, (n, m)).astype(np.uint16),
            "vector": rng.integers(0, 1 << 16, (n,)).astype(np.uint16)}


def reference(inputs: dict, n: int = 32, m: int = 32) -> dict:
    w = np.asarray(inputs["weights"], dtype=np.uint64)
    v = np.asarray(inputs["vector"], dtype=np.uint64)
    return {"output": ((w * v[:, None]).sum(axis=0) & 0xFFFF).astype(np.uint16)}
