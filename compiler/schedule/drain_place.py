"""An accumulator's drain next to its last update (docs/scheduling.md "Non-unrolled
reductions"), the mirror of :mod:`.init_place`.

A *drain* is an op that reads an accumulator's final values (``out(x, y) = f(x, y) >> 5``
after ``f(x, y) += ...``). The DNN scheduler gives each stage its own loop intervals (one
instance per cycle in its innermost loop, thesis Algorithm 1) and the least offset that meets
its dependences, so a drain walking the elements faster than the update finishes them waits
for the last one, and every finished value waits with it: a 5 x 5 box sum over a 20 x 20 tile,
its rows finished one per 600 cycles, kept the whole tile's 400 partial sums live for a drain
of 400 cycles at the end (20 with the drain placed). This pass gives the drain the update's schedule at the update's last
reduction iteration: element ``e`` is read ``latency + gap`` cycles after the update's last
write of ``e`` lands (``gap``: the §5.5.3 SRAM gap, ``2 x FW`` writes), so a value lives only
from its last update to its read.

The pass applies when (otherwise the schedule is returned as it is):

* the update is an accumulator update (:func:`.init_place.init_pairs` finds it: it reads and
  writes the buffer at plain loop variables, one initialization writes it too) and the drain
  shares no loop with it (both are top-level nests);
* the drain's only load is the accumulator, at one loop variable per dimension (coefficient 1)
  naming every loop of the drain, so the drain's instances are the update's pure points;
* the update streams (one write per cycle in its innermost loop, as
  :mod:`compiler.passes.reduction_order` makes it): an update slower than that (a recurrence
  one iteration apart, three cycles per instance) keeps its accumulator in registers, where a
  drain at the memory's gap would only add a delay line;
* the moved drain ends no later than before (the completion never grows).

The result is verified by the caller (dependences, compute units, ports); a schedule that
fails is discarded there.
"""
from __future__ import annotations

from dataclasses import replace

from ..ir.program import Op, Program
from ..ir.schedule import Schedule
from .init_place import _pure_dims, init_pairs, plain_vars
from .offsets import write_interval


def drain_pairs(program: Program) -> list[tuple[Op, Op]]:
    """``(update, drain)`` pairs the pass applies to (module docstring)."""
    out = []
    ops = program.ops()
    for _ini, upd in init_pairs(program):
        b = upd.store.buffer
        for op in ops:
            if op is upd or [ld.buffer for ld in op.loads] != [b] or op.store.buffer == b:
                continue
            if set(map(id, op.loops)) & set(map(id, upd.loops)):
                continue
            dims = _plain(op)
            if dims is not None and set(dims) == {lp.name for lp in op.loops}:
                out.append((upd, op))
    return out


def _plain(op: Op) -> list[str] | None:
    """Per index of the drain's (only) load, the loop variable it is (coefficient 1)."""
    return plain_vars(op.loads[0].index)


def place_drains(program: Program, sched: Schedule, gap: int,
                 keep: frozenset[str] = frozenset()) -> Schedule:
    """``sched`` with every drain of :func:`drain_pairs` (except those in ``keep``) moved next
    to its update's last reduction iteration (``info["drain_placed"]`` names them); ``sched``
    itself when none moves."""
    ops = dict(sched.ops)
    moved = []
    for upd, drain in drain_pairs(program):
        if drain.name in keep:
            continue
        su, sd = ops[upd.name], ops[drain.name]
        if write_interval(su) != 1:
            continue
        upure, dpure = _pure_dims(upd), _plain(drain)
        ucoef = dict(zip(su.dims, su.coeffs))
        ubound = dict(zip(su.dims, su.bounds))
        # the update's last reduction iteration: each non-pure dim at its latest cycle
        last = sum(c * (ubound[d][0] + ubound[d][1] - 1 if c >= 0 else ubound[d][0])
                   for d, c in ucoef.items() if d not in upure)
        coeffs, offset = [], su.offset + last + su.latency + gap
        for d in sd.dims:
            # the same element: the drain's variable has the update's pure variable's value
            coeffs.append(ucoef[upure[dpure.index(d)]])
        new = replace(sd, coeffs=tuple(coeffs), offset=offset)
        if new.end() > sd.end() or new.first() < 0:
            continue
        ops[drain.name] = new
        moved.append(drain.name)
    if not moved:
        return sched
    return Schedule(sched.program, sched.policy, ops, dict(sched.info, drain_placed=moved))
