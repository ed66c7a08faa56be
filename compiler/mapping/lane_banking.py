"""Cyclic banking of isomorphic lanes (thesis §4.3.2, Figs. 4.3, 4.10–4.12; §5.2).

A DNN accumulator is written and read by *isomorphic* stages that run in parallel: thesis
Fig. 4.3's ``Conv0``/``Conv1`` update ``output_mem(0, ...)`` and ``output_mem(1, ...)``, gemm's
unrolled ``update_j`` update column ``8 jo + j`` of ``c_mem``. The same buffer also has
non-isomorphic phases: ``InitO`` writes every element, ``drain`` reads every element. The GCD
heuristic of :mod:`.banking` takes all concurrent ports together, so the stride-1 walk of the
init or the drain forces the factor to 1 and the buffer falls back to duplication, where every
copy receives every writer (gemm: 9 writers for a 2-input memory).

Here the factors come from the *lanes* only: the ports of a crowded concurrent group are
clustered by the linear part of their access map (isomorphic copies differ only in the
constant), and the GCD heuristic (§5.2.1) runs per cluster. The banking is accepted when every
bank is then touched by at most the memory's input and output port counts (§4.3.2: InitO and
the updates take the two write ports). A port that walks every bank (init, drain) is restricted
to each bank (§5.2.2); for an output port the per-bank pieces fire at disjoint cycles and a
:class:`~compiler.ir.ubimpl.BankSelect` rebuilds the logical stream.
"""
from __future__ import annotations

from dataclasses import replace
from math import gcd

import islpy as isl

from ..ir.ubimpl import BankSelect
from ..ir.ubuf import UBPort, UnifiedBuffer
from .banking import (Banking, bank_buffer, buffer_name, concurrent_groups, partition_factors,
                      port_banks)
from .common import MappingError, affine_outputs, fire_disjoint, split_floors


def linear_part(port: UBPort) -> tuple[tuple[int, ...], ...]:
    """The iterator coefficients of every address dimension (the constants dropped)."""
    port = split_floors(port)
    forms = affine_outputs(port.access.intersect_domain(port.domain),
                           f"port {port.name} access map")
    return tuple(tuple(c) for _k, c in forms)


def lanes(ports: list[UBPort]) -> list[list[UBPort]]:
    """Clusters of ports with the same linear access part (isomorphic copies)."""
    out: dict[tuple, list[UBPort]] = {}
    for p in ports:
        out.setdefault(linear_part(p), []).append(p)
    return list(out.values())


def lane_factors(ub: UnifiedBuffer, outs: list[UBPort], read_ports: int,
                 write_ports: int) -> tuple[int, ...] | None:
    """Per-dimension cyclic factors from the lanes of every crowded concurrent group (the lcm
    over groups and lanes); ``None`` when no lane has two ports or nothing is partitioned."""
    ndim = ub.ports[0].access.dim(isl.dim_type.out)
    factors = [1] * ndim
    for ports, limit in ((outs, read_ports), (ub.inputs, write_ports)):
        for group in concurrent_groups(ports):
            if len(group) <= limit:
                continue
            for lane in lanes(group):
                if len(lane) < 2:
                    continue
                for d, f in enumerate(partition_factors(lane, ub.shape)):
                    factors[d] = factors[d] * f // gcd(factors[d], f)
    return tuple(factors) if any(f > 1 for f in factors) else None


def banks_touched(port: UBPort, buffer: str, factors: tuple[int, ...]) -> set[tuple[int, ...]]:
    """The bank IDs (eq. 5.4) of every element ``port`` accesses."""
    ids = port_banks(port, buffer, factors)[0].range()
    out: set[tuple[int, ...]] = set()
    n = ids.dim(isl.dim_type.set)
    ids.foreach_point(lambda pt: out.add(tuple(
        pt.get_coordinate_val(isl.dim_type.set, i).to_python() for i in range(n))))
    return out


def fits(ub: UnifiedBuffer, outs: list[UBPort], factors: tuple[int, ...], read_ports: int,
         write_ports: int) -> bool:
    """Every bank is touched by at most ``write_ports`` input and ``read_ports`` output ports."""
    buffer = buffer_name(ub)
    for ports, limit in ((ub.inputs, write_ports), (outs, read_ports)):
        count: dict[tuple, int] = {}
        for p in ports:
            for b in banks_touched(p, buffer, factors):
                count[b] = count.get(b, 0) + 1
        if any(c > limit for c in count.values()):
            return False
    return True


def choose_lane_banking(ub: UnifiedBuffer, outs: list[UBPort], read_ports: int,
                        write_ports: int) -> Banking | None:
    """The lane banking of ``ub`` when it fits the memory's ports, else ``None``."""
    factors = lane_factors(ub, outs, read_ports, write_ports)
    if factors is None or not fits(ub, outs, factors, read_ports, write_ports):
        return None
    return Banking(factors)


def bank_lanes(ub: UnifiedBuffer, outs: list[UBPort], banking: Banking
               ) -> tuple[list[UnifiedBuffer], list[BankSelect]]:
    """The banks (:func:`.banking.bank_buffer`) with every output port that spans several banks
    renamed per bank (``<port>@<bank>``), and the selects that rebuild those ports. Raises
    :class:`MappingError` if two pieces of one port fire in the same cycle (no single select)."""
    banks = bank_buffer(ub, outs, banking)
    spans = {p.name for p in outs
             if sum(any(q.name == p.name for q in b.outputs) for b in banks) > 1}
    pieces: dict[str, list[UBPort]] = {n: [] for n in spans}
    for b in banks:
        for i, q in enumerate(b.ports):
            if q.direction == "out" and q.name in spans:
                piece = replace(q, name=f"{q.name}@{b.name}")
                b.ports[i] = piece
                pieces[q.name].append(piece)
    for name, ps in pieces.items():
        if not fire_disjoint(ps):
            raise MappingError(f"output {name}: two banks serve it in one cycle")
    return banks, [BankSelect([p.name for p in pieces[n]], n) for n in sorted(spans)]
