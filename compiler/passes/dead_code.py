"""Dead-code elimination, a middle-end pass: Program -> Program (docs/design.md §3,
docs/scheduling.md "Dead code").

An op is *live* when it stores into an output buffer, or into a buffer that a live op loads;
every other op computes values nothing reads. The schedulers give every op a place in the
pipeline and buffer extraction gives every stored buffer its memory, so a dead stage would
take hardware and, having no consumer, keep its start where nothing bounds it (thesis §4.3.2
schedules producers against their consumers); the pass removes such ops before scheduling.

Liveness is by buffer, not by element: an op that writes any buffer a live op reads is kept
(conservative; the polyhedral, element-wise view of a tile's needs is the tiler's,
``compiler.tiling.region``). Loops left without an op are removed with them, and so are the
temporary buffers no remaining op touches; input and output buffers keep their declarations
(the host's view of the app does not change). The pass is the identity on a Program without
dead ops (the same object is returned).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..ir.program import Op, Program


@dataclass
class DeadCode:
    """The Program without its dead ops, and the names of the ops removed (program order)."""
    program: Program
    removed: list[str] = field(default_factory=list)


def live_ops(program: Program) -> set[str]:
    """Names of the ops whose values reach an output buffer (module docstring)."""
    ops = program.ops()
    writers: dict[str, list[Op]] = {}
    for op in ops:
        writers.setdefault(op.store.buffer, []).append(op)
    live: set[str] = set()
    work = [op for op in ops if program.buffers[op.store.buffer].kind == "output"]
    while work:
        op = work.pop()
        if op.name in live:
            continue
        live.add(op.name)
        for ld in op.loads:
            work.extend(w for w in writers.get(ld.buffer, ()) if w.name not in live)
    return live


def eliminate_dead_code(program: Program) -> DeadCode:
    """``program`` without the ops that are not :func:`live_ops` (module docstring)."""
    live = live_ops(program)
    removed = [op.name for op in program.ops() if op.name not in live]
    if not removed:
        return DeadCode(program, [])
    data = program.to_dict()

    def keep(node: dict) -> dict | None:
        if "op" in node:
            return node if node["op"] in live else None
        children = [c for c in (keep(c) for c in node["children"]) if c is not None]
        return dict(node, children=children) if children else None

    data["children"] = [c for c in (keep(c) for c in data["children"]) if c is not None]
    used = {a["buffer"] for n in _op_nodes(data["children"])
            for a in n["loads"] + [n["store"]]}
    data["buffers"] = [b for b in data["buffers"] if b["kind"] != "temp" or b["name"] in used]
    return DeadCode(Program.from_dict(data).validate(), removed)


def _op_nodes(nodes: list[dict]):
    for n in nodes:
        if "op" in n:
            yield n
        else:
            yield from _op_nodes(n["children"])


__all__ = ["DeadCode", "live_ops", "eliminate_dead_code"]
