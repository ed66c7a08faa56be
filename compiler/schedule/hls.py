"""The HLS loop scheduler (thesis §4.2.1, eqs. 4.6–4.9), shared by the policies.

Each node of the loop-nest AST gets a delay within its parent and each loop an initiation
interval; a node's latency follows eq. 4.8 (``L_loop = II * (trip - 1) + L_iter``) and eq. 4.9
(``L_iter = max(D_i + L_i)``). The result is one affine time function per op, relative to the
start of the scheduled subtree.

* ``pipelined=False`` (the sequential baseline, thesis §4.3 intro): children run one after the
  other (``D_i`` = cumulative latency of the previous children) and every loop's II equals the
  latency of its body, so nothing overlaps.
* ``pipelined=True``: innermost loops (bodies of ops only) run at II = 1 with each op delayed
  after the sibling ops it reads from; outer loops keep II = latency of their body (a pipeline
  flush per iteration, which loop perfection and flattening remove, :mod:`.perfect_flatten`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..ir.poly import PolyProgram
from ..ir.program import Loop, Op, Program
from ..ir.schedule import OpSchedule


@dataclass
class Block:
    """Affine times of the ops of a subtree: op -> (coeff per loop variable, offset)."""
    ops: dict[str, tuple[dict[str, int], int]] = field(default_factory=dict)
    latency: int = 0

    def shifted(self, delay: int) -> "Block":
        return Block({n: (dict(c), o + delay) for n, (c, o) in self.ops.items()}, self.latency)

    def merge(self, other: "Block") -> None:
        self.ops.update(other.ops)

    def to_op_schedules(self, poly: PolyProgram, delay: int = 0) -> dict[str, OpSchedule]:
        out = {}
        for name, (coeffs, off) in self.ops.items():
            op = poly.ops[name]
            out[name] = OpSchedule(name, op.dims, op.bounds,
                                   tuple(coeffs.get(d, 0) for d in op.dims), off + delay,
                                   op.latency)
        return out


def op_block(op: Op, poly: PolyProgram) -> Block:
    return Block({op.name: ({}, 0)}, max(1, poly.ops[op.name].latency))


def reads_from(consumer: Op, producer: Op, poly: PolyProgram) -> bool:
    """Whether ``consumer`` reads an element ``producer`` writes (isl: the images of the
    domains under the access maps intersect)."""
    written = poly.ops[producer.name].store
    return any(a.buffer == written.buffer and not a.access.range().intersect(
        written.access.range()).is_empty() for a in poly.ops[consumer.name].loads)


def chain_delays(ops: list[Op], poly: PolyProgram) -> list[int]:
    """Delays of sibling ops in one pipelined iteration: after every earlier sibling read."""
    delays: list[int] = []
    for k, op in enumerate(ops):
        d = 0
        for j in range(k):
            if reads_from(op, ops[j], poly):
                d = max(d, delays[j] + poly.ops[ops[j].name].latency)
        delays.append(d)
    return delays


def loop_block(loop: Loop, body: list[Block], delays: list[int], ii: int) -> Block:
    """Compose child blocks into one loop (eqs. 4.8, 4.9)."""
    out = Block()
    for blk, d in zip(body, delays):
        for name, (coeffs, off) in blk.ops.items():
            c = dict(coeffs)
            c[loop.name] = ii
            out.ops[name] = (c, off + d - ii * loop.start)
    l_iter = max((d + b.latency for b, d in zip(body, delays)), default=1)
    out.latency = ii * (loop.extent - 1) + l_iter
    return out


def schedule_node(node, poly: PolyProgram, pipelined: bool) -> Block:
    """Schedule a subtree (an Op, a Loop or the whole Program)."""
    if isinstance(node, Op):
        return op_block(node, poly)
    children = node.children
    if pipelined and children and all(isinstance(c, Op) for c in children) \
            and isinstance(node, Loop):
        body = [op_block(c, poly) for c in children]
        return loop_block(node, body, chain_delays(children, poly), 1)
    body = [schedule_node(c, poly, pipelined) for c in children]
    delays, acc = [], 0
    for b in body:
        delays.append(acc)
        acc += b.latency
    if isinstance(node, Program):
        out = Block(latency=acc)
        for b, d in zip(body, delays):
            out.merge(b.shifted(d))
        return out
    return loop_block(node, body, delays, max(1, acc))
