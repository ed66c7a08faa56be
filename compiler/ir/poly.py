"""PolyProgram: the polyhedral view of a :class:`~compiler.ir.program.Program` (thesis §4.1,
eqs. 4.1–4.5; docs/design.md §3).

Every op becomes a statement with an iteration domain and one access map per load and for its
store. Conventions (documented once, used everywhere):

* An op instance is ``op[v0, v1, ...]`` with the enclosing loop variables **outermost first**,
  e.g. ``blur[t, y_bl, x_bl]`` (the thesis prints ``Blur(x, y, t)``; only the order differs).
* Buffer elements keep the Program's index order (Halide's: first index innermost), e.g.
  ``brighten[x_bl + 1, y_bl]``.
* ``order`` is the program (sequential) order as a 2d+1 schedule ``op[i] -> [c0, i0, c1, i1, ...]``
  (child positions interleaved with loop variables, padded with zeros): lexicographic order of
  these vectors is the order in which a single-threaded CPU would run the instances.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import islpy as isl


@dataclass
class PolyAccess:
    """One logical port: ``op`` reads (``kind='load'``, ``slot`` = argument number) or writes
    (``kind='store'``) ``buffer`` through ``access`` (an isl map from op instances to elements)."""
    op: str
    buffer: str
    kind: str
    slot: int
    access: isl.Map

    @property
    def port_name(self) -> str:
        return f"{self.op}_{'st' if self.kind == 'store' else f'ld{self.slot}'}"

    def to_dict(self) -> dict:
        return {"op": self.op, "buffer": self.buffer, "kind": self.kind, "slot": self.slot,
                "access": str(self.access)}


@dataclass
class PolyOp:
    """A statement: domain (isl set named by the op), loop variables outermost first with their
    (start, extent), loads and store, compute unit, kernel depth and latency (cycles from issue
    to the stored result, at least 1: eq. 4.7)."""
    name: str
    dims: tuple[str, ...]
    bounds: tuple[tuple[int, int], ...]
    domain: isl.Set
    loads: list[PolyAccess]
    store: PolyAccess
    unit: str
    kernel: str
    latency: int
    order: isl.Map

    def to_dict(self) -> dict:
        return {"name": self.name, "dims": list(self.dims),
                "bounds": [list(b) for b in self.bounds], "domain": str(self.domain),
                "loads": [a.to_dict() for a in self.loads], "store": self.store.to_dict(),
                "unit": self.unit, "kernel": self.kernel, "latency": self.latency,
                "order": str(self.order)}


@dataclass
class PolyProgram:
    """All statements of a program, in program order, with the buffers they touch."""
    name: str
    ops: dict[str, PolyOp]
    buffers: dict[str, dict]          # name -> {"shape": [...] | None, "kind": ..., "type": ...}
    ctx: isl.Context = field(repr=False, default=None)

    def accesses(self, buffer: str | None = None) -> list[PolyAccess]:
        out = []
        for op in self.ops.values():
            for a in op.loads + [op.store]:
                if buffer is None or a.buffer == buffer:
                    out.append(a)
        return out

    def writes(self, buffer: str) -> isl.UnionMap:
        return _union([a.access for a in self.accesses(buffer) if a.kind == "store"], self.ctx)

    def order(self) -> isl.UnionMap:
        return _union([op.order for op in self.ops.values()], self.ctx)

    def domains(self) -> isl.UnionSet:
        out = isl.UnionSet.empty(isl.Space.params_alloc(self.ctx, 0))
        for op in self.ops.values():
            out = out.union(isl.UnionSet.from_set(op.domain))
        return out

    def to_dict(self) -> dict:
        return {"program": self.name, "buffers": self.buffers,
                "ops": [op.to_dict() for op in self.ops.values()]}

    def to_isl(self) -> str:
        """Human-readable ISL text: domains, access maps, program order."""
        lines = [f"# PolyProgram {self.name}"]
        for op in self.ops.values():
            lines.append(f"{op.name}: unit={op.unit} latency={op.latency}")
            lines.append(f"  domain: {op.domain}")
            for a in op.loads:
                lines.append(f"  load{a.slot}: {a.access}")
            lines.append(f"  store: {op.store.access}")
            lines.append(f"  order: {op.order}")
        return "\n".join(lines) + "\n"


def _union(maps, ctx) -> isl.UnionMap:
    out = isl.UnionMap.empty(isl.Space.params_alloc(ctx, 0))
    for m in maps:
        out = out.union(isl.UnionMap.from_map(m))
    return out
