"""An accumulator's initialization next to its first update (docs/scheduling.md "Accumulator
initialization").

An accumulator is a buffer an *update* op reads and writes (``f(x, y) += ...`` over an RDom);
its *initialization* is an op that writes it without loading anything from it (``f(x, y) =
0``). The schedulers give the initialization its own pipeline stage, as early as its loads
allow (a constant has none), so its zeros are written long before the update reads them and
sit in memory meanwhile (the thesis counts storage from write to last read, §4.3.3). This pass
gives the initialization the update's schedule at the update's first reduction iteration: the
zero of element ``e`` is written ``latency + gap`` cycles before the update's first read of
``e``, where ``gap`` is the SRAM gap the scheduler keeps for a memory-served load (thesis
§5.5.3, ``2 x FW``), so the element is live only from just before its reduction starts.

The pass applies when (otherwise the schedule is returned as it is):

* the initialization and its update share no loop (both are top-level nests: each element is
  initialized once, so no earlier value of the buffer is still read when the zero lands);
* each index of the initialization's store is one of its loop variables (coefficient 1) and the
  update's store index names, in the same buffer dimension, one of the update's loop variables
  (coefficient 1): the update's *pure* dimensions; the update's other dimensions are its
  reduction, whose first iteration is its lower bound where the coefficient is positive;
* the update's schedule is injective over its domain (it is: one compute unit), so the
  initialization's, its restriction to one reduction iteration, is too.

The result is verified (dependences, compute units, ports) by the caller; a schedule that
fails is discarded there.
"""
from __future__ import annotations

from dataclasses import replace

from ..ir.program import Op, Program
from ..ir.schedule import OpSchedule, Schedule


def init_pairs(program: Program) -> list[tuple[Op, Op]]:
    """``(initialization, update)`` pairs the pass applies to (module docstring)."""
    ops = program.ops()
    out = []
    for upd in ops:
        b = upd.store.buffer
        if not any(ld.buffer == b for ld in upd.loads):
            continue
        for ini in ops:
            if ini is upd or ini.store.buffer != b or any(ld.buffer == b for ld in ini.loads):
                continue
            if set(map(id, ini.loops)) & set(map(id, upd.loops)):
                continue
            if _pure_dims(ini) is None or _pure_dims(upd) is None:
                continue
            if len([o for o in ops if o.store.buffer == b]) != 2:
                continue
            out.append((ini, upd))
    return out


def _pure_dims(op: Op) -> list[str] | None:
    """Per store index, the loop variable it is (coefficient 1, no constant), or ``None``."""
    return plain_vars(op.store.index)


def plain_vars(index) -> list[str] | None:
    """Per dimension of an access, the loop variable it is (coefficient 1, no constant, no
    floor), or ``None`` when some dimension is not one or two name the same variable."""
    out = []
    for ix in index:
        if ix.floors or ix.const or len(ix.terms) != 1 or ix.terms[0][1] != 1:
            return None
        out.append(ix.terms[0][0])
    return out if len(set(out)) == len(out) else None


def place_inits(program: Program, sched: Schedule, gap: int,
                keep: frozenset[str] = frozenset()) -> Schedule:
    """``sched`` with every initialization of :func:`init_pairs` (except those in ``keep``)
    moved next to its update's first reduction iteration, its value landing ``gap`` cycles
    before the first read (``info["init_placed"]`` names them); ``sched`` itself when no pair
    applies."""
    pairs = [(i, u) for i, u in init_pairs(program) if i.name not in keep]
    if not pairs:
        return sched
    ops = dict(sched.ops)
    moved = []
    for ini, upd in pairs:
        si, su = ops[ini.name], ops[upd.name]
        ipure, upure = _pure_dims(ini), _pure_dims(upd)
        ucoef = dict(zip(su.dims, su.coeffs))
        ubound = dict(zip(su.dims, su.bounds))
        ibound = dict(zip(si.dims, si.bounds))
        if set(si.dims) != set(ipure):
            continue
        # the update's first reduction iteration: each non-pure dim at its earliest cycle
        first = sum(c * (ubound[d][0] if c >= 0 else ubound[d][0] + ubound[d][1] - 1)
                    for d, c in ucoef.items() if d not in upure)
        coeffs, offset = [], su.offset + first
        for d in si.dims:
            k = ipure.index(d)
            ud = upure[k]
            coeffs.append(ucoef[ud])
            # the same element: the update's pure variable minus its start plus the init's
            offset += ucoef[ud] * (ubound[ud][0] - ibound[d][0])
        offset -= si.latency + gap
        new = replace(si, coeffs=tuple(coeffs), offset=offset)
        if new.first() < 0:
            new = replace(new, offset=new.offset - new.first())
        ops[ini.name] = new
        moved.append(ini.name)
    if not moved:
        return sched
    info = dict(sched.info, init_placed=moved)
    return Schedule(sched.program, sched.policy, ops, info)
