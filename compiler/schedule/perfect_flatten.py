"""Loop perfection and loop flattening (thesis §4.3.4, Fig. 4.16).

A pipeline stage whose loops form a *spine* (every loop body holds at most one sub-loop, plus
ops before or after it) is perfected: ops before the sub-loop run, guarded, in its first
iteration and ops after it in its last one (Fig. 4.16b); the spine is then flattened into one
loop over ``prod(extents)`` iterations (Fig. 4.16c), pipelined at II = 1, so no pipeline flush
is paid per outer iteration. In affine form an op at spine level k gets time
``II * (sum_{j<=k} stride_j * (v_j - start_j) [+ sum_{j>k} stride_j * (extent_j - 1)]) + D``
with ``stride_j`` the product of the inner extents, the bracket for ops after the sub-loop, and
``D`` its delay after the ops it reads from in the perfected body. ``II`` is raised above 1
only when a recurrence inside the stage needs it (checked with isl by the caller).
"""
from __future__ import annotations

from ..ir.poly import PolyProgram
from ..ir.program import Loop, Op
from .hls import Block, chain_delays


def spine(node) -> tuple[list[Loop], list[tuple[Op, int, str]]] | None:
    """``(loops, [(op, level, where)])`` with ``where`` in before/inner/after, or None when a
    loop body holds two sub-loops."""
    loops: list[Loop] = []
    ops: list[tuple[Op, int, str]] = []
    after: list[tuple[Op, int, str]] = []
    cur = node
    while True:
        loops.append(cur)
        subs = [c for c in cur.children if isinstance(c, Loop)]
        if len(subs) > 1:
            return None
        lv = len(loops) - 1
        if not subs:
            ops += [(c, lv, "inner") for c in cur.children]
            break
        k = cur.children.index(subs[0])
        ops += [(c, lv, "before") for c in cur.children[:k]]
        after = [(c, lv, "after") for c in cur.children[k + 1:]] + after
        cur = subs[0]
    return loops, ops + after


def flatten(node, poly: PolyProgram, ii: int = 1, row: int | None = None,
            gaps: dict[str, int] | None = None) -> Block | None:
    """Perfect and flatten the subtree ``node`` (a Loop); None if it is not a spine.

    ``row``: the innermost loop's interval in iterations when it is padded beyond its extent
    (the wide-fetch cycle padding of :mod:`.fetch_pad`); the outer strides count ``row``
    instead of the innermost extent, so each row starts ``ii * row`` cycles after the last.
    ``gaps``: iterations added per iteration of the named loops (:func:`.fetch_pad
    .shift_gaps`): a loop's stride is its body's iterations plus its gap."""
    if isinstance(node, Op) or not isinstance(node, Loop):
        return None
    sp = spine(node)
    if sp is None:
        return None
    loops, ops = sp
    extents = [lp.extent for lp in loops]
    if row is not None:
        extents[-1] = max(extents[-1], row)
    strides = [1] * len(loops)
    for k in reversed(range(len(loops) - 1)):
        strides[k] = strides[k + 1] * extents[k + 1] + (gaps or {}).get(loops[k].name, 0)
    delays = chain_delays([o for o, _, _ in ops], poly)
    out = Block()
    end = 0
    for (op, lv, where), d in zip(ops, delays):
        coeffs = {lp.name: ii * strides[j] for j, lp in enumerate(loops[:lv + 1])}
        off = d - sum(ii * strides[j] * lp.start for j, lp in enumerate(loops[:lv + 1]))
        if where == "after":
            off += ii * sum(strides[j] * (lp.extent - 1) for j, lp in enumerate(loops)
                            if j > lv)
        out.ops[op.name] = (coeffs, off)
        last = off + sum(c * (lp.start + lp.extent - 1) for lp in loops[:lv + 1]
                         for c in [coeffs[lp.name]])
        end = max(end, last + max(1, poly.ops[op.name].latency))
    out.latency = end
    return out
