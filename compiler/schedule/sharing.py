"""Compute sharing between stages (thesis §4.3.3, Figs. 4.14/4.15; with strip-mining §4.4.2).

Ops naming the same ``Op.unit`` run on one compute unit, which issues one instance per cycle.
In a fused stencil schedule an op with innermost interval ``II_l`` issues in cycles congruent to
its delay modulo ``II_l`` (when all its coefficients are multiples of ``II_l``). Ops sharing a
unit therefore get pairwise disjoint residue classes (``a mod m`` and ``b mod n`` are disjoint
iff ``a != b mod gcd(m, n)``): each op's delay is raised to the least value that satisfies its
dependences and avoids the classes taken by the ops already placed on its unit. If the unit is
over-subscribed (``sum(1/II_l) > 1``) or no residue is free, the whole schedule is slowed by an
integer factor (all coefficients scaled) until it fits; the strip-mining factors of eq. 4.16 are
recorded in ``info["sharing"]``.
"""
from __future__ import annotations

import math

from ..ir.poly import PolyProgram
from ..ir.program import Program
from ..ir.schedule import OpSchedule, Schedule
from ..poly.deps import Dependence, dependency_graph, topo_order
from .offsets import required_offset
from .stripmine import stripmine_factors, utilization


def _shared_units(poly: PolyProgram) -> dict[str, list[str]]:
    units: dict[str, list[str]] = {}
    for op in poly.ops.values():
        units.setdefault(op.unit, []).append(op.name)
    return {u: ops for u, ops in units.items() if len(ops) > 1}


def _period(s: OpSchedule) -> int:
    """Largest m dividing every coefficient (the op's residue modulus); 0 if no loops."""
    g = 0
    for c, (_, e) in zip(s.coeffs, s.bounds):
        if e > 1:
            g = math.gcd(g, c)
    return g


def share_units(program: Program, poly: PolyProgram, sched: Schedule,
                deps: list[Dependence]) -> Schedule:
    shared = _shared_units(poly)
    if not shared:
        return sched
    order = topo_order(dependency_graph(poly, deps), poly)
    for factor in range(1, 65):
        trial = {n: OpSchedule(s.op, s.dims, s.bounds, tuple(c * factor for c in s.coeffs), 0,
                               s.latency) for n, s in sched.ops.items()}
        if _place_shared(poly, trial, order, deps, shared, sched.info.get("sram_gap", 0)):
            info = dict(sched.info)
            info["sharing"] = {
                u: {"ops": ops, "ii": {o: _period(trial[o]) for o in ops},
                    "stripmine": stripmine_factors({o: max(1, _period(trial[o])) for o in ops}),
                    "utilization": str(utilization({o: max(1, _period(trial[o]))
                                                    for o in ops}))}
                for u, ops in shared.items()}
            info["slowdown"] = factor
            return Schedule(sched.program, sched.policy, trial, info)
    return sched        # left to the verifier (falls back to another policy)


def _place_shared(poly, scheds, order, deps, shared, sram_gap: int = 0) -> bool:
    unit_of = {o: u for u, ops in shared.items() for o in ops}
    taken: dict[str, list[tuple[int, int]]] = {u: [] for u in shared}
    for ops in shared.values():
        if utilization({o: max(1, _period(scheds[o])) for o in ops}) > 1:
            return False
    incoming: dict[str, list[Dependence]] = {}
    for d in deps:
        if d.producer != d.consumer:
            incoming.setdefault(d.consumer, []).append(d)
    placed = set()
    for name in order:
        cons = scheds[name]
        need = 0
        for d in incoming.get(name, []):
            if d.producer in placed:
                prod = scheds[d.producer]
                need = max(need, required_offset(d, prod, cons, poly.ctx, sram_gap))
        if name in unit_of:
            m = _period(cons)
            if m == 0:
                return False
            for _ in range(m):
                if all((need - b) % math.gcd(m, n) != 0 for b, n in taken[unit_of[name]]):
                    break
                need += 1
            else:
                return False
            taken[unit_of[name]].append((need % m, m))
        cons.offset += need
        placed.add(name)
    shift = min(s.first() for s in scheds.values())
    if shift < 0:
        for s in scheds.values():
            s.offset -= shift
    return True
