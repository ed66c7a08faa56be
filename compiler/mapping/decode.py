"""Controllers replayed from their register values (docs/design.md §6 level 2), the hardware's
recurrence of thesis Fig. 6.2b: :func:`decode_arrays` gives every fire of a controller from its
*encoded registers*, not from the affine form or the isl maps. Shared by the cycle models of the
memories (:mod:`.pub_model` for the PUB, :mod:`.dp_model` for the dual-port SRAMs) and by the
netlist model and the GLB of ``compiler.backend``; :class:`PUBRun` is the result of a memory
block run over whole streams.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ubgen.controller import ControllerLayout

__all__ = ["PUBRun", "decode_arrays", "decode_controller", "decode_extents"]


def decode_extents(regs: dict[str, int], layout: ControllerLayout) -> list[int]:
    """The extents of a controller's active levels, from its registers (``[]``: disabled)."""
    n = layout.name
    return [regs.get(f"{n}_extent_m1_{d}", 0) + 1 for d in range(regs.get(f"{n}_dim", 0))]


def decode_arrays(regs: dict[str, int], layout: ControllerLayout
                  ) -> tuple[np.ndarray | None, dict[str, np.ndarray]]:
    """Every fire of a controller from its register values, as arrays: the cycles (``None``
    for an untimed layout, whose fires its block triggers) and, per registered address
    generator, the addresses. The hardware's recurrence (thesis Fig. 6.2b): between fire
    ``k - 1`` and fire ``k`` exactly one level ``L`` steps, the innermost whose counter is not
    at its last value, i.e. the number of inner levels that wrap (``k`` a multiple of their
    extents' product), and every generator adds its ``delta[L]``, wrapping at its width.
    Registers not given hold their reset value 0."""
    n, p = layout.name, layout.params
    ext = decode_extents(regs, layout)
    dim = len(ext)
    ags = list(layout.registered)
    none = None if not layout.timed else np.zeros(0, np.int64)
    if dim == 0:
        return none, {a: np.zeros(0, np.int64) for a in ags}
    k = np.arange(1, int(np.prod(ext)), dtype=np.int64)
    level = np.zeros(len(k), dtype=np.int64)
    period = 1
    for d in range(dim - 1):
        period *= ext[d]
        level += k % period == 0

    def run(start: int, name: str, width: int) -> np.ndarray:
        deltas = np.array([regs.get(f"{n}_{name}_delta_{d}", 0) for d in range(dim)],
                          dtype=np.int64)
        steps = np.concatenate([[start], deltas[level]])
        return np.cumsum(steps) & ((1 << width) - 1)

    cycles = (run(regs.get(f"{n}_cycle_start", 0), "cycle", p.cycle_width) if layout.timed
              else None)
    return cycles, {a: run(regs.get(f"{n}_{a}_start", 0), a, layout.addr_widths[a])
                    for a in ags}


def decode_controller(regs: dict[str, int], layout: ControllerLayout
                      ) -> list[tuple[int, dict[str, int]]]:
    """Every fire ``(cycle, {ag: address})`` of a controller, from its register values
    (:func:`decode_arrays`)."""
    cycles, addrs = decode_arrays(regs, layout)
    if cycles is None:
        raise ValueError(f"{layout.name}: an untimed controller has no cycles of its own")
    cols = [(a, v.tolist()) for a, v in addrs.items()]
    return [(c, {a: v[i] for a, v in cols}) for i, c in enumerate(cycles.tolist())]


@dataclass
class PUBRun:
    outputs: list[dict[int, int | None]]      # per output port: cycle -> value (None: unknown)
    conflicts: list[int] = field(default_factory=list)
