"""Tree-height reduction of kernels (compiler/passes/tree_height.py): worked examples, the
pipeline and CLI that run it, and a hypothesis property over random expression DAGs (the
values bit-exact on random 16-bit words, PE count, constants and sharing unchanged, depth never
larger)."""
from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps import get_app
from compiler.cli import main
from compiler.passes.tree_height import REASSOCIATIVE, Latency, balance_kernel, balance_program
from compiler.interp import eval_kernel, run
from compiler.ir import Arg, Call, Const, IntType, Kernel, Lookup, maximum, minimum, s16, u16
from compiler.ir.expr import BINARY_OPS, COMPARE_OPS
from compiler.poly.extract import kernel_depth, op_latency
from compiler.ir.hw import HwParams
from compiler.schedule.report import schedule_program

from ...apps.test_apps import SMALL

u8, s8 = IntType(8, False), IntType(8, True)
PARAMS = HwParams()
EDGES = [0, 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0x8001, 0xFFFE, 0xFFFF]


def _words(n_args: int, seed: int, n: int = 256) -> list[np.ndarray]:
    """Random 16-bit words per argument, plus every pair of edge values."""
    rng = np.random.default_rng(seed)
    edges = np.array(EDGES, dtype=np.int64)
    out = []
    for k in range(n_args):
        corner = np.roll(np.repeat(edges, len(EDGES)) if k % 2 == 0 else np.tile(edges, len(EDGES)),
                         k // 2)
        out.append(np.concatenate([corner, rng.integers(0, 1 << 16, n)]))
    return out


def _eval(kernel: Kernel, words: list[np.ndarray]) -> np.ndarray:
    return eval_kernel(kernel, words, len(words[0]) if words else 1)


def _pes(kernel: Kernel) -> Counter:
    """PE and lookup-table nodes by op (the hardware the kernel needs)."""
    return Counter(n.op if isinstance(n, Call) else "lookup" for n in kernel.nodes()
                   if isinstance(n, (Call, Lookup)))


def _uses(kernel: Kernel) -> Counter:
    operands = [a for n in kernel.nodes() for a in
                (n.args if isinstance(n, Call) else (n.index,) if isinstance(n, Lookup) else ())]
    return Counter(id(a) for a in operands)


def _arg_leaves(node) -> set[int]:
    if isinstance(node, Arg):
        return {node.index}
    if isinstance(node, Call):
        return set().union(*(_arg_leaves(a) for a in node.args))
    return set()


def _sum(args):
    acc = args[0]
    for a in args[1:]:
        acc = acc + a
    return acc


def test_nine_tap_sum_becomes_a_four_level_tree():
    """gaussian's 3x3 window sum: 9 leaves, 8 adders as a chain of depth 8 -> depth 4."""
    k = Kernel.from_fn("box", lambda *a: _sum(a), *([u16] * 9))
    b = balance_kernel(k)
    assert kernel_depth(k, PARAMS) == 8 and kernel_depth(b, PARAMS) == 4
    assert _pes(b) == _pes(k) == Counter(add=8)
    # pairs (0,1) (2,3) (4,5) (6,7) at level 1; the odd leaf joins the earliest pair
    assert repr(b.body) == ("add(add(add(add(arg0, arg1), arg8), add(arg6, arg7)), "
                            "add(add(arg2, arg3), add(arg4, arg5)))")
    words = _words(9, 0)
    np.testing.assert_array_equal(_eval(b, words), _eval(k, words))
    assert _eval(k, [np.full(1, 0xFFFF)] * 9)[0] == (9 * 0xFFFF) & 0xFFFF   # wraps


def test_gaussian_kernel_balanced_to_a_log_depth_sum():
    """The reference generator's gaussian window: all 9 taps weighted (sigma = 1.5 / 256), so
    the 9 products are ready after one PE, their sum after ceil(log2 9) = 4 more, the shift
    after 6; the op (load + kernel, eq. 4.7) takes 7 cycles per pixel instead of the chain's
    11 (paper Table VI's 6 is for a window with 4 unweighted taps)."""
    prog = get_app("gaussian").build()
    before = prog.op("blur")
    after = balance_program(prog).op("blur")
    assert kernel_depth(before.kernel, PARAMS) == 10 and op_latency(before, PARAMS) == 11
    assert kernel_depth(after.kernel, PARAMS) == 6 and op_latency(after, PARAMS) == 7
    assert _pes(after.kernel) == _pes(before.kernel) == Counter(add=8, mul=9, lshr=1)


def test_shared_intermediate_is_not_flattened_across():
    """``k = a0 + a1 + a2`` is used twice: it stays one node, is a leaf of the chain above it,
    and its own chain is reduced separately."""
    def fn(*a):
        k = a[0] + a[1] + a[2]
        return (k + a[3] + a[4] + a[5] + a[6]) ^ k
    kern = Kernel.from_fn("shared", fn, *([u16] * 7))
    b = balance_kernel(kern)
    assert _pes(b) == _pes(kern) == Counter(add=6, xor=1)
    shared = [n for n in b.nodes() if _uses(b)[id(n)] == 2]
    assert len(shared) == 1 and _arg_leaves(shared[0]) == {0, 1, 2}
    assert b.body.args[1] is shared[0]
    # the outer chain: leaves k (ready at 2), a3..a6 (0) -> a3..a6 summed first, then + k
    assert kernel_depth(kern, PARAMS) == 7 and kernel_depth(b, PARAMS) == 4
    words = _words(7, 1)
    np.testing.assert_array_equal(_eval(b, words), _eval(kern, words))


def test_mixed_ops_keep_their_boundaries():
    """sub and shifts end chains, a chain of one op never absorbs another op, each of the add,
    mul and and chains is reduced on its own; constants are leaves (never folded)."""
    def fn(*a):
        s = ((a[0] + a[1]) - a[2]) + a[3] + a[4] + 7
        p = (a[0] * a[1] * 3 * a[2]) >> 2
        c = (a[3] > a[4]) & (a[3] > 5) & (a[4] > 1) & (a[0] > a[1])
        return Call("select", (c, s, p))
    kern = Kernel.from_fn("mixed", fn, *([u16] * 5))
    b = balance_kernel(kern)
    cond, s, p = b.body.args
    assert repr(s) == "add(sub(add(arg0, arg1), arg2), add(add(arg3, arg4), 7))"
    assert repr(p) == "lshr(mul(mul(arg0, arg1), mul(3, arg2)), 2)"
    assert repr(cond) == ("and(and(ugt(arg3, arg4), ugt(arg3, 5)), "
                          "and(ugt(arg4, 1), ugt(arg0, arg1)))")
    assert cond.type == kern.body.args[0].type and cond.type.bits == 1
    assert _pes(b) == _pes(kern)
    assert sorted(n.value for n in b.nodes() if isinstance(n, Const)) == \
        sorted(n.value for n in kern.nodes() if isinstance(n, Const))
    assert kernel_depth(kern, PARAMS) == 6 and kernel_depth(b, PARAMS) == 4
    words = _words(5, 2)
    np.testing.assert_array_equal(_eval(b, words), _eval(kern, words))


def test_signed_and_unsigned_min_max_stay_apart():
    """smin/umin (and smax/umax) are different ops: a umin chain under an smin chain is a leaf
    of it, never merged; on negative words the two orders differ, and the values agree."""
    def fn(*a):
        u = Call("umin", (Call("umin", (a[0], a[1])), a[2]))
        m = minimum(minimum(minimum(u, a[3]), a[4]), a[5])            # smin on s16
        x = Call("umax", (Call("umax", (maximum(maximum(a[0], a[1]), a[2]), a[3])), a[4]))
        return m + x
    kern = Kernel.from_fn("minmax", fn, *([s16] * 6))
    b = balance_kernel(kern)
    m, x = b.body.args
    # the umin chain is one leaf (ready at 2) of the smin chain, whose other leaves go first
    assert repr(m) == "smin(umin(umin(arg0, arg1), arg2), smin(smin(arg3, arg4), arg5))"
    assert repr(x) == "umax(smax(smax(arg0, arg1), arg2), umax(arg3, arg4))"
    assert _pes(b) == _pes(kern)
    assert kernel_depth(kern, PARAMS) == 6 and kernel_depth(b, PARAMS) == 4
    words = _words(6, 3)
    np.testing.assert_array_equal(_eval(b, words), _eval(kern, words))


def test_narrow_min_chain_with_wider_operands_is_kept():
    """A u8 umin of s16 operands truncates each intermediate result, so regrouping changes the
    value (shown on random words): such a chain is left as written. With u8 operands it is
    reassociated."""
    def chain(args, t):
        acc = args[0]
        for a in args[1:]:
            acc = Call("umin", (acc, a), t)
        return acc
    wide = Kernel.from_fn("wide", lambda *a: chain(a, u8), *([s16] * 4))
    assert balance_kernel(wide) is wide
    words = _words(4, 4)
    a = [Arg(i, s16) for i in range(4)]
    pairs = Call("umin", (Call("umin", (a[0], a[1]), u8), Call("umin", (a[2], a[3]), u8)), u8)
    regrouped = Kernel("regrouped", 4, pairs, (s16,) * 4)
    assert not np.array_equal(_eval(regrouped, words), _eval(wide, words))

    narrow = Kernel.from_fn("narrow", lambda *a: chain(a, u8), *([u8] * 4))
    b = balance_kernel(narrow)
    assert repr(b.body) == "umin(umin(arg0, arg1), umin(arg2, arg3))"
    assert all(n.type == u8 for n in b.nodes() if isinstance(n, Call))
    np.testing.assert_array_equal(_eval(b, words), _eval(narrow, words))


def test_chain_type_is_kept_and_type_changes_end_chains():
    """Rebuilt nodes carry the chain's type even when a leaf of another type ends up first;
    an 8-bit add inside a 16-bit add chain wraps at 8 bits and is not merged into it."""
    def fn(*a):
        inner = Call("add", (a[1], a[2]), u8)
        acc = Call("add", (a[0], inner), s16)
        for v in a[3:]:
            acc = Call("add", (acc, v), s16)
        return maximum(acc, 0)
    kern = Kernel.from_fn("typed", fn, u16, s16, s16, s16, s16, s16)
    b = balance_kernel(kern)
    assert repr(b.body) == "smax(add(add(add(arg0, arg3), add(arg1, arg2)), add(arg4, arg5)), 0)"
    adds = [n for n in b.nodes() if isinstance(n, Call) and n.op == "add"]
    assert Counter(str(n.type) for n in adds) == Counter(s16=4, u8=1)
    assert [_arg_leaves(n) for n in adds if n.type == u8] == [{1, 2}]
    words = _words(6, 5)
    np.testing.assert_array_equal(_eval(b, words), _eval(kern, words))


def test_latency_model_decides_the_grouping():
    """Leaves are combined by ready time under the arch's latencies: a lookup (MEM read) is
    slower than a PE when ``mem_read_latency`` is larger, so it is added last."""
    def fn(*a):
        lut = Lookup(tuple(range(16)), a[0] & 15)
        return lut + a[1] + a[2] + a[3]
    kern = Kernel.from_fn("lut", fn, *([u16] * 4))
    slow = Latency(pe=1, lookup=4)
    b = balance_kernel(kern, slow)
    assert repr(b.body) == "add(lut[16](and(arg0, 15)), add(add(arg1, arg2), arg3))"
    params = HwParams(pe_latency=1, mem_read_latency=4)
    assert kernel_depth(kern, params) == 8 and kernel_depth(b, params) == 6
    with_zero = balance_kernel(kern, Latency(pe=0, lookup=0))     # structure alone
    assert repr(with_zero.body) == "add(add(lut[16](and(arg0, 15)), arg1), add(arg2, arg3))"


def test_balance_program_is_pure_and_keeps_structure():
    prog = get_app("gpyr").build(share=True)
    text = [repr(op.kernel) for op in prog.ops()]
    out = balance_program(prog)
    assert out is not prog and [repr(op.kernel) for op in prog.ops()] == text
    assert [(o.name, o.compute_unit, str(o), o.kernel.name) for o in out.ops()] == \
        [(o.name, o.compute_unit, str(o), o.kernel.name) for o in prog.ops()]
    assert {b.name: b for b in out.buffers.values()} == prog.buffers


@pytest.mark.parametrize("name", sorted(SMALL))
def test_every_app_computes_the_same_outputs(name):
    """The balanced program of every app is bit-exact with the program as written (so with the
    numpy reference, tests/apps/test_apps.py), with the same PEs and no deeper kernel."""
    module = get_app(name)
    prog = module.build(**SMALL[name])
    out = balance_program(prog)
    for a, b in zip(prog.ops(), out.ops()):
        assert _pes(b.kernel) == _pes(a.kernel)
        assert kernel_depth(b.kernel, PARAMS) <= kernel_depth(a.kernel, PARAMS)
    inputs = module.make_inputs(0, **SMALL[name])
    want, got = run(prog, inputs), run(out, inputs)
    assert set(got) == set(want)
    for k in want:
        np.testing.assert_array_equal(got[k], want[k])


def test_schedule_program_runs_the_pass():
    """Everything downstream of ``schedule_program`` sees the balanced kernels: the sequential
    baseline of gaussian is 64 * 64 copies of 2 cycles (load + pass PE) plus 62 * 62 blurs of
    7 cycles (was 11 with the 8-adder chain), and the optimized schedule's pipeline fill is 4
    cycles shorter (its last blur issues at the same cycle)."""
    prog = get_app("gaussian").build()
    res = schedule_program(prog)
    raw = schedule_program(prog, balance=False)
    assert kernel_depth(res.program.op("blur").kernel, PARAMS) == 6
    assert raw.program is prog
    assert res.poly.ops["blur"].latency == 7 and raw.poly.ops["blur"].latency == 11
    assert res.summary("gaussian")["cycles_sequential"] == 64 * 64 * 2 + 62 * 62 * 7
    assert raw.summary("gaussian")["cycles_sequential"] == 64 * 64 * 2 + 62 * 62 * 11
    assert raw.optimized.completion - res.optimized.completion == 11 - 7


def test_cli_dumps_the_balanced_program(tmp_path, capsys):
    from compiler.ir.program import kernel_from_dict

    def blur_depth(args):
        dump = tmp_path / ("raw" if "--no-balance" in args else "balanced")
        assert main(["schedule", "gaussian", "--json", "--dump", str(dump)] + args) == 0
        summary = json.loads(capsys.readouterr().out)
        data = json.loads((dump / "program.json").read_text())
        blur = data["children"][1]["children"][0]["children"][0]
        assert blur["op"] == "blur"
        return kernel_depth(kernel_from_dict(blur["kernel"]), PARAMS), summary

    depth, summary = blur_depth([])
    raw_depth, raw_summary = blur_depth(["--no-balance"])
    assert (depth, raw_depth) == (6, 10)
    assert summary["cycles_sequential"] < raw_summary["cycles_sequential"]


# --- property: random expression DAGs --------------------------------------------------------

CHAIN_OPS = sorted(REASSOCIATIVE)
OTHER_BINARY = sorted((BINARY_OPS - REASSOCIATIVE) | COMPARE_OPS)
TYPES = [u16, s16, u16, s16, u8, s8, None]      # None: inferred from the first operand


@st.composite
def dags(draw):
    """A kernel over 1..4 arguments: 1..24 nodes, most of them chain ops applied to the newest
    node (so chains form), operands otherwise anywhere (so nodes are shared), with constants,
    other binary ops, abs/pass, select, mac and lookups mixed in; some nodes narrower than the
    word."""
    n_args = draw(st.integers(1, 4))
    nodes = [Arg(i, draw(st.sampled_from([u16, s16, u8]))) for i in range(n_args)]

    def operand():
        if draw(st.booleans()):
            return nodes[-1]
        if draw(st.integers(0, 4)) == 0:
            return Const(draw(st.integers(-(1 << 15), (1 << 16) - 1)),
                         draw(st.sampled_from([u16, s16])))
        return nodes[draw(st.integers(0, len(nodes) - 1))]

    for _ in range(draw(st.integers(1, 24))):
        kind = draw(st.integers(0, 9))
        if kind < 6:
            a, b = operand(), operand()
            if draw(st.booleans()):
                a, b = b, a
            last = nodes[-1]
            if isinstance(last, Call) and last.op in REASSOCIATIVE and kind < 4:
                op, t = last.op, last.type                  # extend the newest chain
            else:
                op, t = draw(st.sampled_from(CHAIN_OPS)), draw(st.sampled_from(TYPES))
            node = Call(op, (a, b), t)
        elif kind == 6:
            node = Call(draw(st.sampled_from(OTHER_BINARY)), (operand(), operand()))
        elif kind == 7:
            node = Call(draw(st.sampled_from(["abs", "pass"])), (operand(),))
        elif kind == 8:
            node = Call(draw(st.sampled_from(["select", "mac"])), (operand(), operand(),
                                                                  operand()))
        else:
            table = tuple(draw(st.lists(st.integers(0, 0xFFFF), min_size=16, max_size=16)))
            node = Lookup(table, Call("and", (operand(), Const(15))))
        nodes.append(node)
    return Kernel("random", n_args, nodes[-1], tuple(a.type for a in nodes[:n_args]))


DAG_SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
LATENCIES = st.sampled_from([Latency(1, 1), Latency(0, 0), Latency(2, 3), Latency(1, 0)])


@settings(max_examples=150, **DAG_SETTINGS)
@given(dags(), LATENCIES)
def test_property_random_dags_are_bit_exact(kern, latency):
    check_balanced(kern, latency)


@pytest.mark.regress
@settings(max_examples=1000, **DAG_SETTINGS)
@given(dags(), LATENCIES)
def test_property_random_dags_are_bit_exact_regress(kern, latency):
    check_balanced(kern, latency)


def check_balanced(kern: Kernel, latency: Latency) -> None:
    """The balanced kernel computes the same words with the same PEs, constants and sharing,
    no deeper than the original, and balancing it again changes nothing."""
    b = balance_kernel(kern, latency)
    words = _words(kern.n_args, kern.n_args)
    np.testing.assert_array_equal(_eval(b, words), _eval(kern, words))
    assert _pes(b) == _pes(kern)
    assert Counter(n.value for n in b.nodes() if isinstance(n, Const)) == \
        Counter(n.value for n in kern.nodes() if isinstance(n, Const))
    assert sorted(_uses(b).values()) == sorted(_uses(kern).values())   # sharing kept
    params = HwParams(pe_latency=latency.pe, mem_read_latency=latency.lookup)
    assert kernel_depth(b, params) <= kernel_depth(kern, params)
    # the same chains over the same leaves: a second run finds nothing to shorten
    assert kernel_depth(balance_kernel(b, latency), params) == kernel_depth(b, params)
