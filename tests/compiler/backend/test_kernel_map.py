"""Kernel mapping (compiler/backend/kernel_map.py): the op table, each rewrite on a worked
example, the 3x3 Gaussian of thesis Table 7.8 / paper Table IV, and a hypothesis property: the PE
graph of a random kernel computes the interpreter's value bit for bit and is never deeper than
the scheduler's latency model."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps import get_app
from compiler.backend import kernel_map
from compiler.backend.kernel_map import PE_OPS, evaluate, map_kernel
from compiler.backend.netlist import NetlistError
from compiler.passes.tree_height import Latency, balance_program
from compiler.interp import eval_kernel
from compiler.ir import Arg, Call, Const, IntType, Kernel, Lookup, select, s16, u16
from compiler.ir.expr import ALL_OPS
from compiler.poly.extract import kernel_depth
from compiler.ir.hw import HwParams
from ubgen.pe.ops import PEOp


def ops(g) -> Counter:
    return Counter(n.op.name if n.kind == "pe" else "rom" for n in g.nodes)


def words(n_args: int, seed: int, n: int = 300) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    edges = np.array([0, 1, 2, 0x7FFF, 0x8000, 0xFFFF])
    return [np.concatenate([np.roll(edges, k), rng.integers(0, 1 << 16, n)])
            for k in range(n_args)]


def same_values(k: Kernel, g, args: list[np.ndarray]) -> bool:
    n = len(args[0]) if args else 1
    want = eval_kernel(k, args, n) & 0xFFFF
    got = [evaluate(g, [int(a[i]) for a in args]) for i in range(n)]
    return got == [int(w) for w in np.broadcast_to(want, (n,))]


def test_every_kernel_op_has_a_pe_op():
    assert ALL_OPS <= set(PE_OPS)
    assert all(isinstance(v, PEOp) for v in PE_OPS.values())


def test_gaussian_blur_fuses_multiplies_into_macs():
    """The 3x3 Gaussian window (weights 24 30 24 / 30 37 30 / 24 30 24, / 256) after
    tree-height reduction: 9 multiplies and 8 adds become 5 MACs, 4 multiplies and 3 adds, and
    the shift: 13 PEs (paper Table IV: 19), no deeper than the schedule's 6 levels."""
    prog = balance_program(get_app("gaussian").build(), Latency(1, 1))
    k = prog.op("blur").kernel
    g = map_kernel(k)
    assert ops(g) == Counter(MAC=5, MUL=4, ADD=3, LSHR=1)
    assert g.depth <= kernel_depth(k, HwParams()) == 6
    assert same_values(k, g, words(9, 0))


def test_pass_is_a_wire_and_constants_fold():
    k = Kernel.from_fn("copy", lambda a: Call("pass", (a,)), u16)
    g = map_kernel(k)
    assert g.nodes == [] and g.result.kind == "arg" and g.depth == 0
    k = Kernel.from_fn("c", lambda a: a * 1 + (Const(3) + Const(4)) * 0 + (Const(2) << 3), u16)
    g = map_kernel(k)                 # a * 1 -> a; (3 + 4) * 0 -> 0; 2 << 3 -> 16
    assert ops(g) == Counter(ADD=1)
    assert {o.kind: o.value for o in g.nodes[0].inputs.values()} == {"arg": 0, "const": 16}
    assert same_values(k, g, words(1, 1))


def test_cse_strength_reduction_and_mac():
    k = Kernel.from_fn("k", lambda a, b, c: (a + b) * (a + b) + a * 8 + c * b, u16, u16, u16)
    g = map_kernel(k)
    assert ops(g)["ADD"] + ops(g)["MAC"] == 3          # a + b once; two adds, one a MAC
    assert ops(g)["MUL"] + ops(g)["MAC"] >= 1
    k = Kernel.from_fn("k", lambda a: a * 8, u16)
    g = map_kernel(k)
    assert ops(g) == Counter(SHL=1) and g.nodes[0].inputs["data1"].value == 3
    k = Kernel.from_fn("k", lambda a, b, c: a * b + c, s16, s16, s16)
    assert ops(map_kernel(k)) == Counter(MAC=1)
    assert same_values(k, map_kernel(k), words(3, 2))


