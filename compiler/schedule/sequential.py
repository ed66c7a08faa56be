"""Sequential baseline schedule (thesis §4.3 intro; paper Table VI "sequential").

Runs the loop nest like a single-threaded CPU: every child starts after the previous one has
finished and every loop's II is the latency of its body, so no two op instances overlap. With
zero latencies, brighten-blur takes 64*64 + 63*63 = 8065 cycles per t iteration.
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
