"""Scheduling policy selection (paper §V-B, Fig. 7).

If every reduction is fully unrolled (no op depends on its own earlier instances: no RAW
self-dependence) the program is a stencil pipeline and gets the fused II = 1 schedule
(:mod:`.stencil`); otherwise it is a DNN pipeline and gets coarse-grained modulo scheduling
with double buffering (:mod:`.dnn`). The chosen schedule is checked by the independent verifier;
if it fails, the next policy is tried (stencil -> dnn -> sequential) and the reason recorded in
``info["fallback"]``. ``info["storage_copies"]`` gives the copies (double buffering) each buffer
needs under the schedule (:mod:`.storage`).
"""
from __future__ import annotations

from ..ir.poly import PolyProgram
from ..ir.program import Program
from ..ir.schedule import Schedule
from ..poly.deps import Dependence, raw_dependences
from .delay import delay_producers
from .drain_place import place_drains
from .init_place import place_inits
from .dnn import pipeline_loops, schedule_dnn
from ..ir.hw import HwParams
from .sequential import schedule_hls, schedule_sequential
from .sharing import share_units
from .stencil import schedule_stencil
from .storage import storage_copies


def select_policy(deps: list[Dependence]) -> str:
    """``stencil`` when no op depends on itself (all reductions unrolled), else ``dnn``."""
    return "dnn" if any(d.producer == d.consumer for d in deps) else "stencil"


def schedule(program: Program, poly: PolyProgram, params: HwParams | None = None,
             deps: list[Dependence] | None = None, policy: str | None = None,
             delay: bool = True, early: frozenset[str] = frozenset(),
             gap_scale: dict[str, int] | None = None) -> Schedule:
    """The optimized schedule of ``program`` (verified); ``delay``: producers then start as
    late as their consumers allow (:mod:`.delay`; ``False``: as early as possible; ``early``:
    ops that keep their earliest start)."""
    return schedule_verified(program, poly, params, deps, policy, delay, early, gap_scale)[0]


def schedule_verified(program: Program, poly: PolyProgram, params: HwParams | None = None,
                      deps: list[Dependence] | None = None, policy: str | None = None,
                      delay: bool = True, early: frozenset[str] = frozenset(),
                      gap_scale: dict[str, int] | None = None
                      ) -> tuple[Schedule, "VerifyReport"]:
    """The optimized schedule of ``program`` and the report of its verification: the first
    policy of the fallback chain whose schedule the verifier proves legal, with its producers
    delayed (``delay``, :func:`schedule`) and accumulators' initializations next to their first
    updates (:mod:`.init_place`) and their drains next to their last updates
    (:mod:`.drain_place`), not the ops in ``early``; a changed schedule is verified as
    changed."""
    from .verify import VerifyError, verify
    params = params or HwParams()
    deps = raw_dependences(poly) if deps is None else deps
    first = policy or select_policy(deps)
    chain = {"stencil": ["stencil", "dnn", "sequential"], "dnn": ["dnn", "sequential"],
             "dnn-db": ["dnn-db", "sequential"], "hls": ["hls", "sequential"],
             "sequential": ["sequential"]}[first]
    failures = []
    for name in chain:
        if name == "stencil":
            # thesis §5.5.3: 2 x FW writes between a write and a read served by the SRAM
            sched = share_units(program, poly, schedule_stencil(
                program, poly, deps, params.fetch_width, sram_gap=2 * params.fetch_width), deps)
        elif name in ("dnn", "dnn-db"):
            # §5.5.3 again, and rows padded to the fetch width (§5.5.2, Table 7.4 text);
            # dnn-db: the coarse-grained pipeline without loop perfection and flattening
            sched = schedule_dnn(program, poly, params, deps, pad=params.fetch_width,
                                 sram_gap=2 * params.fetch_width,
                                 depth=params.tb_depth if params.compact_fetch else 0,
                                 gap_scale=gap_scale, fetch_dims=params.fetch_dims,
                                 loop_opt=name == "dnn")
        elif name == "hls":
            sched = schedule_hls(program, poly)
        else:
            sched = schedule_sequential(program, poly)
        try:
            report = verify(poly, sched, params, deps)
        except VerifyError as e:
            failures.append(f"{name}: {e}")
            continue
        if failures:
            sched.info["fallback"] = failures
        if delay and name != "sequential":
            delayed = delay_producers(program, poly, sched, deps, params, early=early,
                                      gap_scale=gap_scale)
            if delayed is not sched:
                sched, report = delayed, verify(poly, delayed, params, deps)
            # an accumulator's initialization next to its first update (:mod:`.init_place`),
            # kept only when the verifier accepts it
            # and its drain next to its last update (:mod:`.drain_place`), likewise
            for place in (place_inits, place_drains):
                placed = place(program, sched, 2 * params.fetch_width, early)
                if placed is not sched:
                    try:
                        sched, report = placed, verify(poly, placed, params, deps)
                    except VerifyError:
                        pass
        tiles = [lp.name for lp in pipeline_loops(program)[0]]
        try:
            sched.info["storage_copies"] = storage_copies(
                program, sched, schedule_sequential(program, poly), tiles)
        except ValueError as e:
            failures.append(f"{name}: {e}")
            continue
        return sched, report
    raise VerifyError("; ".join(failures))
