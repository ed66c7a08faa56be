"""Bank merging up to the physical port count (thesis §5.2.3).

Banks start with their own ports (after banking, or one per delay memory of
:mod:`.shift_register`). Two banks holding the same data partition, i.e. written by the same
input streams, can share one physical memory: the merged bank keeps one copy of the data and
serves the output ports of both, as long as the physical memory has enough output ports (the
PUB has two, ``[pub] output_ports``). Gaussian's two line buffers (delays 64 and 128 from one
input) become one memory with two outputs (docs/design.md §4 fixture).
"""
from __future__ import annotations

from ..ir.ubuf import UBPort, UnifiedBuffer


def same_port(a: UBPort, b: UBPort) -> bool:
    return (a.name == b.name and a.latency == b.latency and a.domain.is_equal(b.domain)
            and a.access.is_equal(b.access) and a.schedule.is_equal(b.schedule))


def same_inputs(a: UnifiedBuffer, b: UnifiedBuffer) -> bool:
    return len(a.inputs) == len(b.inputs) and all(
        any(same_port(p, q) for q in b.inputs) for p in a.inputs)


def merge_banks(banks: list[UnifiedBuffer], output_ports: int,
                input_ports: int) -> list[UnifiedBuffer]:
    """Greedy first-fit merging of banks with identical input streams."""
    merged: list[UnifiedBuffer] = []
    for bank in banks:
        if len(bank.inputs) > input_ports:
            merged.append(bank)
            continue
        for m in merged:
            if same_inputs(m, bank) and len(m.outputs) + len(bank.outputs) <= output_ports:
                m.ports += bank.outputs
                m.name = f"{m.name}+{bank.name.rsplit('_', 1)[-1]}"
                break
        else:
            merged.append(UnifiedBuffer(bank.name, bank.shape, bank.kind, bank.type,
                                        list(bank.ports), bank.live_words))
    return merged
