"""Loop order of non-unrolled reductions, a middle-end pass: Program -> Program (docs/design.md
§3, docs/scheduling.md "Non-unrolled reductions").

A reduction that is not unrolled is an *update* op that loads and stores its accumulator at the
same index (``acc(i) += w(r, i) * v(r)``): its loops are *pure* (they appear in the store
index: each instance writes its own element) or *reduction* loops (they do not: every
iteration rewrites the same element). Written as a new user writes it, in Halide's default
order, the reduction loop is innermost: consecutive instances read the value the previous one
wrote, a loop-carried dependence one iteration apart. Its distance in cycles is the op's
latency (a load, the multiply-add, the write), so no schedule issues one instance per cycle
(thesis §4.3, modulo scheduling: the II of a loop must meet its dependences) and no wide-fetch memory can
hold an element read right after its write (§5.5.3: a read needs ``2 x FW`` writes after its
word is complete). The scheduler ran such a matrix-vector product at three cycles per
multiply-accumulate with most of its matrix live (buffer mapping can hold the accumulator
only in a register file, :func:`compiler.mapping.map_buffer.map_buffer`).

The thesis's DNN apps put the pixel loops inside the reduction loops (§7.3.2: the
accumulator's initialization, update read, update write and drain on one PUB; the update reads
a partial sum one sweep after writing it), and Fig. 5.7 example B "reorder[s] the loop to scan
across the whole row and compute a partial sum". This pass does that for a
reduction written the other way: in the op's *band* (the loops enclosing only the op, the
innermost loops of its nest), the innermost pure loops, as few as make the product of their
extents at least ``min_distance[op]`` (or all of them), move below the band's reduction loops;
the other loops keep their order. An element's accumulation then recurs once per product of
those extents, a constant reuse distance the memories serve (a delay line or a circular buffer
of that many words, docs/mapping.md), and the op issues once per cycle.

The rewrite is exact: each element's updates keep their order (the reduction loops keep their
relative order, and the store index is one distinct loop variable per dimension, so distinct
pure iterations write distinct elements), and the op reads no other element of its accumulator.

Its operands follow: a buffer the reordered op alone reads, written by one op that reads only
the host's inputs (a ``stream_to_accelerator`` copy, alone in its nest), at one distinct loop
variable per dimension, gets that writer's loops reordered to the order the reduction now walks
the buffer's dimensions, so the operand is streamed in the order it is consumed (the weight
matrix of the matrix-vector product arrives column by column and is read as it arrives instead
of being held whole). Reordering such a copy is exact: it reads no on-array value.

The pass applies to update ops whose band's innermost loop is a reduction loop and has a pure
loop inside the band; other Programs are returned as they are (the same object).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..ir.index import Index
from ..ir.program import Loop, Op, Program


@dataclass
class ReductionOrder:
    """The Program after the pass; per reordered op, its new band order (loop names, outermost
    first), updates and their streamed operands' copies alike."""
    program: Program
    reordered: dict[str, list[str]] = field(default_factory=dict)


def band(op: Op) -> list[Loop]:
    """The loops enclosing ``op`` and nothing else (innermost loops of its nest), outermost
    first."""
    out: list[Loop] = []
    node = op.parent
    child = op
    while isinstance(node, Loop) and node.children == [child]:
        out.append(node)
        child, node = node, node.parent
    return out[::-1]


def _plain_vars(index: tuple[Index, ...]) -> list[str] | None:
    """Per dimension the loop variable an index is (one term, no constant, no floor), or
    ``None`` when some dimension is not one, or two dimensions name the same variable."""
    out = []
    for ix in index:
        if ix.floors or ix.const or len(ix.terms) != 1:
            return None
        out.append(ix.terms[0][0])
    return out if len(set(out)) == len(out) else None


def _accumulator_update(op: Op) -> bool:
    """``op`` reads its store's buffer, only at its store's index, which is one distinct loop
    variable per dimension."""
    acc = [ld for ld in op.loads if ld.buffer == op.store.buffer]
    return (bool(acc) and all(ld.index == op.store.index for ld in acc)
            and _plain_vars(op.store.index) is not None)


