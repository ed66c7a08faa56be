"""Compute occupancy of a schedule (thesis §7.3.1-7.3.2, Figs. 7.6-7.9): "the proportion of
time that the PEs are utilized".

A compute unit (``Op.compute_unit``: an op, or the ops that share a unit, thesis §4.3.3) is
busy in the cycles it issues an instance, one instance per cycle; it occupies as many PEs as its
kernel needs (``pes``, from the kernel mapping, e.g. ``compiler.backend.kernel_map``; the ops of
a shared unit run one kernel, counted once). Over a schedule of ``cycles`` (its completion)

    occupancy = sum_units PEs(u) * instances(u) / (sum_units PEs(u) * cycles)

Units whose kernel needs no PE (copies, a value routed through) are not counted. A pure
function of the Program, the Schedule and the PE counts.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..ir.program import Program
from ..ir.schedule import OpSchedule, Schedule


@dataclass
class Occupancy:
    """The occupancy of one schedule and what it is made of."""
    cycles: int
    pes: int                                   # PEs of the counted units
    busy: int                                  # PE-cycles issuing an instance
    units: dict[str, tuple[int, int]] = field(default_factory=dict)   # unit -> (PEs, issues)

    @property
    def value(self) -> float:
        return self.busy / (self.pes * self.cycles) if self.pes and self.cycles else 0.0

    def to_dict(self) -> dict:
        return {"occupancy": round(self.value, 4), "cycles": self.cycles, "pes": self.pes,
                "busy_pe_cycles": self.busy,
                "units": {u: {"pes": p, "issues": n} for u, (p, n) in self.units.items()}}


def instances(s: OpSchedule) -> int:
    n = 1
    for _start, extent in s.bounds:
        n *= extent
    return n


def occupancy(program: Program, schedule: Schedule, pes: dict[str, int]) -> Occupancy:
    """The occupancy of ``schedule`` (module docstring); ``pes``: op name -> PEs of its
    kernel."""
    units: dict[str, tuple[int, int]] = {}
    for op in program.ops():
        n = pes.get(op.name, 0)
        if n <= 0:
            continue
        u = op.compute_unit
        have_pes, issues = units.get(u, (0, 0))
        units[u] = (max(have_pes, n), issues + instances(schedule.ops[op.name]))
    total = sum(p for p, _n in units.values())
    busy = sum(p * n for p, n in units.values())
    return Occupancy(schedule.completion, total, busy, units)
