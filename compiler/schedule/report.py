"""Run tree-height reduction, extraction, both schedules, verification and liveness on one
program, and summarize (the data behind ``ubc schedule``; paper Tables VI and VII)."""
from __future__ import annotations

import time
from dataclasses import dataclass

from ..passes.dead_code import eliminate_dead_code
from ..passes.reduction_order import ReductionOrder, order_reductions
from ..passes.stream_split import split_streams
from ..passes.tree_height import Latency, balance_program
from ..ir.poly import PolyProgram
from ..ir.program import Program
from ..ir.schedule import Schedule
from ..ir.ubuf import UnifiedBuffer
from .liveness import BufferLiveness, buffer_liveness, total_live_words
from ..poly.buffers import extract_buffers
from ..poly.deps import Dependence, raw_dependences
from ..poly.extract import extract, op_latency
from .verify import VerifyReport, verify
from .dnn import pipeline_loops
from ..ir.hw import HwParams
from .select import schedule_verified
from .sequential import schedule_sequential


@dataclass
class ScheduleResult:
    """Every IR of one ``schedule_program`` run. ``program`` is the Program that was scheduled:
    the input without its dead code (``compiler.passes.dead_code``), its non-unrolled
    reductions in streaming order (``compiler.passes.reduction_order``), after tree-height
    reduction (``compiler.passes.tree_height``) unless it was turned off; interpret this one to
    run what the schedules and buffers describe."""
    program: Program
    poly: PolyProgram
    deps: list[Dependence]
    sequential: Schedule
    optimized: Schedule
    live_sequential: list[BufferLiveness]
    live_optimized: list[BufferLiveness]
    buffers: dict[str, UnifiedBuffer]
    verified: VerifyReport
    compile_seconds: float

    def summary(self, app: str) -> dict:
        return {"app": app, "policy": self.optimized.policy,
                "cycles_sequential": self.sequential.completion,
                "cycles_optimized": self.optimized.completion,
                "sram_words_sequential": total_live_words(self.live_sequential),
                "sram_words_optimized": total_live_words(self.live_optimized),
                "buffers": [{"name": b.name, "ports": b.ports, "live_words": b.live_words,
                             "copies": self.optimized.info.get("storage_copies", {}).get(b.name, 1)}
                            for b in self.live_optimized],
                "compile_seconds": round(self.compile_seconds, 3),
                **({"fallback": self.optimized.info["fallback"]}
                   if self.optimized.info.get("fallback") else {})}


def recurrence_distances(program: Program, params: HwParams) -> dict[str, int]:
    """Per op, the instances between an accumulator's write and its next read that let a
    memory serve it (``compiler.passes.reduction_order``): the op's latency (eq. 4.7), the
    wide-fetch SRAM's gap of ``2 x FW`` writes and one wide word of fetch lead (§5.5.3)."""
    return {op.name: op_latency(op, params) + 3 * params.fetch_width for op in program.ops()}


def schedule_only(program: Program, params: HwParams | None = None, policy: str | None = None,
                  balance: bool = True) -> tuple[Program, Schedule]:
    """The optimized schedule alone (verified; no sequential baseline, liveness or unified
    buffers), for schedule studies of programs too large to enumerate: the (balanced)
    Program and its Schedule."""
    params = params or HwParams()
    program = order_reductions(program, recurrence_distances(program, params)).program
    if balance:
        program = balance_program(program, Latency(params.pe_latency, params.mem_read_latency))
    poly = extract(program, params)
    opt, _report = schedule_verified(program, poly, params, raw_dependences(poly), policy)
    return program, opt


