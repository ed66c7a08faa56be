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


def place(poly: PolyProgram, scheds: dict[str, OpSchedule], order: list[str],
          deps: list[Dependence], fixed: set[str] = frozenset()) -> None:
    """Set offsets in topological ``order`` to the least values meeting every dependence from
    an earlier op (offsets of ops in ``fixed`` are only raised). Shifts all ops so the first
    instance issues at cycle 0."""
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
            need = max(need, prod.latency - min_distance(d, prod, cons, poly.ctx))
        cons.offset = need
        placed.add(name)
    shift = min(s.first() for s in scheds.values())
    for s in scheds.values():
        s.offset -= shift
