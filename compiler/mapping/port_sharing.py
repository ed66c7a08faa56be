"""Output-port sharing (thesis §5.1.4).

Among the output ports that shift-register introduction could not serve (no constant distance
from an input port), a port ``q`` can be fed from another output port ``p`` through a delay of
``d`` cycles when every read of ``q`` at cycle ``t`` sees the same value as the read of ``p`` at
``t - d``: same element and same latest writer (:func:`~.dependence.value_flow`). Then one
memory fetch serves both consumers and ``q`` needs no memory port. The result is the
out-to-out delay table of §5.1.4; delays become wires, registers or memories like in-to-out
ones (:func:`.shift_register.segment_kind`).
"""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from ..ir.ubuf import UBPort, UnifiedBuffer
from . import flow_table
from .common import shift_map, t2addr
from .dependence import set_values, single_assignment, value_flow


@dataclass(frozen=True)
class Share:
    leader: str          # the output port that reads the memory
    follower: str        # the output port fed from the leader's stream
    delay: int


def shares_with(ub: UnifiedBuffer, p: UBPort, q: UBPort, max_candidates: int = 16) -> int | None:
    """The smallest delay ``d >= 0`` with which ``q`` can be fed from ``p``, or ``None``."""
    ctx = p.domain.get_ctx()
    same_elem = t2addr(q).apply_range(t2addr(p).reverse())          # [t_q] -> [t_p]
    cands = set_values(same_elem.reverse().deltas().intersect(
        isl.Set.read_from_str(ctx, "{ [d] : d >= 0 }")), limit=max_candidates)
    if not cands:
        return None
    tq, tp = t2addr(q), t2addr(p)
    sa = single_assignment(ub)
    vf_p = vf_q = None
    for d in cands:
        sh = shift_map(ctx, d)
        if not tq.is_subset(sh.reverse().apply_range(tp)):
            continue                                  # q(t) is not the element p read at t-d
        if sa:
            return d                                  # one write per element: same value
        if vf_p is None:
            vf_p, vf_q = value_flow(ub, p), value_flow(ub, q)
        if vf_q.is_subset(sh.reverse().apply_range(vf_p)):
            return d
    return None


def share_output_ports(ub: UnifiedBuffer, ports: list[str]) -> list[Share]:
    """Greedy §5.1.4 over ``ports`` (names of output ports still needing a memory port): each
    port is fed from the earliest leader it can share with, else becomes a leader. Delays are
    found on the enumerated streams (:func:`.flow_table.share_delay`, the smallest valid delay)
    when every port is an affine box stream, else with isl (:func:`shares_with`)."""
    by_name = {p.name: p for p in ub.outputs}
    leaders: list[UBPort] = []
    shares: list[Share] = []
    ft = flow_table.tables(ub) if len(ports) > 1 else None
    if ft is not None:
        sa, flows = single_assignment(ub), {}

        def share(p: UBPort, q: UBPort) -> int | None:
            return flow_table.share_delay(ft, p.name, q.name, sa, flows)
    else:
        def share(p: UBPort, q: UBPort) -> int | None:
            return shares_with(ub, p, q)
    for name in ports:
        q = by_name[name]
        for p in leaders:
            d = share(p, q)
            if d is not None:
                shares.append(Share(p.name, q.name, d))
                break
            d = share(q, p)
            if d is not None and not any(s.follower == p.name for s in shares):
                # q runs ahead of p: q becomes the leader of p's group
                leaders[leaders.index(p)] = q
                for i, s in enumerate(shares):
                    if s.leader == p.name:
                        shares[i] = Share(q.name, s.follower, s.delay + d)
                shares.append(Share(q.name, p.name, d))
                break
        else:
            leaders.append(q)
    return shares
