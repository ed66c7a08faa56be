"""Shared compute in the netlist (thesis §4.3.3 resource sharing, §7.3.1 Tables 7.6/7.7;
docs/backend.md "Compute sharing").

The schedule gives ops that name the same compute unit (``Op.unit``) disjoint issue cycles
(``compiler.schedule.sharing`` for fused stencils, the modulo reservation table for DNN
stages). The netlist builds their kernel once, on PEs with input contexts
(``ubgen.pe.contexts``): op ``k`` of the unit (program order) reads its operands through
context ``k``, and a schedule generator -- a ``tb2out`` controller of a MEM tile, configured
with op ``k``'s iteration domain and schedule (:func:`issue_controller`) -- raises the PE's
``ctx<k>`` input exactly at the cycles op ``k`` samples them. The ops' stores all come from the
kernel's root PE; each consumer samples it at its own op's cycles.

This module holds the pure parts: which ops share (:func:`shared_units`), the check that they
compute one kernel (:func:`check_one_kernel`), and the schedule generator's affine form.
"""
from __future__ import annotations

from dataclasses import dataclass

from ubgen.controller import AffineMap, ControllerConfig

from ..ir.program import Op, Program
from ..ir.schedule import OpSchedule
from .kernel_map import KernelGraph
from .netlist import NetlistError


@dataclass(frozen=True)
class SharedUnit:
    """The ops of one compute unit, context 0 first, and the PE graph they share."""
    unit: str
    ops: tuple[Op, ...]
    graph: KernelGraph

    def node(self, i: int) -> str:
        """The netlist name of kernel node ``i``."""
        return f"shared.{self.unit}.{i}"


def shared_units(program: Program) -> dict[str, list[Op]]:
    """``unit -> ops`` (program order) for every unit named by more than one op."""
    units: dict[str, list[Op]] = {}
    for op in program.ops():
        if op.unit is not None:
            units.setdefault(op.unit, []).append(op)
    return {u: ops for u, ops in units.items() if len(ops) > 1}


def check_one_kernel(unit: str, ops: list[Op], graphs: list[KernelGraph],
                     contexts: int, arch_name: str) -> KernelGraph:
    """The one PE graph of a unit's ops; a one-line :class:`NetlistError` when they compute
    different kernels (a shared unit runs one kernel on all its ops' operands) or the PE has
    fewer input contexts than the unit has ops."""
    first = graphs[0]
    for op, g in zip(ops[1:], graphs[1:]):
        if (g.nodes, g.result) != (first.nodes, first.result):
            raise NetlistError(f"unit {unit}: ops {ops[0].name} and {op.name} compute different "
                               f"kernels ({first.name}, {g.name}); ops sharing a unit must "
                               f"compute the same kernel")
    if len(ops) > contexts:
        raise NetlistError(f"unit {unit}: {len(ops)} ops share it, the PEs of {arch_name} have "
                           f"{contexts} input context{'s' if contexts != 1 else ''} "
                           f"([array] pe_contexts)")
    return first


def issue_controller(sched: OpSchedule) -> ControllerConfig:
    """A controller that fires exactly at ``sched``'s issue cycles: the op's loop box
    (innermost first, loops of one iteration dropped) with its time function; no address."""
    levels = [(e, c) for (_s, e), c in zip(sched.bounds, sched.coeffs) if e > 1][::-1]
    start = sched.offset + sum(c * s for (s, _e), c in zip(sched.bounds, sched.coeffs))
    if not levels:
        return ControllerConfig((1,), AffineMap(start, (0,)), {"tb": AffineMap(0, (0,))})
    extents = tuple(e for e, _c in levels)
    return ControllerConfig(extents, AffineMap(start, tuple(c for _e, c in levels)),
                            {"tb": AffineMap(0, (0,) * len(extents))})


def operand_banks(units: list[SharedUnit], impls: dict) -> list[tuple[str, list]]:
    """For every operand of every shared unit whose ops read it from register-file banks
    (``compiler.ir.ubimpl.RegisterFile``, one bank per op, each read by that op alone):
    ``(label, banks)``, the banks in op order. These banks are read at the unit's disjoint
    cycles, so one MEM tile whose register-file ports have two contexts can hold them all and
    serve them on one output (``compiler.mapping.registers.context_tile``)."""
    out = []
    for su in units:
        for a in range(len(su.ops[0].loads)):
            banks = []
            for op in su.ops:
                impl = impls.get(op.loads[a].buffer)
                port = f"{op.name}_ld{a}"
                node = impl.connections.get(port, port) if impl else None
                bank = next((b for b in (impl.register_files if impl else [])
                             if node in b.outputs), None)
                if bank is not None and all(bank is not b for b in banks):
                    banks.append(bank)
            if len(banks) > 1:
                out.append((f"{su.unit}.ld{a}", banks))
    return out
