"""Non-unrolled reductions in streaming order (compiler.passes.reduction_order): a reduction
written with its reduction loop innermost gets its pure loops below it and its streamed
operands follow; the rewrite is bit-exact on the interpreter for random reductions
(hypothesis), the shipped apps are left as they are, and the reductions it must not touch are
left alone (negative controls)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from apps import NAMES, get_app
from compiler.frontend.loopnest import add_op
from compiler.frontend.source import load_app
from compiler.interp import run as interp
from compiler.ir import Kernel, Program, u16
from compiler.ir.expr import Const
from compiler.passes.reduction_order import band, order_reductions, reduction_band_order
from tests.apps.test_apps import SMALL

MATVEC = str(Path(__file__).resolve().parents[2] / "data" / "apps" / "matvec.py")


def _inputs(program: Program, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    return {b.name: rng.integers(0, 1 << 16, b.shape).astype(np.uint16)
            for b in program.buffers.values() if b.kind == "input"}


def _loops(program: Program, op: str) -> list[str]:
    return [lp.name for lp in program.op(op).loops]


def test_matvec_accumulates_with_the_rows_inside_and_streams_its_weights_by_column():
    program = load_app(MATVEC).program
    assert _loops(program, "acc_u0") == ["acc_u0_i", "acc_u0_r_x"]
    assert _loops(program, "w") == ["w_i", "w_j"]
    out = order_reductions(program, {"acc_u0": 15})
    assert out.reordered == {"acc_u0": ["acc_u0_r_x", "acc_u0_i"], "w": ["w_j", "w_i"]}
    assert _loops(out.program, "acc_u0") == ["acc_u0_r_x", "acc_u0_i"]
    assert _loops(out.program, "w") == ["w_j", "w_i"]
    # every other op, load and store is as written
    assert _loops(out.program, "v") == _loops(program, "v")
    assert [str(o) for o in out.program.ops()] == [str(o) for o in program.ops()]
    inputs = _inputs(program, 3)
    assert np.array_equal(interp(program, inputs)["output"],
                          interp(out.program, inputs)["output"])


@pytest.mark.parametrize("app", NAMES)
def test_every_shipped_app_is_left_as_written(app):
    """No shipped app has a reduction loop innermost (the DNN apps already put the pixel loops
    inside their reductions): the pass is the identity on each, so no figure moves."""
    program = get_app(app).build(**SMALL[app])
    out = order_reductions(program, {op.name: 15 for op in program.ops()})
    assert out.program is program and out.reordered == {}


def _reduction(pure: list[int], red: list[int], order: list[int], init: bool = True,
               acc_index=None) -> Program:
    """``acc(p...) = acc(p...) * 3 + a(r..., p...)`` (not associative: the updates' order
    shows in the result) over one loop per extent, nested in ``order`` (indices into
    ``pure + red``), after ``acc = 0`` when ``init``; ``a`` is streamed by a copy op."""
    dims = [f"p{k}" for k in range(len(pure))] + [f"r{k}" for k in range(len(red))]
    ext = pure + red
    prog = Program("red")
    prog.add_input("a_in", tuple(red + pure), u16)
    prog.add_buffer("a", tuple(red + pure), u16)
    prog.add_output("acc", tuple(pure), u16)
    copy_dims = dims[len(pure):] + dims[:len(pure)]
    parent = prog
    for d in reversed(copy_dims):
        parent = parent.add_loop(f"c_{d}", 0, ext[dims.index(d)])
    add_op(parent, "copy", ("a", *[f"c_{d}" for d in copy_dims]),
           [("a_in", *[f"c_{d}" for d in copy_dims])],
           Kernel.from_fn("copy_k", lambda x: x, u16))
    if init:
        parent = prog
        for k in reversed(range(len(pure))):
            parent = parent.add_loop(f"i_p{k}", 0, pure[k])
        add_op(parent, "init", ("acc", *[f"i_p{k}" for k in range(len(pure))]), [],
               Kernel.from_fn("zero", lambda: Const(0, u16)))
    parent = prog
    for k in order:
        parent = parent.add_loop(f"u_{dims[k]}", 0, ext[k])
    store = acc_index or [f"u_p{k}" for k in range(len(pure))]
    add_op(parent, "upd", ("acc", *store),
           [("acc", *store), ("a", *[f"u_{d}" for d in copy_dims])],
           Kernel.from_fn("mac3", lambda s, x: s * 3 + x, u16, u16))
    return prog.validate()


@st.composite
def reductions(draw):
    pure = draw(st.lists(st.integers(1, 5), min_size=1, max_size=2))
    red = draw(st.lists(st.integers(1, 4), min_size=1, max_size=2))
    n = len(pure) + len(red)
    order = draw(st.permutations(list(range(n))))
    if order[-1] < len(pure):                      # a reduction loop innermost
        r = draw(st.sampled_from(range(len(pure), n)))
        order = [k for k in order if k != r] + [r]
    return pure, red, list(order), draw(st.integers(1, 30)), draw(st.integers(0, 99))


@settings(max_examples=60, deadline=None)
@given(reductions())
def test_random_reductions_are_reordered_bit_exactly(case):
    """Property: for any nest of a non-associative accumulation with a reduction loop
    innermost, the reordered program computes the same words, its update's innermost loop is
    a pure loop, the reduction loops keep their relative order and the copy walks the operand
    in the order the update reads it."""
    pure, red, order, dist, seed = case
    program = _reduction(pure, red, order)
    out = order_reductions(program, {"upd": dist})
    new = _loops(out.program, "upd")
    old = _loops(program, "upd")
    assert sorted(new) == sorted(old) and new != old
    assert new[-1].startswith("u_p")
    assert [n for n in new if n.startswith("u_r")] == [n for n in old if n.startswith("u_r")]
    # the sunk pure loops (below the last reduction loop): as few as reach the distance,
    # or every pure loop of the nest
    last_red = max(k for k, n in enumerate(new) if n.startswith("u_r"))
    sunk = new[last_red + 1:]
    ext = {f"u_p{k}": e for k, e in enumerate(pure)}
    prod = int(np.prod([ext[n] for n in sunk]))
    assert prod >= dist or len(sunk) == len(pure)
    assert len(sunk) == 1 or prod // ext[sunk[0]] < dist
    cp = [n[2:] for n in _loops(out.program, "copy")]
    assert cp == [n[2:] for n in new]
    inputs = _inputs(program, seed)
    assert np.array_equal(interp(program, inputs)["acc"], interp(out.program, inputs)["acc"])


def test_the_reorder_is_needed_for_the_check_to_see_the_order():
    """Negative control of the property's bit-exactness: the same accumulation with its
    reduction loops swapped (updates reordered, which the pass never does) gives other words,
    so the comparison above can fail."""
    a = _reduction([3], [2, 3], [0, 1, 2])
    b = _reduction([3], [2, 3], [0, 2, 1])
    inputs = _inputs(a, 1)
    assert not np.array_equal(interp(a, inputs)["acc"], interp(b, inputs)["acc"])


def test_pure_innermost_and_unsafe_updates_are_left_alone():
    # the pure loop innermost already: a reuse distance of a row
    prog = _reduction([4], [3], [1, 0])
    assert reduction_band_order(prog.op("upd")) is None
    assert order_reductions(prog).program is prog
    # two pure loops writing one element (acc[p0 + p1]): their order would change the
    # updates' order, so the op is not touched
    prog = _reduction([2, 2], [3], [0, 1, 2], acc_index=["u_p0 + u_p1", "0"])
    assert reduction_band_order(prog.op("upd"), 1) is None
    # a single accumulator (the store at a constant): no pure loop to sink
    prog = _reduction([1], [4], [0, 1], acc_index=["0"])
    upd = prog.op("upd")
    assert [lp.name for lp in band(upd)] == ["u_p0", "u_r0"]
    assert reduction_band_order(upd, 1) is None


def test_a_copy_read_by_another_op_keeps_its_order():
    """Only a stream the reordered update alone reads follows it; with a second reader the
    copy's order serves that reader too and is kept."""
    prog = _reduction([4], [3], [0, 1])
    d = prog.to_dict()
    d["buffers"].append({"name": "other", "shape": [3, 4], "type": "u16", "kind": "output",
                         "level": None})
    d["children"].append({"loop": "o_y", "start": 0, "extent": 4, "children": [
        {"loop": "o_x", "start": 0, "extent": 3, "children": [
            {"op": "other", "loads": [{"buffer": "a", "index": ["o_x", "o_y"]}],
             "store": {"buffer": "other", "index": ["o_x", "o_y"]},
             "kernel": d["children"][0]["children"][0]["children"][0]["kernel"],
             "unit": None}]}]})
    prog = Program.from_dict(d).validate()
    out = order_reductions(prog, {"upd": 4})
    assert out.reordered == {"upd": ["u_r0", "u_p0"]}
    assert _loops(out.program, "copy") == _loops(prog, "copy")