def reduction_band_order(op: Op, min_distance: int = 1) -> list[str] | None:
    """The new band order of an accumulator update whose innermost band loop is a reduction
    loop (module docstring), or ``None`` when the pass leaves ``op`` alone."""
    if op.store is None or not _accumulator_update(op):
        return None
    loops = band(op)
    pure = set(_plain_vars(op.store.index))
    if not loops or loops[-1].name in pure:
        return None
    sunk: list[Loop] = []
    distance = 1
    for lp in reversed(loops):
        if lp.name in pure:
            sunk.insert(0, lp)
            distance *= lp.extent
            if distance >= min_distance:
                break
    if not sunk:
        return None
    keep = [lp for lp in loops if lp not in sunk]
    return [lp.name for lp in keep + sunk]


def _rank(index: tuple[Index, ...], order: list[str]) -> list[int]:
    """Per buffer dimension, the depth in ``order`` of the innermost loop its index moves with
    (-1: none of them)."""
    return [max((order.index(v) for v, _ in ix.terms if v in order), default=-1)
            for ix in index]


def operand_order(program: Program, op: Op, order: list[str]) -> dict[str, list[str]]:
    """The streamed copies of ``op``'s operands reordered to ``op``'s band ``order`` (module
    docstring): writer op name -> its new band order, for copies whose order changes."""
    ops = program.ops()
    out: dict[str, list[str]] = {}
    for ld in op.loads:
        if ld.buffer == op.store.buffer:
            continue
        writers = [o for o in ops if o.store.buffer == ld.buffer]
        readers = [o for o in ops if any(a.buffer == ld.buffer for a in o.loads)]
        if len(writers) != 1 or readers != [op]:
            continue
        prod = writers[0]
        dims = _plain_vars(prod.store.index)
        loops = band(prod)
        if (dims is None or not prod.loads or len(loops) != len(prod.loops)
                or any(program.buffers[a.buffer].kind != "input" for a in prod.loads)
                or {lp.name for lp in loops} != set(dims)):
            continue
        rank = _rank(ld.index, order)
        new = sorted((lp.name for lp in loops), key=lambda n: rank[dims.index(n)])
        if new != [lp.name for lp in loops]:
            out[prod.name] = new
    return out


def order_reductions(program: Program,
                     min_distance: dict[str, int] | None = None) -> ReductionOrder:
    """``program`` with every non-unrolled reduction's band reordered and its streamed operands
    following (module docstring); ``min_distance[op]``: the recurrence distance in instances
    the update needs (its latency and the memory's gap; default 1: the innermost pure loop)."""
    plan: dict[str, list[str]] = {}
    for op in program.ops():
        order = reduction_band_order(op, (min_distance or {}).get(op.name, 1))
        if order is None:
            continue
        plan[op.name] = order
        plan.update(operand_order(program, op, order))
    if not plan:
        return ReductionOrder(program)
    data = program.to_dict()
    data["children"] = [_reorder(c, plan) for c in data["children"]]
    return ReductionOrder(Program.from_dict(data).validate(), plan)


def nest_chain(node: dict) -> list[dict]:
    """``node`` (a node of ``Program.to_dict``) and its only children below it, down to the
    first node with no or several children (an op ending the chain ends a band)."""
    chain = [node]
    while "loop" in chain[-1] and len(chain[-1]["children"]) == 1:
        chain.append(chain[-1]["children"][0])
    return chain


def _reorder(node: dict, plan: dict[str, list[str]]) -> dict:
    """``node`` with the band above each planned op permuted (headers only: the bounds are
    constants, so a band is a box in any order)."""
    if "op" in node:
        return node
    chain = nest_chain(node)
    leaf = chain[-1]
    if "op" in leaf and leaf["op"] in plan:
        # the chain from a node whose parent has other children down to the op is its band
        heads = {n["loop"]: n for n in chain[:-1]}
        new = leaf
        for name in reversed(plan[leaf["op"]]):
            h = heads[name]
            new = {"loop": h["loop"], "start": h["start"], "extent": h["extent"],
                   "children": [new]}
        return new
    return dict(node, children=[_reorder(c, plan) for c in node["children"]])


__all__ = ["ReductionOrder", "band", "reduction_band_order", "operand_order",
           "order_reductions", "nest_chain"]
