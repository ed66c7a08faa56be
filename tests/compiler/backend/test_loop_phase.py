"""Loop phases in kernels (``x % 2 == 0``, compiler.ir.expr.LoopPhase): the interpreter's
values, the Program checks and JSON round trip, the kernel mapping, and the schedule generators
the netlist builder makes for them, checked by the netlist model, with negative controls (a
generator one cycle late, a phase of a loop that does not enclose the op)."""
from __future__ import annotations

import numpy as np
import pytest

from compiler.frontend.loopnest import add_op, copy_stage, nest
from compiler.backend.kernel_map import evaluate, map_kernel
from compiler.backend.netlist_model import check_netlist
from compiler.backend.netlist import Netlist
from compiler.interp import run
from compiler.ir import Kernel, LoopPhase, Program, ProgramError, select, u16
from compiler.pipeline import check_result, compile_app
from ubgen.pe.ops import PEOp


def bayer(width: int = 12, height: int = 6, phase_x=("x_ph", 2, 0)) -> Program:
    """``out = x even ? (y odd ? in + 3 : 2 * in) : in - 1``, a Bayer-style interleave."""
    p = Program("phase")
    p.add_input("input", (width, height), u16)
    p.add_buffer("hw", (width, height), u16)
    p.add_output("out", (width, height), u16)
    copy_stage(p, "hw_input", "input", "hw", (width, height))
    loop, i = nest(p, "ph", ("y", height), ("x", width))
    k = Kernel.from_fn("k", lambda a: select(LoopPhase(*phase_x), select(
        LoopPhase("y_ph", 2, 1), a + 3, a * 2), a - 1), u16)
    add_op(loop, "ph", ("out", i["x"], i["y"]), [("hw", i["x"], i["y"])], k)
    return p.validate()


def expected(a: np.ndarray) -> np.ndarray:
    a = a.astype(np.int64)
    xs = (np.arange(a.shape[0]) % 2 == 0)[:, None]
    ys = (np.arange(a.shape[1]) % 2 == 1)[None, :]
    return (np.where(xs, np.where(ys, a + 3, a * 2), a - 1) & 0xFFFF).astype(np.uint16)


def test_interpreter_gives_each_instance_its_phase():
    prog = bayer()
    a = np.random.default_rng(1).integers(0, 1000, (12, 6)).astype(np.uint16)
    assert np.array_equal(run(prog, {"input": a})["out"], expected(a))
    assert np.array_equal(run(prog, {"input": a}, scalar=True)["out"], expected(a))


def test_program_checks_and_json_round_trip():
    prog = bayer()
    assert str(Program.from_dict(prog.to_dict())) == str(prog)
    with pytest.raises(ProgramError, match="phase of loop x_other, which does not enclose"):
        bayer(phase_x=("x_other", 2, 0))
    with pytest.raises(ValueError, match="residue < modulus"):
        LoopPhase("x", 2, 2)


def test_kernel_map_gives_phases_their_own_operands():
    k = Kernel.from_fn("k", lambda a: select(LoopPhase("x", 2, 0), a, a + 1)
                       + select(LoopPhase("x", 2, 0), 1, 0), u16)
    g = map_kernel(k)
    assert [(p.loop, p.modulus, p.residue) for p in g.phases] == [("x", 2, 0)]
    sels = [n for n in g.nodes if n.op == PEOp.SEL]
    assert all(n.inputs["bit0"].kind == "phase" for n in sels) and len(sels) == 2
    for ph in (0, 1):
        assert evaluate(g, [41], [ph]) == (41 if ph else 42) + ph


@pytest.fixture(scope="module")
def compiled():
    return compile_app(bayer(), "cgra_4x4")


def test_schedule_generators_pass_the_netlist_model(compiled):
    check = check_result(compiled)
    assert check.ok, check.summary()
    timers = [n for n in compiled.netlist.nodes("mem") if n.startswith("timer")]
    cfg = compiled.netlist.graph.nodes[timers[0]]["config"]
    # one generator per distinct phase: x even (6 of 12 columns), y odd (3 of 6 rows)
    assert sorted((cfg[f"tb2out_{q}_extent_m1_0"], cfg[f"tb2out_{q}_extent_m1_1"])
                  for q in (0, 1)) == [(5, 5), (11, 2)]


def test_model_catches_a_generator_one_cycle_late(compiled):
    net = Netlist.from_dict(compiled.netlist.to_dict())
    timer = next(n for n in net.nodes("mem") if n.startswith("timer"))
    net.graph.nodes[timer]["config"]["tb2out_0_cycle_start"] += 1
    golden = compiled.establish_golden().outputs
    assert not check_netlist(net, compiled.arch, compiled.program, compiled.inputs, golden).ok


def test_ops_with_the_same_phase_pattern_share_one_generator():
    """A second stage with the same phases, later in the pipeline, reads the first stage's
    schedule generators delayed instead of configuring its own: two generators, not four."""
    prog = bayer(12, 6)
    loop, i = nest(prog, "ph2", ("y", 6), ("x", 12))
    prog.buffers["out"].kind = "temp"
    prog.add_output("out2", (12, 6), u16)
    k = Kernel.from_fn("k2", lambda a: select(LoopPhase("x_ph2", 2, 0), select(
        LoopPhase("y_ph2", 2, 1), a, a + 1), a + 2), u16)
    add_op(loop, "ph2", ("out2", i["x"], i["y"]), [("out", i["x"], i["y"])], k)
    result = compile_app(prog.validate(), "cgra_4x4")
    check = check_result(result)
    assert check.ok, check.summary()
    net = result.netlist
    generators = [(n, q) for n in net.nodes("mem") if n.startswith("timer")
                  for q in (0, 1) if net.graph.nodes[n]["config"].get(f"tb2out_{q}_dim")]
    assert len(generators) == 2
