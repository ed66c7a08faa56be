"""Bank selection: an output port whose reads span banks written by different input ports
(thesis §5.2 fallback after duplication; Table 7.7 counts the "bank selection controllers").

Cyclic banking (§5.2.1) separates concurrent *writers*; a reader that walks the whole buffer
(a demosaic unrolled over 2x2 Bayer quads writes each quad through four ports while the colour
correction reads one pixel per cycle) then needs every bank, and duplication
would give each copy all the writers, more than a memory's input ports. Instead the port is
split by writer: sub-port ``k`` holds the read instances whose element input port ``k`` writes.
Each sub-port is an ordinary output port (typically at a constant dependence distance from its
writer, so it becomes a wire, a register chain or a delay memory, §5.1), and a
:class:`~compiler.ir.ubimpl.BankSelect` merges the sub-streams, which fire at disjoint cycles,
back into the logical port.
"""
from __future__ import annotations

import itertools
from dataclasses import replace

from ..ir.ubimpl import BankSelect
from ..ir.ubuf import UBPort, UnifiedBuffer
from .common import MappingError, fire_disjoint


class SpansBanks(MappingError):
    """An output port reads several banks (the case :func:`split_by_writer` handles)."""


def split_port(port: UBPort, inputs: list[UBPort]) -> list[UBPort] | None:
    """The sub-ports of ``port`` by the input port that writes the element each instance reads
    (``None`` when fewer than two writers are involved or two writers write one element)."""
    acc = port.access.intersect_domain(port.domain)
    pieces = []
    for k, w in enumerate(inputs):
        elems = w.access.intersect_domain(w.domain).range()
        dom = acc.intersect_range(elems).domain().coalesce()
        if not dom.is_empty():
            pieces.append((k, dom))
    if len(pieces) < 2:
        return None
    if any(not a.intersect(b).is_empty() for (_i, a), (_j, b) in
           itertools.combinations(pieces, 2)):
        return None
    return [replace(port, name=f"{port.name}_w{k}", domain=dom,
                    access=acc.intersect_domain(dom),
                    schedule=port.schedule.intersect_domain(dom)) for k, dom in pieces]


def split_by_writer(ub: UnifiedBuffer, drop: set[str] = frozenset()
                    ) -> tuple[UnifiedBuffer, list[BankSelect]] | None:
    """``ub`` with every output port that reads elements of several writers split by writer,
    and the selects that rebuild the logical ports; ``None`` when no port splits. Output ports
    in ``drop`` (served otherwise, e.g. by port sharing) are left out."""
    outs, selects = [], []
    for p in ub.outputs:
        if p.name in drop:
            continue
        subs = split_port(p, ub.inputs)
        if subs is None:
            outs.append(p)
            continue
        if not fire_disjoint(subs):
            outs.append(p)            # two sub-streams in one cycle: no single select
            continue
        outs += subs
        selects.append(BankSelect([s.name for s in subs], p.name))
    if not selects:
        return None
    return (UnifiedBuffer(ub.name, ub.shape, ub.kind, ub.type, list(ub.inputs) + outs,
                          ub.live_words), selects)
