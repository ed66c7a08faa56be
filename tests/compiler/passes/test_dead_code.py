"""Dead-code elimination (compiler.passes.dead_code): a stage whose values nothing reads is
removed before scheduling, so the app compiles to the same schedule and netlist as without it;
a stage whose values are read is kept (the negative control)."""
from __future__ import annotations

import numpy as np

from apps import gaussian
from compiler.frontend.loopnest import add_op, nest, pass_kernel
from compiler.interp import run as interp
from compiler.passes.dead_code import eliminate_dead_code, live_ops
from compiler.pipeline import compile_app
from compiler.schedule.report import schedule_program

W, H = 16, 12


def with_dead_stages(chain: int = 2):
    """gaussian plus ``chain`` copy stages, the first reading the input copy, each the one
    before; none read by anything that reaches the output."""
    prog = gaussian.build(W, H)
    src = "hw_input"
    for k in range(chain):
        prog.add_buffer(f"dead{k}", (W, H))
        inner, ix = nest(prog, f"dead{k}", ("y", H), ("x", W))
        add_op(inner, f"dead{k}_op", (f"dead{k}", ix["x"], ix["y"]),
               [(src, ix["x"], ix["y"])], pass_kernel(f"dead{k}_k"))
        src = f"dead{k}"
    return prog.validate()


def test_dead_stages_are_removed_and_the_rest_is_unchanged():
    whole = gaussian.build(W, H)
    dead = eliminate_dead_code(with_dead_stages())
    assert dead.removed == ["dead0_op", "dead1_op"]
    assert dead.program.to_dict() == whole.to_dict()


def test_a_program_without_dead_code_is_returned_as_is():
    prog = gaussian.build(W, H)
    out = eliminate_dead_code(prog)
    assert out.program is prog and out.removed == []
    assert live_ops(prog) == {op.name for op in prog.ops()}


def test_a_stage_whose_values_are_read_is_kept():
    """Negative control: the output stage made to read the copy stage's buffer keeps it."""
    prog = with_dead_stages(chain=1)
    out_op = next(op for op in prog.ops() if prog.buffers[op.store.buffer].kind == "output")
    out_op.loads[0] = type(out_op.loads[0])("dead0", out_op.loads[0].index)
    prog.validate()
    assert "dead0_op" in live_ops(prog)
    assert eliminate_dead_code(prog).removed == []


def test_scheduling_removes_dead_code_and_keeps_the_figures():
    ref = schedule_program(gaussian.build(W, H))
    got = schedule_program(with_dead_stages())
    assert got.optimized.info["dead_code"] == ["dead0_op", "dead1_op"]
    assert "dead_code" not in ref.optimized.info
    assert got.optimized.completion == ref.optimized.completion
    assert got.summary("g")["sram_words_optimized"] == ref.summary("g")["sram_words_optimized"]
    assert {b for b in got.buffers} == {b for b in ref.buffers}


def test_dead_stage_app_compiles_to_the_same_netlist_and_output():
    prog = with_dead_stages()
    ref = compile_app(gaussian.build(W, H), "cgra_4x4", until="netlist").report
    got = compile_app(prog, "cgra_4x4", until="netlist").report
    for k in ("pes", "mems", "ios", "cycles_predicted", "sram_words"):
        assert got[k] == ref[k], k
    inputs = gaussian.make_inputs(0, W, H)
    assert np.array_equal(interp(prog, inputs)["output"],
                          interp(eliminate_dead_code(prog).program, inputs)["output"])
