"""The global buffer's geometry as data (thesis §7.1; docs/top.md): read latency, word width and
address widths. Amaranth-free: the compiler's GLB layouts use the same numbers as
:class:`ubgen.glb.global_buffer.GlobalBuffer` (docs/design.md §2)."""
from __future__ import annotations

from ..arch import WORD_WIDTH, GLBParams

__all__ = ["GLB_READ_LATENCY", "WORD_WIDTH", "bank_addr_width", "host_addr_width"]

GLB_READ_LATENCY = 1


def bank_addr_width(glb: GLBParams) -> int:
    """Bits of a word offset in one bank."""
    return max(1, (glb.bank_words - 1).bit_length())


def host_addr_width(glb: GLBParams) -> int:
    """Bits of a host word address (bank-major: ``bank * bank_words + offset``)."""
    return max(1, (glb.banks * glb.bank_words - 1).bit_length())
