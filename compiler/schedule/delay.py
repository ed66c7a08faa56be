"""Producers as late as possible: the pass that delays input streams, and any producer whose
consumers start later, to the latest start their consumers allow (docs/scheduling.md, "Inputs
as late as possible"; thesis eq. 4.14 read from the consumer's side).

The schedulers place every op at the earliest start its producers allow. When a consumer
cannot start that early (each lane of an unrolled layer waiting for its own weights, a stage
behind a coarse-grained pipeline), the values its producer wrote early wait on chip: the
buffer holds the producer's skew on top of the consumer's reuse window. Delaying the producer
to the latest start that still meets every dependence (with the wide-fetch SRAM's gap for the
loads a memory serves, as the schedulers require it: :func:`.offsets.required_offset`,
:func:`.dnn.gap_cycles`) leaves only the live values of the later start in the buffer. Inputs
of the producer that are themselves produced on chip are then held longer; the ops are visited
consumers first, so a chain of producers (an input stream feeding a copy feeding the late
consumer) moves together; and no op moves more than the on-chip producers it reads, so the
storage never moves upstream (delaying a consumer of ``denoised`` alone would keep the
``denoised`` values longer: camera's demosaic).

Completion never changes: an op is delayed only up to its consumers, and an op without a
consumer (one writing an output) keeps its start. Ops sharing a compute unit and the writers of
an accumulator (initialization and updates interleave in its SRAM words) keep theirs too, and
so do the writers of a buffer whose SRAM the DNN scheduler reserved for a compact fetch
(``info["sram_exclusive"]``: a write moved into the reading stage would need a port cycle the
fetches leave none of). The delayed schedule must pass the verifier
(:func:`compiler.schedule.verify.verify`: dependences, compute units, ports); if it does not, only the
input streams (ops reading nothing but GLB inputs, which cannot lengthen any on-chip lifetime)
are delayed, each kept only if the verifier accepts it. The wide-fetch SRAM's port schedule is
buffer mapping's to find: when it refuses a buffer under the delayed schedule, the pipeline
driver schedules again with the delayed ops touching that buffer kept early
(:func:`compiler.pipeline.map_scheduled`), so a delay never costs a mapping.
"""
from __future__ import annotations

from dataclasses import replace

from ..ir.poly import PolyProgram
from ..ir.program import Program
from ..ir.schedule import OpSchedule, Schedule
from ..poly.deps import Dependence, dependency_graph, topo_order
from .dnn import gap_cycles, memory_served
from .offsets import is_constant_distance, min_distance
from ..ir.hw import HwParams


def slack(d: Dependence, prod: OpSchedule, cons: OpSchedule, program: Program, ctx,
          served: set[tuple[str, int]], sram_gap: int, pad: int,
          gap_scale: dict[str, int] | None = None) -> int:
    """Cycles ``prod`` can move later and still meet ``d``: the value lands ``latency``
    cycles after issue; when a memory serves the load, the SRAM gap the schedulers keep plus
    as much again (the gap is what the wide-fetch SRAM needs at the least; the port schedule
    of buffer mapping needs room around it, thesis §5.5.3)."""
    extra = 2 * gap_cycles(d, prod, program, sram_gap, pad, gap_scale) \
        if (d.consumer, d.slot) in served else 0
    return min_distance(d, prod, cons, ctx) - prod.latency - extra



def input_streams(program: Program) -> set[str]:
    """Ops that read only the host's input buffers (the GLB streams into the array)."""
    return {op.name for op in program.ops()
            if op.loads and all(program.buffers[ld.buffer].kind == "input" for ld in op.loads)}


