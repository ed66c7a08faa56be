"""Sequential baseline schedules (thesis §4.3 intro; paper Table VI "sequential"; thesis
Fig. 7.8's baseline).

:func:`schedule_sequential` runs the loop nest like a single-threaded CPU: every child starts
after the previous one has finished and every loop's II is the latency of its body, so no two op
instances overlap. With zero latencies, brighten-blur takes 64*64 + 63*63 = 8065 cycles per t
iteration.

:func:`schedule_hls` (policy ``hls``) is the sequential schedule of the stages with each stage's
innermost loops pipelined at II = 1 (the HLS scheduler, :mod:`.hls`): stages still run one after
another (no double buffering, every outer loop iteration drains the pipeline), the baseline of
thesis Fig. 7.8 against which double buffering and the loop optimizations are measured.
"""
from __future__ import annotations

from ..ir.poly import PolyProgram
from ..ir.program import Program
from ..ir.schedule import Schedule
from .hls import schedule_node


def schedule_sequential(program: Program, poly: PolyProgram) -> Schedule:
    block = schedule_node(program, poly, pipelined=False)
    return Schedule(program.name, "sequential", block.to_op_schedules(poly),
                    {"latency": block.latency})


def schedule_hls(program: Program, poly: PolyProgram) -> Schedule:
    """The stages one after another, each stage's innermost loops pipelined at II = 1 (module
    docstring; thesis Fig. 7.8's sequential baseline)."""
    block = schedule_node(program, poly, pipelined=True)
    return Schedule(program.name, "hls", block.to_op_schedules(poly), {"latency": block.latency})
