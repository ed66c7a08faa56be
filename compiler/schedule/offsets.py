"""Minimum delays that satisfy dependences (thesis eq. 4.14, ``Start(cons) > End(prod)``).

Given the coefficient part of every op's time function, the delay of a consumer is the least
``d`` with ``T_cons(j) + d >= T_prod(i) + d_prod + L_prod`` for every dependent pair ``(i, j)``;
isl computes ``min(T_cons(j) - T_prod(i))`` over the dependence relation exactly.
"""
from __future__ import annotations

import islpy as isl

from ..ir.poly import PolyProgram
from ..ir.schedule import OpSchedule
from ..poly.deps import Dependence


def min_distance(dep: Dependence, prod: OpSchedule, cons: OpSchedule, ctx) -> int:
    """``min(T_cons(j) - T_prod(i))`` over the dependent pairs, with both offsets as given."""
    pair = prod.isl_map(ctx).reverse().apply_range(dep.relation.apply_range(cons.isl_map(ctx)))
    delta = pair.deltas().lexmin()
    return delta.sample_point().get_coordinate_val(isl.dim_type.set, 0).to_python()


def is_constant_distance(dep: Dependence, prod: OpSchedule, cons: OpSchedule, ctx) -> bool:
    """Every dependent pair is the same number of cycles apart: the consumer's load can be
    served by a wire or a delay line (thesis §5.1.1), not necessarily by a memory."""
    pair = prod.isl_map(ctx).reverse().apply_range(dep.relation.apply_range(cons.isl_map(ctx)))
    return pair.deltas().is_singleton()


def required_offset(dep: Dependence, prod: OpSchedule, cons: OpSchedule, ctx,
                    sram_gap: int = 0) -> int:
    """The least consumer offset change meeting ``dep``: the value must have landed
    (``prod.latency``), and when the distance is not constant, so that the load needs a memory,
    ``sram_gap`` writes more (thesis §5.5.3: a wide-fetch SRAM needs ``2 x FW`` cycles between
    a write and a read at its interface, the round trip through AGG, SRAM and TB, at one write
    per cycle; :func:`write_interval`)."""
    need = prod.latency - min_distance(dep, prod, cons, ctx)
    if sram_gap and not is_constant_distance(dep, prod, cons, ctx):
        need += sram_gap * write_interval(prod)
    return need


def write_interval(prod: OpSchedule) -> int:
    """Cycles between the producer's consecutive innermost iterations (its innermost loop of
    more than one iteration): the AGG fills one lane per write, so ``2 x FW`` *writes* is
    ``2 x FW x interval`` cycles (§5.5.3 assumes one write per cycle)."""
    for c, (_s, e) in zip(reversed(prod.coeffs), reversed(prod.bounds)):
        if e > 1:
            return max(1, abs(c))
    return 1


def place(poly: PolyProgram, scheds: dict[str, OpSchedule], order: list[str],
          deps: list[Dependence], fixed: set[str] = frozenset(), sram_gap: int = 0) -> None:
    """Set offsets in topological ``order`` to the least values meeting every dependence from
    an earlier op (offsets of ops in ``fixed`` are only raised; ``sram_gap``: see
    :func:`required_offset`). Shifts all ops so the first instance issues at cycle 0."""
    incoming: dict[str, list[Dependence]] = {}
    for d in deps:
        if d.producer != d.consumer:
            incoming.setdefault(d.consumer, []).append(d)
    placed: set[str] = set()
    for name in order:
        cons = scheds[name]
        base = cons.offset if name in fixed else 0
        need = base
        cons.offset = 0
        for d in incoming.get(name, []):
            if d.producer not in placed:
                continue              # loop-carried: left to the verifier
            prod = scheds[d.producer]
            need = max(need, required_offset(d, prod, cons, poly.ctx, sram_gap))
        cons.offset = need
        placed.add(name)
    shift = min(s.first() for s in scheds.values())
    for s in scheds.values():
        s.offset -= shift
