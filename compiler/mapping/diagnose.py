"""What to change when buffer mapping refuses a buffer (docs/cli.md "Exit status").

``order_hint(ub)`` compares the order in which a unified buffer's writers and readers walk its
elements: for every port, the buffer dimension that its innermost non-trivial loop advances.
The wide-fetch PUB packs ``fetch_width`` consecutive words of that dimension into one SRAM word
(thesis §5.5, the aggregator and the transpose buffer), so a buffer written along one dimension
and read along another cannot be vectorised without a transposition; reordering the producer's
loops to the readers' order is the usual cure. Returns ``None`` when the orders agree or cannot
be told (a non-affine or empty port).
"""
from __future__ import annotations

from ..ir.ubuf import UBPort, UnifiedBuffer
from .common import MappingError, affine_outputs, box

__all__ = ["order_hint", "walk_dimension"]


def walk_dimension(port: UBPort) -> int | None:
    """The buffer dimension (0 = innermost, Halide's order) that the innermost loop of
    ``port`` with more than one iteration moves; ``None`` if no loop moves the address."""
    try:
        dims = box(port.domain, port.name)
        coeffs = affine_outputs(port.access, port.name)
    except MappingError:
        return None
    for level in reversed(range(len(dims))):
        if dims[level][2] <= 1:
            continue
        moved = [d for d, (_c, row) in enumerate(coeffs) if row[level] != 0]
        if moved:
            return moved[0]
    return None


def order_hint(ub: UnifiedBuffer) -> str | None:
    """One clause naming the writers' and the readers' walking dimensions when they differ."""
    writes = {walk_dimension(p) for p in ub.inputs} - {None}
    reads = {walk_dimension(p) for p in ub.outputs} - {None}
    if len(writes) != 1 or not reads or writes == reads:
        return None
    w, r = writes.pop(), sorted(reads)
    return (f"written along its dimension {w} innermost but read along dimension "
            f"{' / '.join(map(str, r))}: reorder the producer's loops to the readers' order")