def schedule_program(program: Program, params: HwParams | None = None,
                     policy: str | None = None, balance: bool = True,
                     delay: bool = True, early: frozenset[str] = frozenset(),
                     gap_scale: dict[str, int] | None = None,
                     reorder: bool = True, split: bool = True) -> ScheduleResult:
    """Remove dead code (:mod:`compiler.passes.dead_code`: ops whose values nothing reads;
    ``optimized.info["dead_code"]`` names them), order non-unrolled reductions for streaming
    (:mod:`compiler.passes.reduction_order`; ``optimized.info["reduction_order"]``;
    ``reorder=False``: as written), reduce the kernels' tree height
    (``balance=False`` skips it: the kernels as written), extract, schedule (sequential
    baseline and optimized; ``delay=False``: producers as early as possible, :mod:`.delay`;
    ``gap_scale``: per buffer, a multiple of the DNN scheduler's SRAM gap), verify both,
    compute liveness. Host streams are split over several IO tiles
    (:mod:`compiler.passes.stream_split`; ``optimized.info["stream_split"]``) when that gives a
    shorter optimized schedule (``split=False``: never)."""
    params = params or HwParams()
    t0 = time.perf_counter()
    dead = eliminate_dead_code(program)
    program = dead.program
    reorder = order_reductions(program, recurrence_distances(program, params)) if reorder \
        else ReductionOrder(program)
    program = reorder.program
    if balance:
        program = balance_program(program, Latency(params.pe_latency, params.mem_read_latency))
    sched = (program, policy, delay, frozenset(early), gap_scale)
    program, poly, deps, opt, report = _shorter(_optimized(params, *sched),
                                                _split(params, split, *sched))
    seq = schedule_sequential(program, poly)
    verify(poly, seq, params, deps, check_width=False)
    if dead.removed:
        opt.info["dead_code"] = dead.removed
    if reorder.reordered:
        opt.info["reduction_order"] = reorder.reordered
    live_opt = buffer_liveness(program, opt, seq)
    live_seq = buffer_liveness(program, seq, seq)
    loops = {lp.name: (lp.start, lp.extent) for lp in pipeline_loops(program)[0]}
    bufs = extract_buffers(poly, opt, {b.name: b.live_words for b in live_opt},
                           opt.info.get("storage_copies"), loops)
    return ScheduleResult(program, poly, deps, seq, opt, live_seq, live_opt, bufs, report,
                          time.perf_counter() - t0)


def _optimized(params: HwParams, program: Program, policy, delay, early, gap_scale) -> tuple:
    """``(program, poly, deps, optimized schedule, verify report)`` of ``program``."""
    poly = extract(program, params)
    deps = raw_dependences(poly)
    opt, report = schedule_verified(program, poly, params, deps, policy, delay, early, gap_scale)
    return program, poly, deps, opt, report


def _split(params: HwParams, split: bool, program: Program, *sched) -> tuple | None:
    """:func:`_optimized` of ``program`` with its host streams split
    (:mod:`compiler.passes.stream_split`), or ``None`` when nothing is split. Every split
    starts parallel (one IO tile per slice); each input copy is then tried serial (its slices
    one after another on one IO tile, in its consumer's order) and kept so when that is no
    slower and keeps fewer live words."""
    if not split:
        return None
    best = _split_candidate(params, program, frozenset(), sched)
    if best is None:
        return None
    host_in = {b for b, d in program.buffers.items() if d.kind == "input"}
    for name in best[0].split:
        if not any(a.buffer in host_in for a in program.op(name).loads):
            continue
        cand = _split_candidate(params, program, best[0].serial | {name}, sched)
        if cand[1][3].completion <= best[1][3].completion and cand[2] < best[2]:
            best = cand
    done, out, _live = best
    out[3].info["stream_split"] = {op: list(s) + ["serial" if op in done.serial else "parallel"]
                                   for op, s in done.split.items()}
    return out


def _split_candidate(params: HwParams, program: Program, serial: frozenset, sched: tuple):
    """``(StreamSplit, optimized tuple, live words)`` of one choice of serial splits, or
    ``None`` when nothing is split."""
    done = split_streams(program, params.io_streams, serial)
    if not done.split:
        return None
    out = _optimized(params, done.program, *sched)
    seq = schedule_sequential(done.program, out[1])
    return done, out, total_live_words(buffer_liveness(done.program, out[3], seq))


def _shorter(plain: tuple, split: tuple | None) -> tuple:
    """The split candidate when its optimized schedule is shorter, else the plain one."""
    if split is not None and split[3].completion < plain[3].completion:
        return split
    return plain