def delays(program: Program, poly: PolyProgram, sched: Schedule, deps: list[Dependence],
           sram_gap: int = 0, pad: int = 1, only: set[str] | None = None,
           early: frozenset[str] = frozenset(), gap_scale: dict[str, int] | None = None
           ) -> dict[str, int]:
    """The latest-start delay of every producer (``only``: restrict to these ops; ``early``:
    ops that keep their start). Returns ``{op: cycles}`` for the ops that move (> 0).

    Consumers first, each producer gets the least slack of its dependences, counted from its
    consumers' delayed starts. Then, to a fixed point, no op moves more than the on-chip
    producers it reads (so storage never moves upstream: a value read later by a delayed op
    would wait longer in the buffer it comes from) nor more than its consumers allow."""
    ctx = poly.ctx
    ops = sched.ops
    inner = [d for d in deps if d.producer != d.consumer]
    constant = {id(d): is_constant_distance(d, ops[d.producer], ops[d.consumer], ctx)
                for d in inner}
    served = memory_served(inner, constant)
    room = {id(d): slack(d, ops[d.producer], ops[d.consumer], program, ctx, served, sram_gap,
                         pad, gap_scale) for d in inner}
    outgoing: dict[str, list[Dependence]] = {}
    producers: dict[str, set[str]] = {}
    for d in inner:
        outgoing.setdefault(d.producer, []).append(d)
        producers.setdefault(d.consumer, set()).add(d.producer)
    exclusive = set(sched.info.get("sram_exclusive", ()))
    fixed = (_shared_units(program) | accumulator_writers(program) | set(early)
             | {op.name for op in program.ops() if op.store.buffer in exclusive})
    order = topo_order(dependency_graph(poly, deps), poly)
    delta = {n: 0 for n in order}
    for name in reversed(order):
        if name in outgoing and name not in fixed and (only is None or name in only):
            delta[name] = max(0, min(room[id(d)] + delta[d.consumer] for d in outgoing[name]))
    changed = True
    while changed:
        changed = False
        for name in order:
            new = max(0, min([delta[name]] + [delta[q] for q in producers.get(name, ())]
                             + [room[id(d)] + delta[d.consumer]
                                for d in outgoing.get(name, ())]))
            if new < delta[name]:
                delta[name], changed = new, True
    return {n: v for n, v in delta.items() if v > 0}


def accumulator_writers(program: Program) -> set[str]:
    """Ops writing an accumulator (a buffer some op reads and writes: its initialization and
    its updates): their writes interleave in the buffer's SRAM words with the updates'
    read-modify-writes, so they keep the start the scheduler gave them."""
    ops = program.ops()
    rmw = {op.store.buffer for op in ops if op.store is not None
           and any(ld.buffer == op.store.buffer for ld in op.loads)}
    return {op.name for op in ops if op.store is not None and op.store.buffer in rmw}


def _shared_units(program: Program) -> set[str]:
    """Ops on a compute unit that another op uses too (moving one could collide)."""
    users: dict[str, list[str]] = {}
    for op in program.ops():
        users.setdefault(op.compute_unit, []).append(op.name)
    return {n for names in users.values() if len(names) > 1 for n in names}


def shifted(sched: Schedule, delay: dict[str, int]) -> Schedule:
    """``sched`` with the ops' offsets raised by ``delay`` (recorded in ``info["delayed"]``)."""
    ops = {n: replace(s, offset=s.offset + delay.get(n, 0)) for n, s in sched.ops.items()}
    info = dict(sched.info, delayed=dict(delay))
    return Schedule(sched.program, sched.policy, ops, info)


def delay_producers(program: Program, poly: PolyProgram, sched: Schedule,
                    deps: list[Dependence], params: HwParams | None = None,
                    sram_gap: int | None = None, pad: int | None = None,
                    early: frozenset[str] = frozenset(),
                    gap_scale: dict[str, int] | None = None) -> Schedule:
    """``sched`` with producers started as late as their consumers allow (module docstring),
    verified; ``sched`` itself when nothing can move. ``early``: ops that keep their start
    (the pipeline driver's answer to a buffer that mapping refuses under the delayed
    schedule, :func:`compiler.pipeline.map_scheduled`)."""
    from .verify import VerifyError, verify
    params = params or HwParams()
    sram_gap = 2 * params.fetch_width if sram_gap is None else sram_gap
    pad = params.fetch_width if pad is None else pad
    every = delays(program, poly, sched, deps, sram_gap, pad, early=early, gap_scale=gap_scale)
    if not every:
        return sched
    candidate = shifted(sched, every)
    try:
        verify(poly, candidate, params, deps)
        return candidate
    except VerifyError:
        pass
    kept: dict[str, int] = {}
    streams = input_streams(program)
    for name, delta in delays(program, poly, sched, deps, sram_gap, pad, streams,
                              early, gap_scale).items():
        trial = shifted(sched, dict(kept, **{name: delta}))
        try:
            verify(poly, trial, params, deps)
            kept[name] = delta
        except VerifyError:
            continue
    return shifted(sched, kept) if kept else sched
