"""Schedule: per op an affine time function of its loop variables (thesis §4.2, §4.3.1).

``time(op[i]) = offset + sum(coeffs[k] * i[k])`` counts *unstalled* cycles after start
(§4.2.4); ``latency`` is the op's issue-to-result latency (eq. 4.7, possibly 0). An instance
occupies its compute unit in cycle ``time`` and its stored value is available from
``time + latency``. The completion time of a schedule is ``max(time + max(latency, 1))`` over all
instances (the cycles until every result is stored, counting the issue cycle).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Callable

import islpy as isl


@dataclass
class OpSchedule:
    op: str
    dims: tuple[str, ...]                    # loop variables, outermost first
    bounds: tuple[tuple[int, int], ...]      # (start, extent) per dim
    coeffs: tuple[int, ...]
    offset: int
    latency: int

    def time(self, env: dict[str, int]) -> int:
        return self.offset + sum(c * env[d] for d, c in zip(self.dims, self.coeffs))

    def expr(self) -> str:
        parts = [f"{c}*{d}" if c != 1 else d for d, c in zip(self.dims, self.coeffs) if c]
        parts.append(str(self.offset))
        return " + ".join(parts).replace("+ -", "- ")

    def isl_map(self, ctx: isl.Context | None = None) -> isl.Map:
        """``{ op[dims] -> [time] }`` restricted to the iteration domain."""
        ctx = ctx or isl.DEFAULT_CONTEXT
        cons = " and ".join(f"{s} <= {d} < {s + e}" for d, (s, e) in zip(self.dims, self.bounds))
        head = f"{self.op}[{', '.join(self.dims)}]"
        return isl.Map.read_from_str(ctx, f"{{ {head} -> [{self.expr()}]"
                                     + (f" : {cons} }}" if cons else " }"))

    def first(self) -> int:
        return self.offset + sum(c * (s if c >= 0 else s + e - 1)
                                 for c, (s, e) in zip(self.coeffs, self.bounds))

    def last(self) -> int:
        return self.offset + sum(c * (s + e - 1 if c >= 0 else s)
                                 for c, (s, e) in zip(self.coeffs, self.bounds))

    def end(self) -> int:
        """Cycle at which the last instance's result is available."""
        return self.last() + max(1, self.latency)

    def to_dict(self) -> dict:
        return {"op": self.op, "dims": list(self.dims), "bounds": [list(b) for b in self.bounds],
                "coeffs": list(self.coeffs), "offset": self.offset, "latency": self.latency,
                "isl": str(self.isl_map())}

    @staticmethod
    def from_dict(d: dict) -> "OpSchedule":
        return OpSchedule(d["op"], tuple(d["dims"]), tuple(tuple(b) for b in d["bounds"]),
                          tuple(d["coeffs"]), d["offset"], d["latency"])


@dataclass
class Schedule:
    """A cycle-accurate schedule of every op of a program, and how it was obtained."""
    program: str
    policy: str
    ops: dict[str, OpSchedule]
    info: dict = field(default_factory=dict)     # policy details: II, fusion groups, MRT, ...

    @property
    def completion(self) -> int:
        return max((s.end() for s in self.ops.values()), default=0)

    def time_fn(self) -> Callable[[str, dict], int]:
        """``f(op_name, env) -> cycle`` for the interpreter's ``order=`` argument. Affine in the
        loop variables, so it is *vectorized* (``compiler.interp.vectorized``): given every loop
        variable as a numpy array it gives every instance's cycle at once."""
        ops = self.ops

        def time(name: str, env: dict) -> int:
            return ops[name].time(env)
        time.vectorized = True
        return time

    def to_dict(self) -> dict:
        return {"program": self.program, "policy": self.policy, "completion": self.completion,
                "ops": [s.to_dict() for s in self.ops.values()], "info": self.info}

    def to_json(self, **kw) -> str:
        return json.dumps(self.to_dict(), **kw)

    @staticmethod
    def from_dict(d: dict) -> "Schedule":
        return Schedule(d["program"], d["policy"],
                        {o["op"]: OpSchedule.from_dict(o) for o in d["ops"]}, d.get("info", {}))

    def to_isl(self) -> str:
        lines = [f"# Schedule {self.program} ({self.policy}), completion {self.completion}"]
        for s in self.ops.values():
            lines.append(f"{s.op} (latency {s.latency}): {s.isl_map()}")
        return "\n".join(lines) + "\n"
