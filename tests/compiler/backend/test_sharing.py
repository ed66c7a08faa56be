"""Shared compute on the array (compiler/backend/sharing.py, build.py; docs/backend.md "Compute
sharing"): the ops of a shared unit become one set of PEs with input contexts, each context's
operands switched by a schedule generator; the netlist model runs it bit-exact against the
golden and the unshared app at the predicted cycles. Negative controls: a context bit one cycle
late or early, a schedule generator started one cycle late, a unit of two different kernels, an
arch whose PEs have too few contexts."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from compiler.backend.netlist import Netlist, NetlistError
from compiler.backend.netlist_model import check_netlist
from compiler.backend.sharing import issue_controller, shared_units
from compiler.ir import Program, u16
from compiler.frontend.loopnest import add_op, nest, stencil_kernel
from compiler.ir.schedule import OpSchedule
from compiler.pipeline import check_result, compile_app, compile_on_smallest
from ubgen.arch import load_arch
from ubgen.controller import iterate

from ...apps.test_apps import SMALL

ARCH = "cgra_8x8"


@pytest.fixture(scope="module")
def gpyr():
    # both with the host streams as written: the stream split (compiler/passes/stream_split.py)
    # is kept only where it shortens a schedule, so it may differ between the two and change
    # their MEM tiles for a reason other than sharing
    shared = compile_app("gpyr", ARCH, {**SMALL["gpyr"], "share": 1}, split=False)
    plain = compile_app("gpyr", ARCH, SMALL["gpyr"], split=False)
    return shared, plain


def test_shared_gpyr_is_one_kernel_and_bit_exact(gpyr):
    shared, plain = gpyr
    assert shared.netlist.count("pe") == 4 and plain.netlist.count("pe") == 16
    units = {d["op"] for _n, d in shared.netlist.graph.nodes(data=True) if d.get("shared")}
    assert units == {"pyramid"}
    for r in (shared, plain):
        check = check_result(r)
        assert check.ok, check.summary()
        assert check.cycles_netlist == r.netlist.cycles_predicted
    # the same outputs as the unshared app, and both equal to the golden
    a, b = shared.establish_golden().outputs, plain.establish_golden().outputs
    assert a and a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    # the schedule generators are spare controllers of the buffers' MEM tiles: no extra tile
    assert shared.netlist.count("mem") == plain.netlist.count("mem")
    ctx = [(u, v, k) for u, v, k in shared.netlist.graph.edges(keys=True) if k.startswith("ctx")]
    assert {k for _u, _v, k in ctx} == {"ctx1", "ctx2", "ctx3"}


def _mutated(result, edit):
    net = Netlist.from_dict(result.netlist.to_dict())
    edit(net)
    golden = result.establish_golden().outputs
    return check_netlist(net, result.arch, result.program, result.inputs, golden)


@pytest.mark.parametrize("shift", [1, -1])
def test_model_catches_a_context_bit_off_by_one(gpyr, shift):
    shared, _ = gpyr

    def edit(net):
        u, v, k = next((u, v, k) for u, v, k in net.graph.edges(keys=True)
                       if k == "ctx2" and net.graph.edges[u, v, k]["latency"] > 0)
        net.graph.edges[u, v, k]["latency"] += shift
    assert not _mutated(shared, edit).ok


def test_model_catches_a_late_schedule_generator(gpyr):
    shared, _ = gpyr

    def edit(net):
        node, q = next((n, d["generators"][0]) for n, d in net.graph.nodes(data=True)
                       if d.get("generators"))
        net.graph.nodes[node]["config"][f"tb2out_{q}_cycle_start"] += 1
    assert not _mutated(shared, edit).ok


def test_issue_controller_fires_at_the_ops_cycles():
    s = OpSchedule("p2", ("y", "x"), ((0, 4), (1, 3)), (16, 4), 7, 4)
    cfg = issue_controller(s)
    got = sorted(c for c, _a in iterate(cfg))
    want = sorted(7 + 16 * y + 4 * x for y in range(4) for x in range(1, 4))
    assert got == want
    one = issue_controller(OpSchedule("z", ("y",), ((3, 1),), (5,), 2, 1))
    assert sorted(c for c, _a in iterate(one)) == [17]


def _two_kernels() -> Program:
    prog = Program("twok")
    prog.add_input("input", (8, 8), u16)
    prog.add_buffer("a", (4, 4), u16)
    prog.add_output("output", (2, 2), u16)
    for name, src, dst, size, kernel in (
            ("s1", "input", "a", 4, stencil_kernel("k1", [[1, 1], [1, 1]], 2)),
            ("s2", "a", "output", 2, stencil_kernel("k2", [[1, 2], [1, 1]], 2))):
        loop, i = nest(prog, name, ("y", size), ("x", size))
        add_op(loop, name, (dst, i["x"], i["y"]),
               [(src, 2 * i["x"] + dx, 2 * i["y"] + dy) for dy in (0, 1) for dx in (0, 1)],
               kernel, "u")
    return prog.validate()


def test_a_unit_of_two_kernels_is_refused():
    prog = _two_kernels()
    assert list(shared_units(prog)) == ["u"]
    with pytest.raises(NetlistError, match="unit u: ops s1 and s2 compute different kernels"):
        compile_app(prog, ARCH)


def test_too_few_contexts_is_refused_and_the_smallest_arch_skips_it():
    with pytest.raises(NetlistError, match="unit pyramid: 4 ops share it, the PEs of cgra_4x4 "
                                           "have 1 input context"):
        compile_app("gpyr", "cgra_4x4", {**SMALL["gpyr"], "share": 1})
    r, choice = compile_on_smallest("gpyr", {**SMALL["gpyr"], "share": 1})
    assert choice.arch != "cgra_4x4"
    assert any("needs 4 PE input contexts, has 1" in p for p in choice.passed_over)
    assert r.resources()["PE input contexts"] == (4, r.arch.array.pe_contexts)


@pytest.mark.parametrize("app", ["gaussian", "harris", "resnet", "brighten_blur"])
def test_apps_without_sharing_keep_their_netlists(app):
    """The input contexts of an arch change no netlist of an app without sharing."""
    base = load_arch(ARCH)
    plain = dataclasses.replace(base, name=ARCH, array=dataclasses.replace(base.array,
                                                                          pe_contexts=1))
    a = compile_app(app, base, SMALL.get(app, {})).netlist.to_dict()
    b = compile_app(app, plain, SMALL.get(app, {})).netlist.to_dict()
    assert a == b
