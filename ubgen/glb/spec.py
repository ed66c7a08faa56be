"""The global buffer's geometry as data (thesis §7.1; docs/top.md): read latency, word width,
row width and address widths. Amaranth-free: the compiler's GLB layouts use the same numbers as
:class:`ubgen.glb.global_buffer.GlobalBuffer` (docs/design.md §2).

A bank is an SRAM of rows of :data:`ROW_WORDS` 16-bit words (:data:`ROW_WIDTH` bits) with byte
write enables: the IO tiles read and write one word of a row, the host a whole row (the top's
burst port moves four words per beat, docs/top.md)."""
from __future__ import annotations

from ..arch import WORD_WIDTH, GLBParams

__all__ = ["GLB_READ_LATENCY", "WORD_WIDTH", "ROW_WORDS", "ROW_WIDTH", "ROW_BYTES",
           "bank_addr_width", "host_addr_width", "host_row_width", "row_of", "lane_of"]

GLB_READ_LATENCY = 1
ROW_WORDS = 4                          # words per SRAM row (the host port's width)
ROW_WIDTH = ROW_WORDS * WORD_WIDTH     # 64 bits
ROW_BYTES = ROW_WIDTH // 8             # byte enables per row


def bank_addr_width(glb: GLBParams) -> int:
    """Bits of a word offset in one bank."""
    return max(1, (glb.bank_words - 1).bit_length())


def host_addr_width(glb: GLBParams) -> int:
    """Bits of a host word address (bank-major: ``bank * bank_words + offset``)."""
    return max(1, (glb.banks * glb.bank_words - 1).bit_length())


def host_row_width(glb: GLBParams) -> int:
    """Bits of a host row address (``word // ROW_WORDS``, bank-major)."""
    return max(1, (glb.banks * glb.bank_words // ROW_WORDS - 1).bit_length())


def row_of(word: int) -> int:
    """The row holding GLB word ``word`` (bank-major numbering on both)."""
    return word // ROW_WORDS


def lane_of(word: int) -> int:
    """The word's lane in its row (bits ``16*lane`` .. ``16*lane+15``)."""
    return word % ROW_WORDS