def test_select_condition_uses_the_one_bit_network():
    """A comparison (or 1-bit logic of comparisons) drives SEL's bit0 through res_p; another
    value's bit 0 is made 1-bit by ne(v & 1, 0)."""
    k = Kernel.from_fn("k", lambda a, b: select((a > b).eq(1) if False else (a > b), a, b),
                       s16, s16)
    g = map_kernel(k)
    assert ops(g) == Counter(SGT=1, SEL=1)
    sel = g.nodes[-1]
    assert sel.inputs["bit0"].bit and sel.inputs["bit0"].kind == "node"
    k = Kernel.from_fn("k", lambda a, b, c: select(Call("and", (a > b, b > c), IntType(1)), a,
                                                   c), s16, s16, s16)
    assert ops(map_kernel(k)) == Counter(SGT=2, BAND=1, SEL=1)
    k = Kernel.from_fn("k", lambda a, b, c: select(a, b, c), u16, u16, u16)
    g = map_kernel(k)
    assert ops(g) == Counter(AND=1, NE=1, SEL=1)
    for kern in (k,):
        assert same_values(kern, map_kernel(kern), words(3, 3))


def test_lookup_is_a_rom():
    table = tuple((i * 37) % 251 for i in range(64))
    k = Kernel.from_fn("lut", lambda a: Lookup(table, a & 63, u16) + 1, u16)
    g = map_kernel(k)
    assert ops(g) == Counter(AND=1, rom=1, ADD=1)
    rom = next(n for n in g.nodes if n.kind == "rom")
    assert rom.table == table and rom.latency() == 1
    assert same_values(k, g, words(1, 4))


def test_unsupported_type_is_a_one_line_error():
    k = Kernel.from_fn("k", lambda a: a + 1, IntType(8))
    with pytest.raises(NetlistError, match="u8 is not supported"):
        map_kernel(k)


def test_a_wrong_op_table_is_caught(monkeypatch):
    """Negative control of the value check: ADD mapped to SUB changes the values."""
    k = Kernel.from_fn("k", lambda a, b: a + b, u16, u16)
    monkeypatch.setitem(kernel_map.PE_OPS, "add", PEOp.SUB)
    assert not same_values(k, map_kernel(k), words(2, 5))


TYPES = [u16, s16]
BINARY = ["add", "sub", "mul", "udiv", "shl", "lshr", "ashr", "and", "or", "xor", "smin", "smax",
          "umin", "umax", "absdiff", "eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule",
          "ugt", "uge"]


@st.composite
def kernels(draw):
    """A random kernel over 1..4 arguments: binary ops, mac, abs, pass, select, constants,
    lookups of masked indices, shared operands."""
    n_args = draw(st.integers(1, 4))
    nodes = [Arg(i, draw(st.sampled_from(TYPES))) for i in range(n_args)]

    def operand():
        if draw(st.integers(0, 5)) == 0:
            return Const(draw(st.integers(0, 0xFFFF)), draw(st.sampled_from(TYPES)))
        return nodes[draw(st.integers(0, len(nodes) - 1))]

    for _ in range(draw(st.integers(1, 14))):
        kind = draw(st.integers(0, 9))
        if kind < 6:
            node = Call(draw(st.sampled_from(BINARY)), (operand(), operand()))
        elif kind == 6:
            node = Call("mac", (operand(), operand(), operand()))
        elif kind == 7:
            node = Call(draw(st.sampled_from(["abs", "pass"])), (operand(),))
        elif kind == 8:
            node = select(operand(), operand(), operand())
        else:
            table = tuple(draw(st.lists(st.integers(0, 0xFFFF), min_size=8, max_size=8)))
            node = Lookup(table, Call("and", (operand(), Const(7))), u16)
        nodes.append(node)
    return Kernel(f"k{len(nodes)}", n_args, nodes[-1], tuple(a.type for a in nodes[:n_args]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kernels(), st.integers(0, 1000))
def test_random_kernels_map_bit_exactly(k, seed):
    g = map_kernel(k)
    assert g.depth <= kernel_depth(k, HwParams())
    assert same_values(k, g, words(k.n_args, seed, 40))
