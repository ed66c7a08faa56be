"""Memory hierarchy level of a unified buffer (thesis §5.4): GLB, MEM or REG.

The abstraction stays level-agnostic until mapping. Buffers that exchange data with the host
(``input``/``output`` kinds) live in the global buffer (GLB) and reach the array through IO
streams. A buffer whose every output port is served by wires, shift registers and register
files after port reduction and banking needs no memory tile and lives in registers (REG):
banks of at most the shift-register threshold of words (§5.1.2, default 20; a weight is one
word) become register files (:mod:`.registers`) rather than memory tiles. Otherwise it is
mapped to memory tiles (MEM). A user hint (``store_in``, ``BufferDecl.level``) overrides the
choice when it is feasible (MEM keeps small banks in memory tiles; GLB serves every port by IO
streams); a hint that cannot be honoured is a one-line error naming the buffer and the reason:
REG for a buffer that still needs memory ports, MEM for one whose reads are all served by
wires and shift registers, GLB for an output that is read on the array.

An output buffer that ops also read (an accumulator updated in place) holds values on the
array between its writes and its reads: it is mapped like a temporary buffer (MEM or REG) and
its writes also stream to the GLB (``map_buffer.accumulates_on_chip``).
:func:`storage_mismatches` checks that the schedule's live words and the mapping agree.
"""
from __future__ import annotations

from .common import MappingError

LEVELS = ("GLB", "MEM", "REG")


def host_level(kind: str) -> str | None:
    """GLB for buffers the host reads or writes, else undecided until mapping."""
    return "GLB" if kind in ("input", "output") else None


def select_level(buffer: str, kind: str, memory_blocks: int, hint: str | None = None) -> str:
    if hint is not None and hint not in LEVELS:
        raise MappingError(f"buffer {buffer}: unknown memory level {hint!r} "
                           f"(expected one of {', '.join(LEVELS)})")
    host = host_level(kind)
    if host:
        return host
    if hint == "REG" and memory_blocks:
        raise MappingError(f"buffer {buffer}: stored in registers but {memory_blocks} memory "
                           f"block(s) remain after shift-register introduction: remove "
                           f"store_in('REG') or raise --threshold")
    if hint in ("GLB", "MEM"):
        return hint
    return "MEM" if memory_blocks else "REG"


def storage_mismatches(live_words: dict[str, int], impls: dict, kinds: dict[str, str],
                       hints: dict[str, str] | None = None) -> list[str]:
    """Where the schedule's live words and the mapping disagree (docs/mapping.md, "Memory
    levels"): a buffer that holds values on the array for some cycles (``live_words > 0``) must
    be mapped on chip (MEM or REG), unless the program placed it in the GLB (``hints``); a MEM
    buffer has memory tiles and a REG buffer none. One line per mismatch, naming the buffer."""
    hints = hints or {}
    out = []
    for name, impl in impls.items():
        live = live_words.get(name, 0)
        if live and impl.level == "GLB" and kinds.get(name) != "input" \
                and hints.get(name) != "GLB":
            out.append(f"buffer {name}: holds {live} live words on the array but is mapped to "
                       f"the global buffer")
        elif impl.level == "MEM" and not impl.mems:
            out.append(f"buffer {name}: mapped to MEM but has no memory tile")
        elif impl.level == "REG" and impl.mems:
            out.append(f"buffer {name}: mapped to registers but has {impl.mems} memory tiles")
    return out
