"""Cyclic memory banking by the GCD heuristic, with fallback to duplication (thesis §5.2).

Ports that access the buffer in the same cycles form a group; a group with more ports than a
physical memory has needs several banks. Per address dimension ``d`` (buffer index order, first
index innermost) the heuristic of §5.2.1 picks a cyclic partition factor ``f_d``:

* if every port of the group indexes ``d`` with a constant, the dimension is fully partitioned
  (``f_d`` = its size; 1 when all the constants are equal, nothing to separate);
* otherwise ``f_d`` is the GCD of the non-zero iterator strides of dimension ``d`` over the group.

Bank ID ``f(x) = (x_0 mod f_0, ..., x_n mod f_n)`` (eq. 5.4) and inner-bank offset
``g(x) = (floor(x_0/f_0), ..., floor(x_n/f_n))`` (eq. 5.5). The partition is checked with isl
(two ports of a group must never touch one bank in one cycle); on a conflict the buffer is
duplicated instead: one copy per output port, each written by every input port (§5.2.1 end).
:func:`bank_buffer` returns the banks as unified buffers of their own (the bank implementation
data structure of §5.2.2) whose addresses are the inner-bank offsets.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from math import gcd, prod

import islpy as isl

from ..ir.ubuf import UBPort, UnifiedBuffer
from .common import MappingError, affine_outputs, port_time, split_floors, t2addr


@dataclass(frozen=True)
class Banking:
    factors: tuple[int, ...]
    duplicated: bool = False

    @property
    def banks(self) -> int:
        return prod(self.factors)


def _ndims(ub: UnifiedBuffer) -> int:
    return ub.ports[0].access.dim(isl.dim_type.out)


def partition_factors(ports: list[UBPort], shape: list[int] | None) -> tuple[int, ...]:
    """§5.2.1: cyclic partition factors of one group of concurrent ports."""
    forms = [affine_outputs(q.access.intersect_domain(q.domain), f"port {q.name} access map")
             for q in map(split_floors, ports)]
    ndim = len(forms[0])
    factors = []
    for d in range(ndim):
        consts = {f[d][0] for f in forms}
        strides = [c for f in forms for c in f[d][1] if c]
        if not strides:
            if len(consts) == 1:
                factors.append(1)
            else:
                size = shape[d] if shape else max(consts) + 1
                factors.append(size)
        else:
            g = 0
            for s in strides:
                g = gcd(g, abs(s))
            factors.append(g)
    return tuple(factors)


def bank_id_map(buffer: str, factors: tuple[int, ...], ctx=None) -> isl.Map:
    """Eq. 5.4 as an isl map ``{ buf[x] -> bank[x mod f] }`` over the partitioned dimensions
    (``f > 1``; the thesis' eqs. 5.14–5.21 print the bank ID that way)."""
    ctx = ctx or isl.DEFAULT_CONTEXT
    xs = [f"x{d}" for d in range(len(factors))]
    outs = [f"x{d} mod {f}" for d, f in enumerate(factors) if f > 1]
    return isl.Map.read_from_str(ctx, f"{{ {buffer}[{', '.join(xs)}] -> bank[{', '.join(outs)}] }}")


def offset_map(buffer: str, factors: tuple[int, ...], ctx=None) -> isl.Map:
    """Eq. 5.5 as an isl map ``{ buf[x] -> buf[floor(x / f)] }``."""
    ctx = ctx or isl.DEFAULT_CONTEXT
    xs = [f"x{d}" for d in range(len(factors))]
    outs = [f"floor(x{d} / {f})" for d, f in enumerate(factors)]
    return isl.Map.read_from_str(ctx, f"{{ {buffer}[{', '.join(xs)}] -> {buffer}[{', '.join(outs)}] }}")


def port_banks(port: UBPort, buffer: str, factors: tuple[int, ...]) -> tuple[isl.Map, isl.Map]:
    """The bank-ID and inner-bank-offset tuple maps of a port (eqs. 5.14–5.21)."""
    ctx = port.domain.get_ctx()
    acc = port.access.intersect_domain(port.domain)
    return (acc.apply_range(bank_id_map(buffer, factors, ctx)),
            acc.apply_range(offset_map(buffer, factors, ctx)))


def concurrent_groups(ports: list[UBPort]) -> list[list[UBPort]]:
    """Ports whose access cycles overlap, transitively (connected components)."""
    times = [port_time(p).range() for p in ports]
    parent = list(range(len(ports)))

    def find(i):
        while parent[i] != i:
            i = parent[i]
        return i
    for i, j in itertools.combinations(range(len(ports)), 2):
        if not times[i].intersect(times[j]).is_empty():
            parent[find(i)] = find(j)
    groups: dict[int, list[UBPort]] = {}
    for i, p in enumerate(ports):
        groups.setdefault(find(i), []).append(p)
    return list(groups.values())


def has_conflict(ports: list[UBPort], buffer: str, factors: tuple[int, ...]) -> bool:
    """Two ports of ``ports`` access one bank in one cycle (polytope emptiness test)."""
    ctx = ports[0].domain.get_ctx()
    tb = [t2addr(p).apply_range(bank_id_map(buffer, factors, ctx)) for p in ports]
    return any(not tb[i].intersect(tb[j]).is_empty()
               for i, j in itertools.combinations(range(len(ports)), 2))


def choose_banking(ub: UnifiedBuffer, outs: list[UBPort], read_ports: int,
                   write_ports: int) -> Banking:
    """Factors for the output ports ``outs`` (and the input ports) of ``ub``: no banking when
    every concurrent group fits the physical ports, the GCD heuristic when it is conflict-free,
    else duplication."""
    ndim = _ndims(ub)
    factors = [1] * ndim
    crowded = []
    for ports, limit in ((outs, read_ports), (ub.inputs, write_ports)):
        for group in concurrent_groups(ports):
            if len(group) > limit:
                crowded.append(group)
                for d, f in enumerate(partition_factors(group, ub.shape)):
                    factors[d] = factors[d] * f // gcd(factors[d], f)
    factors = tuple(factors)
    if not crowded:
        return Banking(factors)
    name = buffer_name(ub)
    if any(has_conflict(g, name, factors) for g in crowded):
        return Banking(tuple([1] * ndim), duplicated=True)
    return Banking(factors)


def buffer_name(ub: UnifiedBuffer) -> str:
    return ub.ports[0].access.get_tuple_name(isl.dim_type.out)


def _restrict(port: UBPort, bank_set: isl.Set, offsets: isl.Map, name: str) -> UBPort | None:
    acc = port.access.intersect_domain(port.domain).intersect_range(bank_set)
    dom = acc.domain()
    if dom.is_empty():
        return None
    return replace(port, name=name, domain=dom, access=acc.apply_range(offsets),
                   schedule=port.schedule.intersect_domain(dom))


def bank_buffer(ub: UnifiedBuffer, outs: list[UBPort], banking: Banking) -> list[UnifiedBuffer]:
    """§5.2.2: one unified buffer per bank, its ports restricted to the bank and addressed by
    the inner-bank offset. With duplication, one full copy per output port."""
    if banking.duplicated:
        return [UnifiedBuffer(f"{ub.name}_dup{k}", ub.shape, ub.kind, ub.type,
                              list(ub.inputs) + [q]) for k, q in enumerate(outs)]
    if banking.banks == 1:
        return [UnifiedBuffer(ub.name, ub.shape, ub.kind, ub.type, list(ub.inputs) + list(outs))]
    name = buffer_name(ub)
    ctx = ub.ports[0].domain.get_ctx()
    ids = bank_id_map(name, banking.factors, ctx)
    offs = offset_map(name, banking.factors, ctx)
    out = []
    for bank in itertools.product(*[range(f) for f in banking.factors if f > 1]):
        bank_set = ids.intersect_range(isl.Set.read_from_str(
            ctx, f"{{ bank[{', '.join(map(str, bank))}] }}")).domain()
        tag = "_".join(map(str, bank))
        ports = []
        for p in list(ub.inputs) + list(outs):
            r = _restrict(p, bank_set, offs, p.name)
            if r is not None:
                ports.append(r)
        if any(p.direction == "out" for p in ports):
            shape = None if ub.shape is None else [-(-s // f) for s, f in
                                                   zip(ub.shape, banking.factors)]
            out.append(UnifiedBuffer(f"{ub.name}_bank{tag}", shape, ub.kind, ub.type, ports))
    if not out:
        raise MappingError(f"buffer {ub.name}: banking left no bank with a reader")
    return out
