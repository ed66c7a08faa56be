"""Stencil-pipeline scheduling (paper §V-B "Stencil Pipeline"; thesis §4.4, Algorithm 2).

All loop nests are fused into one perfect nest of depth D (the deepest op; shallower nests are
padded with single-iteration outer loops, so an op's k-th loop sits at fused level
``D - depth + k``). Every producer/consumer pair is aligned (:mod:`.align`); fusable pairs pass
their relative rate (eq. 4.15) down the dependency graph. Each fused level ``l`` then gets an
interval ``Q_l``: at the innermost level the fastest op fires every cycle (II = 1); at outer
levels ``Q_l`` is the least value with ``rate * Q_l >= span`` of one inner iteration for every
op and integral coefficients. An op's time is ``sum(rate_op,l * Q_l * i_l) + delay_op`` and its
delay is the minimum satisfying all its dependences including latencies (:mod:`.offsets`).
Pairs that cannot be aligned (Fig. 4.19b) keep rate 1 and are delayed as far as their
dependences require, which amounts to not fusing them. An op that shares no loop with any
producer or consumer (e.g. loading a 3x3 weight table next to an image pipeline) is not
stretched over the fused levels: it keeps its own compact row-major nest at II = 1.
"""
from __future__ import annotations

import math
from fractions import Fraction

import networkx as nx

from ..ir.poly import PolyProgram
from ..ir.program import Program
from ..ir.schedule import OpSchedule, Schedule
from ..poly.deps import Dependence, dependency_graph, raw_dependences, topo_order
from .align import Alignment, align
from .offsets import place


def alignments(program: Program, graph: nx.DiGraph) -> dict[tuple[str, str], Alignment]:
    depth = max(len(op.loops) for op in program.ops())
    out = {}
    for p, c, data in graph.edges(data=True):
        prod, cons = program.op(p), program.op(c)
        al = align(prod, cons, cons.loads[data["deps"][0].slot])
        if al.fusable:
            lp = {lp.name: depth - len(prod.loops) + k for k, lp in enumerate(prod.loops)}
            lc = {lp.name: depth - len(cons.loops) + k for k, lp in enumerate(cons.loops)}
            for a, b, _ in al.pairs:
                if lp[a] != lc[b]:
                    al.fusable, al.reason = False, f"{a} and {b} sit at different loop depths"
        out[(p, c)] = al
    return out


def _rates(ops: dict, graph, order: list[str], aligned: dict, level: dict, depth: int
           ) -> dict[str, list[Fraction]]:
    """Relative rates per fused level (thesis eq. 4.15), propagated in topological order."""
    rate: dict[str, list[Fraction]] = {n: [Fraction(1)] * depth for n in ops}
    for c in order:
        got = [None] * depth
        for p in graph.predecessors(c):
            al = aligned[(p, c)]
            if not al.fusable:
                continue
            for a, b, r in al.pairs:
                lv = level[c][b]
                val = rate[p][level[p][a]] * r
                got[lv] = val if got[lv] is None else max(got[lv], val)
        rate[c] = [g if g is not None else Fraction(1) for g in got]
    return rate


def _level_interval(ops: dict, fused: set[str], level: dict, rate: dict, coeff: dict,
                    lv: int, depth: int, pad: int) -> int:
    """The interval of fused level ``lv``: long enough for every op's inner levels at its rate,
    a multiple of the rates' denominators (and of ``pad`` above the innermost level)."""
    q0, denom = Fraction(0), 1
    for n, op in ops.items():
        if n not in fused or not any(level[n][lp.name] == lv for lp in op.loops):
            continue
        span = 1 + sum(coeff[n][lp.name] * (lp.extent - 1) for lp in op.loops
                       if level[n][lp.name] > lv)
        q0 = max(q0, Fraction(span) / rate[n][lv])
        denom = math.lcm(denom, rate[n][lv].denominator)
    if lv < depth - 1:
        denom = math.lcm(denom, pad)
    return max(1, math.ceil(q0 / denom)) * denom


def _coefficients(ops: dict, fused: set[str], level: dict, rate: dict, depth: int, pad: int
                  ) -> tuple[dict[str, dict[str, int]], list[int]]:
    """Every op's loop coefficients and the interval of each fused level (innermost first);
    ops outside the fusion run their loop nest densely."""
    coeff: dict[str, dict[str, int]] = {n: {} for n in ops}
    q = [0] * depth
    for lv in reversed(range(depth)):
        q[lv] = _level_interval(ops, fused, level, rate, coeff, lv, depth, pad)
        for n, op in ops.items():
            for lp in op.loops:
                if level[n][lp.name] == lv and n in fused:
                    coeff[n][lp.name] = int(rate[n][lv] * q[lv])
    for n, op in ops.items():
        if n not in fused:
            stride = 1
            for lp in reversed(op.loops):
                coeff[n][lp.name] = stride
                stride *= lp.extent
    return coeff, q


def schedule_stencil(program: Program, poly: PolyProgram,
                     deps: list[Dependence] | None = None, pad: int = 1,
                     sram_gap: int = 0) -> Schedule:
    """``pad``: the interval of every fused level but the innermost is rounded up to a multiple
    of it (the SRAM fetch width, so every row starts aligned to a wide word; thesis §5.5).
    ``sram_gap``: producer writes between a write and a read of a load that needs a memory
    (non-constant dependence distance; thesis §5.5.3: ``2 x FW``; :func:`.offsets
    .required_offset`)."""
    deps = raw_dependences(poly) if deps is None else deps
    graph = dependency_graph(poly, deps)
    order = topo_order(graph, poly)
    ops = {op.name: op for op in program.ops()}
    depth = max(len(op.loops) for op in ops.values())
    level = {n: {lp.name: depth - len(op.loops) + k for k, lp in enumerate(op.loops)}
             for n, op in ops.items()}
    aligned = alignments(program, graph)
    fused_ops = {n for (p, c), al in aligned.items() if al.fusable and al.pairs for n in (p, c)}
    if not fused_ops:
        fused_ops = set(ops)
    rate = _rates(ops, graph, order, aligned, level, depth)
    coeff, q = _coefficients(ops, fused_ops, level, rate, depth, pad)
    scheds = {n: OpSchedule(n, poly.ops[n].dims, poly.ops[n].bounds,
                            tuple(coeff[n][d] for d in poly.ops[n].dims), 0, poly.ops[n].latency)
              for n in ops}
    place(poly, scheds, order, deps, sram_gap=sram_gap)
    info = {"levels": depth, "level_ii": q, "fetch_padding": pad, "sram_gap": sram_gap,
            "rates": {n: [str(r) for r in rate[n]] for n in ops},
            "alignment": [a.to_dict() for a in aligned.values()],
            "fused": all(a.fusable for a in aligned.values()),
            "unfused_ops": sorted(set(ops) - fused_ops)}
    return Schedule(program.name, "stencil", {n: scheds[n] for n in ops}, info)
