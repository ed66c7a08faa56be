"""Memory hierarchy level of a unified buffer (thesis §5.4): GLB, MEM or REG.

The abstraction stays level-agnostic until mapping. Buffers that exchange data with the host
(``input``/``output`` kinds) live in the global buffer (GLB) and reach the array through IO
streams. A buffer whose every output port is served by wires, shift registers and register
files after port reduction and banking needs no memory tile and lives in registers (REG):
banks of at most the shift-register threshold of words (§5.1.2, default 20; a weight is one
word) become register files (:mod:`.registers`) rather than memory tiles. Otherwise it is
mapped to memory tiles (MEM). A user hint (``store_in``, ``BufferDecl.level``) overrides the
choice when it is feasible (MEM keeps small banks in memory tiles); a REG hint for a buffer
that still needs memory ports is an error.
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
                           f"block(s) remain after shift-register introduction")
    if hint in ("GLB", "MEM"):
        return hint
    return "MEM" if memory_blocks else "REG"
