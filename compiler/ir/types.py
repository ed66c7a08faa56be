"""Integer types of kernel values (docs/design.md §3.1: 16-bit by default, signed and unsigned)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class IntType:
    bits: int = 16
    signed: bool = False

    def wrap(self, value: int) -> int:
        """Reduce a Python int to this type's range with two's-complement wraparound."""
        value &= (1 << self.bits) - 1
        if self.signed and value >> (self.bits - 1):
            value -= 1 << self.bits
        return value

    def __str__(self) -> str:
        return f"{'s' if self.signed else 'u'}{self.bits}"

    @staticmethod
    def parse(text: str) -> "IntType":
        return IntType(int(text[1:]), text[0] == "s")


u16 = IntType(16, False)
s16 = IntType(16, True)
u1 = IntType(1, False)
