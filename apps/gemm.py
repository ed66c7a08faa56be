"""gemm: general matrix multiplication ``C = A x B`` of two 64x64 matrices (thesis Table 7.1).

Algorithm: ``C[j, i] = sum_k A[k, i] * B[j, k]`` -- row ``i``, column ``j`` in matrix terms,
written with the project's Halide index order (first index innermost, so ``A[k, i]`` is row
``i`` column ``k``). 16-bit signed arithmetic; entries in [-15, 15] keep sums below 64*225.

Sizes (Table 7.1): M = N = K = 64.

Loop nest (DNN style, thesis Fig. 4.3): ``load_a``/``load_b`` copy the matrices into CGRA
memories; ``init`` zeroes the accumulator memory ``c_mem`` (an op without loads: Halide's pure
definition ``C(j, i) = 0``); ``update`` is ``for ko, i, jo`` with ``n_unroll`` ops (one per
column ``jo*nu + j``), each accumulating a ``k_unroll``-wide slice of the dot product
(``acc + sum_kk a_mem[ko*ku + kk, i] * b_mem[jo*nu + j, ko*ku + kk]``); ``drain`` copies
``c_mem`` to the output. What is unrolled and why: the reduction by ``k_unroll`` and the output
columns by ``n_unroll`` -- the 8x8 the thesis §7.3 names for gemm (Fig. 7.5); the reduction
block loop ``ko`` stays sequential and outermost, so each accumulator is revisited only after a
full M x N/nu sweep and the scheduler takes the DNN path.
"""
from __future__ import annotations

import numpy as np

from compiler.ir import Program, s16

from compiler.frontend.loopnest import add_op, const_kernel, mac_kernel, nest, pass_kernel
from ._common import check_sizes, require, small_signed, to_dtype, wrap

SIZES = {"m": 64, "n": 64, "k": 64, "k_unroll": 8, "n_unroll": 8}
VALUE_MAX = 15


def build(m: int = 64, n: int = 64, k: int = 64, k_unroll: int = 8, n_unroll: int = 8):
    check_sizes("gemm", m=m, n=n, k=k, k_unroll=k_unroll, n_unroll=n_unroll)
    require("gemm", k % k_unroll == 0 and n % n_unroll == 0,
            f"k={k} and n={n} must be multiples of k_unroll={k_unroll} and n_unroll={n_unroll}")
    ku, nu = k_unroll, n_unroll
    prog = Program("gemm")
    prog.add_input("A", (k, m), s16)
    prog.add_input("B", (n, k), s16)
    prog.add_buffer("a_mem", (k, m), s16)
    prog.add_buffer("b_mem", (n, k), s16)
    prog.add_buffer("c_mem", (n, m), s16)
    prog.add_output("C", (n, m), s16)

    loop, i = nest(prog, "load_a", ("i", m), ("k", k))
    add_op(loop, "load_a", ("a_mem", i["k"], i["i"]), [("A", i["k"], i["i"])],
           pass_kernel("load_a_pass", s16))
    loop, i = nest(prog, "load_b", ("k", k), ("j", n))
    add_op(loop, "load_b", ("b_mem", i["j"], i["k"]), [("B", i["j"], i["k"])],
           pass_kernel("load_b_pass", s16))
    loop, i = nest(prog, "init", ("i", m), ("j", n))
    add_op(loop, "init", ("c_mem", i["j"], i["i"]), [], const_kernel("zero_kernel", 0))

    loop, i = nest(prog, "update", ("ko", k // ku), ("i", m), ("jo", n // nu))
    mac = mac_kernel(f"mac{ku}_kernel", ku)
    for j in range(nu):
        col = i["jo"] * nu + j
        loads = [("a_mem", i["ko"] * ku + kk, i["i"]) for kk in range(ku)]
        loads += [("b_mem", col, i["ko"] * ku + kk) for kk in range(ku)]
        loads.append(("c_mem", col, i["i"]))
        add_op(loop, f"update_{j}", ("c_mem", col, i["i"]), loads, mac)

    loop, i = nest(prog, "drain", ("i", m), ("j", n))
    add_op(loop, "drain", ("C", i["j"], i["i"]), [("c_mem", i["j"], i["i"])],
           pass_kernel("drain_pass", s16))
    return prog.validate()


def make_inputs(seed: int = 0, m: int = 64, n: int = 64, k: int = 64, k_unroll: int = 8,
                n_unroll: int = 8):
    return {"A": small_signed(seed, (k, m), VALUE_MAX),
            "B": small_signed(seed + 1, (n, k), VALUE_MAX)}


def reference(inputs: dict, m: int = 64, n: int = 64, k: int = 64, k_unroll: int = 8,
              n_unroll: int = 8):
    a = np.asarray(inputs["A"], dtype=np.int64)    # a[k, i]
    b = np.asarray(inputs["B"], dtype=np.int64)    # b[j, k]
    return {"C": to_dtype(wrap(b @ a, s16), s16)}  # C[j, i] = sum_k b[j, k] a[k, i]
