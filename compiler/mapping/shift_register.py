"""Shift-register introduction (thesis §5.1.2–5.1.3, Fig. 5.1; paper Fig. 8a).

Output ports with a constant dependence distance from an input port (:mod:`.dependence`) are
served by delay buffers instead of memory reads. A delay buffer is a :class:`Segment` from a
source stream to a tap: a *wire* (delay 0), a chain of *registers* (delay up to the threshold)
or a *memory* (a delay above the threshold; the thesis' default threshold is 20, footnote 2).

* :func:`delay_chain` merges all channels of one input into one chain with taps (Fig. 5.1b);
* :func:`delay_tree` first groups the taps, sorted by distance, starting a new group whenever the
  gap to the previous tap exceeds the threshold, then chains each group from the input
  (Fig. 5.1c): paths with very different distances diverge early, which keeps the CGRA routes
  short (§5.1.3).

Segments are nodes of a stream graph: ``src``/``dst`` name streams (the input port, or the output
port tapped at that point); a stream delayed by a segment carries the source's value of
``delay`` cycles earlier.
"""
from __future__ import annotations

from dataclasses import dataclass

DEFAULT_THRESHOLD = 20


@dataclass(frozen=True)
class Segment:
    src: str
    dst: str
    delay: int
    kind: str            # "wire" | "registers" | "memory"


def segment_kind(delay: int, threshold: int = DEFAULT_THRESHOLD) -> str:
    """§5.1.2: above the threshold a memory tile, else a chain of registers (0: a wire)."""
    if delay < 0:
        raise ValueError(f"negative delay {delay}")
    if delay == 0:
        return "wire"
    return "memory" if delay > threshold else "registers"


def _sorted(taps: dict[str, int]) -> list[tuple[str, int]]:
    return sorted(taps.items(), key=lambda kv: (kv[1], kv[0]))


def _chain(src: str, base: int, taps: list[tuple[str, int]], threshold: int) -> list[Segment]:
    out, prev, at = [], src, base
    for name, d in taps:
        out.append(Segment(prev, name, d - at, segment_kind(d - at, threshold)))
        prev, at = name, d
    return out


def delay_chain(src: str, taps: dict[str, int],
                threshold: int = DEFAULT_THRESHOLD) -> list[Segment]:
    """Fig. 5.1b: one chain from ``src`` through every tap in order of distance."""
    return _chain(src, 0, _sorted(taps), threshold)


def group_taps(taps: dict[str, int], threshold: int = DEFAULT_THRESHOLD) -> list[list[str]]:
    """§5.1.3: taps sorted by distance; a gap above ``threshold`` starts a new group."""
    groups: list[list[tuple[str, int]]] = []
    for name, d in _sorted(taps):
        if groups and d - groups[-1][-1][1] <= threshold:
            groups[-1].append((name, d))
        else:
            groups.append([(name, d)])
    return [[n for n, _ in g] for g in groups]


def delay_tree(src: str, taps: dict[str, int],
               threshold: int = DEFAULT_THRESHOLD) -> list[Segment]:
    """Fig. 5.1c: each group hangs off ``src`` through its own first segment, then chains."""
    out = []
    for group in group_taps(taps, threshold):
        out += _chain(src, 0, [(n, taps[n]) for n in group], threshold)
    return out


def summarize(segments: list[Segment]) -> dict:
    """Counts for reports: memories, register chains and their total delay, wires."""
    regs = [s for s in segments if s.kind == "registers"]
    return {"memories": sum(s.kind == "memory" for s in segments),
            "shift_registers": len(regs), "register_delay": sum(s.delay for s in regs),
            "wires": sum(s.kind == "wire" for s in segments)}
