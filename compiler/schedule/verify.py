"""Schedule verifier, independent of the schedulers (docs/design.md §3.2): proves with isl that

1. every read-after-write dependence holds including latency: for each dependence relation
   ``D: prod[i] -> cons[j]`` the set ``{ (i, j) in D : T_cons(j) < T_prod(i) + L_prod }`` is empty;
2. no compute unit issues two instances in one cycle: the union of the schedule maps of the ops
   on a unit is injective (thesis §4.3.3: ops naming the same unit share it);
3. no buffer has more concurrent writer groups than write ports, nor more concurrent reader
   groups than read ports, in any cycle: for every (ports+1) groups the intersection of their
   cycle sets is empty. A *group* is a set of isomorphic ops (same kernel, same loop extents),
   which banking serves through one port (thesis §4.3.2, Fig. 4.12). Under the stencil policy
   buffer mapping serves any number of concurrent accesses with shift registers and banks
   (thesis §5.1–5.2), so instead of port counts it is checked that no two writes of one element
   fall in the same cycle;
4. the completion time fits the cycle counter (``cycle_width`` bits).

Each failure raises :class:`VerifyError` (a one-line message with an example) or
:class:`ScheduleError` for the cycle-counter width.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import islpy as isl

from ..ir.poly import PolyProgram
from ..ir.schedule import Schedule
from ..poly.deps import Dependence, raw_dependences
from ..ir.hw import HwParams


class VerifyError(ValueError):
    """The schedule violates a dependence or a resource constraint."""


class ScheduleError(ValueError):
    """No schedule exists within the hardware limits (e.g. the cycle-counter width)."""


@dataclass
class VerifyReport:
    dependences: int = 0
    units: int = 0
    ports: int = 0
    completion: int = 0
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"dependences": self.dependences, "units": self.units, "ports": self.ports,
                "completion": self.completion}


def _time_pair(d: Dependence, sched: Schedule, ctx) -> isl.Map:
    """``[t_prod] -> [t_cons]`` for every dependent pair of instances."""
    sp = sched.ops[d.producer].isl_map(ctx)
    sc = sched.ops[d.consumer].isl_map(ctx)
    return sp.reverse().apply_range(d.relation.apply_range(sc))


def check_dependences(poly: PolyProgram, sched: Schedule,
                      deps: list[Dependence] | None = None) -> int:
    ctx = poly.ctx
    deps = raw_dependences(poly) if deps is None else deps
    for d in deps:
        lat = sched.ops[d.producer].latency
        bad = _time_pair(d, sched, ctx).intersect(
            isl.Map.read_from_str(ctx, f"{{ [tp] -> [tc] : tc < tp + {lat} }}"))
        if not bad.is_empty():
            viol = d.relation.intersect(
                sched.ops[d.producer].isl_map(ctx).apply_range(
                    isl.Map.read_from_str(ctx, f"{{ [tp] -> [tc] : tc < tp + {lat} }}"))
                .apply_range(sched.ops[d.consumer].isl_map(ctx).reverse()))
            example = viol.sample().to_str() if not viol.is_empty() else str(bad.sample())
            raise VerifyError(f"dependence violated: {d.consumer} load {d.slot} of {d.buffer} "
                              f"from {d.producer} (latency {lat}): {example}")
    return len(deps)


def check_units(poly: PolyProgram, sched: Schedule) -> int:
    units: dict[str, list[str]] = {}
    for op in poly.ops.values():
        units.setdefault(op.unit, []).append(op.name)
    for unit, ops in units.items():
        maps = [sched.ops[o].isl_map(poly.ctx) for o in ops]
        for m in maps:
            if not m.is_injective():
                raise VerifyError(f"compute unit {unit}: op {m.get_tuple_name(isl.dim_type.in_)} "
                                  f"issues two instances in one cycle")
        for a, b in combinations(maps, 2):
            both = a.range().intersect(b.range())
            if not both.is_empty():
                raise VerifyError(f"compute unit {unit}: ops {a.get_tuple_name(isl.dim_type.in_)}"
                                  f" and {b.get_tuple_name(isl.dim_type.in_)} both issue in "
                                  f"cycle {both.sample_point()}")
    return len(units)


def port_groups(poly: PolyProgram, buffer: str, kind: str, banked_reads: bool) -> list[list[str]]:
    """Ops accessing ``buffer`` (``kind`` load/store), grouped by isomorphism (see module doc)."""
    ops = []
    for a in poly.accesses(buffer):
        if a.kind == kind and a.op not in ops:
            ops.append(a.op)
    if kind == "load" and banked_reads:
        return [ops] if ops else []
    groups: dict[tuple, list[str]] = {}
    for name in ops:
        op = poly.ops[name]
        groups.setdefault((op.kernel, tuple(e for _, e in op.bounds)), []).append(name)
    return list(groups.values())


def check_same_cycle_writes(poly: PolyProgram, sched: Schedule, buffer: str) -> None:
    """No element of ``buffer`` is written twice in one cycle: ``{[t] -> elem}`` from all its
    stores has no two instances with equal (t, elem)."""
    seen = None
    for a in poly.accesses(buffer):
        if a.kind != "store":
            continue
        te = sched.ops[a.op].isl_map(poly.ctx).reverse().apply_range(a.access)
        pairs = te.wrap()
        if seen is not None:
            both = seen.intersect(pairs)
            if not both.is_empty():
                raise VerifyError(f"buffer {buffer}: op {a.op} and another op write the same "
                                  f"element in one cycle: {both.sample_point()}")
            seen = seen.union(pairs)
        else:
            seen = pairs


def check_ports(poly: PolyProgram, sched: Schedule, params: HwParams) -> int:
    banked = sched.policy in ("stencil",)
    checked = 0
    for buffer, decl in poly.buffers.items():
        if decl["kind"] == "input":
            continue      # streamed from the global buffer, not a unified buffer on the array
        if banked:
            check_same_cycle_writes(poly, sched, buffer)
            checked += 1
            continue
        for kind, ports in (("store", params.write_ports), ("load", params.read_ports)):
            groups = port_groups(poly, buffer, kind, banked)
            times = []
            for g in groups:
                t = None
                for o in g:
                    r = sched.ops[o].isl_map(poly.ctx).range()
                    t = r if t is None else t.union(r)
                times.append(t)
            for combo in combinations(range(len(groups)), ports + 1):
                both = times[combo[0]]
                for k in combo[1:]:
                    both = both.intersect(times[k])
                if not both.is_empty():
                    names = ", ".join("+".join(groups[k]) for k in combo)
                    raise VerifyError(f"buffer {buffer}: {ports + 1} {kind} groups ({names}) in "
                                      f"cycle {both.sample_point()} but only {ports} ports")
            checked += 1
    return checked


def check_cycle_width(sched: Schedule, params: HwParams) -> int:
    done = sched.completion
    if done > params.max_cycle or min((s.first() for s in sched.ops.values()), default=0) < 0:
        raise ScheduleError(f"schedule of {sched.program} needs {done} cycles, beyond the "
                            f"{params.cycle_width}-bit cycle counter (max {params.max_cycle})")
    return done


def verify(poly: PolyProgram, sched: Schedule, params: HwParams | None = None,
           deps: list[Dependence] | None = None, check_width: bool = True) -> VerifyReport:
    """All checks; ``check_width=False`` skips the cycle-counter limit (for the sequential
    baseline, which is a reference figure, not a configuration)."""
    params = params or HwParams()
    rep = VerifyReport()
    rep.dependences = check_dependences(poly, sched, deps)
    rep.units = check_units(poly, sched)
    rep.ports = check_ports(poly, sched, params)
    rep.completion = check_cycle_width(sched, params) if check_width else sched.completion
    return rep
