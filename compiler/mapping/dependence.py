"""Dependence-distance analysis (thesis §5.1.1, eqs. 5.1–5.3, Tables 5.1–5.2).

For an input port ``p_i`` and an output port ``p_o`` of a unified buffer:

* ``t2addr[p] = Inv(sched[p]).Apply(access_map[p])``                       (eq. 5.2)
* ``t_write2t_read[p_i, p_o] = t2addr[p_i].Apply(Inv(t2addr[p_o]))``       (eq. 5.1)
* ``t_diff[p_i, p_o] = Delta(t_write2t_read[p_i, p_o])``                   (eq. 5.3)

A pair whose ``t_diff`` is one constant is a channel with constant delay: a shift register.
:func:`value_flow` refines eq. 5.1 for buffers whose elements are written more than once (a
read sees only the *latest* write that landed by its cycle), and :func:`constant_distances`
uses it, so a delay is only proposed when the delayed input stream carries exactly the value
every read needs.
"""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from ..ir.ubuf import UBPort, UnifiedBuffer
from . import flow_table
from .common import t2addr


def write_to_read(pin: UBPort, pout: UBPort) -> isl.Map:
    """Eq. 5.1: ``{ [t_write] -> [t_read] }`` for every write and read of the same element."""
    return t2addr(pin).apply_range(t2addr(pout).reverse())


def time_differences(pin: UBPort, pout: UBPort) -> isl.Set:
    """Eq. 5.3: ``Delta(t_write2t_read)``, the set of ``t_read - t_write``."""
    return write_to_read(pin, pout).deltas()


def set_values(s: isl.Set, limit: int = 64) -> list[int] | None:
    """The integers of a one-dimensional set, or ``None`` when it has more than ``limit``
    (found by repeated lexmin, so a large set is never enumerated)."""
    out: list[int] = []
    rest = s
    while not rest.is_empty():
        if len(out) == limit:
            return None
        lo = rest.dim_min_val(0)
        if not lo.is_int():
            return None
        v = lo.to_python()
        out.append(v)
        rest = rest.intersect(isl.Set.read_from_str(s.get_ctx(), f"{{ [x] : x > {v} }}"))
    return out


def value_flow(ub: UnifiedBuffer, pout: UBPort) -> isl.Map:
    """``{ [t_read] -> [k, t_write] }``: for every read of ``pout``, the input port number ``k``
    and the landing cycle of the latest write of the same element with ``t_write <= t_read``.
    Reads with no such write are absent from the domain."""
    ctx = pout.domain.get_ctx()
    reads = t2addr(pout)
    cands = None
    for k, pin in enumerate(ub.inputs):
        pairs = reads.apply_range(t2addr(pin).reverse())          # [t_r] -> [t_w], same element
        pairs = pairs.intersect(isl.Map.read_from_str(ctx, "{ [tr] -> [tw] : tw <= tr }"))
        tagged = pairs.apply_range(isl.Map.read_from_str(ctx, f"{{ [tw] -> [{k}, tw] }}"))
        # latest by cycle, then port number
        tagged = tagged.apply_range(isl.Map.read_from_str(ctx, "{ [k, tw] -> [tw, k] }"))
        cands = tagged if cands is None else cands.union(tagged)
    if cands is None:
        return isl.Map.read_from_str(ctx, "{ [tr] -> [k, tw] : false }")
    latest = cands.lexmax()
    return latest.apply_range(isl.Map.read_from_str(ctx, "{ [tw, k] -> [k, tw] }"))


@dataclass(frozen=True)
class Distance:
    """An output port fed entirely by one input port with a constant delay (Table 5.2 row)."""
    pin: str
    pout: str
    delay: int


def read_times(pout: UBPort) -> isl.Set:
    return t2addr(pout).domain()


def single_assignment(ub: UnifiedBuffer) -> bool:
    """Every element is written at most once (each input port injective, their element sets
    disjoint): then a read's value flow is simply the write of the same element (eq. 5.1)."""
    elems = []
    for pin in ub.inputs:
        acc = pin.access.intersect_domain(pin.domain)
        if not acc.is_injective():
            return False
        elems.append(acc.range())
    return all(elems[i].intersect(elems[j]).is_empty()
               for i in range(len(elems)) for j in range(i + 1, len(elems)))


def _constant_single_assignment(ub: UnifiedBuffer, pout: UBPort) -> Distance | None:
    reads = read_times(pout)
    found = None
    for pin in ub.inputs:
        pairs = write_to_read(pin, pout)                 # [t_w] -> [t_r], same element
        if pairs.is_empty():
            continue
        if found is not None:
            return None                                  # values from two input ports
        found = (pin, pairs)
    if found is None:
        return None
    pin, pairs = found
    values = set_values(pairs.deltas(), limit=1)
    if values is None or len(values) != 1 or values[0] < 0:
        return None
    if not reads.is_subset(pairs.range()):
        return None                                      # some read has no writer
    return Distance(pin.name, pout.name, values[0])


def constant_distances(ub: UnifiedBuffer) -> dict[str, Distance]:
    """Every output port of ``ub`` whose reads all take the value of one input port written a
    constant number of cycles earlier (the data structure of §5.1.1), keyed by output port.
    Buffers whose ports are affine box streams are evaluated on the enumerated streams
    (:mod:`.flow_table`, the same finite sets); otherwise single-assignment buffers use
    eqs. 5.1–5.3 directly and others the latest-write value flow."""
    out: dict[str, Distance] = {}
    ft = flow_table.tables(ub)
    if ft is not None:
        # the same sets enumerated (:mod:`.flow_table`): the latest write of each read
        for pout in ub.outputs:
            d = flow_table.constant_distance(ft, pout.name)
            if d is not None and d[1] >= 0:
                out[pout.name] = Distance(ub.inputs[d[0]].name, pout.name, d[1])
        return out
    if single_assignment(ub):
        for pout in ub.outputs:
            d = _constant_single_assignment(ub, pout)
            if d is not None:
                out[pout.name] = d
        return out
    for pout in ub.outputs:
        ctx = pout.domain.get_ctx()
        vf = value_flow(ub, pout)
        if vf.is_empty() or not vf.domain().is_equal(read_times(pout)):
            continue                      # some read has no writer in this buffer
        ports = set_values(vf.range().project_out(isl.dim_type.set, 1, 1))
        if ports is None or len(ports) != 1:
            continue
        k = ports[0]
        delta = vf.apply_range(isl.Map.read_from_str(ctx, "{ [k, tw] -> [tw] }")).reverse()
        values = set_values(delta.deltas(), limit=1)
        if values is not None and len(values) == 1:
            out[pout.name] = Distance(ub.inputs[k].name, pout.name, values[0])
    return out
