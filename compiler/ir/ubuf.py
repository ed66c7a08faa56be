"""UnifiedBuffer: the push-memory abstraction (thesis ch. 3, Fig. 3.2; Fig. 4.9 / 4.18 with
schedules). One per buffer; each load is an output port and each store an input port, and
every port is a triple of isl objects: iteration domain, access map (instance -> element) and
schedule (instance -> cycle).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import islpy as isl


@dataclass
class UBPort:
    name: str            # e.g. blur_ld1 / brighten_st
    op: str
    direction: str       # "in" (a store writes the buffer) or "out" (a load reads it)
    domain: isl.Set
    access: isl.Map
    schedule: isl.Map
    latency: int = 0     # of the op: a store's value lands at schedule + latency

    def to_dict(self) -> dict:
        return {"name": self.name, "op": self.op, "direction": self.direction,
                "domain": str(self.domain), "access": str(self.access),
                "schedule": str(self.schedule), "latency": self.latency}


@dataclass
class UnifiedBuffer:
    name: str
    shape: list[int] | None
    kind: str                      # input / output / temp
    type: str
    ports: list[UBPort] = field(default_factory=list)
    live_words: int | None = None  # from compiler.schedule.liveness, when computed

    @property
    def inputs(self) -> list[UBPort]:
        return [p for p in self.ports if p.direction == "in"]

    @property
    def outputs(self) -> list[UBPort]:
        return [p for p in self.ports if p.direction == "out"]

    def to_dict(self) -> dict:
        return {"name": self.name, "shape": self.shape, "kind": self.kind, "type": self.type,
                "live_words": self.live_words, "ports": [p.to_dict() for p in self.ports]}

    def to_json(self, **kw) -> str:
        return json.dumps(self.to_dict(), **kw)

    def to_isl(self) -> str:
        """Thesis Fig. 3.2 style listing of the ports."""
        lines = [f"unified buffer {self.name} ({self.kind}, {self.type}"
                 + (f", shape {self.shape}" if self.shape else "")
                 + (f", live {self.live_words} words" if self.live_words is not None else "")
                 + ")"]
        for p in self.ports:
            lines.append(f"  {p.direction:3s} port {p.name}:")
            lines.append(f"    iteration domain: {p.domain}")
            lines.append(f"    access map:       {p.access}")
            lines.append(f"    schedule:         {p.schedule}")
        return "\n".join(lines) + "\n"
